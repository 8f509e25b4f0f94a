// Random 2048 rollouts, one invocation per rollout: the twin of rollout() and evaluate_cpu() in
// src/game2048/rollout.rs. Each invocation plays rollout `index` of root `item / rollouts`, with
// the stream (seed, index, root.stream) that the CPU engine uses, and adds its results into the
// root's exact integer sums with carrying 32-bit atomics: integer addition commutes, so the
// sums do not depend on the order in which invocations finish.

struct Root {
    board: vec2<u32>,
    stream: vec2<u32>,
}

struct Params {
    key: vec2<u32>,
    // Rollouts per root.
    rollouts: u32,
    // First item (root * rollouts + rollout) of this dispatch, within the batch.
    first_item: u32,
    // Items in the batch: roots * rollouts.
    items: u32,
    // Workgroups along x; the linear workgroup index is y * groups_x + x.
    groups_x: u32,
    // Items in this dispatch.
    count: u32,
    // Invocations in this dispatch: invocation g plays items g, g + stride, g + 2 stride, ...
    stride: u32,
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

// Adds v to the u64 at words i, i + 1.
fn add_u64(i: u32, v: u32) {
    let old = atomicAdd(&sums[i], v);
    if old > 0xffffffffu - v {
        atomicAdd(&sums[i + 1u], 1u);
    }
}

// Adds the u64 v = (hi, lo) to the u96 at words i..i + 3. Each carry is taken from the value
// the atomic returned, so it is counted exactly once whatever the interleaving.
fn add_u96(i: u32, v: vec2<u32>) {
    let old = atomicAdd(&sums[i], v.y);
    let high = v.x + select(0u, 1u, old > 0xffffffffu - v.y);
    if high != 0u {
        let old1 = atomicAdd(&sums[i + 1u], high);
        if old1 > 0xffffffffu - high {
            atomicAdd(&sums[i + 2u], 1u);
        }
    }
}

fn record(r: u32, score: u32, b: vec2<u32>, moves: u32, overflow: bool) {
    let tiles = tile_sum(b);
    let base = r * WORDS_PER_ROOT;
    add_u64(base, score);
    add_u96(base + 2u, mul_hi_lo(score, score));
    add_u64(base + 5u, tiles);
    add_u96(base + 7u, mul_hi_lo(tiles, tiles));
    add_u64(base + 10u, moves);
    if overflow {
        atomicAdd(&sums[base + 12u], 1u);
    }
    atomicAdd(&sums[base + 13u], 1u);
}

// Rollouts differ in length by a factor of ten, and a SIMD group runs until its longest lane
// is done. So an invocation plays several rollouts back to back, one move per loop iteration,
// starting its next rollout as soon as one ends: lanes stay busy until the dispatch runs dry.
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    var j = (wg.y * params.groups_x + wg.x) * 64u + lane;
    if j >= params.stride {
        return;
    }
    var item = params.first_item + j;
    var r = item / params.rollouts;
    var s = stream_new(params.key, vec3<u32>(item % params.rollouts, roots[r].stream));
    var b = spawn(roots[r].board, &s);
    var score = 0u;
    var moves = 0u;
    loop {
        let c = random_legal_move(b, &s);
        let overflow = c.found && c.moved.reward >= OVERFLOW_FLAG;
        if c.found && !overflow {
            b = spawn(c.moved.board, &s);
            score += c.moved.reward;
            moves += 1u;
            continue;
        }
        record(r, score, b, moves, overflow);
        j += params.stride;
        if j >= params.count {
            break;
        }
        item = params.first_item + j;
        r = item / params.rollouts;
        s = stream_new(params.key, vec3<u32>(item % params.rollouts, roots[r].stream));
        b = spawn(roots[r].board, &s);
        score = 0u;
        moves = 0u;
    }
}
