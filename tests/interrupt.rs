//! Interrupted writes leave nothing behind: Ctrl-C or SIGTERM removes the temporary file of the
//! write under way, and a temporary left by a process that is gone (SIGKILL) is removed by the
//! next write of the same file.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

fn temporaries(dir: &TempDir) -> Vec<String> {
    std::fs::read_dir(&dir.0)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn a_signal_during_a_write_removes_its_temporary_file() {
    for signal in ["INT", "TERM"] {
        let dir = TempDir::new(&format!("signal-{signal}"));
        // The streamed gnubg build sweeps inside its atomic write: seconds with a temporary.
        let mut child = rollsim_command()
            .args([
                "bearoff", "build", "--points", "9", "--format", "gnubg", "-q",
            ])
            .arg("--out")
            .arg(dir.path("t.bd"))
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while temporaries(&dir).is_empty() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no temporary appeared"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let kill = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        if dir.path("t.bd").exists() {
            eprintln!("the build ended before the signal; nothing to check");
            continue;
        }
        let want = if signal == "INT" { 130 } else { 143 };
        assert_eq!(status.code(), Some(want), "SIG{signal}");
        assert_eq!(temporaries(&dir), Vec::<String>::new(), "SIG{signal}");
    }
}

#[test]
fn a_temporary_of_a_process_that_is_gone_is_removed_by_the_next_write() {
    let dir = TempDir::new("stale-temporary");
    // No process has pid 4294967295 (pids stay below 2^22 on Linux).
    let stale = dir.path(".t.rsb.4294967295-0.tmp");
    std::fs::write(&stale, "left by a killed build").unwrap();
    let out = rollsim(&[
        "bearoff",
        "build",
        "--points",
        "3",
        "--checkers",
        "3",
        "--out",
        &dir.file("t.rsb"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stale.exists());
    assert!(dir.path("t.rsb").exists());
}

#[test]
fn a_second_writer_of_one_results_file_is_refused_naming_the_first() {
    let dir = TempDir::new("two-writers");
    let out = dir.file("e.jsonl");
    let args = [
        "2048",
        "experiment",
        "--out",
        &out,
        "--rollouts",
        "50",
        "--games",
        "100000",
        "--seed",
        "1",
        "--backend",
        "cpu",
        "-q",
    ];
    let first = Running::start(&words("", &args));
    let pid = first.0.id().to_string();
    let start = Instant::now();
    // The first writer holds the lock once it has written its header: it takes the lock first.
    let header = || std::fs::read_to_string(&out).is_ok_and(|t| t.contains("\"format\""));
    while !header() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the first writer took no lock or wrote no header"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_input_error(
        &args,
        &format!("being written by another process (pid {pid}, rollsim)"),
    );
    drop(first);
    // The file is the first writer's alone: one header, no record twice.
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().filter(|l| l.contains("\"format\"")).count(), 1);
}
