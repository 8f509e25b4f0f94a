//! Progress: the one shape in which a long computation reports the work it has done, for a
//! caller to show (the command line draws a bar; a library user may count, or ignore it).

/// Work reported as it is done. Any `Fn(u64) + Sync` is one, counting units; [`Silent`]
/// ignores everything.
pub trait Progress: Sync {
    /// A phase of `len` units begins, described as `what`.
    fn start(&self, _len: u64, _what: &str) {}
    /// `n` more units are done.
    fn inc(&self, n: u64);
    /// The phase is over.
    fn finish(&self) {}
}

impl<F: Fn(u64) + Sync> Progress for F {
    fn inc(&self, n: u64) {
        self(n)
    }
}

/// Progress nobody watches.
pub struct Silent;

impl Progress for Silent {
    fn inc(&self, _: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn a_closure_counts_the_units_and_ignores_the_phases() {
        let done = AtomicU64::new(0);
        let count = |n| {
            done.fetch_add(n, Ordering::Relaxed);
        };
        let p: &dyn Progress = &count;
        p.start(10, "things");
        p.inc(3);
        p.inc(4);
        p.finish();
        Silent.inc(5);
        assert_eq!(done.load(Ordering::Relaxed), 7);
    }
}
