// The 2048 board on the GPU: the twin of crates/g2048/src/board.rs and of random_legal_move in
// crates/g2048/src/rollout.rs.
//
// A board is vec2<u32>(low, high): the u64 of the CPU engine split in two, so rows 0 and 1 are
// in .x and rows 2 and 3 in .y, cell i at nibble i of the u64. Rows are looked up in the same
// 65536-entry tables as on the CPU; columns are gathered into a row, looked up, and scattered
// back, which costs a few shifts instead of a second pair of 64-bit column tables.

// The kernel that includes this declares the tables, at bindings of its own (shared WGSL
// declares none):
// - row_moves: array<u32>, per row (row slid left) | (row slid right) << 16;
// - row_reward: array<u32>, per row the points of sliding it either way, plus OVERFLOW_FLAG
//   where two 32768s would merge.

// From the host, the Rust values (see `Kernel::constants`):
// - OVERFLOW_FLAG: u32, added to a row's points where two 32768s would merge (board.rs);
// - DIRECTION_ORDERS: array<u32, 24>, the 24 orders of the four directions (up, right, down,
//   left = 0..3), lexicographic, two bits a direction, first in the low bits (rollout.rs).

struct Moved {
    board: vec2<u32>,
    // Points, with OVERFLOW_FLAG added if the move would merge two 32768 tiles.
    reward: u32,
}

// Column c as a row value: its cell in row j at nibble j.
fn column(b: vec2<u32>, c: u32) -> u32 {
    let lo = (b.x >> (4u * c)) & 0x000f000fu;
    let hi = (b.y >> (4u * c)) & 0x000f000fu;
    return ((lo | (lo >> 12u)) & 0xffu) | (((hi | (hi >> 12u)) & 0xffu) << 8u);
}

// A row value put back as column c.
fn scatter_column(col: u32, c: u32) -> vec2<u32> {
    let lo = (col & 0xfu) | (((col >> 4u) & 0xfu) << 16u);
    let hi = ((col >> 8u) & 0xfu) | (((col >> 12u) & 0xfu) << 16u);
    return vec2<u32>(lo, hi) << vec2<u32>(4u * c);
}

// Slides the board: dir 0 up, 1 right, 2 down, 3 left. Legal iff the board changes.
fn slide(b: vec2<u32>, dir: u32) -> Moved {
    // Left and up take the low half of a table entry, right and down the high half.
    let half = select(0u, 16u, dir == 1u || dir == 2u);
    var out = vec2<u32>(0u);
    var reward = 0u;
    if dir == 1u || dir == 3u {
        let r0 = b.x & 0xffffu;
        let r1 = b.x >> 16u;
        let r2 = b.y & 0xffffu;
        let r3 = b.y >> 16u;
        out.x = ((row_moves[r0] >> half) & 0xffffu) | (((row_moves[r1] >> half) & 0xffffu) << 16u);
        out.y = ((row_moves[r2] >> half) & 0xffffu) | (((row_moves[r3] >> half) & 0xffffu) << 16u);
        reward = row_reward[r0] + row_reward[r1] + row_reward[r2] + row_reward[r3];
    } else {
        let c0 = column(b, 0u);
        let c1 = column(b, 1u);
        let c2 = column(b, 2u);
        let c3 = column(b, 3u);
        out = scatter_column((row_moves[c0] >> half) & 0xffffu, 0u)
            | scatter_column((row_moves[c1] >> half) & 0xffffu, 1u)
            | scatter_column((row_moves[c2] >> half) & 0xffffu, 2u)
            | scatter_column((row_moves[c3] >> half) & 0xffffu, 3u);
        reward = row_reward[c0] + row_reward[c1] + row_reward[c2] + row_reward[c3];
    }
    return Moved(out, reward);
}

// One bit (the low bit of its nibble) per empty cell of a 32-bit half.
fn empty_mask(x: u32) -> u32 {
    var y = x | (x >> 2u);
    y |= y >> 1u;
    return ~y & 0x11111111u;
}

// The bit position of the k-th (from 0) set bit of a mask whose bits are the low bits of
// nibbles, by halving: no loop, so no divergence and no llvmpipe loop budget spent.
fn select_nibble_bit(mask: u32, k: u32) -> u32 {
    var m = mask;
    var kk = k;
    var pos = 0u;
    let c16 = countOneBits(m & 0xffffu);
    if kk >= c16 {
        kk -= c16;
        m >>= 16u;
        pos += 16u;
    }
    let c8 = countOneBits(m & 0xffu);
    if kk >= c8 {
        kk -= c8;
        m >>= 8u;
        pos += 8u;
    }
    let c4 = countOneBits(m & 0xfu);
    if kk >= c4 {
        pos += 4u;
    }
    return pos;
}

// A 2 (9/10) or a 4 (1/10) on a uniformly chosen empty cell, from one draw below 10 * empty.
fn spawn(b: vec2<u32>, s: ptr<function, Stream>) -> vec2<u32> {
    let masks = vec2<u32>(empty_mask(b.x), empty_mask(b.y));
    let low_count = countOneBits(masks.x);
    let r = stream_below(s, 10u * (low_count + countOneBits(masks.y)));
    let k = r / 10u;
    let value = select(1u, 2u, r % 10u == 0u);
    var out = b;
    if k < low_count {
        out.x |= value << select_nibble_bit(masks.x, k);
    } else {
        out.y |= value << select_nibble_bit(masks.y, k - low_count);
    }
    return out;
}

// The sum of the tile values.
fn tile_sum(b: vec2<u32>) -> u32 {
    var sum = 0u;
    for (var i = 0u; i < 8u; i++) {
        let lo = (b.x >> (4u * i)) & 0xfu;
        let hi = (b.y >> (4u * i)) & 0xfu;
        sum += select(0u, 1u << lo, lo != 0u) + select(0u, 1u << hi, hi != 0u);
    }
    return sum;
}

struct Choice {
    found: bool,
    moved: Moved,
}

// A uniformly random legal move from one word: the first legal one in a random order. The
// four tries are written out rather than looped (see philox4x32_10).
fn random_legal_move(b: vec2<u32>, s: ptr<function, Stream>) -> Choice {
    let order = DIRECTION_ORDERS[stream_below(s, 24u)];
    var m = slide(b, order & 3u);
    if any(m.board != b) {
        return Choice(true, m);
    }
    m = slide(b, (order >> 2u) & 3u);
    if any(m.board != b) {
        return Choice(true, m);
    }
    m = slide(b, (order >> 4u) & 3u);
    if any(m.board != b) {
        return Choice(true, m);
    }
    m = slide(b, order >> 6u);
    return Choice(any(m.board != b), m);
}
