// Random 2048 rollouts: the twin of rollout() and evaluate_cpu() in crates/g2048/src/rollout.rs.
// Each rollout `index` of root `item / rollouts` plays with the stream (seed, index,
// root.stream) that the CPU engine uses. Its results go into the root's exact integer sums:
// first into the workgroup's copy of them (a workgroup plays a contiguous run of items, so of a
// few roots), which the workgroup then adds into the global sums once per root. Integer
// addition commutes, so the sums do not depend on the order in which invocations finish.

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
    // Items per workgroup: workgroup w plays items w * per_group .. (w + 1) * per_group of the
    // dispatch, invocation i of them those at i, i + 64, i + 128, ...
    per_group: u32,
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

// Roots whose sums a workgroup keeps in its own memory: those from the root of its first item
// on. A workgroup of k rollouts an invocation spans 64k / rollouts + 1 roots; rollouts of roots
// beyond the window (fewer than 64k / 64 rollouts a root) go straight to the global sums.
const WINDOW: u32 = 64u;
var<workgroup> local_sums: array<atomic<u32>, WINDOW * WORDS_PER_ROOT>;

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

// The same two on the workgroup's sums.
fn add_local_u64(i: u32, v: u32) {
    let old = atomicAdd(&local_sums[i], v);
    if old > 0xffffffffu - v {
        atomicAdd(&local_sums[i + 1u], 1u);
    }
}

fn add_local_u96(i: u32, v: vec2<u32>) {
    let old = atomicAdd(&local_sums[i], v.y);
    let high = v.x + select(0u, 1u, old > 0xffffffffu - v.y);
    if high != 0u {
        let old1 = atomicAdd(&local_sums[i + 1u], high);
        if old1 > 0xffffffffu - high {
            atomicAdd(&local_sums[i + 2u], 1u);
        }
    }
}

// Records one rollout of root r.
fn record(r: u32, first_root: u32, score: u32, b: vec2<u32>, moves: u32, overflow: bool) {
    let tiles = tile_sum(b);
    let slot = r - first_root;
    if slot < WINDOW {
        let base = slot * WORDS_PER_ROOT;
        add_local_u64(base, score);
        add_local_u96(base + 2u, mul_hi_lo(score, score));
        add_local_u64(base + 5u, tiles);
        add_local_u96(base + 7u, mul_hi_lo(tiles, tiles));
        add_local_u64(base + 10u, moves);
        if overflow {
            atomicAdd(&local_sums[base + 12u], 1u);
        }
        atomicAdd(&local_sums[base + 13u], 1u);
        return;
    }
    let base = r * WORDS_PER_ROOT;
    add_u64(base, vec2<u32>(0u, score));
    add_u96(base + 2u, vec3<u32>(0u, mul_hi_lo(score, score)));
    add_u64(base + 5u, vec2<u32>(0u, tiles));
    add_u96(base + 7u, vec3<u32>(0u, mul_hi_lo(tiles, tiles)));
    add_u64(base + 10u, vec2<u32>(0u, moves));
    if overflow {
        atomicAdd(&sums[base + 12u], 1u);
    }
    atomicAdd(&sums[base + 13u], 1u);
}

// Adds the workgroup's sums of window slot k (root first_root + k) into the global sums.
fn flush(k: u32, first_root: u32) {
    let l = k * WORDS_PER_ROOT;
    let recorded = atomicLoad(&local_sums[l + 13u]);
    if recorded == 0u {
        return;
    }
    let w = array<u32, 13>(
        atomicLoad(&local_sums[l]), atomicLoad(&local_sums[l + 1u]),
        atomicLoad(&local_sums[l + 2u]), atomicLoad(&local_sums[l + 3u]),
        atomicLoad(&local_sums[l + 4u]), atomicLoad(&local_sums[l + 5u]),
        atomicLoad(&local_sums[l + 6u]), atomicLoad(&local_sums[l + 7u]),
        atomicLoad(&local_sums[l + 8u]), atomicLoad(&local_sums[l + 9u]),
        atomicLoad(&local_sums[l + 10u]), atomicLoad(&local_sums[l + 11u]),
        atomicLoad(&local_sums[l + 12u]),
    );
    let base = (first_root + k) * WORDS_PER_ROOT;
    add_u64(base, vec2<u32>(w[1], w[0]));
    add_u96(base + 2u, vec3<u32>(w[4], w[3], w[2]));
    add_u64(base + 5u, vec2<u32>(w[6], w[5]));
    add_u96(base + 7u, vec3<u32>(w[9], w[8], w[7]));
    add_u64(base + 10u, vec2<u32>(w[11], w[10]));
    if w[12] != 0u {
        atomicAdd(&sums[base + 12u], w[12]);
    }
    atomicAdd(&sums[base + 13u], recorded);
}

// Rollouts differ in length by a factor of ten, and a SIMD group runs until its longest lane
// is done. So an invocation plays several rollouts back to back, one move per loop iteration,
// starting its next rollout as soon as one ends: lanes stay busy until the workgroup's items
// run dry.
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let begin = (wg.y * params.groups_x + wg.x) * params.per_group;
    let end = min(begin + params.per_group, params.count);
    let first_root = (params.first_item + begin) / params.rollouts;
    for (var k = lane; k < WINDOW * WORDS_PER_ROOT; k += 64u) {
        atomicStore(&local_sums[k], 0u);
    }
    workgroupBarrier();
    var j = begin + lane;
    if j < end {
        var item = params.first_item + j;
        var r = item / params.rollouts;
        var s = stream_new(params.key, vec3<u32>(params.first_rollout + item % params.rollouts, roots[r].stream));
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
            record(r, first_root, score, b, moves, overflow);
            j += 64u;
            if j >= end {
                break;
            }
            item = params.first_item + j;
            r = item / params.rollouts;
            s = stream_new(params.key, vec3<u32>(params.first_rollout + item % params.rollouts, roots[r].stream));
            b = spawn(roots[r].board, &s);
            score = 0u;
            moves = 0u;
        }
    }
    workgroupBarrier();
    flush(lane, first_root);
}
