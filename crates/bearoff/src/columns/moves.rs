//! What the sweep by columns needs of a space: every position's plays per roll and single-die
//! moves, and the window's ring of columns.

use rayon::prelude::*;

use super::MAX_ROLL_PIPS;
use crate::levels::{Levels, ring_capacity, ring_slots};
use crate::moves::{Roll, Unranked};
use crate::position::Space;

/// What the sweep needs of a space: its levels, every position's plays per roll (for rows)
/// and single-die moves (for the chains of columns), and the window's layout.
pub struct Moves {
    pub space: Space,
    pub n: usize,
    /// Positions by pip count.
    pub levels: Vec<Vec<u32>>,
    /// `plays[plays_start[21 x + r] .. plays_start[21 x + r + 1]]`: the distinct positions a
    /// roll r takes x to, ascending.
    plays_start: Vec<u32>,
    plays: Vec<u32>,
    /// Likewise per die, `6 u + d - 1`, in order of the point moved from.
    die_start: Vec<u32>,
    die: Vec<u32>,
    pub window: Window,
}

/// Where each column lives in the window: a ring of `capacity` columns, each level's columns
/// contiguous (a level that would wrap starts over at 0 instead), no level overlapping the 24
/// below it.
pub struct Window {
    pub capacity: usize,
    /// First slot of each level.
    pub level_slot: Vec<usize>,
    /// `slot[x]`: x's column's slot.
    pub slot: Vec<u32>,
}

impl Window {
    /// The capacity for levels of these sizes: the most columns 25 consecutive levels hold,
    /// plus the widest level, since within 25 levels the ring wraps at most once, wasting less
    /// than one level.
    fn capacity(sizes: &[u64], n: u64) -> u64 {
        ring_capacity(sizes, MAX_ROLL_PIPS + 1).min(n)
    }

    /// The capacity for a space, counted without enumerating its positions (so that a plan
    /// for an impossible table allocates nothing).
    pub fn capacity_of(space: Space) -> u64 {
        Window::capacity(&space.level_sizes(), space.len() as u64)
    }

    pub fn new(levels: &[Vec<u32>], n: usize) -> Window {
        let sizes: Vec<u64> = levels.iter().map(|l| l.len() as u64).collect();
        let capacity = Window::capacity(&sizes, n as u64);
        let level_slot = ring_slots(&sizes, capacity);
        let mut slot = vec![0u32; n];
        for (level, &first) in levels.iter().zip(&level_slot) {
            for (k, &x) in level.iter().enumerate() {
                slot[x as usize] = (first + k) as u32;
            }
        }
        Window {
            capacity: capacity as usize,
            level_slot,
            slot,
        }
    }
}

impl Moves {
    pub fn new(space: Space) -> Moves {
        let n = space.len();
        let levels = Levels::new(&space).by_pips;
        let unranked: Vec<Unranked> = (0..n as u32)
            .into_par_iter()
            .map(|i| Unranked::new(&space, i))
            .collect();
        let die_moves = |u: u32, d: u32, out: &mut Vec<u32>| {
            let mut buf = [0u32; 18];
            let k = unranked[u as usize].die_moves(d, &mut buf);
            out.extend_from_slice(&buf[..k]);
        };
        // Per position: its plays and their count per roll, its die moves and their count per die.
        type Lists = (Vec<u32>, [u32; 21], Vec<u32>, [u32; 6]);
        let per_position: Vec<Lists> = (0..n as u32)
            .into_par_iter()
            .map(|x| {
                let (mut plays, mut play_len) = (Vec::new(), [0u32; 21]);
                let (mut cur, mut next) = (Vec::new(), Vec::new());
                for (r, &Roll { low: a, high: b }) in Roll::ALL_21.iter().enumerate() {
                    let start = plays.len();
                    let orders: &[[u8; 4]] = if a == b {
                        &[[a; 4]]
                    } else {
                        &[[a, b, 0, 0], [b, a, 0, 0]]
                    };
                    for dice in orders {
                        cur.clear();
                        cur.push(x);
                        for &d in dice.iter().filter(|&&d| d > 0) {
                            next.clear();
                            for &p in &cur {
                                if p == 0 {
                                    next.push(0);
                                } else {
                                    die_moves(p, u32::from(d), &mut next);
                                }
                            }
                            next.sort_unstable();
                            next.dedup();
                            std::mem::swap(&mut cur, &mut next);
                        }
                        plays.extend_from_slice(&cur);
                    }
                    plays[start..].sort_unstable();
                    let mut k = start;
                    for i in start..plays.len() {
                        if k == start || plays[i] != plays[k - 1] {
                            plays[k] = plays[i];
                            k += 1;
                        }
                    }
                    plays.truncate(k);
                    play_len[r] = (k - start) as u32;
                }
                let (mut die, mut die_len) = (Vec::new(), [0u32; 6]);
                for d in 1..=6 {
                    let before = die.len();
                    if x > 0 {
                        die_moves(x, d, &mut die);
                    }
                    die_len[d as usize - 1] = (die.len() - before) as u32;
                }
                (plays, play_len, die, die_len)
            })
            .collect();
        let mut plays_start = Vec::with_capacity(21 * n + 1);
        let mut die_start = Vec::with_capacity(6 * n + 1);
        let (mut plays, mut die) = (Vec::new(), Vec::new());
        plays_start.push(0);
        die_start.push(0);
        for (p, pl, d, dl) in per_position {
            plays.extend(p);
            die.extend(d);
            for l in pl {
                plays_start.push(plays_start.last().unwrap() + l);
            }
            for l in dl {
                die_start.push(die_start.last().unwrap() + l);
            }
        }
        let window = Window::new(&levels, n);
        Moves {
            space,
            n,
            levels,
            plays_start,
            plays,
            die_start,
            die,
            window,
        }
    }

    #[inline]
    pub(super) fn plays(&self, x: u32, r: usize) -> &[u32] {
        let i = 21 * x as usize + r;
        &self.plays[self.plays_start[i] as usize..self.plays_start[i + 1] as usize]
    }

    /// The distinct positions x's plays reach, ascending: the columns x's row reads.
    #[cfg(feature = "gpu")]
    pub(crate) fn successors(&self, x: u32) -> Vec<u32> {
        let i = 21 * x as usize;
        let mut s =
            self.plays[self.plays_start[i] as usize..self.plays_start[i + 21] as usize].to_vec();
        s.sort_unstable();
        s.dedup();
        s
    }

    #[inline]
    pub(super) fn die_moves(&self, u: usize, d: usize) -> &[u32] {
        let i = 6 * u + d;
        &self.die[self.die_start[i] as usize..self.die_start[i + 1] as usize]
    }

    /// The pairs a pass computes in the levels below `level` (a level's positions against every
    /// position): the progress of a resumed pass.
    pub fn pairs_below(&self, level: usize) -> u64 {
        self.levels[..level.min(self.levels.len())]
            .iter()
            .map(|l| (l.len() * self.n) as u64)
            .sum()
    }

    /// The play lists as the GPU reads them: where each list starts (`21 x + r`, one more
    /// entry than lists) and the positions.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))] // the GPU kernel's tables
    pub(crate) fn play_lists(&self) -> (&[u32], &[u32]) {
        (&self.plays_start, &self.plays)
    }

    /// Bytes these tables take (the plan counts them).
    pub fn bytes(&self) -> u64 {
        4 * (self.plays_start.len()
            + self.plays.len()
            + self.die_start.len()
            + self.die.len()
            + self.window.slot.len()) as u64
    }

    /// Estimated bytes of `Moves::new(space)`, before building it: 170 plays and 15.4 die
    /// moves per position on 6 points with 15 checkers, fewer with fewer (measured), plus the
    /// per-position intermediate lists while it is built.
    pub fn estimate_bytes(space: Space) -> u64 {
        (space.len() as u64).saturating_mul(4 * (21 + 6 + 1 + 200 + 20) * 2)
    }

    /// Estimated u32 words of the play lists, slots and level order the GPU reads: at most 200
    /// plays a position (170 measured for 15x6).
    pub fn estimate_gpu_words(space: Space) -> u64 {
        (space.len() as u64).saturating_mul(21 + 200 + 2) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_ROLL_PIPS, Moves, Window};
    use crate::levels::Levels;
    use crate::moves::{Roll, slow_plays};
    use crate::position::Space;

    #[test]
    fn plays_are_every_play_by_brute_force() {
        let space = Space::new(5, 4).unwrap();
        let moves = Moves::new(space);
        let (mut c, mut p) = ([0u8; 5], [0u8; 5]);
        for x in 1..space.len() as u32 {
            space.position(x, &mut c);
            for (r, roll) in Roll::ALL_21.iter().enumerate() {
                let want: Vec<u32> = slow_plays(&c, roll.low.into(), roll.high.into())
                    .iter()
                    .map(|q| space.index(q))
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect();
                assert_eq!(moves.plays(x, r), &want[..], "{c:?} {roll:?}");
                let _ = &mut p;
            }
        }
    }

    #[test]
    fn window_levels_never_overlap_the_24_below() {
        for (points, checkers) in [(6, 15), (6, 6), (3, 10), (10, 3)] {
            let space = Space::new(points, checkers).unwrap();
            let levels = Levels::new(&space).by_pips;
            let w = Window::new(&levels, space.len());
            assert!(w.capacity <= space.len());
            for l in 0..levels.len() {
                let mine = w.level_slot[l]..w.level_slot[l] + levels[l].len();
                assert!(mine.end <= w.capacity);
                for (below, level) in levels
                    .iter()
                    .enumerate()
                    .take(l)
                    .skip(l.saturating_sub(MAX_ROLL_PIPS))
                {
                    let theirs = w.level_slot[below]..w.level_slot[below] + level.len();
                    assert!(mine.end <= theirs.start || theirs.end <= mine.start);
                }
            }
        }
        // 15 checkers on 6 points: at most 35,798 columns live at once, two thirds of 54,264.
        let space = Space::new(6, 15).unwrap();
        let w = Window::new(&Levels::new(&space).by_pips, space.len());
        assert!(w.capacity >= 35_798 && w.capacity <= 35_798 + 1_636);
        for (points, checkers) in [(6, 15), (6, 6), (3, 10), (10, 3), (1, 1), (18, 1)] {
            let space = Space::new(points, checkers).unwrap();
            let w = Window::new(&Levels::new(&space).by_pips, space.len());
            assert_eq!(
                Window::capacity_of(space),
                w.capacity as u64,
                "{points}x{checkers}"
            );
        }
    }
}
