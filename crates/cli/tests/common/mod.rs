//! What every command-line test needs: the binary, its JSON, its input errors, a scratch
//! directory, and damaged copies of valid files.
#![allow(dead_code)] // each test file uses its own share

use std::path::PathBuf;
use std::process::{Command, Output};

/// The `rollsim` binary as a command, its cache (pattern databases) in cargo's scratch directory
/// for tests rather than the developer's `~/.cache`.
pub fn rollsim_command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rollsim"));
    c.env(
        "XDG_CACHE_HOME",
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cache"),
    );
    c
}

/// Runs the `rollsim` binary.
pub fn rollsim(args: &[&str]) -> Output {
    rollsim_command().args(args).output().expect("run rollsim")
}

/// Runs `rollsim`, which must succeed and print one JSON object on stdout.
pub fn json(args: &[&str]) -> serde_json::Value {
    let out = rollsim(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}

/// Runs `rollsim`, which must fail as bad input does: exit code 2, a message containing
/// `says`, no panic.
pub fn assert_input_error(args: &[&str], says: &str) {
    let out = rollsim(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(says), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A fresh directory for one test's files (from `tempfile`), removed when dropped.
pub struct TempDir(pub PathBuf, #[allow(dead_code)] tempfile::TempDir);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let dir = tempfile::Builder::new()
            .prefix(&format!("rollsim-{name}-"))
            .tempdir()
            .unwrap();
        TempDir(dir.path().to_path_buf(), dir)
    }

    /// The path of `name` in the directory, as a string for command lines.
    pub fn file(&self, name: &str) -> String {
        self.path(name).to_str().unwrap().to_string()
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

/// `bytes` damaged: cut at `cut` (a fraction of its length) and `flips` bytes xored.
pub fn damaged(mut bytes: Vec<u8>, cut: f64, flips: &[(f64, u8)]) -> Vec<u8> {
    let n = bytes.len();
    for &(at, x) in flips {
        if n > 0 {
            bytes[((at * n as f64) as usize).min(n - 1)] ^= x;
        }
    }
    bytes.truncate(((cut * n as f64) as usize).min(n));
    bytes
}

/// Where to cut (often nowhere) and up to four bytes to flip, each xored with a value in
/// `xor` (below 128 keeps ASCII text ASCII, so a parser is reached past UTF-8 checks).
pub fn damage(
    xor: std::ops::RangeInclusive<u8>,
) -> impl proptest::strategy::Strategy<Value = (f64, Vec<(f64, u8)>)> {
    use proptest::prelude::*;
    (
        prop_oneof![Just(1.0), 0.0..1.0f64],
        prop::collection::vec((0.0..1.0f64, xor), 0..4),
    )
}
