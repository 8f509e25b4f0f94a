// One side's bearoff position on the GPU: gnubg's index, unranked, and single-die moves on the
// index. The twin of Space::position and Unranked in crates/bearoff/src/{position,moves}.rs.

// The kernel that includes this declares `binomial: array<u32>`, C(n, k) for n, k < 34,
// row-major (binomial[34 * n + k]), at a binding of its own: shared WGSL declares none.

fn choose(n: u32, k: u32) -> u32 {
    if k > n {
        return 0u;
    }
    return binomial[34u * n + k];
}

struct Unranked {
    index: u32,
    counts: array<u32, 18>,
    // prefix[k]: the index decrease of lowering j_0 .. j_{k-1} by one.
    prefix: array<u32, 19>,
    // Highest occupied point (1-based), 0 when all are off.
    top: u32,
    checkers: u32,
}

fn unrank(index: u32, points: u32, max_checkers: u32) -> Unranked {
    var u: Unranked;
    u.index = index;
    var rest = index;
    var prev = 0u;
    var top = max_checkers + points - 1u;
    var js: array<u32, 18>;
    for (var i = 0u; i < points; i++) {
        let k = points - i;
        var j = top;
        while choose(j, k) > rest {
            j -= 1u;
        }
        rest -= choose(j, k);
        js[i] = j;
        if i > 0u {
            u.counts[i - 1u] = prev - j - 1u;
        }
        prev = j;
        top = max(j, 1u) - 1u;
    }
    u.counts[points - 1u] = prev;
    u.checkers = js[0] - (points - 1u);
    u.prefix[0] = 0u;
    u.top = 0u;
    for (var i = 0u; i < points; i++) {
        var d = 0u;
        if js[i] >= 1u {
            d = choose(js[i] - 1u, points - i - 1u);
        }
        u.prefix[i + 1u] = u.prefix[i] + d;
        if u.counts[i] > 0u {
            u.top = i + 1u;
        }
    }
    return u;
}

// The successor of moving one checker from point p with die d, or 0xffffffff if that checker
// cannot move with d.
fn die_move(u: ptr<function, Unranked>, p: u32, d: u32) -> u32 {
    if (*u).counts[p - 1u] == 0u {
        return 0xffffffffu;
    }
    if p > d {
        return (*u).index - ((*u).prefix[p] - (*u).prefix[p - d]);
    }
    if p == d || p == (*u).top {
        return (*u).index - (*u).prefix[p];
    }
    return 0xffffffffu;
}
