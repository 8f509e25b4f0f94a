//! Tables made for the tests of the formats.

use crate::format::{Result, Table, write_gnubg_one_sided, write_rollsim};
use crate::one_sided::OneSided;
use crate::position::Space;
use crate::two_sided::TwoSided;
use std::io;
use std::sync::OnceLock;

/// The 15-checker, 6-point table with gammon distributions, built once.
pub(super) fn table() -> &'static OneSided {
    static T: OnceLock<OneSided> = OnceLock::new();
    T.get_or_init(|| OneSided::build(Space::new(6, 15).unwrap(), true))
}

pub(super) fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// A small two-sided table with made-up values, awkward floats included.
pub(super) fn two_sided() -> TwoSided {
    let space = Space::new(3, 2).unwrap();
    let n = space.len();
    let mut win: Vec<f64> = (0..n * n).map(|k| (k as f64 * 0.37).sin().abs()).collect();
    win[..5].copy_from_slice(&[
        1.0,
        -0.0,
        1.0 / 3.0,
        f64::MIN_POSITIVE / 8.0,
        1.0 - f64::EPSILON / 2.0,
    ]);
    TwoSided {
        space,
        win,
        cubeful: None,
    }
}

pub(super) fn rollsim_bytes(t: &Table) -> Vec<u8> {
    let mut v = Vec::new();
    write_rollsim(t, &mut v).unwrap();
    v
}

pub(super) fn same_one_sided(a: &OneSided, b: &OneSided) {
    assert_eq!(a.space, b.space);
    assert_eq!(a.len, b.len);
    assert_eq!(bits(&a.mean), bits(&b.mean));
    assert_eq!(bits(&a.dist), bits(&b.dist));
    let (ga, gb) = (a.gammon.as_ref().unwrap(), b.gammon.as_ref().unwrap());
    assert_eq!(ga.1, gb.1);
    assert_eq!(bits(&ga.0), bits(&gb.0));
    assert_eq!(bits(&ga.2), bits(&gb.2));
}

pub(super) fn gnubg_bytes(t: &OneSided, compressed: bool, gammon: bool) -> Result<Vec<u8>> {
    let mut b = io::Cursor::new(Vec::new());
    write_gnubg_one_sided(t, compressed, gammon, &mut b)?;
    Ok(b.into_inner())
}
