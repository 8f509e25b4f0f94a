// The two-sided bearoff sweep by columns, one chunk of one level of pip count: twin of
// `crate::bearoff::columns` with `Fixed` cells (i32, 2^-29 = one unit) or u16 cells (`Q16`
// work values, 1/65535 = one unit), whose arithmetic is exact integer arithmetic, so that every
// value is the CPU's to the last bit.
//
// `rows`: thread (u, x), u fastest: V(x, u) = OFFSET + Σ_r w_r max_{x' ∈ plays(x, r)} after(C[x'][u]) / 36
// into `rows`. `columns`: thread (x, word), x fastest: V(u, x) the same over u's plays, read from
// the rows, for the cells u of one window word, into x's slot of the window. K (1 cubeless, 3
// cubeful) is substituted by the host, and the cell's part (`columns_fixed32.wgsl` or
// `columns_u16.wgsl`: WON, LOST, PER_WORD, finish, window_load, cell_bits) is appended.

const K: u32 = {{K}}u;
const NEG: i32 = -2147483647;

struct Params {
    n: u32,
    // Positions of this chunk: order[first .. first + count].
    first: u32,
    count: u32,
    groups_x: u32,
    // Where each table starts in `moves`.
    plays_start_at: u32,
    plays_at: u32,
    slot_at: u32,
    order_at: u32,
    // Window slots per binding, and window words per plane of a column.
    slots_per_binding: u32,
    plane_words: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> moves: array<u32>;
@group(0) @binding(2) var<storage, read_write> rows: array<i32>;
// The window's bindings, w0 .. w{B-1} at bindings 3 .. 2 + B, as many as the adapter allows
// (up to eight); declared by the host:
{{WINDOW}}

// Word `w` of plane j of the column in window slot `slot`.
fn window_word(slot: u32, j: u32, w: u32) -> u32 {
    let b = slot / params.slots_per_binding;
    let at = ((slot % params.slots_per_binding) * K + j) * params.plane_words + w;
    switch b {
{{LOAD}}
    }
}

fn window_store(slot: u32, j: u32, w: u32, v: u32) {
    let b = slot / params.slots_per_binding;
    let at = ((slot % params.slots_per_binding) * K + j) * params.plane_words + w;
    switch b {
{{STORE}}
    }
}

// gnubg's cube decision (`cube_decision` in two_sided.rs), exact on fixed point.
fn cube_decision(no_double: i32, owned_by_taker: i32) -> i32 {
    let take = owned_by_taker * 2;
    if take >= no_double && no_double <= WON {
        return min(take, WON);
    }
    return no_double;
}

// The mover's values when the opponent is on roll with `v` (`Recurrence::after`): substituted
// by the host, cubeless `a[0] = -v[0]`, cubeful (owned, centred, opponent owns)
// `-v[2], -cube_decision(v[1], v[2]), -cube_decision(v[0], v[2])`.
fn after(v: array<i32, K>) -> array<i32, K> {
    var a: array<i32, K>;
    {{AFTER}}
    return a;
}

// A signed 64-bit sum, as (low word, high word).
struct Sum {
    lo: u32,
    hi: i32,
}

fn add(s: Sum, t: i32) -> Sum {
    let lo = s.lo + bitcast<u32>(t);
    let carry = select(0, 1, lo < s.lo);
    return Sum(lo, s.hi + select(0, -1, t < 0) + carry);
}

// The 21 rolls in ROLLS order weigh 1 (doubles) or 2: roll r of a's block is a double when it
// is the block's first.
fn roll_weight36(r: u32) -> i32 {
    // Doubles at r = 0, 6, 11, 15, 18, 20.
    if r == 0u || r == 6u || r == 11u || r == 15u || r == 18u || r == 20u {
        return 1;
    }
    return 2;
}

// The values of the side on roll at `mover`: OFFSET + Σ_r w_r max over its plays p of
// after(value of p) / 36, the value of p being entry u of column p (rows) or entry p of the row
// at `row` (columns).
fn recurrence(mover: u32, u: u32, row: u32, from_rows: bool) -> array<i32, K> {
    let n = params.n;
    var sums: array<Sum, K>;
    for (var r = 0u; r < 21u; r++) {
        let at = params.plays_start_at + 21u * mover + r;
        var best: array<i32, K>;
        for (var j = 0u; j < K; j++) {
            best[j] = NEG;
        }
        for (var t = moves[at]; t < moves[at + 1u]; t++) {
            let p = moves[params.plays_at + t];
            var v: array<i32, K>;
            if from_rows {
                for (var j = 0u; j < K; j++) {
                    v[j] = rows[row + j * n + p];
                }
            } else {
                let slot = moves[params.slot_at + p];
                for (var j = 0u; j < K; j++) {
                    v[j] = window_load(slot, j, u);
                }
            }
            let a = after(v);
            for (var j = 0u; j < K; j++) {
                best[j] = max(best[j], a[j]);
            }
        }
        let w = roll_weight36(r);
        for (var j = 0u; j < K; j++) {
            sums[j] = add(sums[j], w * best[j]);
        }
    }
    var out: array<i32, K>;
    for (var j = 0u; j < K; j++) {
        out[j] = finish(sums[j]);
    }
    return out;
}

fn linear(id: vec3<u32>) -> u32 {
    return id.x + id.y * params.groups_x * 64u;
}

@compute @workgroup_size(64)
fn rows_main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = linear(id);
    let n = params.n;
    if i >= params.count * n {
        return;
    }
    let u = i % n;
    let xi = i / n;
    let x = moves[params.order_at + params.first + xi];
    let out = xi * K * n + u;
    if x == 0u {
        return;
    }
    if u == 0u {
        for (var j = 0u; j < K; j++) {
            rows[out + j * n] = LOST;
        }
        return;
    }
    let v = recurrence(x, u, 0u, false);
    for (var j = 0u; j < K; j++) {
        rows[out + j * n] = v[j];
    }
}

@compute @workgroup_size(64)
fn columns_main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = linear(id);
    let n = params.n;
    if i >= params.count * params.plane_words {
        return;
    }
    let xi = i % params.count;
    let w = i / params.count;
    let x = moves[params.order_at + params.first + xi];
    let slot = moves[params.slot_at + x];
    var words: array<u32, K>;
    for (var e = 0u; e < PER_WORD; e++) {
        let u = w * PER_WORD + e;
        if u >= n {
            // Padding to a whole word: zero bits.
            break;
        }
        var v: array<i32, K>;
        if u == 0u || x == 0u {
            // u off: it won; x off (and u not): u lost.
            for (var j = 0u; j < K; j++) {
                v[j] = select(LOST, WON, u == 0u);
            }
        } else {
            v = recurrence(u, 0u, xi * K * n, true);
        }
        for (var j = 0u; j < K; j++) {
            words[j] |= cell_bits(v[j], e);
        }
    }
    for (var j = 0u; j < K; j++) {
        window_store(slot, j, w, words[j]);
    }
}
