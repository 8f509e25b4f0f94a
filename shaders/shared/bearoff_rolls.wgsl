// The 21 dice rolls in rollsim's order, Roll::ALL_21 in crates/bearoff/src/moves.rs: (1,1), (1,2), ...,
// (1,6), (2,2), ..., (6,6); doubles weigh 1/36, the others 2/36.

// The index of the roll of a and b (either order).
fn roll_index(a: u32, b: u32) -> u32 {
    let lo = min(a, b);
    let hi = max(a, b);
    // Rolls before those starting with lo: sum over x < lo of (7 - x).
    return (lo - 1u) * 7u - (lo - 1u) * lo / 2u + (hi - lo);
}

// A roll's weight in 36ths.
fn roll_weight(a: u32, b: u32) -> f64 {
    return select(2.0lf, 1.0lf, a == b);
}
