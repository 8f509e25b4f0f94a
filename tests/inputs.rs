//! One exit-code policy for the files a user names: every input that cannot be used (missing,
//! a directory, a device such as /dev/zero, foreign bytes) and every output that cannot go
//! where it is named is bad input, exit 2, with a message naming the path, before any work.

use crate::common::*;

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
    &["2048", "replay", "F"],
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
    assert_input_error(&["2048", "merge", &shard, &shard], "is also an input");
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

#[test]
fn a_records_file_that_holds_no_games_is_bad_input() {
    let dir = TempDir::new("replay");
    let rec = dir.file("games.jsonl");
    let played = rollsim(&[
        "2048", "play", "--games", "1", "--seed", "3", "--record", &rec, "-q",
    ]);
    assert!(played.status.success());
    let record = std::fs::read(&rec).unwrap();
    let mut bom = "\u{feff}".as_bytes().to_vec();
    bom.extend(&record);
    let mut foreign_second = record.clone();
    foreign_second.extend([0x80, 0xff, b'{', b'\n']);
    for (name, bytes, says) in [
        ("empty", Vec::new(), "no game records"),
        ("blank", b"\n  \n".to_vec(), "no game records"),
        ("binary", vec![0xff, 0xfe, 0x00, b'\n'], "line 1: not text"),
        ("foreign", foreign_second, "line 2: not text"),
        ("bom", bom, "line 1: starts with a byte-order mark"),
        (
            "no-newline",
            vec![b'x'; (1 << 20) + 1],
            "line 1: longer than",
        ),
    ] {
        let file = dir.file(name);
        std::fs::write(&file, bytes).unwrap();
        let out = rollsim(&["2048", "replay", &file]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(&file) && err.contains(says), "{name}: {err}");
        assert!(out.stdout.is_empty(), "{name}: claimed a replay");
    }
}

#[test]
fn help_and_version_on_a_full_disk_are_failures() {
    for args in [
        &["--help"][..],
        &["--version"],
        &["help"],
        &["2048", "play", "--help"],
        &["bearoff", "-V"],
    ] {
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            eprintln!("no /dev/full here");
            return;
        };
        let out = rollsim_command()
            .args(args)
            .stdout(full)
            .output()
            .expect("run rollsim");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("writing standard output") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        // Where it can be written, help is a success.
        let out = rollsim(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(!out.stdout.is_empty());
    }
}

#[test]
fn an_unknown_wgpu_backend_is_named_with_the_accepted_ones() {
    let dir = TempDir::new("wgpu-backend");
    let out = dir.file("r.jsonl");
    let commands: &[&[&str]] = &[
        &["devices"],
        &["devices", "--json"],
        &[
            "2048",
            "play",
            "--player",
            "mc",
            "--rollouts",
            "1",
            "--games",
            "1",
            "--backend",
            "gpu",
        ],
        &[
            "2048",
            "play",
            "--player",
            "mc",
            "--rollouts",
            "1",
            "--games",
            "1",
            "--backend",
            "auto",
        ],
        &[
            "2048",
            "experiment",
            "--out",
            &out,
            "--rollouts",
            "1",
            "--games",
            "1",
            "--seed",
            "1",
            "--backend",
            "gpu",
        ],
    ];
    for (value, names) in [
        ("garbage", "unknown backend \"garbage\""),
        ("vulkan,,gl", "an empty backend name"),
    ] {
        for args in commands {
            let got = rollsim_command()
                .args(*args)
                .env("WGPU_BACKEND", value)
                .output()
                .expect("run rollsim");
            let err = String::from_utf8_lossy(&got.stderr);
            assert_eq!(got.status.code(), Some(2), "{value} {args:?}: {err}");
            assert!(
                err.contains(&format!("WGPU_BACKEND={value:?}"))
                    && err.contains(names)
                    && err.contains("vulkan (vk)")
                    && err.contains("metal (mtl)")
                    && !err.contains("apt-get"),
                "{value} {args:?}: {err}"
            );
        }
    }
    // A command on CPU threads reads no GPU setting.
    let cpu = rollsim_command()
        .args(["2048", "play", "--games", "1", "--backend", "cpu", "-q"])
        .env("WGPU_BACKEND", "garbage")
        .output()
        .expect("run rollsim");
    assert!(cpu.status.success());
}

#[test]
fn a_sub_table_beyond_the_table_says_how_many_checkers_it_holds() {
    let dir = TempDir::new("extract-checkers");
    let table = dir.file("t.rsb");
    json(&[
        "bearoff",
        "build",
        "--two-sided",
        "--points",
        "3",
        "--checkers",
        "2",
        "--out",
        &table,
        "--json",
        "-q",
    ]);
    let out = dir.file("sub.rsb");
    for checkers in ["9", "3", "0"] {
        for format in ["rollsim", "gnubg"] {
            let args = [
                "bearoff",
                "extract",
                &table,
                "--checkers",
                checkers,
                "--format",
                format,
                "--out",
                &out,
            ];
            let got = rollsim(&args);
            let err = String::from_utf8_lossy(&got.stderr);
            assert_eq!(got.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains("holds at most 2 checkers")
                    && err.contains(&format!("not {checkers}"))
                    && !err.contains("inconsistent"),
                "{args:?}: {err}"
            );
        }
    }
    assert!(!std::path::Path::new(&out).exists());
}

#[test]
fn experiment_files_and_lists_name_the_line_and_the_field() {
    let dir = TempDir::new("exp-lines");
    let file = dir.file("r.jsonl");
    let played = rollsim(&[
        "2048",
        "experiment",
        "--out",
        &file,
        "--rollouts",
        "1",
        "--games",
        "2",
        "--seed",
        "4",
        "--backend",
        "cpu",
        "-q",
    ]);
    assert!(played.status.success());
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    let v: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    let tile = v["max_tile"].as_u64().unwrap();
    let with_tile_3 = lines[1].replace(&format!("\"max_tile\":{tile}"), "\"max_tile\":3");
    assert_ne!(with_tile_3, lines[1]);
    for (name, body, says) in [
        (
            "blank",
            format!("{}\n\n{}\n{}\n", lines[0], lines[1], lines[2]),
            "line 2: a blank line",
        ),
        (
            "bom",
            format!("\u{feff}{text}"),
            "line 1 (the header): a byte-order mark",
        ),
        (
            "tile",
            format!("{}\n{with_tile_3}\n{}\n", lines[0], lines[2]),
            "line 2: field max_tile: 3 is not a tile",
        ),
    ] {
        let bad = dir.file(name);
        std::fs::write(&bad, body).unwrap();
        assert_input_error(&["2048", "experiment", "--report", &bad], says);
        assert_input_error(&["2048", "merge", &dir.file("merged"), &bad], says);
    }
    for list in ["1,,2", "1,2,", ",1", "+1"] {
        assert_input_error(
            &[
                "2048",
                "experiment",
                "--out",
                &dir.file("new.jsonl"),
                "--rollouts",
                list,
                "--games",
                "1",
                "--seed",
                "1",
            ],
            &format!("bad --rollouts {list:?}"),
        );
    }
    assert!(!dir.path("new.jsonl").exists());
}

#[test]
fn a_signed_hex_board_is_named_as_such() {
    for (board, says) in [
        ("+0x0000000000000021", "takes no sign"),
        ("-0x0000000000000021", "takes no sign"),
        ("hello", "neither a hex board"),
        ("2", "the board has 1 cell,"),
    ] {
        // `--`: a board that starts with `-` is not an option.
        assert_input_error(&["2048", "show", "--", board], says);
    }
}
