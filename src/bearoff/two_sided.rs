//! The two-sided bearoff database: the exact cubeless probability that the side on roll wins,
//! for every pair of one-sided positions.

use super::position::Space;

/// A solved two-sided table over `space` for both sides.
pub struct TwoSided {
    pub space: Space,
    /// `win[us * n + them]`: P(the side on roll, at position `us`, wins), n = space.len().
    pub win: Vec<f64>,
}
