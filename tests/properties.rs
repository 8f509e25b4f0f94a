//! Every parser and loader on arbitrary and damaged input: an error, never a panic. Damaged
//! files start from valid ones (truncated, bytes flipped), so the checks past the header are
//! reached too.

use std::io::Cursor;

use crate::common::{damage, damaged, reseal_two_sided, two_sided_v2, two_sided_v2_cell};
use proptest::prelude::*;
use rollsim_2048::ntuple::small_tuples;
use rollsim_2048::{Element, Network};
use rollsim_bearoff::format::{
    Table, read_gnubg_one_sided, read_gnubg_two_sided, read_rollsim, write_gnubg_one_sided,
    write_gnubg_two_sided, write_rollsim,
};
use rollsim_bearoff::two_sided::TwoSided;
use rollsim_bearoff::{OneSided, Space};

/// Text made of the pieces boards and positions are written with, and anything else.
fn board_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("0".to_string()),
        Just("2".to_string()),
        Just("32768".to_string()),
        Just("65536".to_string()),
        Just("/".to_string()),
        Just("|".to_string()),
        Just("\n".to_string()),
        Just(" ".to_string()),
        Just(",".to_string()),
        Just("_".to_string()),
        Just("0x".to_string()),
        Just("+".to_string()),
        Just("-".to_string()),
        Just("\u{feff}".to_string()),
        "[0-9a-fA-F]{1,17}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
}

fn one_sided_files() -> Vec<Vec<u8>> {
    let t = OneSided::build(Space::new(3, 4).unwrap(), false);
    let mut files = Vec::new();
    for compressed in [true, false] {
        let mut c = Cursor::new(Vec::new());
        write_gnubg_one_sided(&t, compressed, false, &mut c).unwrap();
        files.push(c.into_inner());
    }
    let mut r = Vec::new();
    write_rollsim(&Table::One(t), &mut r).unwrap();
    files.push(r);
    files
}

fn two_sided_files() -> Vec<Vec<u8>> {
    // The readers check structure and values, not that they solve the game.
    let space = Space::new(3, 3).unwrap();
    let n = space.len();
    let t = TwoSided {
        space,
        win: (0..n * n).map(|i| (i % 7) as f64 / 7.0).collect(),
        cubeful: Some(
            (0..n * n)
                .map(|i| [0.5, -0.25, (i % 3) as f64 / 3.0])
                .collect(),
        ),
    };
    let mut g = Vec::new();
    write_gnubg_two_sided(&t, &mut g).unwrap();
    let mut r = Vec::new();
    write_rollsim(&Table::Two(t), &mut r).unwrap();
    vec![g, r]
}

fn network_file() -> Vec<u8> {
    let mut b = Vec::new();
    Network::new(small_tuples())
        .unwrap()
        .write_to(&mut b, Element::F16)
        .unwrap();
    b
}

/// Every bearoff and network reader on `bytes`.
fn read_all(bytes: &[u8]) {
    let _ = read_rollsim(bytes);
    let _ = read_gnubg_one_sided(bytes);
    let _ = read_gnubg_two_sided(bytes);
    let _ = Network::read_from(bytes);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn boards_and_positions_parse_or_fail(text in board_text()) {
        let _ = text.parse::<rollsim_2048::Board>();
        let _ = text.parse::<rollsim_puzzle::board::Board>();
        for (p, c) in [(6, 15), (1, 1), (18, 15)] {
            let _ = Space::new(p, c).unwrap().parse(&text);
        }
    }

    #[test]
    fn arbitrary_bytes_are_refused(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        read_all(&bytes);
    }

    #[test]
    fn damaged_tables_and_networks_are_refused_or_read((cut, flips) in damage(1..=255), which in 0..6usize) {
        let mut files = one_sided_files();
        files.extend(two_sided_files());
        files.push(network_file());
        read_all(&damaged(files[which].clone(), cut, &flips));
    }

    #[test]
    fn damaged_two_sided_tables_in_format_2_are_refused((cut, flips) in damage(1..=255)) {
        use rollsim_bearoff::table::Table;
        let whole = two_sided_v2();
        let bytes = damaged(whole.to_vec(), cut, &flips);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.rsb");
        std::fs::write(&path, &bytes).unwrap();
        // Every byte is under a checksum (the padding must be zero): damage is refused at
        // opening or found by `verify`, never read as values.
        let refused = match Table::open(&path) {
            Err(_) => true,
            Ok(t) => !t.verify(&|_| {}).unwrap().is_empty(),
        };
        prop_assert_eq!(refused, bytes != whole);
    }

    #[test]
    fn impossible_values_under_recomputed_checksums_are_refused(at in 0.0..1.0f64, which in 0..3usize) {
        use rollsim_bearoff::table::{Problem, Table};
        let mut bytes = two_sided_v2().to_vec();
        let (offset, cubeless, us, them) = two_sided_v2_cell(&bytes, at);
        // -0.5 is an equity, but no winning chance.
        let v = [f32::NAN, if cubeless { -0.5 } else { -1.5 }, 7.0][which];
        bytes[offset..offset + 4].copy_from_slice(&v.to_le_bytes());
        reseal_two_sided(&mut bytes);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.rsb");
        std::fs::write(&path, &bytes).unwrap();
        let t = Table::open(&path).unwrap();
        let bad = t.verify(&|_| {}).unwrap();
        prop_assert_eq!(bad.len(), 1);
        prop_assert!(matches!(bad[0].problem, Problem::Value { .. }), "{}", bad[0]);
        prop_assert_eq!(bad[0].them, u64::from(them));
        match cubeless {
            true => prop_assert!(t.win(us, them).is_err()),
            false => prop_assert!(t.equities(us, them).is_err()),
        }
        prop_assert!(rollsim_bearoff::table::compare(&t, &t).is_err());
    }

    #[test]
    fn damaged_pattern_databases_are_refused_or_read((cut, flips) in damage(1..=255)) {
        use rollsim_puzzle::pdb::PatternDb;
        let tiles = [1u8, 2, 3];
        let mut bytes = Vec::new();
        PatternDb::build(3, &tiles, &|_| {}).write_to(&mut bytes).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.pdb");
        std::fs::write(&path, damaged(bytes, cut, &flips)).unwrap();
        let _ = PatternDb::read(&path, 3, &tiles);
    }

    #[test]
    fn damaged_results_files_are_refused_or_read((cut, flips) in damage(1..=255), extra in any::<String>()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let text = "{\"format\":\"rollsim-2048-experiment/1\",\"seed\":1,\"objective\":\"score\",\
                    \"games\":2,\"rollouts\":[1,2],\"shard\":\"0/1\"}\n\
                    {\"n\":1,\"game\":0,\"score\":1200,\"max_tile\":128,\"moves\":110,\"overflow\":false}\n";
        let mut bytes = damaged(text.as_bytes().to_vec(), cut, &flips);
        bytes.extend(extra.as_bytes());
        std::fs::write(&path, bytes).unwrap();
        let _ = rollsim_2048::experiment::read_results(&path);
    }
}
