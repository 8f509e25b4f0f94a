//! The command line's own readers on damaged input, through the binary: an error with exit
//! code 2 (or a result), never a panic. (The library's parsers and loaders are in
//! `properties.rs`.)

mod common;

use common::*;
use proptest::prelude::*;

/// A record as `rollsim bench --out` writes it, with two measurements.
const RECORD: &str = r#"{"rollsim_version":"0.1.0","git_commit":"abc","os":"linux","unix_time":1,"cpu":"c","cpu_threads":2,"adapter":{"name":"llvmpipe"},"gpu_kernel_seconds":0.5,"measurements":[{"workload":"2048 random playouts","backend":"cpu","figure":1.5e7,"unit":"moves/s","on":"2 threads","seconds":1.0},{"workload":"bearoff build","backend":"gpu","figure":0.25,"unit":"s","on":"llvmpipe","seconds":0.25}]}"#;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn damaged_bench_records_are_refused_or_compared((cut, flips) in damage(1..=127)) {
        let bytes = damaged(RECORD.as_bytes().to_vec(), cut, &flips);
        let dir = TempDir::new("bench-record");
        let (good, bad) = (dir.file("good.json"), dir.file("bad.json"));
        std::fs::write(&good, RECORD).unwrap();
        std::fs::write(&bad, &bytes).unwrap();
        for (old, new) in [(&good, &bad), (&bad, &good)] {
            let out = rollsim(&["bench", "compare", old, new, "--json"]);
            let err = String::from_utf8_lossy(&out.stderr);
            prop_assert!(matches!(out.status.code(), Some(0 | 2)), "{err}");
            prop_assert!(!err.contains("panicked"), "{err}");
            if out.status.success() {
                let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                for row in rows.as_array().unwrap() {
                    let speedup = row["speedup"].as_f64().unwrap();
                    prop_assert!(speedup.is_finite() && speedup > 0.0, "{row}");
                }
            }
        }
    }
}

#[test]
fn the_undamaged_record_compares_with_itself() {
    let dir = TempDir::new("bench-record-self");
    let rec = dir.file("r.json");
    std::fs::write(&rec, RECORD).unwrap();
    let rows = json(&["bench", "compare", &rec, &rec, "--json"]);
    assert_eq!(rows.as_array().unwrap().len(), 2);
    assert!(rows.as_array().unwrap().iter().all(|r| r["speedup"] == 1.0));
}
