//! The one-sided bearoff database: for every position of one side, the distribution of the
//! number of rolls to bear off under the play that minimises the expected number of rolls, and
//! (with 15 checkers) the distribution of rolls until the first checker is off.
//!
//! The sweep goes level by level in pip count (every move lowers it), so all successors of a
//! level are known before it starts and a level's positions are independent. For each position
//! it keeps, besides its value V, the best value reachable by k = 1, 2, 3 steps of one die
//! (and where that best chain ends). A roll's best play is then one die's step followed by the
//! best single step of the other die, in either order, or for a double one step followed by
//! the best three-step chain: per position a few dozen lookups instead of enumerating every
//! play of every roll.

use rayon::prelude::*;

use super::moves::{ROLLS, Unranked};
use super::position::{Space, pips};
use crate::memory::{huge_collect, huge_filled, prefetch};

/// Positions per rayon task: a level of a small table is a few hundred positions of about a
/// microsecond each, so finer tasks would cost more in scheduling than they save.
pub(crate) const MIN_TASK: usize = 64;

/// The sweep's state for one position.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    /// Expected rolls to reach a terminal position (0 for terminal ones).
    value: f64,
    /// `best[k][d - 1]`: the least value after k + 1 steps of die d, and `to` where it ends.
    best: [[f64; 6]; 3],
    to: [[u32; 6]; 3],
}

/// The ordering of candidate plays: lower value, then lower index of the position reached, so
/// that exact ties are broken the same way by every implementation.
#[inline]
fn better(v: f64, to: u32, best_v: f64, best_to: u32) -> bool {
    v < best_v || (v == best_v && to < best_to)
}

/// The optimal policy for one value: per position, the position each roll's best play reaches.
pub struct Policy {
    pub value: Vec<f64>,
    /// `succ[21 * i + r]`: the position reached by the best play of roll `ROLLS[r]`.
    pub succ: Vec<u32>,
}

/// Positions grouped by pip count, lowest first, and each position's number of checkers.
///
/// The sweeps keep their per-position state in *level order* (`order`), not in index order: a
/// position's successors lie at most 24 pips lower, so in level order they sit in the few
/// levels just below it, and neighbouring positions share them. That locality halved the
/// sweep's time on 15 checkers (memory, not arithmetic, bounds it).
pub struct Levels {
    pub by_pips: Vec<Vec<u32>>,
    /// Checkers of each position, by index.
    pub checkers: Vec<u8>,
    /// Every index in level order, and where each level starts in it (one more entry than
    /// levels).
    pub order: Vec<u32>,
    pub starts: Vec<usize>,
    /// `slot[i]`: where index i stands in `order`.
    pub slot: Vec<u32>,
}

impl Levels {
    pub fn new(space: &Space) -> Levels {
        let n = space.len();
        let mut counts = vec![0u8; space.points as usize];
        let mut by_pips: Vec<Vec<u32>> = Vec::new();
        let mut checkers = Vec::with_capacity(n);
        for i in 0..n as u32 {
            space.position(i, &mut counts);
            let p = pips(&counts) as usize;
            if by_pips.len() <= p {
                by_pips.resize_with(p + 1, Vec::new);
            }
            by_pips[p].push(i);
            checkers.push(counts.iter().sum());
        }
        let order: Vec<u32> = by_pips.iter().flatten().copied().collect();
        let mut starts = vec![0];
        for l in &by_pips {
            starts.push(starts.last().unwrap() + l.len());
        }
        let mut slot = vec![0u32; n];
        for (k, &i) in order.iter().enumerate() {
            slot[i as usize] = k as u32;
        }
        Levels {
            by_pips,
            checkers,
            order,
            starts,
            slot,
        }
    }

    /// The level-order range of level `l`.
    pub fn range(&self, l: usize) -> std::ops::Range<usize> {
        self.starts[l]..self.starts[l + 1]
    }
}

/// Solves `V(s) = 1 + Σ_r p(r) min_play V(s')` with `V = 0` on positions with fewer than
/// `terminal_below` checkers (1: all off; 15: the first checker off). A terminal position's
/// successors are itself.
pub fn solve(
    space: &Space,
    levels: &Levels,
    terminal_below: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Policy {
    let n = space.len();
    // Both in level order; `succ` holds indices.
    let mut nodes = huge_filled(n, Node::default());
    let mut succ = huge_filled(21 * n, 0u32);
    for l in 0..levels.by_pips.len() {
        let r = levels.range(l);
        let (below, rest) = nodes.split_at_mut(r.start);
        rest[..r.len()]
            .par_iter_mut()
            .zip(succ[21 * r.start..21 * r.end].par_chunks_mut(21))
            .zip(levels.order[r.clone()].par_iter())
            .with_min_len(MIN_TASK)
            .for_each(|((node, s), &i)| {
                if u32::from(levels.checkers[i as usize]) < terminal_below {
                    *node = Node {
                        value: 0.0,
                        best: [[0.0; 6]; 3],
                        to: [[i; 6]; 3],
                    };
                    s.fill(i);
                } else {
                    solve_one(space, below, &levels.slot, i, node, s);
                }
            });
        progress(r.len() as u64);
    }
    let slot = &levels.slot;
    Policy {
        value: huge_collect(n, (0..n).map(|i| nodes[slot[i] as usize].value)),
        succ: huge_collect(
            21 * n,
            (0..n).flat_map(|i| {
                let k = slot[i] as usize;
                succ[21 * k..21 * k + 21].iter().copied()
            }),
        ),
    }
}

/// Solves position `i` from the nodes of the levels below it (`below`, in level order).
fn solve_one(
    space: &Space,
    below: &[Node],
    slot: &[u32],
    i: u32,
    out: &mut Node,
    succ: &mut [u32],
) {
    let u = Unranked::new(space, i);
    let mut moves = [[0u32; 18]; 6];
    let mut len = [0usize; 6];
    for d in 0..6 {
        len[d] = u.die_moves(d as u32 + 1, &mut moves[d]);
    }
    let mut node = Node {
        value: 0.0,
        best: [[f64::INFINITY; 6]; 3],
        to: [[u32::MAX; 6]; 3],
    };
    // Best play per roll: (value, final position).
    let mut roll_best = [(f64::INFINITY, u32::MAX); 21];
    // Roll r = (a, b) has index ROLL_INDEX[a - 1][b - 1] whatever the order of a and b.
    const ROLL_INDEX: [[usize; 6]; 6] = roll_index();
    for (a, list) in moves.iter().enumerate() {
        for &m in &list[..len[a]] {
            prefetch(&below[slot[m as usize] as usize]);
        }
    }
    for a in 0..6 {
        for &m in &moves[a][..len[a]] {
            let next = &below[slot[m as usize] as usize];
            // k + 1 steps of die a: one step to m, then k steps from m.
            let step_values = [next.value, next.best[0][a], next.best[1][a]];
            let step_ends = [m, next.to[0][a], next.to[1][a]];
            for k in 0..3 {
                if better(step_values[k], step_ends[k], node.best[k][a], node.to[k][a]) {
                    node.best[k][a] = step_values[k];
                    node.to[k][a] = step_ends[k];
                }
            }
            // Rolls containing die a: a first, then the best single step of the other die.
            for (b, &r) in ROLL_INDEX[a].iter().enumerate() {
                let (v, to) = if a == b {
                    (next.best[2][a], next.to[2][a])
                } else {
                    (next.best[0][b], next.to[0][b])
                };
                if better(v, to, roll_best[r].0, roll_best[r].1) {
                    roll_best[r] = (v, to);
                }
            }
        }
    }
    let mut sum = 0.0;
    for (r, &(_, _, w)) in ROLLS.iter().enumerate() {
        sum += f64::from(w) * roll_best[r].0;
        succ[r] = roll_best[r].1;
    }
    node.value = 1.0 + sum / 36.0;
    *out = node;
}

/// `roll_index()[a - 1][b - 1]`: the index in [`ROLLS`] of the roll of a and b, in either order.
pub const fn roll_index() -> [[usize; 6]; 6] {
    let mut t = [[0usize; 6]; 6];
    let mut r = 0;
    while r < 21 {
        let (a, b, _) = ROLLS[r];
        t[a as usize - 1][b as usize - 1] = r;
        t[b as usize - 1][a as usize - 1] = r;
        r += 1;
    }
    t
}

/// Distributions of the number of rolls under a policy: `dist[len * i + k]` = P(exactly k
/// rolls from position i). `len` is one more than the longest the policy can take.
///
/// Each distribution is `1/36 Σ_t w_t · shift(dist(t))` over the distinct successors t (in order
/// of first appearance among the rolls, with their summed weights w_t in 36ths), added only
/// over the successors' supports: exact summation order, a fraction of the work of 21 full
/// vectors.
pub fn distributions(
    levels: &Levels,
    policy: &Policy,
    progress: &(dyn Fn(u64) + Sync),
) -> (usize, Vec<f64>) {
    let n = policy.value.len();
    let slot = &levels.slot;
    // The policy in level order: successors as slots.
    let mut succ = huge_filled(21 * n, 0u32);
    succ.par_chunks_mut(21)
        .zip(levels.order.par_iter())
        .with_min_len(MIN_TASK)
        .for_each(|(s, &i)| {
            let from = &policy.succ[21 * i as usize..21 * i as usize + 21];
            for (x, &t) in s.iter_mut().zip(from) {
                *x = slot[t as usize];
            }
        });
    // Shortest and longest number of rolls.
    let mut lo = vec![0u16; n];
    let mut hi = vec![0u16; n];
    for k in 0..n {
        let s = &succ[21 * k..21 * k + 21];
        if s[0] != k as u32 {
            lo[k] = 1 + s.iter().map(|&t| lo[t as usize]).min().unwrap_or(0);
            hi[k] = 1 + s.iter().map(|&t| hi[t as usize]).max().unwrap_or(0);
        }
    }
    let len = usize::from(hi.iter().copied().max().unwrap_or(0)) + 1;
    // Each row holds only its support, lo..=hi, packed in level order (see `Levels`): a third
    // of the memory of full rows, and the sweep is bound by memory, not arithmetic.
    let mut offset = Vec::with_capacity(n + 1);
    offset.push(0usize);
    for k in 0..n {
        offset.push(offset[k] + usize::from(hi[k] - lo[k]) + 1);
    }
    let mut pool = huge_filled(offset[n], 0f64);
    for l in 0..levels.by_pips.len() {
        let r = levels.range(l);
        let (below, rest) = pool.split_at_mut(offset[r.start]);
        let mut rows: Vec<(usize, &mut [f64])> = Vec::with_capacity(r.len());
        let mut rest = &mut rest[..offset[r.end] - offset[r.start]];
        for k in r.clone() {
            let (row, tail) = rest.split_at_mut(offset[k + 1] - offset[k]);
            rows.push((k, row));
            rest = tail;
        }
        rows.par_iter_mut()
            .with_min_len(MIN_TASK)
            .for_each(|(k, d)| {
                let k = *k;
                let s = &succ[21 * k..21 * k + 21];
                if s[0] as usize == k {
                    d[0] = 1.0;
                    return;
                }
                let mut targets = [(0u32, 0u32); 21];
                let mut distinct = 0;
                for (&t, &(_, _, w)) in s.iter().zip(&ROLLS) {
                    match targets[..distinct].iter_mut().find(|(u, _)| *u == t) {
                        Some((_, weight)) => *weight += u32::from(w),
                        None => {
                            targets[distinct] = (t, u32::from(w));
                            distinct += 1;
                        }
                    }
                }
                // Row k starts at lo[k] rolls; a successor's row, one roll later.
                let base = usize::from(lo[k]);
                for &(t, _) in &targets[..distinct] {
                    prefetch(&below[offset[t as usize]]);
                }
                for &(t, w) in &targets[..distinct] {
                    let t = t as usize;
                    let from = &below[offset[t]..offset[t + 1]];
                    let at = usize::from(lo[t]) + 1 - base;
                    let w = f64::from(w);
                    for (x, &f) in d[at..at + from.len()].iter_mut().zip(from) {
                        *x += w * f;
                    }
                }
                for x in d.iter_mut() {
                    *x /= 36.0;
                }
            });
        progress(r.len() as u64);
    }
    let mut dist = huge_filled(len * n, 0f64);
    dist.par_chunks_mut(len).enumerate().for_each(|(i, d)| {
        let k = slot[i] as usize;
        let a = usize::from(lo[k]);
        d[a..=usize::from(hi[k])].copy_from_slice(&pool[offset[k]..offset[k + 1]]);
    });
    (len, dist)
}

/// A solved one-sided table.
pub struct OneSided {
    pub space: Space,
    /// Expected rolls to bear off, from the Bellman equation.
    pub mean: Vec<f64>,
    /// Entries per distribution.
    pub len: usize,
    /// `dist[len * i + k]`: P(bearing off in exactly k rolls).
    pub dist: Vec<f64>,
    /// With 15 checkers: expected rolls and distribution of rolls until the first checker is
    /// off, for positions with all 15 on the board (others: 0 rolls).
    pub gammon: Option<(Vec<f64>, usize, Vec<f64>)>,
}

/// Statistics of one distribution.
pub fn mean_sd(dist: &[f64]) -> (f64, f64) {
    let mean: f64 = dist.iter().enumerate().map(|(k, p)| k as f64 * p).sum();
    let sq: f64 = dist
        .iter()
        .enumerate()
        .map(|(k, p)| (k * k) as f64 * p)
        .sum();
    (mean, (sq - mean * mean).max(0.0).sqrt())
}

/// Average pips per roll: 49/6. Effective pip count = expected rolls x 49/6.
pub const PIPS_PER_ROLL: f64 = 49.0 / 6.0;

/// Whether a table gets the distributions of rolls until the first checker is off: when asked
/// for, and only with 15 checkers (gnubg's gammon distributions).
pub fn has_first_off(space: &Space, gammon: bool) -> bool {
    gammon && space.checkers == 15
}

impl OneSided {
    /// Solves the table on CPU threads.
    pub fn build(space: Space, gammon: bool) -> OneSided {
        OneSided::build_cpu(space, gammon, &|_| {})
    }

    /// Solves the table on CPU threads, calling `progress` with the positions done by each
    /// level of each pass.
    ///
    /// All of it runs on a rayon worker: a pass is some 90 levels, most of them small, and a
    /// parallel loop started from outside the pool wakes a worker and sleeps for every one
    /// (median of 100 builds of 15x6 with gammons, three runs each: 66.8-68.4 ms from outside,
    /// 52.9-57.2 ms on a worker). With gammons the two sweeps, then the two distribution
    /// passes, run side by side, which keeps both threads busy in the small levels: 42.6-44.0 ms
    /// one after the other, 36.2-37.2 ms side by side (median of 30 each, three runs).
    pub fn build_cpu(space: Space, gammon: bool, progress: &(dyn Fn(u64) + Sync)) -> OneSided {
        rayon::scope(|_| {
            let levels = Levels::new(&space);
            let (policy, first_off) = if has_first_off(&space, gammon) {
                let (p, g) = rayon::join(
                    || solve(&space, &levels, 1, progress),
                    || solve(&space, &levels, 15, progress),
                );
                (p, Some(g))
            } else {
                (solve(&space, &levels, 1, progress), None)
            };
            OneSided::from_policies(space, &levels, policy, first_off, progress)
        })
    }

    /// Solves the table with `solver` for the policies (the GPU sweep, say), one after the
    /// other, and CPU threads for the distributions, calling `progress` with the positions done
    /// by each level of the distribution passes.
    pub fn build_with(
        space: Space,
        gammon: bool,
        progress: &(dyn Fn(u64) + Sync),
        solver: &mut (dyn FnMut(&Space, &Levels, u32) -> anyhow::Result<Policy> + Send),
    ) -> anyhow::Result<OneSided> {
        rayon::scope(move |_| {
            let levels = Levels::new(&space);
            let policy = solver(&space, &levels, 1)?;
            let first_off = if has_first_off(&space, gammon) {
                Some(solver(&space, &levels, 15)?)
            } else {
                None
            };
            Ok(OneSided::from_policies(
                space, &levels, policy, first_off, progress,
            ))
        })
    }

    /// The table from its policies: bearing off all checkers and, with 15, the first one.
    fn from_policies(
        space: Space,
        levels: &Levels,
        policy: Policy,
        first_off: Option<Policy>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> OneSided {
        let ((len, dist), gammon) = rayon::join(
            || distributions(levels, &policy, progress),
            || {
                first_off.map(|g| {
                    let (glen, gdist) = distributions(levels, &g, progress);
                    (g.value, glen, gdist)
                })
            },
        );
        OneSided {
            space,
            mean: policy.value,
            len,
            dist,
            gammon,
        }
    }

    pub fn distribution(&self, i: u32) -> &[f64] {
        &self.dist[self.len * i as usize..self.len * (i as usize + 1)]
    }

    pub fn gammon_distribution(&self, i: u32) -> Option<&[f64]> {
        self.gammon
            .as_ref()
            .map(|(_, len, d)| &d[len * i as usize..len * (i as usize + 1)])
    }
}

/// P(the side on roll, with distribution `me`, bears off first against `opp`):
/// `Σ_i P_me(i) Σ_{j >= i} P_opp(j)`; the one-sided estimate of a race.
pub fn race_win_probability(me: &[f64], opp: &[f64]) -> f64 {
    let mut tail = vec![0f64; opp.len() + 1];
    for j in (0..opp.len()).rev() {
        tail[j] = tail[j + 1] + opp[j];
    }
    me.iter()
        .enumerate()
        .map(|(i, p)| p * tail.get(i).copied().unwrap_or(0.0))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(points: u32, checkers: u32) -> OneSided {
        OneSided::build(Space::new(points, checkers).unwrap(), true)
    }

    fn at<'a>(t: &'a OneSided, counts: &[u8]) -> (f64, &'a [f64]) {
        let i = t.space.index(counts);
        (t.mean[i as usize], t.distribution(i))
    }

    #[test]
    fn one_checker_exact_fractions() {
        let t = table(6, 2);
        for (p, want) in [
            (1, 1.0),
            (2, 1.0),
            (3, 1.0),
            (4, 19.0 / 18.0),
            (5, 41.0 / 36.0),
            (6, 5.0 / 4.0),
        ] {
            let mut c = [0u8; 6];
            c[p - 1] = 1;
            let (mean, dist) = at(&t, &c);
            assert!((mean - want).abs() < 1e-15, "point {p}: {mean} vs {want}");
            assert!((mean_sd(dist).0 - want).abs() < 1e-12);
        }
    }

    #[test]
    fn two_checkers_on_the_six_point() {
        let t = table(6, 2);
        let (mean, dist) = at(&t, &[0, 0, 0, 0, 0, 2]);
        assert!((mean - 2.109611).abs() < 1e-6, "{mean}");
        let (m, sd) = mean_sd(dist);
        assert!((m - mean).abs() < 1e-12);
        assert!((sd - 0.571).abs() < 1e-3, "{sd}");
        for (k, p) in [(1, 0.111111), (2, 0.671296), (3, 0.214463), (4, 0.003129)] {
            assert!((dist[k] - p).abs() < 1e-6, "P({k}) = {}", dist[k]);
        }
    }

    #[test]
    fn published_fifteen_checker_figures() {
        let t = table(6, 15);
        assert_eq!(t.mean.len(), 54_264);
        let (mean, dist) = at(&t, &[15, 0, 0, 0, 0, 0]);
        assert!((mean - 6.979592).abs() < 1e-6, "{mean}");
        assert!((mean_sd(dist).1 - 0.808).abs() < 1e-3);
        for (k, p) in [
            (4, 0.000772),
            (5, 0.034722),
            (6, 0.227731),
            (7, 0.457694),
            (8, 0.279082),
        ] {
            assert!((dist[k] - p).abs() < 1e-6, "P({k}) = {}", dist[k]);
        }
        let (mean, dist) = at(&t, &[0, 0, 0, 0, 0, 15]);
        assert!((mean - 12.266187).abs() < 1e-6, "{mean}");
        assert!((mean_sd(dist).1 - 1.513).abs() < 1e-3);
        assert!((mean * PIPS_PER_ROLL - 100.17).abs() < 0.01);
        let (mean, _) = at(&t, &[1, 1, 1, 1, 1, 1]);
        assert!((mean - 3.463648).abs() < 1e-6, "{mean}");
        let (mean, dist) = at(&t, &[7, 0, 0, 0, 0, 0]);
        assert!((mean - 3.5509259).abs() < 1e-7);
        assert!((dist[2] - 1.0 / 36.0).abs() < 1e-15);
        assert!((dist[4] - 125.0 / 216.0).abs() < 1e-15);
        // First checker off from fifteen on the six point.
        let i = t.space.index(&[0, 0, 0, 0, 0, 15]);
        let (gmean, _, _) = t.gammon.as_ref().unwrap();
        let g = t.gammon_distribution(i).unwrap();
        assert!((g[1] - 17.0 / 36.0).abs() < 1e-15, "{}", g[1]);
        assert!(
            (gmean[i as usize] - 1.616).abs() < 1e-3,
            "{}",
            gmean[i as usize]
        );
        // Positions with a checker off need no roll for the first one.
        let j = t.space.index(&[0, 0, 0, 0, 0, 14]);
        assert_eq!(t.gammon_distribution(j).unwrap()[0], 1.0);
    }

    #[test]
    fn two_checkers_borne_off_in_one_roll() {
        // Out of 36 rolls, how many bear off both checkers at once.
        let t = table(6, 2);
        for (a, b, want) in [
            (6, 6, 4),
            (6, 5, 6),
            (6, 4, 8),
            (6, 3, 10),
            (6, 2, 13),
            (6, 1, 15),
            (5, 5, 6),
            (4, 4, 11),
            (3, 3, 17),
            (2, 2, 26),
            (2, 1, 36),
        ] {
            let mut c = [0u8; 6];
            c[a - 1] += 1;
            c[b - 1] += 1;
            let (_, dist) = at(&t, &c);
            assert!(
                (dist[1] * 36.0 - f64::from(want)).abs() < 1e-9,
                "{a}-{b}: {}",
                dist[1] * 36.0
            );
        }
    }

    #[test]
    fn distributions_sum_to_one_and_match_the_means() {
        let t = table(5, 8);
        for i in 0..t.mean.len() as u32 {
            let d = t.distribution(i);
            assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!((mean_sd(d).0 - t.mean[i as usize]).abs() < 1e-9);
        }
    }

    /// Expected rolls by brute force over every play of every roll, memoised on the counts.
    fn brute_mean(c: &[u8], memo: &mut std::collections::HashMap<Vec<u8>, f64>) -> f64 {
        if c.iter().all(|&x| x == 0) {
            return 0.0;
        }
        if let Some(&v) = memo.get(c) {
            return v;
        }
        let mut sum = 0.0;
        for &(a, b, w) in &ROLLS {
            let best = crate::bearoff::moves::slow_plays(c, a.into(), b.into())
                .iter()
                .map(|p| brute_mean(p, memo))
                .fold(f64::INFINITY, f64::min);
            sum += f64::from(w) * best;
        }
        let v = 1.0 + sum / 36.0;
        memo.insert(c.to_vec(), v);
        v
    }

    #[test]
    fn sweep_equals_brute_force_over_every_play() {
        let t = OneSided::build(Space::new(5, 5).unwrap(), false);
        let mut memo = std::collections::HashMap::new();
        let mut counts = [0u8; 5];
        for i in 0..t.mean.len() as u32 {
            t.space.position(i, &mut counts);
            let brute = brute_mean(&counts, &mut memo);
            assert!(
                (t.mean[i as usize] - brute).abs() < 1e-12,
                "{counts:?}: {} vs {brute}",
                t.mean[i as usize]
            );
        }
    }

    #[test]
    fn race_estimate() {
        // Certain one-roll bearoff for the side on roll: it wins.
        assert_eq!(race_win_probability(&[0.0, 1.0], &[0.0, 0.5, 0.5]), 1.0);
        assert_eq!(race_win_probability(&[0.0, 0.0, 1.0], &[0.0, 1.0]), 0.0);
        assert!((race_win_probability(&[0.0, 0.5, 0.5], &[0.0, 0.5, 0.5]) - 0.75).abs() < 1e-15);
    }
}
