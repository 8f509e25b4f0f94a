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

/// A command line: the words of `line`, then `tail` whole (paths, which may hold spaces).
pub fn words(line: &str, tail: &[&str]) -> Vec<String> {
    line.split_whitespace()
        .chain(tail.iter().copied())
        .map(str::to_string)
        .collect()
}

/// A `rollsim` run in the background (its stdout discarded), killed however the test ends.
pub struct Running(pub std::process::Child);

impl Running {
    pub fn start(args: &[String]) -> Running {
        Running(
            rollsim_command()
                .args(args)
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("run rollsim"),
        )
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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

/// A two-sided table in rollsim's format 2, as every build writes it: 3 checkers on 3 points,
/// cubeful, f32 cells (built once).
pub fn two_sided_v2() -> &'static [u8] {
    use rollsim_bearoff::build::{Options, build_two_sided};
    use rollsim_bearoff::columns::cpu::CpuColumns;
    use rollsim_bearoff::numeric::CellKind;
    use rollsim_bearoff::plan::{Plan, Precision};
    static TABLE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.rsb");
        let space = rollsim_bearoff::Space::new(3, 3).unwrap();
        let plan = Plan::new(
            space,
            true,
            Precision::Cell(CellKind::F32),
            1,
            dir.path(),
            None,
        );
        let options = Options {
            checkpoint_every: std::time::Duration::MAX,
            fresh: true,
            durable: false,
            progress: &|_| {},
            resumed: &mut |_, _| {},
        };
        build_two_sided(&out, &plan, &CpuColumns, options).unwrap();
        std::fs::read(&out).unwrap()
    })
}

/// Where [`two_sided_v2`]'s f32 cell at `at` (a fraction of its cells) lies: its byte offset,
/// whether it is a cubeless value, and the pair (the side on roll, its opponent) it is of.
pub fn two_sided_v2_cell(bytes: &[u8], at: f64) -> (usize, bool, u32, u32) {
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap()) as usize;
    let (n, data, record) = (u64_at(32), u64_at(40), u64_at(48));
    let cells = n * record / 4;
    let i = ((at * cells as f64) as usize).min(cells - 1);
    let (them, k) = (i / (record / 4), i % (record / 4));
    (data + 4 * i, k < n, (k % n) as u32, them as u32)
}

/// The CRC-32 rollsim's files carry.
pub fn crc32(bytes: &[u8]) -> u32 {
    use std::io::Write;
    let mut w = rollsim_core::files::CrcWriter::new(std::io::sink());
    w.write_all(bytes).unwrap();
    w.crc()
}

/// Recomputes every checksum of a two-sided table in rollsim's format 2 (its columns', its
/// checksum table's, its header's), as a program writing impossible values would.
pub fn reseal_two_sided(bytes: &mut [u8]) {
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap()) as usize;
    let cell_bytes = |code| match code {
        1 | 4 => 4,
        2 => 8,
        3 => 2,
        _ => 0,
    };
    let (n, data, record, crcs) = (
        u64_at(bytes, 32),
        u64_at(bytes, 40),
        u64_at(bytes, 48),
        u64_at(bytes, 56),
    );
    let cubeless = n * cell_bytes(u32_at(bytes, 24));
    let mut sections = vec![(0, cubeless)];
    if u32_at(bytes, 28) != 0 {
        sections.push((cubeless, record - cubeless));
    }
    for (s, &(start, len)) in sections.iter().enumerate() {
        for them in 0..n {
            let at = data + them * record + start;
            let crc = crc32(&bytes[at..at + len]);
            let entry = crcs + 4 * (s * n + them);
            bytes[entry..entry + 4].copy_from_slice(&crc.to_le_bytes());
        }
    }
    let table = crc32(&bytes[crcs..crcs + 4 * n * sections.len()]);
    bytes[136..140].copy_from_slice(&table.to_le_bytes());
    let header = crc32(&bytes[..140]);
    bytes[140..144].copy_from_slice(&header.to_le_bytes());
}
