//! Sizes inside the accepted ranges: refused up front with the memory they need, or streamed,
//! never an abort, a hang or an out-of-memory kill.

use crate::common::*;

#[test]
fn jobs_too_big_for_memory_are_refused_naming_the_need() {
    let dir = TempDir::new("too-big");
    let out = dir.file("x.rsb");
    for (args, says) in [
        (
            &["puzzle", "bench", "--count", "4294967295"][..],
            "in memory",
        ),
        (
            &[
                "bearoff",
                "build",
                "--points",
                "18",
                "--checkers",
                "15",
                "--out",
                &out,
            ][..],
            "memory",
        ),
        // The two-sided table of 15 checkers on 18 points: cli_bearoff_two_sided.rs.
    ] {
        assert_input_error(args, says);
    }
    assert!(!dir.path("x.rsb").exists());
}

#[test]
fn a_header_of_four_billion_games_is_reported_and_merged_at_once() {
    let dir = TempDir::new("huge-header");
    let file = dir.file("huge.jsonl");
    std::fs::write(
        &file,
        "{\"format\":\"rollsim-2048-experiment/1\",\"seed\":1,\"objective\":\"score\",\
         \"games\":4294967295,\"rollouts\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20],\
         \"shard\":\"0/1\"}\n",
    )
    .unwrap();
    // Both count the games instead of listing them: before, the report ran for minutes and
    // merge asked for 32 GB.
    let report = rollsim(&["2048", "experiment", "--report", &file, "--json"]);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    assert_input_error(
        &["2048", "merge", &dir.file("all.jsonl"), &file],
        "85899345900 of 85899345900 games are missing",
    );
}
