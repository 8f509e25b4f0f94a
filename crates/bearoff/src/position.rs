//! One side's bearoff position: up to C checkers on points 1..P, and gnubg's index of it.
//!
//! The index is gnubg's combinatorial rank (`PositionBearoff` in positionid.c): a position with
//! n checkers is the set of P bit positions `j_0 > j_1 > … > j_{P-1}` with `j_0 = P - 1 + n` and
//! `j_{i+1} = j_i - count(point i+1) - 1`, ranked in the combinatorial number system:
//! `index = Σ_i C(j_i, P - i)`. So 0 is all off, 1..=P are one checker on the 1..P point, the
//! last index is all checkers on the highest point, and every move lowers the index.

/// The largest table rollsim builds: 15 checkers on up to 18 points (gnubg's limit), so that
/// ranks fit in `u32` and bit positions in `u64`.
pub const MAX_CHECKERS: u32 = 15;
pub const MAX_POINTS: u32 = 18;

/// Checkers per point, point 1 first, zero past the table's points.
pub type Counts = [u8; MAX_POINTS as usize];

/// Binomial coefficients C(n, k) for n, k <= 33.
const fn binomials() -> [[u64; 34]; 34] {
    let mut c = [[0u64; 34]; 34];
    let mut n = 0;
    while n < 34 {
        c[n][0] = 1;
        let mut k = 1;
        while k <= n {
            c[n][k] = c[n - 1][k - 1] + if k < n { c[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    c
}

static BINOMIAL: [[u64; 34]; 34] = binomials();

/// C(n, k), 0 when k > n.
#[inline]
pub fn binomial(n: u32, k: u32) -> u64 {
    if k > n {
        0
    } else {
        BINOMIAL[n as usize][k as usize]
    }
}

/// The positions of up to `checkers` checkers on `points` points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Space {
    pub points: u32,
    pub checkers: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("bad checker count {0:?}: expected a whole number from 0 to 15")]
    Count(String),
    #[error("the position names {got} points, but the table has {points}")]
    Points { got: usize, points: u32 },
    #[error("the position has {got} checkers, but the table holds at most {checkers}")]
    Checkers { got: u32, checkers: u32 },
    #[error(
        "a table needs 1 to {MAX_POINTS} points and 1 to {MAX_CHECKERS} checkers, not {points} points and {checkers} checkers"
    )]
    Space { points: u32, checkers: u32 },
}

impl Space {
    pub fn new(points: u32, checkers: u32) -> Result<Space, PositionError> {
        if !(1..=MAX_POINTS).contains(&points) || !(1..=MAX_CHECKERS).contains(&checkers) {
            return Err(PositionError::Space { points, checkers });
        }
        Ok(Space { points, checkers })
    }

    /// The number of positions: C(P + C, P), never zero (all checkers off is one).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        binomial(self.points + self.checkers, self.points) as usize
    }

    /// The index of a position (which must fit this space).
    pub fn index(&self, counts: &[u8]) -> u32 {
        debug_assert_eq!(counts.len(), self.points as usize);
        let p = self.points;
        let n: u32 = counts.iter().map(|&c| u32::from(c)).sum();
        let mut j = p - 1 + n;
        let mut index = binomial(j, p);
        for (i, &c) in counts[..counts.len() - 1].iter().enumerate() {
            j -= u32::from(c) + 1;
            index += binomial(j, p - 1 - i as u32);
        }
        index as u32
    }

    /// The position at `index`, in `counts` (length P).
    pub fn position(&self, index: u32, counts: &mut [u8]) {
        // Unrank in the combinatorial number system: the largest j_0 with C(j_0, P) <= index,
        // then the largest j_1 < j_0 with C(j_1, P - 1) <= the rest, and so on.
        let p = self.points;
        let mut rest = u64::from(index);
        let mut prev: Option<u32> = None;
        let mut top = self.checkers + p - 1;
        for i in 0..p {
            let k = p - i;
            let mut j = top;
            while binomial(j, k) > rest {
                j -= 1;
            }
            rest -= binomial(j, k);
            if let Some(pj) = prev {
                counts[i as usize - 1] = (pj - j - 1) as u8;
            }
            prev = Some(j);
            top = j.saturating_sub(1);
        }
        counts[p as usize - 1] = prev.unwrap_or(0) as u8;
    }

    /// Parses checker counts from the 1-point up, e.g. `3,2,0,0,0,1`; missing high points are 0.
    pub fn parse(&self, text: &str) -> Result<Vec<u8>, PositionError> {
        let fields: Vec<&str> = text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        if fields.len() > self.points as usize || fields.is_empty() {
            return Err(PositionError::Points {
                got: fields.len(),
                points: self.points,
            });
        }
        let mut counts = vec![0u8; self.points as usize];
        for (c, f) in counts.iter_mut().zip(&fields) {
            *c = f
                .parse::<u8>()
                .ok()
                .filter(|&v| u32::from(v) <= MAX_CHECKERS)
                .ok_or_else(|| PositionError::Count(f.to_string()))?;
        }
        let total: u32 = counts.iter().map(|&c| u32::from(c)).sum();
        if total > self.checkers {
            return Err(PositionError::Checkers {
                got: total,
                checkers: self.checkers,
            });
        }
        Ok(counts)
    }
}

impl Space {
    /// The positions by pip count, `level_sizes()[s]` of them with s pips, from the generating
    /// function `Π_p 1 / (1 - y x^p)` truncated at `y^C`: no enumeration, so that a plan for an
    /// impossible table allocates nothing.
    pub fn level_sizes(&self) -> Vec<u64> {
        let (c, p) = (self.checkers as usize, self.points as usize);
        let pips = c * p;
        // ways[k][s]: positions of exactly k checkers and s pips on the points so far.
        let mut ways = vec![vec![0u64; pips + 1]; c + 1];
        ways[0][0] = 1;
        for point in 1..=p {
            for k in (1..=c).rev() {
                for s in (point..=pips).rev() {
                    let mut add = 0;
                    for j in 1..=k.min(s / point) {
                        add += ways[k - j][s - j * point];
                    }
                    ways[k][s] += add;
                }
            }
        }
        let sizes: Vec<u64> = (0..=pips)
            .map(|s| ways.iter().map(|w| w[s]).sum())
            .collect();
        let last = sizes.iter().rposition(|&k| k > 0).unwrap_or(0);
        sizes[..=last].to_vec()
    }

    /// The positions with `pips` pips, by index ascending, into `out` (cleared first), each
    /// with its checker counts: one level of a sweep by pip count, built when the sweep
    /// reaches it instead of kept for the whole table. They come in index order (fewer checkers
    /// first, then more on the 1-point, then on the 2-point, ...), each index worked out along
    /// the way: no sort and no ranking per position.
    pub fn level(&self, pips: u32, out: &mut Vec<(u32, Counts)>) {
        out.clear();
        let mut counts = [0u8; MAX_POINTS as usize];
        for n in 0..=self.checkers {
            let j = self.points - 1 + n;
            self.fill_level(0, pips, n, j, binomial(j, self.points), &mut counts, out);
        }
        debug_assert!(out.is_sorted_by_key(|&(i, _)| i));
    }

    /// Places `left` checkers with `pips` pips on the points from `i + 1` up (`counts` holds
    /// those below), most on the lowest point first; `j` and `index` are the rank so far, as
    /// [`Space::index`] accumulates it.
    #[allow(clippy::too_many_arguments)]
    fn fill_level(
        &self,
        i: u32,
        pips: u32,
        left: u32,
        j: u32,
        index: u64,
        counts: &mut Counts,
        out: &mut Vec<(u32, Counts)>,
    ) {
        let (p, point) = (self.points, i + 1);
        if point == p {
            // The top point takes the rest.
            if pips == left * p {
                counts[i as usize] = left as u8;
                out.push((index as u32, *counts));
                counts[i as usize] = 0;
            }
            return;
        }
        for c in (0..=left.min(pips / point)).rev() {
            let (rest, above) = (pips - c * point, left - c);
            // The points above hold from `above` checkers on the next one to all on the top.
            if rest < above * (point + 1) || rest > above * p {
                continue;
            }
            counts[i as usize] = c as u8;
            let j = j - c - 1;
            let index = index + binomial(j, p - 1 - i);
            self.fill_level(i + 1, rest, above, j, index, counts, out);
        }
        counts[i as usize] = 0;
    }
}

/// Pips of a position: the sum of checkers times their point.
pub fn pips(counts: &[u8]) -> u32 {
    counts
        .iter()
        .enumerate()
        .map(|(i, &c)| (i as u32 + 1) * u32::from(c))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gnubg's PositionBearoff, transcribed as a recursion on the bit set, as an independent
    /// check of the closed form used by `Space::index`.
    fn gnubg_rank(counts: &[u8], points: u32, checkers: u32) -> u64 {
        let mut j = points - 1 + counts.iter().map(|&c| u32::from(c)).sum::<u32>();
        let mut bits = 1u64 << j;
        for &c in &counts[..counts.len() - 1] {
            j -= u32::from(c) + 1;
            bits |= 1 << j;
        }
        fn f(bits: u64, n: u32, r: u32) -> u64 {
            if n == r {
                return 0;
            }
            if bits & (1 << (n - 1)) != 0 {
                binomial(n - 1, r) + f(bits, n - 1, r - 1)
            } else {
                f(bits, n - 1, r)
            }
        }
        f(bits, checkers + points, points)
    }

    #[test]
    fn sizes_match_gnubg() {
        assert_eq!(Space::new(6, 15).unwrap().len(), 54_264);
        assert_eq!(Space::new(8, 15).unwrap().len(), 490_314);
        // C(25, 10); shared/reference/bearoff.md misprints it as 3,268,870.
        assert_eq!(Space::new(10, 15).unwrap().len(), 3_268_760);
        assert_eq!(Space::new(12, 15).unwrap().len(), 17_383_860);
        assert_eq!(Space::new(6, 6).unwrap().len(), 924);
        assert!(Space::new(0, 15).is_err());
        assert!(Space::new(6, 16).is_err());
        assert!(Space::new(19, 15).is_err());
    }

    #[test]
    fn index_order_is_gnubgs() {
        let s = Space::new(6, 15).unwrap();
        let mut c = [0u8; 6];
        assert_eq!(s.index(&c), 0);
        for p in 0..6 {
            let mut one = [0u8; 6];
            one[p] = 1;
            assert_eq!(s.index(&one), p as u32 + 1);
        }
        c[0] = 2;
        assert_eq!(s.index(&c), 7);
        assert_eq!(s.index(&[1, 1, 0, 0, 0, 0]), 8);
        assert_eq!(s.index(&[0, 0, 0, 0, 0, 15]), 54_263);
    }

    #[test]
    fn rank_and_unrank_are_inverse_and_match_the_recursion() {
        for (p, ch) in [(6, 15), (3, 4), (1, 15), (8, 5), (12, 2)] {
            let s = Space::new(p, ch).unwrap();
            let mut counts = vec![0u8; p as usize];
            for i in 0..s.len() as u32 {
                s.position(i, &mut counts);
                assert!(counts.iter().map(|&c| u32::from(c)).sum::<u32>() <= ch);
                assert_eq!(s.index(&counts), i, "{p}x{ch} {counts:?}");
                assert_eq!(gnubg_rank(&counts, p, ch), u64::from(i));
            }
        }
    }

    #[test]
    fn levels_partition_the_space_by_pips() {
        for (p, ch) in [(6, 15), (3, 4), (1, 15), (8, 5)] {
            let s = Space::new(p, ch).unwrap();
            let sizes = s.level_sizes();
            let mut level = Vec::new();
            let mut seen = vec![false; s.len()];
            let mut counts = vec![0u8; p as usize];
            for (l, &size) in sizes.iter().enumerate() {
                s.level(l as u32, &mut level);
                assert_eq!(level.len() as u64, size, "{p}x{ch} level {l}");
                assert!(level.windows(2).all(|w| w[0].0 < w[1].0));
                for &(i, c) in &level {
                    s.position(i, &mut counts);
                    assert_eq!(pips(&counts), l as u32);
                    assert_eq!(counts[..], c[..p as usize]);
                    assert!(c[p as usize..].iter().all(|&x| x == 0));
                    assert!(!std::mem::replace(&mut seen[i as usize], true));
                }
            }
            assert!(seen.iter().all(|&x| x));
        }
    }

    #[test]
    fn parse_positions() {
        let s = Space::new(6, 15).unwrap();
        assert_eq!(s.parse("3,2,0,0,0,1").unwrap(), vec![3, 2, 0, 0, 0, 1]);
        assert_eq!(s.parse("0 0 2").unwrap(), vec![0, 0, 2, 0, 0, 0]);
        let e = |t: &str| s.parse(t).unwrap_err().to_string();
        assert!(e("1,2,3,4,5,6,7").contains("7 points"));
        assert!(e("9,9").contains("18 checkers"));
        assert!(e("1,-2").contains("\"-2\""));
        assert!(e("1,x").contains("\"x\""));
        assert!(e("").contains("0 points"));
        assert_eq!(pips(&[3, 2, 0, 0, 0, 1]), 3 + 4 + 6);
    }
}
