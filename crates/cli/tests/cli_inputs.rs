//! One exit-code policy for the files a user names: every input that cannot be used (missing,
//! a directory, a device such as /dev/zero, foreign bytes) and every output that cannot go
//! where it is named is bad input, exit 2, with a message naming the path, before any work.

mod common;

use common::*;

/// Every command that reads a file, with `F` where the file goes.
const READERS: &[&[&str]] = &[
    &["bearoff", "query", "F", "0,0,0,0,0,1"],
    &["bearoff", "verify", "F"],
    &["bearoff", "compare", "F", "F"],
    &["bearoff", "extract", "F", "--checkers", "2", "--out", "OUT"],
    &["2048", "experiment", "--report", "F"],
    &["2048", "merge", "OUT", "F"],
    &["puzzle", "solve", "--file", "F", "--method", "loop"],
    &[
        "2048",
        "play",
        "--player",
        "ntuple",
        "--weights",
        "F",
        "--games",
        "1",
    ],
    &[
        "2048", "train", "--resume", "F", "--out", "OUT", "--games", "10",
    ],
    &["bench", "compare", "F", "F"],
];

#[test]
fn unusable_input_files_are_bad_input_in_every_command() {
    let dir = TempDir::new("inputs");
    let garbage = dir.file("garbage");
    std::fs::write(&garbage, [0xff, 0xfe, 0x00, 0x80, 0x13, 0x37].repeat(100)).unwrap();
    let missing = dir.file("missing");
    let out = dir.file("out");
    let mut files = vec![
        missing.clone(),
        dir.0.to_str().unwrap().to_string(),
        garbage,
    ];
    if std::path::Path::new("/dev/zero").exists() {
        files.push("/dev/zero".to_string());
    }
    for file in &files {
        for cmd in READERS {
            let args: Vec<&str> = cmd
                .iter()
                .map(|&a| match a {
                    "F" => file.as_str(),
                    "OUT" => out.as_str(),
                    a => a,
                })
                .collect();
            let got = rollsim(&args);
            let err = String::from_utf8_lossy(&got.stderr);
            assert_eq!(got.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains(file.as_str()) && !err.contains("panicked"),
                "{args:?}: {err}"
            );
        }
    }
}

#[test]
fn outputs_that_cannot_be_written_are_refused_before_any_work() {
    let dir = TempDir::new("outputs");
    let file = dir.file("a-file");
    std::fs::write(&file, "x").unwrap();
    let below_file = format!("{file}/out");
    let a_dir = dir.0.to_str().unwrap().to_string();
    let mut outs = vec![a_dir, below_file];
    // A directory that takes no new files (root ignores permission bits; /proc does not).
    if std::path::Path::new("/proc/self").is_dir() {
        outs.push("/proc/rollsim-out".to_string());
    }
    for out in &outs {
        for args in [
            &[
                "bearoff",
                "build",
                "--points",
                "6",
                "--checkers",
                "15",
                "--out",
                out,
            ][..],
            &["bench", "--out", out, "--quick"][..],
            &["2048", "train", "--games", "10", "--out", out][..],
            &[
                "2048",
                "experiment",
                "--out",
                out,
                "--rollouts",
                "1",
                "--games",
                "1",
                "--seed",
                "1",
            ][..],
        ] {
            let got = rollsim(args);
            let err = String::from_utf8_lossy(&got.stderr);
            assert_eq!(got.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(out.as_str()), "{args:?}: {err}");
        }
    }
}

#[test]
fn merge_refuses_to_write_over_one_of_its_inputs() {
    let dir = TempDir::new("merge-self");
    let shard = dir.file("s0.jsonl");
    let run = rollsim(&[
        "2048",
        "experiment",
        "--out",
        &shard,
        "--rollouts",
        "1",
        "--games",
        "2",
        "--seed",
        "1",
        "--shard",
        "0/2",
        "--backend",
        "cpu",
        "-q",
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let before = std::fs::read(&shard).unwrap();
    assert_input_error(
        &["2048", "merge", &shard, &shard],
        "both the output and an input",
    );
    assert_eq!(std::fs::read(&shard).unwrap(), before);
}

#[test]
fn train_does_not_replace_a_network_without_being_told() {
    let dir = TempDir::new("train-force");
    let net = dir.file("n.bin");
    std::fs::write(&net, "an earlier network").unwrap();
    assert_input_error(
        &[
            "2048", "train", "--tuples", "small", "--games", "10", "--out", &net,
        ],
        "--resume",
    );
    assert_eq!(std::fs::read(&net).unwrap(), b"an earlier network");
}

#[test]
fn puzzle_inputs_name_the_line_and_the_directory() {
    let dir = TempDir::new("puzzle-inputs");
    let boards = dir.file("boards.txt");
    std::fs::write(&boards, "# two boards\n123456789abcde0f\n\n123456708\n").unwrap();
    assert_input_error(
        &["puzzle", "solve", "--file", &boards, "--method", "loop"],
        "line 4: a 3x3 board",
    );
    let file = dir.file("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    assert_input_error(
        &[
            "puzzle",
            "solve",
            "--board",
            "123456789abcde0f",
            "--method",
            "optimal",
            "--pdb-dir",
            &file,
        ],
        "a file, not a directory",
    );
    assert_input_error(&["2048", "play", "--threads", "65535"], "65535");
}

#[test]
fn a_gnubg_database_of_another_kind_is_named_as_such() {
    let dir = TempDir::new("hypergammon");
    let file = dir.file("hyper1.bd");
    let mut bytes = b"gnubg-H1-1xxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n".to_vec();
    bytes.extend([0u8; 64]);
    std::fs::write(&file, bytes).unwrap();
    assert_input_error(&["bearoff", "query", &file, "1"], "(hypergammon)");
}

/// A flag that does not apply to what the command was asked to do is refused, never ignored.
#[test]
fn flags_that_do_not_apply_are_refused_everywhere() {
    let b = "123456789abcde0f";
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "puzzle", "solve", "--board", b, "--method", "loop", "--pdb", "5-5-5",
            ],
            "--pdb is for --method optimal",
        ),
        (
            &[
                "puzzle",
                "solve",
                "--board",
                b,
                "--method",
                "astar",
                "--pdb-dir",
                ".",
            ],
            "--pdb-dir is for --method optimal",
        ),
        (
            &["puzzle", "bench", "--method", "optimal", "--plan", "greedy"],
            "--plan is for --method loop",
        ),
        (
            &["puzzle", "solve", "--board", b, "--node-limit", "5"],
            "--node-limit is for --method astar",
        ),
        (
            &["puzzle", "bench", "--count", "1", "--backend", "gpu"],
            "no GPU kernel",
        ),
        (
            &[
                "bearoff",
                "build",
                "--points",
                "3",
                "--checkers",
                "3",
                "--checkpoint-secs",
                "5",
            ],
            "--checkpoint-secs applies to two-sided",
        ),
        (
            &[
                "bearoff",
                "build",
                "--two-sided",
                "--points",
                "3",
                "--checkers",
                "3",
                "--no-gammon",
            ],
            "--no-gammon applies to one-sided",
        ),
        (
            &[
                "2048",
                "experiment",
                "--report",
                "r.jsonl",
                "--backend",
                "cpu",
            ],
            "cannot be used with '--backend",
        ),
        (
            &["2048", "play", "--player", "random", "--rollouts", "5"],
            "--rollouts",
        ),
        (
            &["2048", "play", "--player", "random", "--backend", "gpu"],
            "--backend gpu",
        ),
    ];
    let dir = TempDir::new("flags");
    let out = dir.file("never-written.rsb");
    for (args, says) in cases {
        let mut args = args.to_vec();
        if args[1] == "build" {
            args.extend(["--out", &out, "--dry-run"]);
        }
        assert_input_error(&args, says);
    }
}

#[test]
fn a_cpu_only_command_does_not_offer_the_gpu() {
    let help = rollsim(&["puzzle", "bench", "--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("[possible values: auto, cpu]"), "{text}");
}
