// Random 2048 rollouts: the twin of rollout() and evaluate_cpu() in crates/g2048/src/rollout.rs.
// Each rollout `index` of root `item / rollouts` plays with the stream (seed, index,
// root.stream) that the CPU engine uses. Its results go into the root's exact integer sums:
// first into the invocation's own, in registers, for the run of rollouts it plays of one root,
// then (where the adapter has subgroups, for its last root) across its subgroup, then with
// carrying atomics into the global sums. Integer addition commutes, so the sums do not
// depend on the order in which invocations finish.

struct Root {
    board: vec2<u32>,
    stream: vec2<u32>,
}

struct Params {
    key: vec2<u32>,
    // Rollouts per root, and the index of the first.
    rollouts: u32,
    first_rollout: u32,
    // First item (root * rollouts + rollout) of this dispatch, within the batch.
    first_item: u32,
    // Items in the batch: roots * rollouts.
    items: u32,
    // Workgroups along x; the linear workgroup index is y * groups_x + x.
    groups_x: u32,
    // Items in this dispatch.
    count: u32,
    // Items per invocation: invocation g plays items g * per_invocation .. (g + 1) *
    // per_invocation of the dispatch.
    per_invocation: u32,
    pad: u32,
}

// The row tables of board.wgsl.
@group(0) @binding(0) var<storage, read> row_moves: array<u32>;
@group(0) @binding(1) var<storage, read> row_reward: array<u32>;
@group(0) @binding(2) var<storage, read> roots: array<Root>;
// Per root, 16 words: score (u64), score^2 (u96), tile sum (u64), tile sum^2 (u96),
// moves (u64), overflowed rollouts (u32), rollouts recorded (u32), 2 unused. The host checks
// the recorded count: a driver that cuts a kernel short (llvmpipe's loop limit) is an error,
// never a quietly smaller sample.
@group(0) @binding(3) var<storage, read_write> sums: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> params: Params;

// WORDS_PER_ROOT comes from the host (rollout/gpu.rs).

// Adds v to the u64 at words i, i + 1 of the global sums.
fn add_u64(i: u32, v: vec2<u32>) {
    let old = atomicAdd(&sums[i], v.y);
    let high = v.x + select(0u, 1u, old > 0xffffffffu - v.y);
    if high != 0u {
        atomicAdd(&sums[i + 1u], high);
    }
}

// Adds the u96 v = (hi, mid, lo) to the u96 at words i..i + 2 of the global sums. Each carry
// is taken from the value the atomic returned, so it is counted exactly once whatever the
// interleaving.
fn add_u96(i: u32, v: vec3<u32>) {
    let old = atomicAdd(&sums[i], v.z);
    let carry = select(0u, 1u, old > 0xffffffffu - v.z);
    // mid + carry wraps only when mid is all ones: then it carries into the top word instead.
    let mid = v.y + carry;
    let wrapped = select(0u, 1u, mid < carry);
    var high = v.x + wrapped;
    if mid != 0u {
        let old1 = atomicAdd(&sums[i + 1u], mid);
        high += select(0u, 1u, old1 > 0xffffffffu - mid);
    }
    if high != 0u {
        atomicAdd(&sums[i + 2u], high);
    }
}

// One invocation's sums over the rollouts it has played of one root, kept in registers: the
// layout of the global sums (u64 score, u96 score^2, u64 tile sum, u96 tile sum^2, u64 moves,
// overflows, rollouts), each multiword value as (hi, [mid,] lo).
struct Acc {
    score: vec2<u32>,
    score_sq: vec3<u32>,
    tiles: vec2<u32>,
    tiles_sq: vec3<u32>,
    moves: vec2<u32>,
    overflows: u32,
    count: u32,
}

fn plus_u64(a: vec2<u32>, v: u32) -> vec2<u32> {
    let lo = a.y + v;
    return vec2<u32>(a.x + select(0u, 1u, lo < v), lo);
}

fn plus_u96(a: vec3<u32>, v: vec2<u32>) -> vec3<u32> {
    let lo = a.z + v.y;
    let c0 = select(0u, 1u, lo < v.y);
    let mid = a.y + v.x;
    let c1 = select(0u, 1u, mid < v.x);
    let mid2 = mid + c0;
    let c2 = select(0u, 1u, mid2 < c0);
    return vec3<u32>(a.x + c1 + c2, mid2, lo);
}

fn record(acc: ptr<function, Acc>, score: u32, b: vec2<u32>, moves: u32, overflow: bool) {
    let tiles = tile_sum(b);
    (*acc).score = plus_u64((*acc).score, score);
    (*acc).score_sq = plus_u96((*acc).score_sq, mul_hi_lo(score, score));
    (*acc).tiles = plus_u64((*acc).tiles, tiles);
    (*acc).tiles_sq = plus_u96((*acc).tiles_sq, mul_hi_lo(tiles, tiles));
    (*acc).moves = plus_u64((*acc).moves, moves);
    (*acc).overflows += select(0u, 1u, overflow);
    (*acc).count += 1u;
}

// Adds an invocation's sums of root r into the global sums.
fn flush(r: u32, acc: Acc) {
    let base = r * WORDS_PER_ROOT;
    add_u64(base, acc.score);
    add_u96(base + 2u, acc.score_sq);
    add_u64(base + 5u, acc.tiles);
    add_u96(base + 7u, acc.tiles_sq);
    add_u64(base + 10u, acc.moves);
    if acc.overflows != 0u {
        atomicAdd(&sums[base + 12u], acc.overflows);
    }
    atomicAdd(&sums[base + 13u], acc.count);
}

// Rollouts differ in length by a factor of ten, and a SIMD group runs until its longest lane
// is done. So an invocation plays several rollouts back to back, one move per loop iteration,
// starting its next rollout as soon as one ends: lanes stay busy until the dispatch runs dry.
// Its rollouts are a contiguous run of items, so mostly of one root: it sums them in registers
// and adds them into the global sums once per root.
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let g = (wg.y * params.groups_x + wg.x) * 64u + lane;
    var j = g * params.per_invocation;
    let end = min(j + params.per_invocation, params.count);
    if j >= end {
        return;
    }
    var item = params.first_item + j;
    var r = item / params.rollouts;
    var s = stream_new(params.key, vec3<u32>(params.first_rollout + item % params.rollouts, roots[r].stream));
    var b = spawn(roots[r].board, &s);
    var score = 0u;
    var moves = 0u;
    var acc = Acc();
    loop {
        let c = random_legal_move(b, &s);
        let overflow = c.found && c.moved.reward >= OVERFLOW_FLAG;
        if c.found && !overflow {
            b = spawn(c.moved.board, &s);
            score += c.moved.reward;
            moves += 1u;
            continue;
        }
        record(&acc, score, b, moves, overflow);
        j += 1u;
        if j >= end {
            break;
        }
        item = params.first_item + j;
        let next = item / params.rollouts;
        if next != r {
            flush(r, acc);
            acc = Acc();
            r = next;
        }
        s = stream_new(params.key, vec3<u32>(params.first_rollout + item % params.rollouts, roots[r].stream));
        b = spawn(roots[r].board, &s);
        score = 0u;
        moves = 0u;
    }
    // The last root's sums, where most of an invocation's rollouts go: added across the
    // subgroup first where the adapter has subgroups (rollout_flush_subgroup.wgsl), else
    // straight into the global sums (rollout_flush.wgsl).
    flush_last(r, acc, g);
}
