// One level of the one-sided bearoff sweep: the twin of solve_one() in
// src/bearoff/one_sided.rs. Each invocation takes one position of the level, enumerates the
// single-die moves of every die, and from the chains of the (already solved) lower levels finds
// the best play of each of the 21 rolls, its value, and its own chains for the levels above.

struct Params {
    points: u32,
    max_checkers: u32,
    // Positions with fewer checkers than this are terminal (value 0): 1 for bearing off,
    // 15 for the first checker off.
    terminal_below: u32,
    // This level's positions are level[first .. first + count].
    first: u32,
    count: u32,
    groups_x: u32,
    pad: vec2<u32>,
}

// C(n, k) for position.wgsl.
@group(0) @binding(0) var<storage, read> binomial: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read> level: array<u32>;
@group(0) @binding(3) var<storage, read_write> value: array<f64>;
// Per position 18 entries, [k * 6 + d - 1]: the best value after k + 1 steps of die d, and the
// position that chain ends on.
@group(0) @binding(4) var<storage, read_write> best: array<f64>;
@group(0) @binding(5) var<storage, read_write> best_to: array<u32>;
// Per position, the position each of the 21 rolls' best play reaches.
@group(0) @binding(6) var<storage, read_write> succ: array<u32>;

fn better(v: f64, to: u32, best_v: f64, best_to: u32) -> bool {
    return v < best_v || (v == best_v && to < best_to);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let t = (wg.y * params.groups_x + wg.x) * 64u + lane;
    if t >= params.count {
        return;
    }
    let i = level[params.first + t];
    var u = unrank(i, params.points, params.max_checkers);
    if u.checkers < params.terminal_below {
        value[i] = 0.0lf;
        for (var k = 0u; k < 18u; k++) {
            best[18u * i + k] = 0.0lf;
            best_to[18u * i + k] = i;
        }
        for (var r = 0u; r < 21u; r++) {
            succ[21u * i + r] = i;
        }
        return;
    }
    // Above any value; never survives, as every die moves some checker.
    let inf = 1.0e300lf;
    var chain_v: array<f64, 18>;
    var chain_to: array<u32, 18>;
    for (var k = 0u; k < 18u; k++) {
        chain_v[k] = inf;
        chain_to[k] = 0xffffffffu;
    }
    var roll_v: array<f64, 21>;
    var roll_to: array<u32, 21>;
    for (var r = 0u; r < 21u; r++) {
        roll_v[r] = inf;
        roll_to[r] = 0xffffffffu;
    }
    for (var a = 1u; a <= 6u; a++) {
        for (var p = 1u; p <= u.top; p++) {
            let m = die_move(&u, p, a);
            if m == 0xffffffffu {
                continue;
            }
            // k + 1 steps of die a: one step to m, then k steps from m.
            let b0 = 18u * m;
            var sv = array<f64, 3>(value[m], best[b0 + a - 1u], best[b0 + 6u + a - 1u]);
            var st = array<u32, 3>(m, best_to[b0 + a - 1u], best_to[b0 + 6u + a - 1u]);
            for (var k = 0u; k < 3u; k++) {
                let c = k * 6u + a - 1u;
                if better(sv[k], st[k], chain_v[c], chain_to[c]) {
                    chain_v[c] = sv[k];
                    chain_to[c] = st[k];
                }
            }
            // Rolls with die a played first: then the best single step of the other die, or
            // for a double the best three steps of the same die.
            for (var b = 1u; b <= 6u; b++) {
                let r = roll_index(a, b);
                var v = best[b0 + b - 1u];
                var to = best_to[b0 + b - 1u];
                if a == b {
                    v = best[b0 + 12u + a - 1u];
                    to = best_to[b0 + 12u + a - 1u];
                }
                if better(v, to, roll_v[r], roll_to[r]) {
                    roll_v[r] = v;
                    roll_to[r] = to;
                }
            }
        }
    }
    var sum = 0.0lf;
    var r = 0u;
    for (var a = 1u; a <= 6u; a++) {
        for (var b = a; b <= 6u; b++) {
            sum += roll_weight(a, b) * roll_v[r];
            succ[21u * i + r] = roll_to[r];
            r++;
        }
    }
    value[i] = 1.0lf + sum / 36.0lf;
    for (var k = 0u; k < 18u; k++) {
        best[18u * i + k] = chain_v[k];
        best_to[18u * i + k] = chain_to[k];
    }
}
