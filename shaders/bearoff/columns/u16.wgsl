// u16 cells for `columns.wgsl`: gnubg's 16 bits over the value's range, two to a window word,
// worked on as whole steps of 1/65535 (`Q16` on the CPU).

const PER_WORD: u32 = 2u;
// The range's low end in steps, and steps per unit of a cell (1 for [0, 1], 2 for [-1, 1]).
const LO: i32 = {{LO}};
const SPAN: i32 = {{SPAN}};
const WON: i32 = {{WON}};
const LOST: i32 = {{LOST}};
// A cell from the sum of 36ths of steps: floor((BIAS + sum) / DEN), `u16::store` of
// OFFSET + sum / 36 (BIAS + sum is never negative).
const BIAS: i32 = {{BIAS}};
const DEN: i32 = {{DEN}};

fn window_load(slot: u32, j: u32, u: u32) -> i32 {
    let word = window_word(slot, j, u >> 1u);
    let q = (word >> ((u & 1u) << 4u)) & 0xffffu;
    return LO + i32(q) * SPAN;
}

// Cell e of a word, from its value in steps.
fn cell_bits(v: i32, e: u32) -> u32 {
    return u32((v - LO) / SPAN) << (e << 4u);
}

// The value in whole steps: |sum| < 36 * 2 * 65535 fits the low word.
fn finish(s: Sum) -> i32 {
    let q = (bitcast<i32>(s.lo) + BIAS) / DEN;
    return LO + q * SPAN;
}
