//! Standard output that goes nowhere: a closed pipe ends the output quietly (exit 0, files
//! still written), a full disk is an error (exit 1) naming standard output.

use std::process::{Output, Stdio};

use crate::common::*;

/// Runs `rollsim` with its standard output going to `stdout`.
fn rollsim_into(args: &[&str], stdout: Stdio) -> Output {
    rollsim_command()
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("run rollsim")
}

/// A pipe nobody reads: its reading end is closed before the command starts.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Stdio::from(writer)
}

#[test]
fn a_closed_pipe_ends_output_quietly_and_files_are_still_written() {
    let dir = TempDir::new("closed-pipe");
    let net = dir.file("n.bin");
    let table = dir.file("t.rsb");
    let cases: [&[&str]; 5] = [
        &["2048", "show", "0x2000000000000011"],
        &["2048", "play", "--games", "50", "--backend", "cpu"],
        &[
            "2048", "train", "--tuples", "small", "--games", "200", "--block", "10", "--out", &net,
        ],
        &[
            "bearoff",
            "build",
            "--points",
            "4",
            "--checkers",
            "4",
            "--out",
            &table,
        ],
        &[
            "puzzle",
            "solve",
            "--board",
            "123456789abcde0f",
            "--method",
            "loop",
        ],
    ];
    for args in cases {
        let out = rollsim_into(args, closed_pipe());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
    for file in [&net, &table] {
        assert!(std::fs::metadata(file).unwrap().len() > 0, "{file}");
    }
}

#[test]
fn a_full_disk_on_standard_output_is_an_error() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("no /dev/full here");
        return;
    };
    let out = rollsim_into(&["2048", "show", "0x2000000000000011"], Stdio::from(full));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("writing standard output") && !err.contains("panicked"),
        "{err}"
    );
}
