//! `rollsim 2048 experiment` and `rollsim 2048 merge` as a user runs them: resuming after an
//! interrupted write, shards merged into the unsharded result, the report, and bad input
//! refused with exit code 2. Tiny rollout counts keep each test to a second or so.

use crate::common::*;

fn ok(args: &[&str]) -> String {
    let out = rollsim(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn experiment(out: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "2048",
        "experiment",
        "--out",
        out,
        "--rollouts",
        "2,4",
        "--games",
        "6",
        "--seed",
        "11",
        "--backend",
        "cpu",
        "-q",
    ];
    args.extend_from_slice(extra);
    ok(&args)
}

/// The header, then the records sorted (an unsharded run writes them as games finish).
fn sorted_lines(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'));
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let key = |l: &String| {
        let r: serde_json::Value = serde_json::from_str(l).unwrap();
        (r["n"].as_u64().unwrap(), r["game"].as_u64().unwrap())
    };
    lines[1..].sort_by_key(key);
    lines
}

#[test]
fn interrupted_run_resumes_to_the_one_shot_result() {
    let dir = TempDir::new("exp-resume");
    let one = dir.file("one.jsonl");
    experiment(&one, &[]);
    let full = std::fs::read_to_string(&one).unwrap();
    assert_eq!(full.lines().count(), 13);

    // Interrupted: the header, five games, and a game cut mid-line.
    let cut = dir.file("cut.jsonl");
    let lines: Vec<&str> = full.split_inclusive('\n').collect();
    let half = &lines[6][..lines[6].len() / 2];
    std::fs::write(&cut, format!("{}{half}", lines[..6].concat())).unwrap();
    let out = rollsim(&[
        "2048",
        "experiment",
        "--out",
        &cut,
        "--rollouts",
        "2,4",
        "--games",
        "6",
        "--seed",
        "11",
        "--backend",
        "cpu",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cut-short") && err.contains("5 games done"),
        "{err}"
    );
    assert_eq!(sorted_lines(&cut), sorted_lines(&one));
    // The five games kept are the file's first five lines, untouched.
    assert!(
        std::fs::read_to_string(&cut)
            .unwrap()
            .starts_with(&lines[..6].concat())
    );
    // Done: a rerun plays nothing and changes nothing.
    let before = std::fs::read_to_string(&cut).unwrap();
    experiment(&cut, &[]);
    assert_eq!(std::fs::read_to_string(&cut).unwrap(), before);
}

#[test]
fn shards_merge_into_the_unsharded_result() {
    let dir = TempDir::new("exp-shards");
    let whole = dir.file("whole.jsonl");
    experiment(&whole, &[]);
    let shards: Vec<String> = (0..4).map(|i| dir.file(&format!("s{i}.jsonl"))).collect();
    for (i, s) in shards.iter().enumerate() {
        experiment(s, &["--shard", &format!("{i}/4")]);
    }
    // Incomplete (shard 2 of 4 holds game 2 only): names what is missing.
    let merged = dir.file("merged.jsonl");
    assert_input_error(
        &["2048", "merge", &merged, &shards[0], &shards[1], &shards[3]],
        "2 of 12 games are missing (a shard not given, or not finished): game 2 at 2 rollouts, game 2 at 4 rollouts",
    );
    // Overlapping: refused.
    assert_input_error(
        &["2048", "merge", &merged, &shards[0], &shards[0]],
        "shards overlap",
    );
    // Different experiments: refused.
    let other = dir.file("other.jsonl");
    ok(&[
        "2048",
        "experiment",
        "--out",
        &other,
        "--rollouts",
        "2,4",
        "--games",
        "6",
        "--seed",
        "12",
        "--backend",
        "cpu",
        "-q",
        "--shard",
        "2/4",
    ]);
    assert_input_error(
        &[
            "2048", "merge", &merged, &shards[0], &shards[1], &other, &shards[3],
        ],
        "different experiments",
    );

    let mut args = vec!["2048", "merge", merged.as_str()];
    args.extend(shards.iter().rev().map(String::as_str));
    ok(&args);
    let merged_text = std::fs::read_to_string(&merged).unwrap();
    assert_eq!(
        merged_text.lines().map(str::to_string).collect::<Vec<_>>(),
        sorted_lines(&whole)
    );
    // Merging the unsharded file alone sorts it into the same bytes.
    let sorted = dir.file("sorted.jsonl");
    ok(&["2048", "merge", &sorted, &whole]);
    assert_eq!(std::fs::read_to_string(&sorted).unwrap(), merged_text);
}

#[test]
fn report_prints_intervals_and_writes_csv() {
    let dir = TempDir::new("exp-report");
    let file = dir.file("r.jsonl");
    let text = experiment(&file, &[]);
    assert!(
        text.contains("mean score [95% CI]") && text.contains("2048 [95% CI]"),
        "{text}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&ok(&["2048", "experiment", "--report", &file, "--json"])).unwrap();
    assert_eq!(report["complete"], true);
    let points = report["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (p, n) in points.iter().zip([2, 4]) {
        assert_eq!(p["rollouts"], n);
        assert_eq!(p["games"], 6);
        let s = &p["score"];
        let (lo, mean, hi) = (
            s["mean_ci95"]["lo"].as_f64().unwrap(),
            s["mean"].as_f64().unwrap(),
            s["mean_ci95"]["hi"].as_f64().unwrap(),
        );
        assert!(lo <= mean && mean <= hi);
        let reach = p["reach"].as_array().unwrap();
        let tiles: Vec<u64> = reach.iter().map(|r| r["tile"].as_u64().unwrap()).collect();
        assert_eq!(
            tiles,
            [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
        );
        for r in reach {
            let (lo, rate, hi) = (
                r["ci95"]["lo"].as_f64().unwrap(),
                r["rate"].as_f64().unwrap(),
                r["ci95"]["hi"].as_f64().unwrap(),
            );
            assert!(0.0 <= lo && lo <= rate && rate <= hi && hi <= 1.0);
        }
    }
    let csv = std::fs::read_to_string(format!("{file}.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3);
    assert!(csv.starts_with("rollouts,games,score_mean,"));
    assert!(csv.lines().nth(2).unwrap().starts_with("4,6,"));
}

#[test]
fn bad_input_exits_2() {
    let dir = TempDir::new("exp-bad");
    let file = dir.file("r.jsonl");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "2048",
            "experiment",
            "--out",
            &file,
            "--seed",
            "1",
            "--backend",
            "cpu",
            "-q",
        ];
        args.extend_from_slice(extra);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    for (extra, says) in [
        (
            &["--rollouts", "2", "--games", "6", "--shard", "3/2"][..],
            "bad shard",
        ),
        (
            &["--rollouts", "2", "--games", "6", "--shard", "0/0"],
            "bad shard",
        ),
        (
            &["--rollouts", "2", "--games", "6", "--shard", "x/y"],
            "bad shard",
        ),
        (&["--rollouts", "", "--games", "6"], "the list is empty"),
        (&["--rollouts", "0", "--games", "6"], "at least 1"),
        (&["--rollouts", "2,2", "--games", "6"], "appears twice"),
        (
            &["--rollouts", "2", "--games", "0"],
            "--games must be at least 1",
        ),
    ] {
        let args = run(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_input_error(&args, says);
    }
    // A results file of other parameters is refused, and left as it was.
    experiment(&file, &[]);
    let before = std::fs::read_to_string(&file).unwrap();
    for extra in [
        &["--rollouts", "2,4", "--games", "7"][..],
        &[
            "--rollouts",
            "2,4",
            "--games",
            "6",
            "--objective",
            "tilesum",
        ],
        &["--rollouts", "4,2", "--games", "6"],
        &["--rollouts", "2,4", "--games", "6", "--shard", "0/2"],
    ] {
        let mut args = vec![
            "2048",
            "experiment",
            "--out",
            &file,
            "--seed",
            "11",
            "--backend",
            "cpu",
            "-q",
        ];
        args.extend_from_slice(extra);
        assert_input_error(&args, "holds a different experiment");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    // Not a results file.
    let junk = dir.file("junk.txt");
    std::fs::write(&junk, "hello\n").unwrap();
    assert_input_error(
        &["2048", "experiment", "--report", &junk],
        "not an experiment header",
    );
    assert_input_error(
        &[
            "2048",
            "experiment",
            "--out",
            &junk,
            "--rollouts",
            "2",
            "--games",
            "1",
            "--seed",
            "1",
        ],
        "not an experiment header",
    );
    // Missing parameters are usage errors.
    let out = rollsim(&["2048", "experiment", "--out", &file]);
    assert_eq!(out.status.code(), Some(2));
}
