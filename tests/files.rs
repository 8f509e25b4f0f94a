//! Every command that writes a file, against what a hostile or careless setup leaves where it
//! writes: a FIFO, a device, standard output, links to them, links planted in place of the
//! files rollsim keeps beside an output, one output under two names while another run writes
//! it, and an output that is one of the command's inputs. Each case must exit 2 naming what it
//! found, and change nothing outside the named output. One table of writers, so that a new
//! writer is one row here.

use crate::common::*;
use std::fs;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::Path;
use std::process::Output;

/// Files the writers read: a two-sided table, an experiment's results, a small network.
struct Inputs {
    dir: TempDir,
    table: String,
    shard: String,
    net: String,
}

impl Inputs {
    fn new(name: &str) -> Inputs {
        let dir = TempDir::new(name);
        let (table, shard, net) = (dir.file("in.rsb"), dir.file("in.jsonl"), dir.file("in.net"));
        for (line, out) in [
            ("bearoff build --two-sided --points 3 --checkers 2", &table),
            ("2048 experiment --rollouts 1 --games 2 --seed 1", &shard),
            ("2048 train --games 2 --tuples small --seed 1", &net),
        ] {
            let args = words(&format!("{line} --backend cpu -q --out"), &[out]);
            let run = run(&args);
            assert!(run.status.success(), "{line}: {}", stderr(&run));
        }
        Inputs {
            dir,
            table,
            shard,
            net,
        }
    }
}

/// A command that writes one file, `out`.
struct Writer {
    name: &'static str,
    args: fn(&Inputs, &str) -> Vec<String>,
    /// The files it keeps beside `out` while writing it (a lock, a partial table).
    beside: fn(&str) -> Vec<String>,
}

/// `.NAME.lock` beside `out`.
fn lock(out: &str) -> String {
    let p = Path::new(out);
    p.with_file_name(format!(
        ".{}.lock",
        p.file_name().unwrap().to_str().unwrap()
    ))
    .to_str()
    .unwrap()
    .to_string()
}

fn nothing(_: &str) -> Vec<String> {
    Vec::new()
}

fn lock_only(out: &str) -> Vec<String> {
    vec![lock(out)]
}

fn lock_and_partial(out: &str) -> Vec<String> {
    vec![lock(out), format!("{out}.partial")]
}

const WRITERS: &[Writer] = &[
    Writer {
        name: "bearoff build (one-sided)",
        args: |_, out| words("bearoff build --points 3 --checkers 3 -q --out", &[out]),
        beside: nothing,
    },
    Writer {
        name: "bearoff build (one-sided, gnubg)",
        args: |_, out| {
            words(
                "bearoff build --points 3 --checkers 3 -q --format gnubg --out",
                &[out],
            )
        },
        beside: nothing,
    },
    Writer {
        name: "bearoff build (two-sided)",
        args: |_, out| {
            words(
                "bearoff build --two-sided --points 3 --checkers 2 -q --backend cpu --out",
                &[out],
            )
        },
        beside: lock_and_partial,
    },
    Writer {
        name: "bearoff build (two-sided, gnubg)",
        args: |_, out| {
            let line = "bearoff build --two-sided --points 3 --checkers 2 -q --backend cpu";
            words(&format!("{line} --format gnubg --out"), &[out])
        },
        beside: nothing,
    },
    Writer {
        name: "bearoff extract",
        args: |i, out| words("bearoff extract --checkers 1 --out", &[out, &i.table]),
        beside: lock_and_partial,
    },
    Writer {
        name: "bearoff extract (gnubg)",
        args: |i, out| {
            words(
                "bearoff extract --checkers 1 --format gnubg --out",
                &[out, &i.table],
            )
        },
        beside: nothing,
    },
    Writer {
        name: "2048 train",
        args: |_, out| {
            words(
                "2048 train --games 2 --tuples small -q --force --out",
                &[out],
            )
        },
        beside: lock_only,
    },
    Writer {
        name: "2048 experiment",
        args: |_, out| {
            let line = "2048 experiment --rollouts 1 --games 1 --seed 1 -q --backend cpu";
            words(&format!("{line} --out"), &[out])
        },
        beside: lock_only,
    },
    Writer {
        name: "2048 merge",
        args: |i, out| words("2048 merge", &[out, &i.shard]),
        beside: nothing,
    },
    Writer {
        name: "2048 play --record",
        args: |_, out| words("2048 play --games 1 -q --record", &[out]),
        beside: nothing,
    },
    Writer {
        name: "bench --out",
        args: |_, out| {
            let line = "bench --quick --only playouts --seconds 0.05 -q --backend cpu";
            words(&format!("{line} --out"), &[out])
        },
        beside: nothing,
    },
];

fn run(args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    rollsim(&args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every entry of `dir`: name, kind, and a checksum of a regular file's contents. Empty lock
/// files are left out: a writer may leave one beside the output it refused.
fn snapshot(dir: &Path) -> Vec<(String, String, u32)> {
    let mut all: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            !(name.starts_with('.')
                && name.ends_with(".lock")
                && fs::metadata(e.path()).is_ok_and(|m| m.len() == 0))
        })
        .map(|e| {
            let m = fs::symlink_metadata(e.path()).unwrap();
            let t = m.file_type();
            let kind = if t.is_symlink() {
                format!("link to {}", fs::read_link(e.path()).unwrap().display())
            } else if t.is_fifo() {
                "fifo".into()
            } else if t.is_char_device() {
                "char device".into()
            } else {
                "file".into()
            };
            let body = if t.is_file() {
                crc32(&fs::read(e.path()).unwrap())
            } else {
                0
            };
            (e.file_name().to_string_lossy().into_owned(), kind, body)
        })
        .collect();
    all.sort();
    all
}

/// Runs `w` on `out`, which must be refused with exit 2 and a message containing `says`,
/// changing nothing in the scratch directory.
fn refused(w: &Writer, inputs: &Inputs, out: &str, says: &str) {
    let before = snapshot(&inputs.dir.0);
    let o = run(&(w.args)(inputs, out));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{} --out {out}: {err}", w.name);
    assert!(
        err.contains(says),
        "{} --out {out}: expected {says:?}: {err}",
        w.name
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        snapshot(&inputs.dir.0),
        before,
        "{} --out {out} changed files",
        w.name
    );
}

fn mkfifo(path: &str) {
    let c = std::ffi::CString::new(path).unwrap();
    // SAFETY: a plain system call on a NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {path}"
    );
}

/// A character device like /dev/null made in the scratch directory, where the test may
/// (root, as CI runs); else None.
fn mknod_null(path: &str) -> Option<()> {
    let c = std::ffi::CString::new(path).unwrap();
    // SAFETY: a plain system call on a NUL-terminated path.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    (made == 0).then_some(())
}

#[test]
fn outputs_that_are_not_regular_files_are_refused_by_every_writer() {
    let inputs = Inputs::new("not-regular");
    let (fifo, dev) = (inputs.dir.file("fifo"), inputs.dir.file("null"));
    mkfifo(&fifo);
    let have_device = mknod_null(&dev).is_some();
    if !have_device {
        eprintln!(
            "note: not allowed to make a device node here; its case runs through /dev/null links only"
        );
    }
    symlink(&fifo, inputs.dir.path("to-fifo")).unwrap();
    symlink("/dev/null", inputs.dir.path("to-null")).unwrap();
    symlink("/proc/self/fd/1", inputs.dir.path("to-stdout")).unwrap();
    symlink(inputs.dir.path("missing"), inputs.dir.path("dangling")).unwrap();
    for w in WRITERS {
        refused(w, &inputs, &fifo, "a FIFO, not a regular file");
        if have_device {
            refused(w, &inputs, &dev, "a character device, not a regular file");
        }
        refused(
            w,
            &inputs,
            &inputs.dir.file("to-fifo"),
            "a symlink to a FIFO",
        );
        refused(
            w,
            &inputs,
            &inputs.dir.file("to-null"),
            "a symlink to a character device",
        );
        refused(
            w,
            &inputs,
            &inputs.dir.file("to-stdout"),
            "a symlink to a file descriptor",
        );
        refused(
            w,
            &inputs,
            &inputs.dir.file("dangling"),
            "a symlink to nothing",
        );
        if w.name != "2048 play --record" {
            refused(w, &inputs, "-", "standard output");
            refused(w, &inputs, "/dev/stdout", "standard output");
        }
    }
}

#[test]
fn links_planted_beside_an_output_are_never_written_through() {
    let inputs = Inputs::new("planted");
    let victim = inputs.dir.file("victim");
    fs::write(&victim, b"precious").unwrap();
    for w in WRITERS {
        let out = inputs.dir.file("out");
        for planted in (w.beside)(&out) {
            // A lock file left by an earlier writer is replaced by the plant.
            let _ = fs::remove_file(&planted);
            symlink(&victim, &planted).unwrap();
            refused(
                w,
                &inputs,
                &out,
                "a symlink where rollsim keeps its own file",
            );
            fs::remove_file(&planted).unwrap();
            fs::hard_link(&victim, &planted).unwrap();
            refused(w, &inputs, &out, "a file with 2 hard links");
            fs::remove_file(&planted).unwrap();
        }
        assert_eq!(fs::read(&victim).unwrap(), b"precious", "{}", w.name);
    }
}

#[test]
fn an_output_being_written_is_refused_under_any_of_its_names() {
    let inputs = Inputs::new("two-names");
    let real = inputs.dir.path("real");
    for w in WRITERS.iter().filter(|w| !(w.beside)("x").is_empty()) {
        fs::write(&real, b"").unwrap();
        // Held as a writer holds it, by this process: its pid is the one to be named.
        let held = rollsim_core::files::lock_for_writing(&real).unwrap();
        let (soft, hard) = (inputs.dir.file("soft"), inputs.dir.file("hard"));
        symlink(&real, &soft).unwrap();
        fs::hard_link(&real, &hard).unwrap();
        let holder = format!(
            "being written by another process (pid {}",
            std::process::id()
        );
        for name in [real.to_str().unwrap(), &soft, &hard] {
            let o = run(&(w.args)(&inputs, name));
            assert_eq!(
                o.status.code(),
                Some(2),
                "{} --out {name}: {}",
                w.name,
                stderr(&o)
            );
            assert!(stderr(&o).contains(&holder), "{}: {}", w.name, stderr(&o));
        }
        drop(held);
        for p in [&soft, &hard] {
            fs::remove_file(p).unwrap();
        }
    }
}

#[test]
fn an_experiment_under_way_is_refused_under_a_second_name() {
    let dir = TempDir::new("experiment-names");
    let (real, link) = (dir.file("real.jsonl"), dir.file("link.jsonl"));
    let args = |out: &str| {
        let line = "2048 experiment --rollouts 50 --games 400 --seed 7 --backend cpu --threads 1";
        words(&format!("{line} -q --out"), &[out])
    };
    let first = Running::start(&args(&real));
    while fs::metadata(&real).map_or(true, |m| m.len() == 0) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    fs::hard_link(&real, &link).unwrap();
    let second = run(&args(&link));
    let third = run(&args(&real));
    drop(first);
    for o in [second, third] {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("being written by another process (pid"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn an_output_that_is_an_input_is_refused() {
    let inputs = Inputs::new("inputs");
    let hard = inputs.dir.file("hard.rsb");
    fs::hard_link(&inputs.table, &hard).unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &[
                "bearoff",
                "extract",
                &inputs.table,
                "--checkers",
                "1",
                "--out",
                &inputs.table,
            ],
            &inputs.table,
        ),
        (
            &[
                "bearoff",
                "extract",
                &inputs.table,
                "--checkers",
                "1",
                "--out",
                &hard,
            ],
            &inputs.table,
        ),
        (
            &[
                "bearoff",
                "extract",
                &inputs.table,
                "--checkers",
                "1",
                "--format",
                "gnubg",
                "--out",
                &hard,
            ],
            &inputs.table,
        ),
        (
            &["2048", "merge", &inputs.shard, &inputs.shard],
            &inputs.shard,
        ),
        (
            &[
                "2048",
                "play",
                "--player",
                "ntuple",
                "--weights",
                &inputs.net,
                "--games",
                "1",
                "--record",
                &inputs.net,
            ],
            &inputs.net,
        ),
    ];
    for (args, input) in cases {
        let before = snapshot(&inputs.dir.0);
        let o = rollsim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("is also an input ({input})")),
            "{}",
            stderr(&o)
        );
        assert_eq!(snapshot(&inputs.dir.0), before, "{args:?}");
    }
}

#[test]
fn a_symlink_to_a_regular_file_has_its_target_written_and_stays_a_link() {
    let inputs = Inputs::new("links");
    let (target, link) = (inputs.dir.path("target"), inputs.dir.file("link"));
    // Merge reads a shard it would then write: its own case is below.
    for w in WRITERS.iter().filter(|w| w.name != "2048 merge") {
        // Empty: a file every writer may replace (an experiment continues only its own).
        fs::write(&target, b"").unwrap();
        symlink(&target, &link).unwrap();
        let o = run(&(w.args)(&inputs, &link));
        assert!(o.status.success(), "{}: {}", w.name, stderr(&o));
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{}",
            w.name
        );
        let written = fs::metadata(&target).unwrap().len();
        assert!(written > 0, "{}: the target written", w.name);
        for p in [&link, &format!("{link}.csv")] {
            let _ = fs::remove_file(p);
        }
    }
}

#[test]
fn game_records_stream_to_standard_output() {
    let o = rollsim(&[
        "2048", "play", "--games", "3", "--seed", "5", "--record", "-",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(
        text.lines().count(),
        3,
        "one record a game, and nothing else: {text}"
    );
    for line in text.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(r["seed"], 5);
    }
    assert!(
        stderr(&o).contains("games       3"),
        "the report on stderr: {}",
        stderr(&o)
    );
}

#[test]
fn side_files_rollsim_did_not_write_are_not_replaced() {
    let dir = TempDir::new("side-files");
    let (record, csv) = (dir.file("rec.json"), dir.path("rec.csv"));
    let bench = [
        "bench",
        "--quick",
        "--only",
        "playouts",
        "--seconds",
        "0.05",
        "--backend",
        "cpu",
    ];
    fs::write(&csv, b"my own notes").unwrap();
    assert_input_error(
        &[&bench[..], &["--out", &record]].concat(),
        "was not written by rollsim",
    );
    assert_eq!(fs::read(&csv).unwrap(), b"my own notes");
    assert!(!Path::new(&record).exists(), "refused before any work");
    fs::remove_file(&csv).unwrap();
    for _ in 0..2 {
        // Its own CSV, from the first run, is replaced by the second.
        let o = rollsim(&[&bench[..], &["--out", &record, "-q"]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let results = dir.file("e.jsonl");
    let e = [
        "2048",
        "experiment",
        "--rollouts",
        "1",
        "--games",
        "1",
        "--seed",
        "1",
        "--backend",
        "cpu",
    ];
    fs::write(dir.path("e.jsonl.csv"), b"notes").unwrap();
    assert_input_error(
        &[&e[..], &["--out", &results]].concat(),
        "was not written by rollsim",
    );
    assert!(!Path::new(&results).exists());
    fs::remove_file(dir.path("e.jsonl.csv")).unwrap();
    let o = rollsim(&[&e[..], &["--out", &results, "-q"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    fs::write(dir.path("e.jsonl.csv"), b"notes").unwrap();
    assert_input_error(
        &["2048", "experiment", "--report", &results],
        "was not written by rollsim",
    );
}

#[test]
fn inputs_that_would_block_are_refused_at_once() {
    let dir = TempDir::new("fifo-inputs");
    let fifo = dir.file("fifo");
    mkfifo(&fifo);
    let out = dir.file("out.net");
    for args in [
        &[
            "2048",
            "play",
            "--player",
            "ntuple",
            "--weights",
            &fifo,
            "--games",
            "1",
        ][..],
        &[
            "2048", "train", "--games", "1", "--resume", &fifo, "--out", &out,
        ],
        &["2048", "replay", &fifo],
        &["bearoff", "query", &fifo, "0,0,1"],
        &["bearoff", "verify", &fifo],
        &["bench", "compare", &fifo, &fifo],
    ] {
        assert_input_error(args, "a FIFO, not a regular file");
    }
}

#[test]
fn outputs_whose_names_are_not_text_keep_locks_and_partials_of_their_own() {
    use std::os::unix::ffi::OsStrExt;
    let dir = TempDir::new("names");
    let name = |b: &[u8]| dir.0.join(std::ffi::OsStr::from_bytes(b));
    let (held, free) = (name(b"t\xff.rsb"), name(b"t\xfe.rsb"));
    // Another writer holds the first; the second, whose lossy name is the same, is free.
    let _held = rollsim_core::files::lock_for_writing(&held).unwrap();
    let o = rollsim_command()
        .args(words(
            "bearoff build --two-sided --points 3 --checkers 2 -q --out",
            &[],
        ))
        .arg(&free)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(free.is_file() && !held.exists());
}
