//! Interrupted writes leave nothing behind: Ctrl-C or SIGTERM removes the temporary file of the
//! write under way, and a temporary left by a process that is gone (SIGKILL) is removed by the
//! next write of the same file.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

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
        let mut child = Command::new(env!("CARGO_BIN_EXE_rollsim"))
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
