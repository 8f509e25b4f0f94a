//! What every command-line test needs: the binary, its JSON, its input errors, a scratch
//! directory.
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
