//! Two-sided bearoff tables as a user builds them: the sweep by columns into rollsim's file,
//! sub-tables, gnubg's format, checkpoints, and builds too large for the machine.

use std::process::Command;

use crate::common::*;
use rollsim_bearoff::Space;
use rollsim_bearoff::table::Table;

fn build(dir: &TempDir, name: &str, checkers: &str, extra: &[&str]) -> String {
    let out = dir.file(name);
    let mut args = vec![
        "bearoff",
        "build",
        "--two-sided",
        "--points",
        "6",
        "--checkers",
        checkers,
        "--out",
        &out,
        "--json",
    ];
    args.extend_from_slice(extra);
    json(&args);
    out
}

#[test]
fn the_small_table_is_the_block_of_the_large_one() {
    // gnubg's order puts positions with fewer checkers first: the <= 6-checker block of a
    // 10x6 table is the 6x6 table, value for value (and so byte for byte).
    let dir = TempDir::new("ts-block");
    let large = build(&dir, "t10.rsb", "10", &[]);
    let small = build(&dir, "t6.rsb", "6", &[]);
    let cut = dir.file("cut6.rsb");
    let out = rollsim(&[
        "bearoff",
        "extract",
        &large,
        "--checkers",
        "6",
        "--out",
        &cut,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read(&cut).unwrap() == std::fs::read(&small).unwrap());
    // Cubeful too, and through gnubg's format.
    let large = build(&dir, "c8.rsb", "8", &["--cubeful"]);
    let small = build(&dir, "c6.bd", "6", &["--cubeful", "--format", "gnubg"]);
    let cut = dir.file("cut6.bd");
    let out = rollsim(&[
        "bearoff",
        "extract",
        &large,
        "--checkers",
        "6",
        "--format",
        "gnubg",
        "--out",
        &cut,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read(&cut).unwrap() == std::fs::read(&small).unwrap());
}

#[test]
fn queries_read_the_table_in_place() {
    let dir = TempDir::new("ts-query");
    let t = build(&dir, "t.rsb", "6", &["--cubeful"]);
    // One checker on the 6 point against one on the 1 point: the side on roll must bear off
    // now, which 27 rolls of 36 do; a double it would own is worth 2 x 0.5, so it doubles and
    // the opponent, losing 1 either way, passes.
    let q = json(&["bearoff", "query", &t, "0,0,0,0,0,1", "1", "--json"]);
    assert!((q["win"].as_f64().unwrap() - 0.75).abs() < 1e-7, "{q}");
    assert_eq!(q["cubeful"]["centred_action"], "double, pass");
    assert_eq!(q["cubeful"]["centred_equity"].as_f64().unwrap(), 1.0);
    // A certain win needs no double.
    let q = json(&["bearoff", "query", &t, "0,1", "6", "--json"]);
    assert_eq!(q["win"].as_f64().unwrap(), 1.0);
    assert_eq!(q["cubeful"]["centred_action"], "no double");
    let q = json(&[
        "bearoff",
        "query",
        &t,
        "0,0,0,0,0,2",
        "0,0,0,0,0,2",
        "--json",
    ]);
    let (w, c) = (q["win"].as_f64().unwrap(), &q["cubeful"]);
    assert!(w > 0.5 && w < 1.0, "{q}");
    let (owned, centred, theirs) = (
        c["owned"].as_f64().unwrap(),
        c["centred"].as_f64().unwrap(),
        c["opponent_owns"].as_f64().unwrap(),
    );
    assert!(
        owned >= 2.0 * w - 1.0 - 1e-6 && 2.0 * w - 1.0 >= theirs - 1e-6,
        "{q}"
    );
    assert!(owned >= centred && centred >= theirs, "{q}");
    // The library reads the same values.
    let table = Table::open(std::path::Path::new(&t)).unwrap();
    let space = Space::new(6, 6).unwrap();
    let (us, them) = (
        space.index(&[0, 0, 0, 0, 0, 2]),
        space.index(&[0, 0, 0, 0, 0, 2]),
    );
    assert_eq!(table.win(us, them).unwrap(), w);
    assert_eq!(table.equities(us, them).unwrap().unwrap().centred, centred);
    let v = json(&["bearoff", "verify", &t, "--json"]);
    assert_eq!(v["ok"], true);
}

#[test]
fn the_gnubg_manual_example() {
    // gnubg's manual, position ID CgAAEAEAAAAAAA, X on roll with checkers on its 2 and 5
    // points against O's on the 2 and 3 points: cubeless 67.1% for X; money equities X owns
    // the cube +0.3441, centred +0.3210 (X doubles, O takes), O owns the cube +0.1605.
    let dir = TempDir::new("ts-manual");
    let t = build(&dir, "t.rsb", "3", &["--cubeful"]);
    let q = json(&["bearoff", "query", &t, "0,1,0,0,1,0", "0,1,1", "--json"]);
    let c = &q["cubeful"];
    let round4 = |v: &serde_json::Value| (v.as_f64().unwrap() * 1e4).round() / 1e4;
    assert_eq!(
        (q["win"].as_f64().unwrap() * 1e3).round() / 1e3,
        0.671,
        "{q}"
    );
    assert_eq!(round4(&c["owned"]), 0.3441, "{q}");
    assert_eq!(round4(&c["centred_equity"]), 0.3210, "{q}");
    assert_eq!(c["centred_action"], "double, take");
    assert_eq!(round4(&c["opponent_owns"]), 0.1605, "{q}");
}

#[test]
fn damaged_columns_are_found_by_verify() {
    let dir = TempDir::new("ts-verify");
    let t = build(&dir, "t.rsb", "5", &["--cubeful"]);
    let mut bytes = std::fs::read(&t).unwrap();
    // A bit flipped in the data, far from the header: the file still opens, and verify names
    // the column.
    let at = bytes.len() / 2;
    bytes[at] ^= 0x10;
    std::fs::write(&t, &bytes).unwrap();
    assert!(Table::open(std::path::Path::new(&t)).is_ok());
    assert_input_error(&["bearoff", "verify", &t], "checks failed: Cubeful column");
    // A damaged header or checksum table is refused at open.
    bytes[at] ^= 0x10;
    bytes[30] ^= 1;
    std::fs::write(&t, &bytes).unwrap();
    assert_input_error(&["bearoff", "query", &t, "1", "1"], "checksum");
    bytes[30] ^= 1;
    let end = bytes.len() - 3;
    bytes[end] ^= 1;
    std::fs::write(&t, &bytes).unwrap();
    assert_input_error(&["bearoff", "query", &t, "1", "1"], "checksum");
    bytes.truncate(bytes.len() - 1);
    std::fs::write(&t, &bytes).unwrap();
    assert_input_error(&["bearoff", "query", &t, "1", "1"], "truncated");
}

#[test]
fn a_killed_build_resumes_to_the_same_bytes() {
    let dir = TempDir::new("ts-resume");
    let whole = build(&dir, "whole.rsb", "8", &["--cubeful"]);
    let out = dir.file("killed.rsb");
    let args = [
        "bearoff",
        "build",
        "--two-sided",
        "--checkers",
        "8",
        "--cubeful",
        "--checkpoint-secs",
        "0",
        "--out",
        &out,
        "-q",
    ];
    // 49 levels a pass: killed in the cubeful pass, after 70 checkpoints.
    let killed = rollsim_command()
        .args(args)
        .env("__ROLLSIM_INTERNAL_TEST_HOOK_KILL_AFTER_CHECKPOINTS", "70")
        .output()
        .unwrap();
    assert!(!killed.status.success());
    assert!(!std::path::Path::new(&out).exists());
    assert!(dir.path("killed.rsb.partial.ckpt").exists());
    let resumed = rollsim(&args);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert!(String::from_utf8_lossy(&resumed.stdout).contains("resumed"));
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&whole).unwrap());
    assert!(!dir.path("killed.rsb.partial").exists());
    assert!(!dir.path("killed.rsb.partial.ckpt").exists());
}

#[test]
fn impossible_builds_are_refused_before_allocating() {
    let dir = TempDir::new("ts-refuse");
    let out = dir.file("x.rsb");
    // 15 checkers on 18 points: 10^18 pairs. Refused at once, naming the memory.
    let start = std::time::Instant::now();
    assert_input_error(
        &[
            "bearoff",
            "build",
            "--two-sided",
            "--points",
            "18",
            "--checkers",
            "15",
            "--out",
            &out,
        ],
        "of memory",
    );
    assert!(start.elapsed().as_secs() < 10);
    assert!(!std::path::Path::new(&out).exists());
    assert!(!dir.path("x.rsb.partial").exists());
    // The plan says so, and exits 2.
    let plan = rollsim(&[
        "bearoff",
        "build",
        "--two-sided",
        "--points",
        "10",
        "--checkers",
        "10",
        "--cubeful",
        "--out",
        &out,
        "--dry-run",
        "--json",
    ]);
    assert_eq!(plan.status.code(), Some(2));
    let p: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    assert!(p["memory_bytes"].as_u64().unwrap() > 100_000_000_000, "{p}");
    // A plan that fits exits 0 and writes nothing.
    let plan = json(&[
        "bearoff",
        "build",
        "--two-sided",
        "--checkers",
        "6",
        "--out",
        &out,
        "--dry-run",
        "--json",
    ]);
    assert_eq!(plan["pairs"], 853_776);
    assert!(!std::path::Path::new(&out).exists());
    // gnubg cannot read a two-sided file over 4 GiB: refused up front, with the reason.
    assert_input_error(
        &[
            "bearoff",
            "build",
            "--two-sided",
            "--checkers",
            "15",
            "--format",
            "gnubg",
            "--out",
            &out,
        ],
        "32 bits",
    );
}

/// makebearoff from Debian's gnubg package, which CI installs (see `rollsim_core::testing`).
fn makebearoff(test: &str) -> Option<&'static str> {
    let path = "/usr/games/makebearoff";
    let found = match std::path::Path::new(path).exists() {
        true => Ok(path),
        false => Err(format!("{path} is missing (Debian's gnubg package)")),
    };
    rollsim_core::testing::need(test, "makebearoff", found)
}

#[test]
fn gnubg_makebearoff_tables_agree_within_its_rounding() {
    let Some(makebearoff) = makebearoff("gnubg_makebearoff_tables_agree_within_its_rounding")
    else {
        return;
    };
    let dir = TempDir::new("ts-gnubg");
    let theirs = dir.file("mb.bd");
    let ok = Command::new(makebearoff)
        .args(["-t", "6x4", "-f", &theirs])
        .output()
        .unwrap();
    assert!(ok.status.success());
    let ours = build(&dir, "ours.bd", "4", &["--cubeful", "--format", "gnubg"]);
    let (a, b) = (
        std::fs::read(&ours).unwrap(),
        std::fs::read(&theirs).unwrap(),
    );
    assert_eq!(a.len(), b.len());
    assert_eq!(a[..40], b[..40], "the same header");
    // makebearoff carries its 16-bit values through the recursion; rollsim rounds each exact
    // value once. 6x6 differs by at most 4 units (6.1e-5).
    let worst = a[40..]
        .chunks_exact(2)
        .zip(b[40..].chunks_exact(2))
        .map(|(x, y)| {
            let (x, y) = (
                u16::from_le_bytes([x[0], x[1]]),
                u16::from_le_bytes([y[0], y[1]]),
            );
            x.abs_diff(y)
        })
        .max()
        .unwrap();
    assert!(worst <= 4, "{worst} units");
}

#[test]
fn verify_checks_what_a_gnubg_one_sided_file_allows() {
    let dir = TempDir::new("verify-gnubg");
    let file = dir.file("os.bd");
    let out = rollsim(&[
        "bearoff", "build", "--points", "6", "--format", "gnubg", "--out", &file, "-q",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(rollsim(&["bearoff", "verify", &file]).status.success());
    // One entry of one distribution damaged: the file still loads, its sum is off.
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.len() - 1000;
    bytes[at] ^= 0x40;
    std::fs::write(&file, bytes).unwrap();
    assert_input_error(&["bearoff", "verify", &file], "distribution sums to");
}

/// The build of 6 checkers, checkpointed after every level, as `args` of `out` with `extra`.
fn checkpointed<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "bearoff",
        "build",
        "--two-sided",
        "--checkers",
        "6",
        "--checkpoint-secs",
        "0",
        "--out",
        out,
        "-q",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn a_resume_from_a_damaged_partial_or_checkpoint_or_other_flags_is_refused_deleting_nothing() {
    let dir = TempDir::new("ts-resume-damaged");
    // f32 cells: on CPU threads, even where `auto` would take a GPU and its fixed32 cells.
    let flags = ["--cubeful", "--precision", "f32"];
    let whole = build(&dir, "whole.rsb", "6", &flags);
    let out = dir.file("t.rsb");
    let args = checkpointed(&out, &flags);
    // Killed in the cubeless pass, its first levels (column 0 among them) checkpointed.
    let killed = rollsim_command()
        .args(&args)
        .env("__ROLLSIM_INTERNAL_TEST_HOOK_KILL_AFTER_CHECKPOINTS", "20")
        .output()
        .unwrap();
    assert!(!killed.status.success());
    let (partial, ckpt) = (dir.path("t.rsb.partial"), dir.path("t.rsb.partial.ckpt"));
    let (p0, c0) = (
        std::fs::read(&partial).unwrap(),
        std::fs::read(&ckpt).unwrap(),
    );
    let flipped = |bytes: &[u8], at: usize| {
        let mut b = bytes.to_vec();
        b[at] ^= 0x08;
        b
    };
    // Byte 5 of column 0, and a CRC the checkpoint recorded.
    let (p1, c1) = (flipped(&p0, 4096 + 5), flipped(&c0, c0.len() - 40));
    let made = "made with --points 6 --checkers 6 --cubeful --precision f32";
    // The partial file and checkpoint of a rerun, its flags, and what its refusal says.
    type Case<'a> = (&'a [u8], &'a [u8], &'a [&'a str], &'a [&'a str]);
    let cases: [Case; 6] = [
        (
            &p1,
            &c0,
            &flags,
            &["damaged since its checkpoint", "Cubeless column 0"],
        ),
        (
            &p0,
            &c1,
            &flags,
            &["a damaged checkpoint (checksum mismatch", made],
        ),
        (
            &p1,
            &c1,
            &flags,
            &["a damaged checkpoint (checksum mismatch"],
        ),
        (
            &p0,
            &c0,
            &["--cubeful", "--precision", "f64"],
            &["another table", made],
        ),
        (
            &p0,
            &c0,
            &["--cubeful", "--precision", "u16"],
            &["another table", made],
        ),
        (&p0, &c0, &["--precision", "f32"], &["another table", made]),
    ];
    for (p, c, extra, says) in cases {
        std::fs::write(&partial, p).unwrap();
        std::fs::write(&ckpt, c).unwrap();
        let rerun = rollsim(&checkpointed(&out, extra));
        let err = String::from_utf8_lossy(&rerun.stderr);
        assert_eq!(rerun.status.code(), Some(2), "{extra:?}: {err}");
        for s in says.iter().chain(&["--fresh", "nothing was deleted"]) {
            assert!(err.contains(s), "{extra:?}: {err}");
        }
        assert!(
            std::fs::read(&partial).unwrap() == p,
            "{says:?}: the partial kept"
        );
        assert!(
            std::fs::read(&ckpt).unwrap() == c,
            "{says:?}: the checkpoint kept"
        );
        assert!(!dir.path("t.rsb").exists());
    }
    // Undamaged, with its own flags, it resumes to the whole build's bytes.
    std::fs::write(&partial, &p0).unwrap();
    std::fs::write(&ckpt, &c0).unwrap();
    let resumed = rollsim(&args);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert!(String::from_utf8_lossy(&resumed.stdout).contains("resumed"));
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&whole).unwrap());
    assert!(!partial.exists() && !ckpt.exists());
    // Damaged, --fresh starts over, as the message says.
    let killed = rollsim_command()
        .args(&args)
        .env("__ROLLSIM_INTERNAL_TEST_HOOK_KILL_AFTER_CHECKPOINTS", "20")
        .output()
        .unwrap();
    assert!(!killed.status.success());
    std::fs::write(&ckpt, b"RSBOCKPT and not much else").unwrap();
    let mut fresh = args.clone();
    fresh.push("--fresh");
    let out2 = rollsim(&fresh);
    assert!(
        out2.status.success(),
        "{}",
        String::from_utf8_lossy(&out2.stderr)
    );
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&whole).unwrap());
    assert!(!partial.exists() && !ckpt.exists());
}

/// Bytes process `pid` has read so far (`rchar` of `/proc/PID/io`), if the system says.
fn bytes_read(pid: u32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn a_table_truncated_under_a_running_extract_or_verify_is_an_error_naming_it() {
    let dir = TempDir::new("ts-truncated");
    let t = build(&dir, "t.rsb", "8", &[]);
    let pristine = std::fs::read(&t).unwrap();
    let sub = dir.file("sub.rsb");
    let commands: [&[&str]; 2] = [
        &["bearoff", "verify", &t],
        &["bearoff", "extract", &t, "--checkers", "7", "--out", &sub],
    ];
    for args in commands {
        std::fs::write(&t, &pristine).unwrap();
        let child = rollsim_command()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Cut once it is well into the table's 36 MB (or, where /proc does not say, soon).
        let start = std::time::Instant::now();
        while bytes_read(child.id()).is_some_and(|b| b < 2 << 20)
            && start.elapsed() < std::time::Duration::from_secs(30)
        {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        if bytes_read(child.id()).is_none() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::fs::OpenOptions::new()
            .write(true)
            .open(&t)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        let done = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&done.stderr);
        if done.status.success() {
            eprintln!("{args:?} ended before the table was cut; nothing to check");
            continue;
        }
        assert_eq!(done.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&t) && err.contains("changed while it was read"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(!dir.path("sub.rsb").exists());
        assert!(!dir.path("sub.rsb.partial").exists(), "no partial left");
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_planted_as_the_partial_file_is_refused_and_not_written_through() {
    let dir = TempDir::new("ts-planted");
    let t = build(&dir, "t.rsb", "4", &[]);
    let victim = dir.path("victim");
    std::fs::write(&victim, "precious").unwrap();
    let e = dir.file("e.rsb");
    std::os::unix::fs::symlink(&victim, dir.path("e.rsb.partial")).unwrap();
    assert_input_error(
        &["bearoff", "extract", &t, "--checkers", "3", "--out", &e],
        "e.rsb.partial: a symlink",
    );
    let two_sided = [
        "bearoff",
        "build",
        "--two-sided",
        "--checkers",
        "3",
        "--out",
        &e,
    ];
    assert_input_error(&two_sided, "e.rsb.partial: a symlink");
    assert_input_error(
        &[
            "bearoff",
            "build",
            "--two-sided",
            "--checkers",
            "3",
            "--out",
            &e,
            "--fresh",
        ],
        "e.rsb.partial: a symlink",
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!dir.path("e.rsb").exists());
    assert!(dir.path("e.rsb.partial").is_symlink());
    // The checkpoint too.
    std::fs::remove_file(dir.path("e.rsb.partial")).unwrap();
    std::os::unix::fs::symlink(&victim, dir.path("e.rsb.partial.ckpt")).unwrap();
    assert_input_error(&two_sided, "e.rsb.partial.ckpt: a symlink");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn a_gnubg_build_stopped_while_converting_is_converted_by_its_rerun() {
    let dir = TempDir::new("ts-gnubg-rerun");
    let want = build(&dir, "want.bd", "4", &["--cubeful", "--format", "gnubg"]);
    // What a build stopped while converting leaves: the finished table, hidden beside it.
    let hidden = build(&dir, ".t.bd.rollsim", "4", &["--cubeful"]);
    let out = dir.file("t.bd");
    let args = [
        "bearoff",
        "build",
        "--two-sided",
        "--checkers",
        "4",
        "--cubeful",
        "--format",
        "gnubg",
        "--out",
        &out,
    ];
    let rerun = rollsim(&args);
    let err = String::from_utf8_lossy(&rerun.stderr);
    assert!(rerun.status.success(), "{err}");
    assert!(
        err.contains("converted") && err.contains(".t.bd.rollsim"),
        "{err}"
    );
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&want).unwrap());
    assert!(!std::path::Path::new(&hidden).exists());
    // One of another table, or damaged, is built anew.
    build(&dir, ".t.bd.rollsim", "3", &["--cubeful"]);
    let rerun = rollsim(&args);
    let err = String::from_utf8_lossy(&rerun.stderr);
    assert!(rerun.status.success(), "{err}");
    assert!(
        err.contains("removing") && err.contains("3 checkers"),
        "{err}"
    );
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&want).unwrap());
    assert!(!std::path::Path::new(&hidden).exists());
}

#[test]
fn an_interrupted_extract_leaves_no_partial_file() {
    let dir = TempDir::new("ts-extract-signal");
    let t = build(&dir, "t.rsb", "8", &[]);
    let sub = dir.file("sub.rsb");
    for signal in ["INT", "TERM"] {
        let child = rollsim_command()
            .args(["bearoff", "extract", &t, "--checkers", "7", "--out", &sub])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while !dir.path("sub.rsb.partial").exists()
            && start.elapsed() < std::time::Duration::from_secs(30)
        {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        let kill = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let done = child.wait_with_output().unwrap();
        if done.status.success() {
            eprintln!("the extract ended before SIG{signal}; nothing to check");
            std::fs::remove_file(&sub).unwrap();
            continue;
        }
        let want = if signal == "INT" { 130 } else { 143 };
        assert_eq!(done.status.code(), Some(want), "SIG{signal}");
        assert!(!dir.path("sub.rsb.partial").exists(), "SIG{signal}");
        assert!(!dir.path("sub.rsb").exists());
    }
}
