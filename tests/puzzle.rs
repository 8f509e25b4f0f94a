//! `rollsim puzzle` as a user runs it: output, JSON, exit codes, error messages, the database
//! cache.

use std::path::PathBuf;

use crate::common::*;

use rollsim_puzzle::{Board, parse_moves, verify};

/// A fresh directory under the system's temporary directory.
/// Checks a result object's solution with the library's checker, independently of the binary.
fn check_result(r: &serde_json::Value) -> usize {
    let board: Board = r["board"].as_str().unwrap().parse().unwrap();
    let moves = parse_moves(r["moves"].as_str().unwrap()).unwrap();
    verify(&board, &moves).unwrap();
    assert_eq!(r["length"].as_u64(), Some(moves.len() as u64));
    moves.len()
}

const ROSETTA: &str = "15 14 1 6 / 9 11 4 12 / 0 10 7 3 / 13 8 5 2";

#[test]
fn bad_boards_exit_2_naming_the_problem() {
    for (board, says) in [
        (
            "1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 14 _",
            "duplicate tile 14 at row 4, column 3 (also at row 4, column 2); missing tile 15",
        ),
        (
            "1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15",
            "row 4 has 3 cells",
        ),
        ("1 2 3 4 5 6 7 8 9 10 11 12", "wrong size: 12 cells"),
        (
            "1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15 16",
            "bad tile \"16\"",
        ),
        ("1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 15 14 _", "odd parity"),
        ("", "empty"),
    ] {
        for method in ["loop", "astar"] {
            let out = rollsim(&["puzzle", "solve", "--method", method, "--board", board]);
            assert_eq!(out.status.code(), Some(2), "{board}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("invalid board") && err.contains(says), "{err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    // In a file: the line is named.
    let tmp = TempDir::new("bad-file");
    let dir = tmp.0.clone();
    let file = dir.join("boards.txt");
    std::fs::write(&file, "123456789abcdef0\n# a comment\n\n123456789abcdfe0\n").unwrap();
    let out = rollsim(&["puzzle", "solve", "--file", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 4") && err.contains("odd parity"),
        "{err}"
    );
    let out = rollsim(&["puzzle", "solve", "--file", "/nonexistent/boards.txt"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_flags_exit_2() {
    for args in [
        &[
            "puzzle",
            "solve",
            "--method",
            "genius",
            "--board",
            "123456789abcdef0",
        ][..],
        &["puzzle", "solve"],
        &[
            "puzzle",
            "solve",
            "--board",
            "123456789abcdef0",
            "--file",
            "x",
        ],
        &["puzzle", "bench", "--count", "0"],
        &["puzzle", "bench", "--threads", "0"],
        &[
            "puzzle", "bench", "--method", "optimal", "--pdb", "4-4", "--count", "1",
        ],
        &["puzzle", "solve", "--board", "1 2 3 / 4 5 6 / 7 _ 8"],
        &["puzzle", "fly"],
        &["puzzle", "bench", "--backend", "quantum"],
    ] {
        let out = rollsim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}

/// The solvers have no GPU kernel: `--backend gpu` says so (exit 2), `auto` and `cpu` run on
/// CPU threads.
#[test]
fn backend_gpu_is_refused_and_cpu_runs() {
    let out = rollsim(&["puzzle", "bench", "--count", "3", "--backend", "gpu"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--backend gpu") && err.contains("CPU threads only"),
        "{err}"
    );
    for backend in ["cpu", "auto"] {
        let v = json(&[
            "puzzle",
            "bench",
            "--count",
            "3",
            "--seed",
            "1",
            "--backend",
            backend,
            "--json",
        ]);
        assert_eq!(v["solved"], 3);
    }
}

#[test]
fn solve_loop_prints_checked_moves_and_stages() {
    let out = rollsim(&["puzzle", "solve", "--board", ROSETTA]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for s in ["tile1", "tiles9-15", "moves", "checked   yes"] {
        assert!(text.contains(s), "{text}");
    }
    let v = json(&["puzzle", "solve", "--board", ROSETTA, "--json"]);
    let r = &v["results"][0];
    assert_eq!(r["solved"], true);
    let len = check_result(r);
    let stages = r["stages"].as_object().unwrap();
    assert_eq!(stages.len(), 6);
    let total: u64 = stages.values().map(|s| s.as_u64().unwrap()).sum();
    assert_eq!(total as usize, len);
    assert_eq!(v["summary"]["boards"], 1);
    assert_eq!(v["summary"]["verified"], true);
    assert_eq!(v["summary"]["plan"], "lookahead");
    let v = json(&[
        "puzzle",
        "solve",
        "--board",
        ROSETTA,
        "--json",
        "--no-verify",
    ]);
    assert_eq!(v["summary"]["verified"], false);
    let v = json(&[
        "puzzle",
        "solve",
        "--board",
        ROSETTA,
        "--json",
        "--no-verify",
        "--verify",
    ]);
    assert_eq!(v["summary"]["verified"], true);
    // The goal needs no moves, in any plan.
    for plan in ["lookahead", "greedy", "shortest"] {
        let v = json(&[
            "puzzle",
            "solve",
            "--board",
            "123456789abcdef0",
            "--plan",
            plan,
            "--json",
        ]);
        assert_eq!(v["results"][0]["length"], 0);
    }
}

#[test]
fn solve_file_reports_each_board_and_the_aggregate() {
    let tmp = TempDir::new("file");
    let dir = tmp.0.clone();
    let file = dir.join("boards.txt");
    std::fs::write(
        &file,
        format!(
            "# three boards\n{ROSETTA}\n\n123456789abcdef0\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 _ 15\n"
        ),
    )
    .unwrap();
    for method in ["loop", "astar"] {
        let v = json(&[
            "puzzle",
            "solve",
            "--method",
            method,
            "--file",
            file.to_str().unwrap(),
            "--json",
        ]);
        let results = v["results"].as_array().unwrap();
        assert_eq!(results.len(), 3);
        assert_eq!(results[1]["length"], 0);
        assert_eq!(results[2]["length"], 1);
        assert_eq!(results[2]["moves"], "R");
        let s = &v["summary"];
        assert_eq!(s["boards"], 3);
        assert_eq!(s["method"], method);
        if method == "loop" {
            assert_eq!(s["solved"], 3);
            assert_eq!(s["solve_rate"], 1.0);
        }
        for r in results.iter().filter(|r| r["solved"] == true) {
            check_result(r);
        }
        for key in ["mean", "max", "min"] {
            assert!(s["moves"][key].is_number(), "{s}");
        }
    }
    let out = rollsim(&["puzzle", "solve", "--file", file.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("boards    3") && text.contains("123456789abcdef0   0"),
        "{text}"
    );
}

#[test]
fn bench_json_has_the_documented_fields_and_reproduces() {
    let args = [
        "puzzle",
        "bench",
        "--count",
        "2000",
        "--seed",
        "5",
        "--json",
        "--threads",
        "1",
    ];
    let a = json(&args);
    for key in [
        "boards",
        "solved",
        "solve_rate",
        "moves",
        "stages",
        "boards_per_s",
        "seed",
        "threads",
        "verified",
    ] {
        assert!(a.get(key).is_some(), "missing {key} in {a}");
    }
    assert_eq!(a["boards"], 2000);
    assert_eq!(a["solved"], 2000);
    assert_eq!(a["solve_rate"], 1.0);
    assert_eq!(a["seed"], 5);
    let stages = a["stages"].as_object().unwrap();
    let keys: Vec<&str> = stages.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "tile1",
            "tile2",
            "tiles3-4",
            "tiles5-6",
            "tiles7-8",
            "tiles9-15"
        ]
    );
    let sum: f64 = stages.values().map(|v| v.as_f64().unwrap()).sum();
    assert!((sum - a["moves"]["mean"].as_f64().unwrap()).abs() < 1e-6);
    // Same seed, other thread count: the same boards and solutions.
    let mut args2 = args.to_vec();
    args2[8] = "2";
    let b = json(&args2);
    assert_eq!(a["moves"], b["moves"]);
    assert_eq!(a["stages"], b["stages"]);
    // The default plan looks ahead: under the 91 moves, and ahead of the greedy choice
    // of loops, which pays for its cheap tile 1 later.
    assert_eq!(a["plan"], "lookahead");
    let mean = |v: &serde_json::Value| v["moves"]["mean"].as_f64().unwrap();
    assert!(mean(&a) <= 91.0, "{a}");
    let mut greedy = args2.clone();
    greedy.extend(["--plan", "greedy"]);
    let g = json(&greedy);
    assert!(mean(&a) < mean(&g) && g["stages"]["tile1"].as_f64() <= a["stages"]["tile1"].as_f64());
    // The shortest plan does each stage by its shortest sequence: better than greedy.
    let mut shortest = args2.clone();
    shortest.extend(["--plan", "shortest"]);
    let c = json(&shortest);
    assert!(mean(&c) < mean(&g));
}

#[test]
fn optimal_builds_caches_and_rebuilds_corrupt_databases() {
    let tmp = TempDir::new("pdb");
    let dir = tmp.0.clone();
    let d = dir.to_str().unwrap();
    let args = [
        "puzzle",
        "solve",
        "--method",
        "optimal",
        "--pdb",
        "5-5-5",
        "--pdb-dir",
        d,
        "--board",
        ROSETTA,
        "--json",
    ];
    let out = rollsim(&args);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"][0]["length"], 52, "the published optimum");
    check_result(&v["results"][0]);
    assert_eq!(v["summary"]["pdb"], "5-5-5");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not exist"), "{err}");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 3, "{files:?}");
    // Cached: nothing is built the second time.
    let out = rollsim(&args);
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("building"));
    // A corrupt file is noticed and rebuilt; the answer is unchanged.
    let f = dir.join("pdb-4x4-1-2-3-5-6.bin");
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[1000] ^= 0x10;
    std::fs::write(&f, &bytes).unwrap();
    let out = rollsim(&args);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("checksum") && err.contains("building"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"][0]["length"], 52);
    let out = rollsim(&args);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("building"));
    // The 8-puzzle uses its own 4-4 databases.
    let v = json(&[
        "puzzle",
        "solve",
        "--method",
        "optimal",
        "--pdb-dir",
        d,
        "--board",
        "8 6 7 / 2 5 4 / 3 _ 1",
        "--json",
    ]);
    assert_eq!(
        v["results"][0]["length"], 31,
        "one of the two hardest 8-puzzle boards"
    );
    check_result(&v["results"][0]);
}

#[test]
fn astar_reports_boards_it_cannot_solve_within_the_limit() {
    let v = json(&[
        "puzzle",
        "solve",
        "--method",
        "astar",
        "--node-limit",
        "100",
        "--board",
        ROSETTA,
        "--json",
    ]);
    let r = &v["results"][0];
    assert_eq!(r["solved"], false);
    assert!(r["length"].is_null() && r["moves"].is_null());
    assert_eq!(r["nodes"], 100);
    assert_eq!(v["summary"]["solved"], 0);
    assert_eq!(v["summary"]["node_limit"], 100);
    let out = rollsim(&[
        "puzzle",
        "solve",
        "--method",
        "astar",
        "--node-limit",
        "100",
        "--board",
        ROSETTA,
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("node limit"));
    let v = json(&[
        "puzzle",
        "bench",
        "--method",
        "astar",
        "--count",
        "20",
        "--seed",
        "1",
        "--node-limit",
        "20000",
        "--json",
    ]);
    assert_eq!(v["boards"], 20);
    assert!(v["solved"].as_u64().unwrap() <= 20);
    assert!(v.get("stages").is_none());
}
