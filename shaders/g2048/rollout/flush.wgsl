// An invocation's sums of its last root, added straight into the global sums: the rollout
// kernel's flush where the adapter has no subgroups (flush_subgroup.wgsl where it has).
fn flush_last(r: u32, acc: Acc, g: u32) {
    flush(r, acc);
}
