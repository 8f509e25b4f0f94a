// Fixed cells for `columns.wgsl`: i32 of 2^-29, one to a window word.

const PER_WORD: u32 = 1u;
// After the last play of the opponent: 1 (cubeless: 1 - min W) or 0 (cubeful).
const OFFSET: i32 = {{OFFSET}};
const WON: i32 = 536870912; // 1.0
const LOST: i32 = {{LOST}};

fn window_load(slot: u32, j: u32, u: u32) -> i32 {
    return bitcast<i32>(window_word(slot, j, u));
}

fn cell_bits(v: i32, e: u32) -> u32 {
    return bitcast<u32>(v);
}

// floor(a / 36) for 0 <= a < 2^36 (hi < 16): long division in 16-bit pieces.
fn div36(lo: u32, hi: u32) -> u32 {
    let t1 = (hi << 16u) | (lo >> 16u);
    let r1 = t1 % 36u;
    let t2 = (r1 << 16u) | (lo & 0xffffu);
    return ((t1 / 36u) << 16u) | (t2 / 36u);
}

// OFFSET + the sum / 36, rounded half up to a unit: `Fixed::from_f64(OFFSET + sum / 36)`.
fn finish(s0: Sum) -> i32 {
    let s = add(s0, 18);
    if s.hi >= 0 {
        return OFFSET + i32(div36(s.lo, u32(s.hi)));
    }
    // floor(a / 36) = -ceil(-a / 36) = -floor((-a + 35) / 36).
    let neg_lo = ~s.lo + 1u;
    let neg_hi = ~s.hi + select(0, 1, s.lo == 0u);
    let m = add(Sum(neg_lo, neg_hi), 35);
    return OFFSET - i32(div36(m.lo, u32(m.hi)));
}
