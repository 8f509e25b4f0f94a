//! The command line's own readers on damaged input, through the binary: an error with exit
//! code 2 (or a result), never a panic. (The library's parsers and loaders are in
//! `properties.rs`.)

use crate::common::*;
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn damaged_two_sided_tables_in_format_2_are_refused((cut, flips) in damage(1..=255)) {
        let whole = two_sided_v2();
        let bytes = damaged(whole.to_vec(), cut, &flips);
        let dir = TempDir::new("ts-v2-damaged");
        let t = dir.file("t.rsb");
        std::fs::write(&t, &bytes).unwrap();
        let out = rollsim(&["bearoff", "verify", &t]);
        let err = String::from_utf8_lossy(&out.stderr);
        prop_assert!(!err.contains("panicked"), "{err}");
        prop_assert_eq!(out.status.code(), Some(if bytes == whole { 0 } else { 2 }), "{}", err);
    }

    #[test]
    fn impossible_values_under_recomputed_checksums_are_refused(at in 0.0..1.0f64, which in 0..3usize) {
        let mut bytes = two_sided_v2().to_vec();
        let (offset, cubeless, us, them) = two_sided_v2_cell(&bytes, at);
        let v = [f32::NAN, if cubeless { -0.5 } else { -1.5 }, 7.0][which];
        bytes[offset..offset + 4].copy_from_slice(&v.to_le_bytes());
        reseal_two_sided(&mut bytes);
        let dir = TempDir::new("ts-v2-values");
        let t = dir.file("t.rsb");
        std::fs::write(&t, &bytes).unwrap();
        let space = rollsim_bearoff::Space::new(3, 3).unwrap();
        let position = |i| {
            let mut counts = [0u8; 3];
            space.position(i, &mut counts);
            counts.map(|c| c.to_string()).join(",")
        };
        let (a, b) = (position(us), position(them));
        for args in [
            vec!["bearoff", "verify", &t],
            vec!["bearoff", "query", &t, &a, &b],
            vec!["bearoff", "compare", &t, &t],
        ] {
            let out = rollsim(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            prop_assert_eq!(out.status.code(), Some(2), "{:?}: {}", args, err);
            prop_assert!(err.contains("is not possible"), "{:?}: {}", args, err);
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
