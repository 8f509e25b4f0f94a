//! Positions grouped by pip count, and the ring that keeps the last levels of a sweep.

use super::position::Space;

/// Positions grouped by pip count, lowest first: the whole table's levels, for the sweeps that
/// keep every position (the GPU's, two-sided tables).
pub struct Levels {
    pub by_pips: Vec<Vec<u32>>,
    /// Every index in level order, and where each level starts in it (one more entry than
    /// levels).
    pub order: Vec<u32>,
    pub starts: Vec<usize>,
}

impl Levels {
    pub fn new(space: &Space) -> Levels {
        let mut level = Vec::new();
        let by_pips: Vec<Vec<u32>> = (0..space.level_sizes().len() as u32)
            .map(|l| {
                space.level(l, &mut level);
                level.iter().map(|&(i, _)| i).collect()
            })
            .collect();
        let order: Vec<u32> = by_pips.iter().flatten().copied().collect();
        let mut starts = vec![0];
        for l in &by_pips {
            starts.push(starts.last().unwrap() + l.len());
        }
        Levels {
            by_pips,
            order,
            starts,
        }
    }
}

/// The capacity of a ring that keeps `depth` consecutive levels of these sizes, each
/// contiguous: the most they hold, plus the widest level (see [`ring_slots`]).
pub fn ring_capacity(sizes: &[u64], depth: usize) -> u64 {
    let live = (0..sizes.len())
        .map(|l| sizes[(l + 1).saturating_sub(depth)..=l].iter().sum::<u64>())
        .max()
        .unwrap_or(0);
    live + sizes.iter().copied().max().unwrap_or(0)
}

/// The first slot of each level in a ring of `capacity`: levels one after the other, a
/// level that would wrap starting over at 0.
pub fn ring_slots(sizes: &[u64], capacity: u64) -> Vec<usize> {
    let mut next = 0;
    sizes
        .iter()
        .map(|&size| {
            if next + size > capacity {
                next = 0;
            }
            let at = next;
            next += size;
            at as usize
        })
        .collect()
}
