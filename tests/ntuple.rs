//! `rollsim 2048 train` and the n-tuple players as a user runs them: a small network trained,
//! resumed and played, and every kind of bad input refused with exit code 2.

use std::path::Path;

use crate::common::*;

fn train_small(out: &str, games: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "2048",
        "train",
        "--games",
        games,
        "--tuples",
        "small",
        "--out",
        out,
        "--seed",
        "3",
        "--threads",
        "1",
        "--json",
        "-q",
    ];
    args.extend_from_slice(extra);
    json(&args)
}

#[test]
fn train_then_play_greedy_and_expectimax() {
    let dir = TempDir::new("ntuple-train-play");
    let net = dir.file("small.bin");
    let t = train_small(&net, "2000", &[]);
    assert_eq!(t["games"], 2000);
    assert_eq!(t["games_this_run"], 2000);
    assert_eq!(t["element"], "f32");
    assert!(t["moves_per_s"].as_f64().unwrap() > 0.0);
    assert!(t["seconds"].as_f64().unwrap() > 0.0);
    let curve = t["curve"].as_array().unwrap();
    assert_eq!(curve.len(), 2, "blocks of 1,000 games by default");
    assert_eq!(curve[1]["games"], 2000);
    for key in ["mean_score", "max_score", "moves_per_s"] {
        assert!(curve[1][key].as_f64().unwrap() > 0.0, "{key}");
    }
    assert!(curve[1]["reach"]["2048"].is_number());
    assert!(
        curve[1]["mean_score"].as_f64() > curve[0]["mean_score"].as_f64(),
        "{curve:?}"
    );

    let p = json(&[
        "2048",
        "play",
        "--player",
        "ntuple",
        "--weights",
        &net,
        "--games",
        "30",
        "--seed",
        "1",
        "--json",
    ]);
    assert_eq!(p["player"], "ntuple");
    assert_eq!(p["backend"], "cpu");
    assert_eq!(p["network"]["training_games"], 2000);
    assert_eq!(p["network"]["tuples"].as_array().unwrap().len(), 5);
    assert!(p.get("depth").is_none());
    // Random play averages about 1,100 points.
    let greedy = p["score"]["mean"].as_f64().unwrap();
    assert!(greedy > 3300.0, "greedy mean {greedy}");

    let e = json(&[
        "2048",
        "play",
        "--player",
        "expectimax",
        "--depth",
        "2",
        "--weights",
        &net,
        "--games",
        "3",
        "--seed",
        "1",
        "--json",
        "--threads",
        "1",
    ]);
    assert_eq!(e["player"], "expectimax");
    assert_eq!(e["depth"], 2);
    assert_eq!(e["games"], 3);
    // The same games again on two threads: the same scores.
    let e2 = json(&[
        "2048",
        "play",
        "--player",
        "expectimax",
        "--depth",
        "2",
        "--weights",
        &net,
        "--games",
        "3",
        "--seed",
        "1",
        "--json",
        "--threads",
        "2",
    ]);
    assert_eq!(e["score"], e2["score"]);

    let text = rollsim(&[
        "2048",
        "play",
        "--player",
        "expectimax",
        "--weights",
        &net,
        "--games",
        "2",
        "--seed",
        "1",
        "--backend",
        "auto",
    ]);
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("expectimax depth 2"), "{text}");
    assert!(text.contains("trained 2000 games"), "{text}");
}

#[test]
fn resumed_training_continues_the_same_run_exactly() {
    let dir = TempDir::new("ntuple-resume");
    let (first, resumed, whole) = (dir.file("a.bin"), dir.file("b.bin"), dir.file("c.bin"));
    train_small(&first, "600", &["--block", "200"]);
    let r = train_small(&resumed, "1000", &["--block", "200", "--resume", &first]);
    assert_eq!(r["games"], 1000);
    assert_eq!(r["games_this_run"], 400);
    assert_eq!(r["curve"][0]["games"], 800);
    train_small(&whole, "1000", &["--block", "200"]);
    let (b, c) = (
        std::fs::read(&resumed).unwrap(),
        std::fs::read(&whole).unwrap(),
    );
    assert!(
        b == c,
        "one-thread training resumed from an f32 file is bit-identical"
    );

    // f16 storage: half the weight bytes; it plays and resumes.
    let half = dir.file("h.bin");
    let h = train_small(
        &half,
        "300",
        &["--f16", "--checkpoint-every", "100", "--block", "100"],
    );
    assert_eq!(h["element"], "f16");
    // The header, the tuples, the JSON recipe (its length at byte 28), the weights, the CRC.
    let size = |p: &str| {
        let bytes = std::fs::read(p).unwrap();
        let json = u32::from_le_bytes(bytes[28..32].try_into().unwrap()) as usize;
        assert!(bytes[72..72 + json].starts_with(b"{\"recipe\":"));
        bytes.len() - json
    };
    assert_eq!(size(&half), 32 + 5 * 8 + 5 * 65536 * 2 + 4);
    assert_eq!(size(&whole), 32 + 5 * 8 + 5 * 65536 * 4 + 4);
    let more = train_small(&dir.file("h2.bin"), "400", &["--resume", &half]);
    assert_eq!(more["games"], 400);
    // Nothing but the networks left in the directory (no temporary files), and the locks
    // that stay beside what was written.
    let mut names: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !(n.starts_with('.') && n.ends_with(".lock")))
        .collect();
    names.sort();
    assert_eq!(names, ["a.bin", "b.bin", "c.bin", "h.bin", "h2.bin"]);
}

#[test]
fn bad_weights_and_settings_exit_2_naming_the_problem() {
    let dir = TempDir::new("ntuple-bad");
    let net = dir.file("net.bin");
    train_small(&net, "50", &[]);
    let bytes = std::fs::read(&net).unwrap();
    let truncated = dir.file("truncated.bin");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let corrupt = dir.file("corrupt.bin");
    let mut flipped = bytes.clone();
    flipped[1000] ^= 0x10;
    std::fs::write(&corrupt, &flipped).unwrap();
    let foreign = dir.file("foreign.bin");
    std::fs::write(&foreign, b"#!/bin/sh\necho this is not a network\n").unwrap();
    let missing = dir.file("missing.bin");

    let play = |player: &'static str, weights: &str| -> Vec<String> {
        [
            "2048",
            "play",
            "--player",
            player,
            "--weights",
            weights,
            "--games",
            "1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    for (weights, says) in [
        (&truncated, "truncated"),
        (&corrupt, "checksum mismatch"),
        (&foreign, "not a rollsim n-tuple network file"),
        (&missing, "cannot load"),
    ] {
        for player in ["ntuple", "expectimax"] {
            let args = play(player, weights);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            assert_input_error(&args, says);
        }
        assert_input_error(
            &[
                "2048",
                "train",
                "--games",
                "100",
                "--out",
                &dir.file("x.bin"),
                "--resume",
                weights,
            ],
            says,
        );
    }
    for (args, says) in [
        (
            &["2048", "play", "--player", "ntuple"][..],
            "--player ntuple needs --weights",
        ),
        (
            &["2048", "play", "--player", "expectimax", "--depth", "3"],
            "needs --weights",
        ),
        (
            &["2048", "play", "--player", "random", "--weights", &net],
            "--weights is for",
        ),
        (
            &["2048", "play", "--player", "mc", "--depth", "2"],
            "--depth is for",
        ),
        (
            &[
                "2048",
                "play",
                "--player",
                "random",
                "--downgrade-at",
                "32768",
            ],
            "--downgrade-at is for",
        ),
        (
            &[
                "2048",
                "play",
                "--player",
                "ntuple",
                "--weights",
                &net,
                "--downgrade-at",
                "1000",
            ],
            "--downgrade-at 1000 is not a tile",
        ),
        (
            &[
                "2048",
                "play",
                "--player",
                "expectimax",
                "--weights",
                &net,
                "--depth",
                "0",
            ],
            "--depth",
        ),
        (&["2048", "train", "--games", "0", "--out", &net], "--games"),
        (&["2048", "train", "--games", "10"], "--out"),
        (
            &[
                "2048",
                "train",
                "--games",
                "10",
                "--out",
                &net,
                "--alpha=-1",
            ],
            "--alpha must be a positive number",
        ),
        (
            &[
                "2048", "train", "--games", "10", "--out", &net, "--alpha", "NaN",
            ],
            "--alpha must be a positive number",
        ),
        (
            &[
                "2048", "train", "--games", "10", "--out", &net, "--block", "0",
            ],
            "--block",
        ),
        (
            &[
                "2048", "train", "--games", "10", "--out", &net, "--tuples", "huge",
            ],
            "--tuples",
        ),
        (
            &[
                "2048",
                "train",
                "--games",
                "10",
                "--out",
                &net,
                "--backend",
                "gpu",
            ],
            "CPU threads only",
        ),
        (
            &[
                "2048", "train", "--games", "40", "--out", &net, "--resume", &net,
            ],
            "already played 50 training games",
        ),
        (
            &[
                "2048", "train", "--games", "100", "--out", &net, "--resume", &net, "--tuples",
                "standard",
            ],
            "does not match",
        ),
        (
            &[
                "2048",
                "train",
                "--games",
                "10",
                "--out",
                "/nonexistent-dir/net.bin",
            ],
            "/nonexistent-dir",
        ),
        (
            &[
                "2048", "train", "--games", "10", "--out", &net, "--force", "--lambda", "1.5",
            ],
            "--lambda must be from 0 to 1",
        ),
        (
            &[
                "2048", "train", "--games", "10", "--out", &net, "--force", "--stages", "3000",
            ],
            "stage split 3000 is not a tile",
        ),
        (
            &[
                "2048",
                "train",
                "--games",
                "10",
                "--out",
                &net,
                "--force",
                "--stages",
                "16384,8192",
            ],
            "do not increase",
        ),
        (
            &[
                "2048", "train", "--games", "100", "--out", &net, "--resume", &net, "--init",
                "5000",
            ],
            "a resumed one keeps its file's",
        ),
        (
            &[
                "2048",
                "train",
                "--games",
                "100",
                "--out",
                &net,
                "--resume",
                &net,
                "--stages",
                "8,16,32,64",
            ],
            "stage splits",
        ),
    ] {
        assert_input_error(args, says);
    }
    // The refused runs left the network as it was.
    assert_eq!(std::fs::read(&net).unwrap(), bytes);
    assert!(!Path::new(&dir.file("x.bin")).exists());
}

#[test]
fn tc_lambda_staged_training_is_recorded_in_the_file_and_resumes_it() {
    let dir = TempDir::new("ntuple-tc");
    let net = dir.file("tc.bin");
    let recipe = ["--tc", "--alpha", "1", "--lambda", "0.5"];
    let mut first = recipe.to_vec();
    first.extend(["--stages", "1024", "--init", "1000"]);
    let t = train_small(&net, "300", &first);
    assert_eq!(t["rate"], "coherence");
    assert_eq!(t["lambda"], 0.5);
    assert_eq!(t["recipe"]["stages"], serde_json::json!([1024]));
    assert_eq!(t["recipe"]["init"], 1000.0);
    let t = train_small(&net, "600", &[&recipe[..], &["--resume", &net]].concat());
    assert_eq!(t["games_this_run"], 300);
    let sessions = t["recipe"]["training"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["to"], 600);
    // The player needs no flags for the stages.
    let p = json(&[
        "2048",
        "play",
        "--player",
        "ntuple",
        "--weights",
        &net,
        "--games",
        "5",
        "--seed",
        "1",
        "--json",
    ]);
    assert_eq!(p["network"]["training_games"], 600);
    assert_eq!(p["network"]["recipe"]["stages"], serde_json::json!([1024]));
    assert!(p["score"]["mean"].as_f64().unwrap() > 0.0);
    assert!(p["reach"]["65536"].is_number());
    let p = json(&[
        "2048",
        "play",
        "--player",
        "expectimax",
        "--depth",
        "2",
        "--weights",
        &net,
        "--games",
        "2",
        "--seed",
        "1",
        "--downgrade-at",
        "256",
        "--json",
    ]);
    assert_eq!(p["downgrade_at"], 256);
}

#[test]
fn recorded_games_replay_and_tampered_records_are_refused() {
    let dir = TempDir::new("ntuple-record");
    let net = dir.file("net.bin");
    train_small(&net, "200", &[]);
    for player in [
        &["--player", "random"][..],
        &["--player", "ntuple", "--weights", &net],
    ] {
        let rec = dir.file("games.jsonl");
        let mut args = vec![
            "2048", "play", "--games", "6", "--seed", "5", "--record", &rec, "-q",
        ];
        args.extend_from_slice(player);
        assert!(rollsim(&args).status.success());
        let text = std::fs::read_to_string(&rec).unwrap();
        assert_eq!(text.lines().count(), 6);
        let r = json(&["2048", "replay", &rec, "--json"]);
        assert_eq!(r["games"], 6);
        assert!(r["moves"].as_u64().unwrap() > 6 * 20);
        // A score changed, a move changed: named, exit 2.
        let first = text.lines().next().unwrap();
        let v: serde_json::Value = serde_json::from_str(first).unwrap();
        let score = v["score"].as_u64().unwrap();
        let bad = dir.file("bad.jsonl");
        std::fs::write(
            &bad,
            first.replace(&format!("\"score\":{score}"), "\"score\":1"),
        )
        .unwrap();
        assert_input_error(&["2048", "replay", &bad], "replayed score is");
        let moves = v["moves"].as_str().unwrap();
        let swapped: String = moves
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i == 5 {
                    if c == 'U' { 'D' } else { 'U' }
                } else {
                    c
                }
            })
            .collect();
        std::fs::write(&bad, first.replace(moves, &swapped)).unwrap();
        assert_input_error(&["2048", "replay", &bad], "line 1");
    }
    std::fs::write(dir.file("junk.jsonl"), "not json\n").unwrap();
    assert_input_error(
        &["2048", "replay", &dir.file("junk.jsonl")],
        "not a game record",
    );
}

#[test]
fn greedy_play_with_gpu_lookups_matches_the_cpu() {
    if rollsim_gpu::test_gpu("greedy_play_with_gpu_lookups_matches_the_cpu").is_none() {
        return;
    }
    let dir = TempDir::new("ntuple-gpu");
    let net = dir.file("net.bin");
    train_small(&net, "200", &[]);
    let play = |backend: &str, player: &str| {
        let games = if player == "ntuple" { "8" } else { "2" };
        let args = [
            "2048",
            "play",
            "--player",
            player,
            "--weights",
            &net,
            "--games",
            games,
            "--seed",
            "3",
            "--backend",
            backend,
            "--json",
        ];
        let out = rollsim(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let (g, c) = (play("gpu", "ntuple"), play("cpu", "ntuple"));
    assert_eq!(g["backend"], "gpu");
    assert!(g["adapter"].is_string());
    assert_eq!(g["score"], c["score"]);
    assert_eq!(g["moves_per_game"], c["moves_per_game"]);
    let (g, c) = (play("gpu", "expectimax"), play("cpu", "expectimax"));
    assert_eq!(g["backend"], "gpu");
    assert_eq!(g["depth"], 2);
    assert_eq!(g["score"], c["score"]);
}
