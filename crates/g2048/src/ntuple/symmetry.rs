//! The eight symmetries of the square, on whole boards in a few word operations each.

use super::*;

/// For every symmetry `s` and cell `i`, the cell of the original board that `B_s[i]` reads.
pub const SYMMETRIES: [[u8; 16]; 8] = symmetry_tables();

pub(super) const fn symmetry_tables() -> [[u8; 16]; 8] {
    let mut out = [[0u8; 16]; 8];
    let mut s = 0;
    while s < 8 {
        let mut i = 0;
        while i < 16 {
            let (r, c) = (i / 4, i % 4);
            // The first four act on (r, c); the last four read the first four transposed.
            let (r, c) = if s >= 4 { (c, r) } else { (r, c) };
            let (r, c) = match s % 4 {
                0 => (r, c),
                1 => (r, 3 - c),
                2 => (3 - r, c),
                _ => (3 - r, 3 - c),
            };
            out[s][i] = (4 * r + c) as u8;
            i += 1;
        }
        s += 1;
    }
    out
}

/// Reverses the four cells of every row.
#[inline(always)]
pub(super) fn mirror(x: u64) -> u64 {
    let x = (x & 0x00FF_00FF_00FF_00FF) << 8 | (x >> 8) & 0x00FF_00FF_00FF_00FF;
    (x & 0x0F0F_0F0F_0F0F_0F0F) << 4 | (x >> 4) & 0x0F0F_0F0F_0F0F_0F0F
}

/// Reverses the order of the four rows.
#[inline(always)]
pub(super) fn flip(x: u64) -> u64 {
    let x = x.rotate_left(32);
    (x & 0x0000_FFFF_0000_FFFF) << 16 | (x >> 16) & 0x0000_FFFF_0000_FFFF
}

/// The 8 symmetric boards `B_0 .. B_7` of `b`, in [`SYMMETRIES`] order.
#[inline(always)]
pub fn symmetric_boards(b: Board) -> [u64; 8] {
    let x = b.raw;
    let m = mirror(x);
    let t = b.transpose().raw;
    // transpose(mirror(b)) = flip(transpose(b)); transpose(flip(b)) = mirror(transpose(b)).
    let tf = mirror(t);
    [x, m, flip(x), flip(m), t, flip(t), tf, flip(tf)]
}
