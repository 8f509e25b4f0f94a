//! The `rollsim` binary as a user runs it: output, JSON, exit codes, error messages.

use crate::common::*;

fn gpu_available(test: &str) -> bool {
    rollsim_gpu::test_gpu(test).is_some()
}

#[test]
fn bad_boards_exit_2_naming_the_problem() {
    for (board, says) in [
        (
            "2 4 0 3 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0",
            "bad tile \"3\" at row 1, column 4",
        ),
        ("2 4 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0", "row 1 has 3 cells"),
        ("0x12", "bad hex board"),
        ("65536 0 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0", "65536"),
    ] {
        for cmd in ["show", "eval"] {
            let out = rollsim(
                &["2048", cmd, board, "--backend", "cpu"][..if cmd == "show" { 3 } else { 5 }],
            );
            assert_eq!(out.status.code(), Some(2), "{cmd} {board}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("invalid board") && err.contains(says), "{err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}

#[test]
fn bad_flags_exit_2() {
    for args in [
        &["2048", "play", "--games", "0"][..],
        &["2048", "play", "--player", "genius"],
        &["2048", "play", "--rollouts", "-3"],
        &["2048", "play", "--backend", "tpu"],
        &["2048", "play", "--threads", "0"],
        &["2048", "fly"],
    ] {
        let out = rollsim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn play_json_has_the_documented_fields_and_reproduces() {
    let args = [
        "2048",
        "play",
        "--games",
        "50",
        "--seed",
        "7",
        "--json",
        "--threads",
        "1",
    ];
    let a = json(&args);
    for key in [
        "player",
        "games",
        "seed",
        "backend",
        "score",
        "reach",
        "moves_per_game",
        "games_per_s",
        "moves_per_s",
    ] {
        assert!(a.get(key).is_some(), "missing {key} in {a}");
    }
    for key in ["mean", "median", "max", "sd"] {
        assert!(a["score"][key].is_number(), "score.{key}");
    }
    assert_eq!(a["player"], "random");
    assert_eq!(a["games"], 50);
    assert_eq!(a["seed"], 7);
    assert_eq!(
        a["reach"]["128"].as_f64().map(|p| (0.0..=1.0).contains(&p)),
        Some(true)
    );
    assert!(a["reach"].get("32768").is_some());
    // Same seed, other thread count: same games.
    let mut args2 = args.to_vec();
    args2[8] = "2";
    let b = json(&args2);
    assert_eq!(a["score"], b["score"]);
    assert_eq!(a["reach"], b["reach"]);
}

#[test]
fn mc_play_reports_rollouts() {
    let a = json(&[
        "2048",
        "play",
        "--player",
        "mc",
        "--games",
        "2",
        "--rollouts",
        "5",
        "--seed",
        "1",
        "--backend",
        "cpu",
        "--json",
        "--objective",
        "tilesum",
    ]);
    assert_eq!(a["player"], "mc");
    assert_eq!(a["backend"], "cpu");
    assert_eq!(a["objective"], "tilesum");
    assert!(a["rollouts_per_s"].as_f64().unwrap() > 0.0);
    assert!(
        a.get("spending").is_none(),
        "plain play reports no spending"
    );
    let raced = json(&[
        "2048",
        "play",
        "--player",
        "mc",
        "--games",
        "2",
        "--rollouts",
        "8",
        "--seed",
        "1",
        "--backend",
        "cpu",
        "--json",
        "--crn",
        "--race",
    ]);
    assert_eq!(raced["spending"]["common"], true);
    assert_eq!(raced["spending"]["race"], true);
}

#[test]
fn gpu_and_cpu_play_the_same_games_from_the_command_line() {
    if !gpu_available("gpu_and_cpu_play_the_same_games_from_the_command_line") {
        return;
    }
    let run = |backend| {
        json(&[
            "2048",
            "play",
            "--player",
            "mc",
            "--games",
            "3",
            "--rollouts",
            "8",
            "--seed",
            "11",
            "--backend",
            backend,
            "--json",
        ])
    };
    let (g, c) = (run("gpu"), run("cpu"));
    assert_eq!(g["backend"], "gpu");
    assert!(g["adapter"].is_string());
    assert_eq!(g["score"], c["score"]);
    assert_eq!(g["moves_per_game"], c["moves_per_game"]);
}

#[test]
fn eval_is_the_same_on_every_backend() {
    let board = "2 2 4 8 / 0 4 0 0 / 0 0 2 0 / 0 0 0 16";
    let cpu = json(&[
        "2048",
        "eval",
        board,
        "--rollouts",
        "200",
        "--backend",
        "cpu",
        "--json",
    ]);
    assert_eq!(cpu["moves"].as_array().unwrap().len(), 4);
    assert_eq!(
        cpu["moves"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["best"] == true)
            .count(),
        1
    );
    if gpu_available("eval_is_the_same_on_every_backend") {
        let gpu = json(&[
            "2048",
            "eval",
            board,
            "--rollouts",
            "200",
            "--backend",
            "gpu",
            "--json",
        ]);
        assert_eq!(gpu["moves"], cpu["moves"]);
        assert_eq!(gpu["best"], cpu["best"]);
    }
}

#[test]
fn show_prints_every_format() {
    let out = rollsim(&["2048", "show", "2 2 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 4"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("0x2000000000000011"), "{text}");
    assert!(text.contains("left"), "{text}");
    let j = json(&["2048", "show", "0x2000000000000011", "--json"]);
    assert_eq!(j["grid"], "2 2 . . / . . . . / . . . . / . . . 4");
    assert_eq!(j["moves"].as_array().unwrap().len(), 4);
    let over = json(&[
        "2048",
        "show",
        "2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 4 2",
        "--json",
    ]);
    assert_eq!(over["game_over"], true);
}

#[test]
fn devices_lists_and_names_the_auto_choice() {
    let out = rollsim(&["devices"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--backend auto takes"));
    let j = json(&["devices", "--json"]);
    assert!(j["adapters"].is_array());
}

#[test]
fn bearoff_build_and_query() {
    let dir = TempDir::new("cli");
    let one = dir.path("os-6x6.rsb");
    let built = json(&[
        "bearoff",
        "build",
        "--points",
        "6",
        "--checkers",
        "6",
        "--backend",
        "cpu",
        "--out",
        one.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(built["positions"], 924);
    assert_eq!(built["gammon"], false);
    let q = json(&[
        "bearoff",
        "query",
        one.to_str().unwrap(),
        "0,0,0,0,0,2",
        "--json",
    ]);
    assert!((q["mean"].as_f64().unwrap() - 2.109611).abs() < 1e-6);
    assert!((q["distribution"][2].as_f64().unwrap() - 0.671296).abs() < 1e-6);
    let race = json(&[
        "bearoff",
        "query",
        one.to_str().unwrap(),
        "0,1",
        "0,0,1",
        "--json",
    ]);
    assert_eq!(race["method"], "one-sided estimate");
    assert_eq!(race["win"], 1.0);
    // gnubg's format reads back through the same query.
    let bd = dir.path("os-6x6.bd");
    json(&[
        "bearoff",
        "build",
        "--points",
        "6",
        "--checkers",
        "6",
        "--format",
        "gnubg",
        "--out",
        bd.to_str().unwrap(),
        "--json",
    ]);
    let g = json(&[
        "bearoff",
        "query",
        bd.to_str().unwrap(),
        "0,0,0,0,0,2",
        "--json",
    ]);
    assert!((g["mean"].as_f64().unwrap() - 2.109611).abs() < 1e-4);
    // Two-sided: exact.
    let two = dir.path("ts-3x4.rsb");
    json(&[
        "bearoff",
        "build",
        "--two-sided",
        "--points",
        "4",
        "--checkers",
        "3",
        "--out",
        two.to_str().unwrap(),
        "--json",
    ]);
    let w = json(&[
        "bearoff",
        "query",
        two.to_str().unwrap(),
        "0,0,0,1",
        "0,0,0,1",
        "--json",
    ]);
    assert!(w["method"].as_str().unwrap().starts_with("exact"), "{w}");
    let p = w["win"].as_f64().unwrap();
    assert!(p > 0.5 && p < 1.0, "{p}");
}

#[test]
fn bearoff_bad_input_exits_2() {
    let dir = TempDir::new("cli");
    let one = dir.path("os-3x3.rsb");
    json(&[
        "bearoff",
        "build",
        "--points",
        "3",
        "--checkers",
        "3",
        "--out",
        one.to_str().unwrap(),
        "--json",
    ]);
    let f = one.to_str().unwrap();
    for (args, says) in [
        (vec!["bearoff", "query", f, "1,2,3"], "6 checkers"),
        (vec!["bearoff", "query", f, "1,0,0,0"], "4 points"),
        (vec!["bearoff", "query", f, "1,-1"], "\"-1\""),
        (vec!["bearoff", "query", f, "a"], "\"a\""),
        (
            vec!["bearoff", "build", "--points", "19", "--out", f],
            "19 points",
        ),
        (
            vec!["bearoff", "build", "--checkers", "16", "--out", f],
            "16 checkers",
        ),
    ] {
        let out = rollsim(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // A truncated file and a foreign one.
    let bytes = std::fs::read(&one).unwrap();
    let cut = dir.path("cut.rsb");
    std::fs::write(&cut, &bytes[..bytes.len() - 9]).unwrap();
    let foreign = dir.path("foreign.rsb");
    std::fs::write(&foreign, b"hello, world").unwrap();
    for (file, says) in [(&cut, "truncated"), (&foreign, "not a bearoff table")] {
        let out = rollsim(&["bearoff", "query", file.to_str().unwrap(), "1"]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn bearoff_gpu_build_is_identical_to_cpu() {
    let dir = TempDir::new("cli");
    if !gpu_available("bearoff_gpu_build_is_identical_to_cpu") {
        return;
    }
    let (c, g) = (dir.path("cpu-15x3.rsb"), dir.path("gpu-15x3.rsb"));
    json(&[
        "bearoff",
        "build",
        "--points",
        "3",
        "--checkers",
        "15",
        "--backend",
        "cpu",
        "--out",
        c.to_str().unwrap(),
        "--json",
    ]);
    let built = json(&[
        "bearoff",
        "build",
        "--points",
        "3",
        "--checkers",
        "15",
        "--backend",
        "gpu",
        "--out",
        g.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(built["backend"], "gpu");
    assert_eq!(std::fs::read(c).unwrap(), std::fs::read(g).unwrap());
    let (c, g) = (dir.path("cpu-ts-4x4.rsb"), dir.path("gpu-ts-4x4.rsb"));
    json(&[
        "bearoff",
        "build",
        "--two-sided",
        "--points",
        "4",
        "--checkers",
        "4",
        "--backend",
        "cpu",
        // The GPU's cells: exact integer arithmetic, the same bytes.
        "--precision",
        "fixed32",
        "--out",
        c.to_str().unwrap(),
        "--json",
    ]);
    json(&[
        "bearoff",
        "build",
        "--two-sided",
        "--points",
        "4",
        "--checkers",
        "4",
        "--backend",
        "gpu",
        "--out",
        g.to_str().unwrap(),
        "--json",
    ]);
    assert!(std::fs::read(c).unwrap() == std::fs::read(g).unwrap());
    // u16 cells, cubeful, in gnubg's format: the same bytes on both.
    let (c, g) = (dir.path("cpu-ts-4x5.bd"), dir.path("gpu-ts-4x5.bd"));
    for (backend, out) in [("cpu", &c), ("gpu", &g)] {
        json(&[
            "bearoff",
            "build",
            "--two-sided",
            "--cubeful",
            "--points",
            "4",
            "--checkers",
            "5",
            "--backend",
            backend,
            "--precision",
            "u16",
            "--format",
            "gnubg",
            "--out",
            out.to_str().unwrap(),
            "--json",
        ]);
    }
    assert!(std::fs::read(c).unwrap() == std::fs::read(g).unwrap());
}

#[test]
fn bench_records_and_compares() {
    let dir = TempDir::new("cli");
    let (a, b) = (dir.path("bench-a.json"), dir.path("bench-b.json"));
    let quick = ["bench", "--quick", "--backend", "cpu", "--seconds", "0.05"];
    for f in [&a, &b] {
        let out = rollsim(&[&quick[..], &["--out", f.to_str().unwrap()]].concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let record: serde_json::Value = serde_json::from_slice(&std::fs::read(&a).unwrap()).unwrap();
    for key in [
        "rollsim_version",
        "git_commit",
        "cpu",
        "cpu_threads",
        "measurements",
    ] {
        assert!(record.get(key).is_some(), "{key}");
    }
    let csv = std::fs::read_to_string(a.with_extension("csv")).unwrap();
    assert!(csv.starts_with("workload,backend,on,figure,unit"));
    assert_eq!(
        csv.lines().count(),
        record["measurements"].as_array().unwrap().len() + 1
    );
    let compare = |x: &std::path::Path, y: &std::path::Path| {
        json(&[
            "bench",
            "compare",
            x.to_str().unwrap(),
            y.to_str().unwrap(),
            "--json",
        ])
    };
    let cmp = compare(&a, &b);
    let rows = cmp.as_array().unwrap();
    assert_eq!(rows.len(), record["measurements"].as_array().unwrap().len());
    assert!(rows.iter().all(|r| r["speedup"].as_f64().unwrap() > 0.0));
    // A record against itself: every speedup is 1, rates and times alike.
    let same = compare(&a, &a);
    let same = same.as_array().unwrap();
    assert!(same.iter().any(|r| r["unit"] == "s") && same.iter().any(|r| r["unit"] != "s"));
    for r in same {
        assert_eq!(r["speedup"].as_f64().unwrap(), 1.0, "{r}");
    }
    // A subset of the workloads, by name; a name that is none is refused.
    let only = json(&[&quick[..], &["--only", "rollouts,puzzle-loop", "--json"]].concat());
    let names: Vec<&str> = only["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["workload"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with("2048 mc rollouts") && names[1] == "15-puzzle solve loop");
    let out = rollsim(&["bench", "--only", "nothing"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("possible values"));
    let out = rollsim(&["bench", "compare", a.to_str().unwrap(), "/nonexistent.json"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn flags_that_do_not_apply_are_refused() {
    for (args, says) in [
        (
            &["2048", "play", "--rollouts", "10"][..],
            "--rollouts is for --player mc, not --player random",
        ),
        (
            &["2048", "play", "--objective", "tilesum"][..],
            "--player mc",
        ),
        (&["2048", "play", "--backend", "gpu"][..], "CPU threads"),
        (
            &["2048", "play", "--depth", "2"][..],
            "--depth is for --player expectimax",
        ),
        (&["2048", "play", "--race"][..], "--race is for --player mc"),
        (&["2048", "play", "--crn"][..], "--crn is for --player mc"),
    ] {
        assert_input_error(args, says);
    }
}

#[test]
fn negative_numbers_are_refused_by_the_option_they_were_given_to() {
    for (args, says) in [
        (
            &["2048", "play", "--player", "mc", "--rollouts", "-10"][..],
            "'-10' for '--rollouts",
        ),
        (&["2048", "play", "--seed", "-1"][..], "'-1' for '--seed"),
        (
            &["puzzle", "bench", "--count", "-5"][..],
            "'-5' for '--count",
        ),
    ] {
        let out = rollsim(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn probing_for_a_gpu_prints_nothing_of_the_drivers() {
    // Mesa complains on stderr when XDG_RUNTIME_DIR is unset; rollsim gives it a private one.
    let out = rollsim_command()
        .args(["2048", "eval", "0x2000000000000011", "--rollouts", "4"])
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("XDG_RUNTIME_DIR"), "{err}");
}

#[test]
fn moves_that_would_merge_two_32768s_end_the_game_in_eval() {
    let board = "32768 32768 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 4";
    let v = json(&[
        "2048",
        "eval",
        board,
        "--rollouts",
        "10",
        "--backend",
        "cpu",
        "--json",
    ]);
    let moves = v["moves"].as_array().unwrap();
    for m in moves {
        let horizontal = m["dir"] == "left" || m["dir"] == "right";
        assert_eq!(m["overflow"], horizontal, "{m}");
        if horizontal {
            assert!(m["board"].is_null() && m["score_mean"].is_null() && m["best"] == false);
        }
    }
    assert!(v["best"] == "up" || v["best"] == "down", "{v}");
    let all = json(&[
        "2048",
        "eval",
        "0xffffffffffffffff",
        "--rollouts",
        "10",
        "--backend",
        "cpu",
        "--json",
    ]);
    assert!(all["best"].is_null(), "{all}");
    assert!(
        all["moves"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["overflow"] == true && m["best"] == false)
    );
}

#[test]
fn boards_get_messages_that_name_what_is_wrong() {
    for (args, says) in [
        (
            &["puzzle", "solve", "--board", "123456789abcdef"][..],
            "15 hex digits",
        ),
        (
            &["puzzle", "solve", "--board", "0x123456789abcdf0"][..],
            "15 hex digits",
        ),
        (
            &["2048", "show", "0x+000000000000021"][..],
            "exactly 16 hex digits",
        ),
        (
            &["2048", "show", "12345678901234567"][..],
            "exactly 16 hex digits",
        ),
    ] {
        assert_input_error(args, says);
    }
    // A 0x prefix and a byte-order mark are read as people write them.
    for board in ["0x123456789abcde0f", "\u{feff}123456789abcde0f"] {
        let out = rollsim(&["puzzle", "solve", "--board", board]);
        assert!(
            out.status.success(),
            "{board:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn bench_compare_refuses_figures_that_are_not_measurements() {
    let dir = TempDir::new("bench-zero");
    let rec = dir.file("r.json");
    std::fs::write(
        &rec,
        r#"{"rollsim_version":"0","git_commit":null,"os":"x","unix_time":0,"cpu":"c",
            "cpu_threads":1,"adapter":null,"gpu_kernel_seconds":null,
            "measurements":[{"workload":"w","backend":"cpu","figure":0.0,"unit":"s"}]}"#,
    )
    .unwrap();
    let out = rollsim(&["bench", "compare", &rec, &rec]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a measurement") || err.contains("not a record"),
        "{err}"
    );
}
