// An invocation's sums of its last root, added across its subgroup before they touch global
// memory: the lanes on the root of the subgroup's first active lane are summed exactly and that
// lane adds the total with one set of atomics; a lane on another root (its run of rollouts
// crossed a root boundary) adds its own. A 32-lane subgroup of one root so takes one set of
// 12-14 atomics instead of 32 sets. Every operation here runs with the same active lanes, so
// the totals are exact however the lanes reconverged after the kernel's loop. (WGSL's
// `enable subgroups;` is left out: naga 30 rejects it and takes the operations from the
// device's SUBGROUP feature.)
fn flush_last(r: u32, acc: Acc, g: u32) {
    let first = subgroupBroadcastFirst(r);
    let on = r == first;
    var sum: Acc;
    sum.score = group_u64(acc.score, on);
    sum.score_sq = group_u96(acc.score_sq, on);
    sum.tiles = group_u64(acc.tiles, on);
    sum.tiles_sq = group_u96(acc.tiles_sq, on);
    sum.moves = group_u64(acc.moves, on);
    // At most rollouts-per-invocation times the subgroup's lanes: no carry.
    sum.overflows = subgroupAdd(select(0u, acc.overflows, on));
    sum.count = subgroupAdd(select(0u, acc.count, on));
    if g == subgroupBroadcastFirst(g) {
        flush(first, sum);
    }
    if !on {
        flush(r, acc);
    }
}

// One 32-bit word summed over the lanes that count (`on`), plus a carry in: the sum's low 32
// bits and its carry out. The halves are summed apart, each under 2^23 for the at most 128
// lanes of a subgroup, so nothing is lost.
fn group_word(x: u32, on: bool, carry: u32) -> vec2<u32> {
    let v = select(0u, x, on);
    let h = subgroupAdd(vec2<u32>(v & 0xffffu, v >> 16u));
    let lo = h.x + carry;
    let hi = h.y + (lo >> 16u);
    return vec2<u32>((lo & 0xffffu) | (hi << 16u), hi >> 16u);
}

// A u64 (hi, lo) summed over the lanes that count, modulo 2^64 as the global sums are.
fn group_u64(v: vec2<u32>, on: bool) -> vec2<u32> {
    let lo = group_word(v.y, on, 0u);
    let hi = group_word(v.x, on, lo.y);
    return vec2<u32>(hi.x, lo.x);
}

// A u96 (hi, mid, lo) summed over the lanes that count, modulo 2^96.
fn group_u96(v: vec3<u32>, on: bool) -> vec3<u32> {
    let lo = group_word(v.z, on, 0u);
    let mid = group_word(v.y, on, lo.y);
    let hi = group_word(v.x, on, mid.y);
    return vec3<u32>(hi.x, mid.x, lo.x);
}
