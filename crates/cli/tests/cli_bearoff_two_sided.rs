//! Two-sided bearoff tables as a user builds them: the sweep by columns into rollsim's file,
//! sub-tables, gnubg's format, checkpoints, and builds too large for the machine.

mod common;

use std::process::Command;

use common::*;
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
    assert_eq!(table.win(us, them), w);
    assert_eq!(table.equities(us, them).unwrap().centred, centred);
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
        .env("ROLLSIM_TEST_KILL_AFTER_CHECKPOINTS", "70")
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

/// makebearoff from Debian's gnubg package, when present (CI installs it).
fn makebearoff() -> Option<&'static str> {
    let path = "/usr/games/makebearoff";
    std::path::Path::new(path).exists().then_some(path)
}

#[test]
fn gnubg_makebearoff_tables_agree_within_its_rounding() {
    let Some(makebearoff) = makebearoff() else {
        eprintln!("skipped: no makebearoff (Debian's gnubg package)");
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
