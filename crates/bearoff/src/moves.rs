//! Single-die moves of one side, straight on indices, and the 21 rolls.
//!
//! Every bearoff play is a chain of single-die steps (a non-double is one die then the other, in
//! either order; a double is four steps of the same die), so the solvers need only the successors
//! of one die. They are computed on the index, without building the moved position: with
//! `index = Σ_i C(j_i, P - i)` (see `position`), moving a checker from point p to point q < p
//! lowers `j_i` by one for `q <= i < p`, and bearing one off from p lowers `j_i` for `i < p`;
//! lowering `j_i` by one lowers the index by `C(j_i - 1, P - i - 1)`. With prefix sums of those
//! decrements, each successor costs one subtraction.

use super::position::{Space, binomial};

/// A roll of two dice, the lower die first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Roll {
    pub low: u8,
    pub high: u8,
}

impl Roll {
    /// The 21 distinct rolls in table order (gnubg's): 1-1, 1-2, ..., 1-6, 2-2, ..., 6-6.
    pub const ALL_21: [Roll; 21] = {
        let mut out = [Roll { low: 0, high: 0 }; 21];
        let (mut n, mut low) = (0, 1);
        while low <= 6 {
            let mut high = low;
            while high <= 6 {
                out[n] = Roll { low, high };
                n += 1;
                high += 1;
            }
            low += 1;
        }
        out
    };

    /// `INDEX[a - 1][b - 1]`: the place in [`Roll::ALL_21`] of the roll of dice a and b, in
    /// either order.
    pub const INDEX: [[usize; 6]; 6] = {
        let mut t = [[0usize; 6]; 6];
        let mut r = 0;
        while r < 21 {
            let Roll { low, high } = Roll::ALL_21[r];
            t[low as usize - 1][high as usize - 1] = r;
            t[high as usize - 1][low as usize - 1] = r;
            r += 1;
        }
        t
    };

    /// `WEIGHTS[r]`: the chance of roll `ALL_21[r]` in 36ths ([`Roll::weight`]).
    pub const WEIGHTS: [u32; 21] = {
        let mut w = [0u32; 21];
        let mut r = 0;
        while r < 21 {
            w[r] = Roll::ALL_21[r].weight() as u32;
            r += 1;
        }
        w
    };

    pub const fn is_double(self) -> bool {
        self.low == self.high
    }

    /// Its chance in 36ths: 1 for a double, 2 for the two orders of any other roll.
    pub const fn weight(self) -> u8 {
        if self.is_double() { 1 } else { 2 }
    }
}

/// A position taken apart for move generation.
pub struct Unranked {
    pub index: u32,
    pub counts: [u8; 18],
    /// `prefix[k]` = the index decrease of lowering `j_0 .. j_{k-1}` by one.
    prefix: [u64; 19],
    /// The highest occupied point (1-based), 0 when all are off.
    pub top: u32,
    pub checkers: u32,
}

impl Unranked {
    pub fn new(space: &Space, index: u32) -> Unranked {
        let mut counts = [0u8; 18];
        space.position(index, &mut counts[..space.points as usize]);
        Unranked::from_counts(space, index, counts)
    }

    /// The position of these counts, `index` being its index (when the caller has both, as a
    /// sweep that builds its levels does, this saves unranking).
    pub fn from_counts(space: &Space, index: u32, counts: [u8; 18]) -> Unranked {
        let p = space.points as usize;
        let checkers: u32 = counts.iter().map(|&c| u32::from(c)).sum();
        let mut prefix = [0u64; 19];
        let mut j = space.points - 1 + checkers;
        for i in 0..p {
            let d = if j >= 1 {
                binomial(j - 1, space.points - i as u32 - 1)
            } else {
                0
            };
            prefix[i + 1] = prefix[i] + d;
            j = j.wrapping_sub(u32::from(counts[i]) + 1);
        }
        let top = (0..p)
            .rev()
            .find(|&i| counts[i] > 0)
            .map_or(0, |i| i as u32 + 1);
        Unranked {
            index,
            counts,
            prefix,
            top,
            checkers,
        }
    }

    /// The successors of playing one die `d` (1..=6), one per movable checker, in order of the
    /// point moved from, lowest first. Empty only when all checkers are off.
    #[inline]
    pub fn die_moves(&self, d: u32, out: &mut [u32; 18]) -> usize {
        let mut n = 0;
        self.each_die_move(d, |m, _| {
            out[n] = m;
            n += 1;
        });
        n
    }

    /// [`Unranked::die_moves`], calling `f` with each successor and the pips it lost: `d`,
    /// or the point borne off from.
    #[inline(always)]
    pub fn each_die_move(&self, d: u32, mut f: impl FnMut(u32, u32)) {
        for p in 1..=self.top {
            if self.counts[p as usize - 1] == 0 {
                continue;
            }
            let (drop, pips) = if p > d {
                // Inside the board, from p to p - d.
                (self.prefix[p as usize] - self.prefix[(p - d) as usize], d)
            } else if p == d || p == self.top {
                // Off exactly, or from below the die when no checker stands higher.
                (self.prefix[p as usize], p)
            } else {
                continue;
            };
            f(self.index - drop as u32, pips);
        }
    }
}

/// The rules of one die, written plainly on checker counts: the positions one die `d` can
/// reach. The reference the index arithmetic and the solvers are tested against.
#[cfg(test)]
pub(crate) fn slow_die_moves(counts: &[u8], d: usize) -> Vec<Vec<u8>> {
    let top = counts.iter().rposition(|&c| c > 0);
    let mut out = Vec::new();
    for p in 1..=counts.len() {
        if counts[p - 1] == 0 {
            continue;
        }
        let mut c = counts.to_vec();
        c[p - 1] -= 1;
        if p > d {
            c[p - d - 1] += 1;
        } else if !(p == d || Some(p - 1) == top) {
            continue;
        }
        out.push(c);
    }
    out
}

/// Every position a whole roll can reach, by brute force: both orders of a non-double, four
/// steps of a double, stopping when all checkers are off.
#[cfg(test)]
pub(crate) fn slow_plays(counts: &[u8], a: usize, b: usize) -> Vec<Vec<u8>> {
    fn chain(c: &[u8], dice: &[usize], out: &mut Vec<Vec<u8>>) {
        if dice.is_empty() || c.iter().all(|&x| x == 0) {
            out.push(c.to_vec());
            return;
        }
        for next in slow_die_moves(c, dice[0]) {
            chain(&next, &dice[1..], out);
        }
    }
    let mut out = Vec::new();
    if a == b {
        chain(counts, &[a; 4], &mut out);
    } else {
        chain(counts, &[a, b], &mut out);
        chain(counts, &[b, a], &mut out);
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow_moves(space: &Space, counts: &[u8], d: usize) -> Vec<u32> {
        slow_die_moves(counts, d)
            .iter()
            .map(|c| space.index(c))
            .collect()
    }

    #[test]
    fn index_arithmetic_matches_moving_and_ranking() {
        for (p, ch) in [(6, 15), (4, 5), (10, 3), (1, 3)] {
            let space = Space::new(p, ch).unwrap();
            let mut counts = vec![0u8; p as usize];
            let mut out = [0u32; 18];
            for i in 0..space.len() as u32 {
                space.position(i, &mut counts);
                let u = Unranked::new(&space, i);
                for d in 1..=6 {
                    let n = u.die_moves(d, &mut out);
                    assert_eq!(
                        out[..n],
                        slow_moves(&space, &counts, d as usize)[..],
                        "{counts:?} die {d}"
                    );
                    assert!(out[..n].iter().all(|&s| s < i));
                    assert_eq!(n == 0, i == 0);
                }
            }
        }
    }

    #[test]
    fn rolls_cover_36() {
        let all = Roll::ALL_21;
        assert_eq!(all.iter().map(|r| u32::from(r.weight())).sum::<u32>(), 36);
        assert_eq!((all[0], all[0].weight()), (Roll { low: 1, high: 1 }, 1));
        assert_eq!((all[1], all[1].weight()), (Roll { low: 1, high: 2 }, 2));
        assert_eq!(all[20], Roll { low: 6, high: 6 });
        for (r, roll) in all.iter().enumerate() {
            let (a, b) = (usize::from(roll.low) - 1, usize::from(roll.high) - 1);
            assert_eq!((Roll::INDEX[a][b], Roll::INDEX[b][a]), (r, r));
        }
    }
}
