// One level (total pip count) of the two-sided bearoff sweep: the twin of solve_pair() in
// src/bearoff/two_sided.rs. Each invocation takes one pair (us, them) and finds, for every
// roll, the play that maximises the winning chance of the side on roll, from the chains of the
// pairs below it.

struct Params {
    // One-sided positions per side.
    n: u32,
    // Single-die successors per position and die (the stride of `moves`).
    width: u32,
    // This level's pairs are pairs[first .. first + count].
    first: u32,
    count: u32,
    groups_x: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> pairs: array<vec2<u32>>;
// moves[(6 * x + d - 1) * width + j]: the j-th single-die successor of position x with die d,
// 0xffffffff past the last.
@group(0) @binding(2) var<storage, read> moves: array<u32>;
// win[us * n + them]: P(the side on roll wins).
@group(0) @binding(3) var<storage, read_write> win: array<f64>;
// chains[18 * (them * n + us) + 6 k + d - 1]: the mover's best winning chance after k + 1 steps
// of die d, opponent-major.
@group(0) @binding(4) var<storage, read_write> chains: array<f64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let t = (wg.y * params.groups_x + wg.x) * 64u + lane;
    if t >= params.count {
        return;
    }
    let pair = pairs[params.first + t];
    let us = pair.x;
    let them = pair.y;
    let n = params.n;
    let out = 18u * (them * n + us);
    if us == 0u || them == 0u {
        // The side on roll is off (it won), or its opponent is (it lost).
        let v = select(0.0lf, 1.0lf, us == 0u);
        win[us * n + them] = v;
        for (var k = 0u; k < 18u; k++) {
            chains[out + k] = v;
        }
        return;
    }
    var best: array<f64, 18>;
    for (var k = 0u; k < 18u; k++) {
        best[k] = -1.0lf;
    }
    var roll_best: array<f64, 21>;
    for (var r = 0u; r < 21u; r++) {
        roll_best[r] = -1.0lf;
    }
    for (var a = 1u; a <= 6u; a++) {
        let row = (6u * us + a - 1u) * params.width;
        for (var j = 0u; j < params.width; j++) {
            let m = moves[row + j];
            if m == 0xffffffffu {
                break;
            }
            let after = 1.0lf - win[them * n + m];
            let next = 18u * (them * n + m);
            best[a - 1u] = max(best[a - 1u], after);
            best[6u + a - 1u] = max(best[6u + a - 1u], chains[next + a - 1u]);
            best[12u + a - 1u] = max(best[12u + a - 1u], chains[next + 6u + a - 1u]);
            for (var b = 1u; b <= 6u; b++) {
                let r = roll_index(a, b);
                var v = chains[next + b - 1u];
                if a == b {
                    v = chains[next + 12u + a - 1u];
                }
                roll_best[r] = max(roll_best[r], v);
            }
        }
    }
    var sum = 0.0lf;
    var r = 0u;
    for (var a = 1u; a <= 6u; a++) {
        for (var b = a; b <= 6u; b++) {
            sum += roll_weight(a, b) * roll_best[r];
            r++;
        }
    }
    win[us * n + them] = sum / 36.0lf;
    for (var k = 0u; k < 18u; k++) {
        chains[out + k] = best[k];
    }
}
