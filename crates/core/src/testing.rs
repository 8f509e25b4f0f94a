//! What a test needs of the machine, decided in one place: a GPU adapter, f64 or subgroups in
//! its shaders, gnubg's bearoff files, its makebearoff. CI installs all of them and sets
//! `ROLLSIM_REQUIRE=1` (or the older `ROLLSIM_REQUIRE_GPU=1`): there a missing one fails the
//! test, naming it. Elsewhere the test says it skipped, and why.

/// Whether every test must find what it needs (CI), rather than skip without it.
pub fn required() -> bool {
    ["ROLLSIM_REQUIRE", "ROLLSIM_REQUIRE_GPU"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|v| v == "1"))
}

/// What `test` found of `what` it needs: `Some` when it is there; `None` after a note that the
/// test skipped, or, when [`required`], a failure naming what is missing and why.
pub fn need<T, E: std::fmt::Display>(test: &str, what: &str, found: Result<T, E>) -> Option<T> {
    match found {
        Ok(x) => Some(x),
        Err(e) if required() => panic!("{test}: needs {what}, required here, but {e}"),
        Err(e) => {
            eprintln!("{test}: skipped, no {what} ({e})");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_there_is_used() {
        assert_eq!(need::<_, String>("t", "a thing", Ok(7)), Some(7));
    }

    #[test]
    fn what_is_missing_skips_or_fails_as_the_environment_says() {
        let missing = std::panic::catch_unwind(|| need::<u8, _>("t", "a thing", Err("gone")));
        match required() {
            true => assert!(missing.is_err(), "required: a failure"),
            false => assert_eq!(missing.ok(), Some(None), "not required: a skip"),
        }
    }
}
