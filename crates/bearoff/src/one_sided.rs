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
use rollsim_core::progress::Progress;

use super::levels::Levels;
use super::position::Space;
use rollsim_core::memory::huge_filled;

/// The optimal policy for one value: per position, the position each roll's best play reaches.
pub struct Policy {
    pub value: Vec<f64>,
    /// `succ[21 * i + r]`: the position reached by the best play of roll `Roll::ALL_21[r]`.
    pub succ: Vec<u32>,
}

/// What a sweep solves (see [`sweep`]).
#[derive(Clone, Copy)]
pub struct Pass<'a> {
    /// Positions with fewer checkers are done: 1 for bearing off all, 15 for the first off.
    pub terminal_below: u32,
    /// Distribution entries kept: P(0 ..`rolls` rolls).
    pub rolls: usize,
    pub plays: Plays<'a>,
    /// Give the sink each position's plays ([`Level::plays`]).
    pub keep_plays: bool,
}

/// Which plays a sweep makes: the best, found by its own chains, or those of a policy solved
/// elsewhere (the GPU's).
#[derive(Clone, Copy)]
pub enum Plays<'a> {
    Best,
    Given(&'a Policy),
}

/// A whole pass of the sweep in exact `f64`, by index.
struct Collected {
    mean: Vec<f64>,
    /// Per index: the first roll count stored, and where in `probs` its entries lie.
    first: Vec<u8>,
    span: Vec<(u64, u8)>,
    probs: Vec<f64>,
    /// With `plays`: per index, the position each roll's best play reaches.
    succ: Vec<u32>,
}

impl Collected {
    /// The passes' sweep side by side, each pass collected.
    fn sweep(space: &Space, passes: &[Pass], progress: &dyn Progress) -> Vec<Collected> {
        let n = space.len();
        let mut out: Vec<Collected> = passes
            .iter()
            .map(|p| Collected {
                mean: huge_filled(n, 0.0),
                first: huge_filled(n, 0),
                span: huge_filled(n, (0, 0)),
                probs: Vec::new(),
                succ: if p.keep_plays {
                    huge_filled(21 * n, 0)
                } else {
                    Vec::new()
                },
            })
            .collect();
        let done: Result<(), std::convert::Infallible> =
            sweep::<f64, _>(space, passes, progress, &mut |levels| {
                for (c, level) in out.iter_mut().zip(levels) {
                    c.take(level);
                }
                Ok(())
            });
        let Ok(()) = done;
        out
    }

    fn take(&mut self, level: &Level<f64>) {
        let keep_plays = !self.succ.is_empty();
        for (j, &i) in level.positions.iter().enumerate() {
            let i = i as usize;
            let (first, d) = level.distribution(j);
            self.mean[i] = level.mean(j);
            self.first[i] = first as u8;
            self.span[i] = (self.probs.len() as u64, d.len() as u8);
            self.probs.extend_from_slice(d);
            if keep_plays {
                self.succ[21 * i..21 * i + 21].copy_from_slice(level.plays(j));
            }
        }
    }

    /// Every distribution as `len` entries, `len` one more than the most rolls of any.
    fn dense(&self) -> (usize, Vec<f64>) {
        let len = self
            .first
            .iter()
            .zip(&self.span)
            .map(|(&f, &(_, l))| usize::from(f) + usize::from(l))
            .max()
            .unwrap_or(1);
        let mut dist = huge_filled(len * self.mean.len(), 0f64);
        dist.par_chunks_mut(len).enumerate().for_each(|(i, d)| {
            let (at, l) = self.span[i];
            let f = usize::from(self.first[i]);
            d[f..f + usize::from(l)]
                .copy_from_slice(&self.probs[at as usize..at as usize + usize::from(l)]);
        });
        (len, dist)
    }
}

/// A pass of every distribution entry.
pub(super) fn exact_pass(terminal_below: u32, plays: Plays, keep_plays: bool) -> Pass {
    Pass {
        terminal_below,
        rolls: usize::MAX,
        plays,
        keep_plays,
    }
}

/// The best plays of a pass on CPU threads, and the expected rolls under them: what the GPU's
/// sweep is checked against.
pub fn policy(space: &Space, terminal_below: u32) -> Policy {
    let pass = exact_pass(terminal_below, Plays::Best, true);
    let c = Collected::sweep(space, &[pass], &|_| {}).remove(0);
    Policy {
        value: c.mean,
        succ: c.succ,
    }
}

/// Where a one-sided pass finds its best plays: the seam between the table and the device.
/// [`CpuPlays`] here; `gpu::GpuPlays` beside the f64 kernel.
pub trait PlaySolver: Send {
    /// The best plays of the pass whose positions with fewer than `terminal_below` checkers
    /// are done, and the expected rolls under them.
    fn policy(
        &mut self,
        space: &Space,
        levels: &Levels,
        terminal_below: u32,
    ) -> anyhow::Result<Policy>;
}

/// The plays on CPU threads: [`policy`].
pub struct CpuPlays;

impl PlaySolver for CpuPlays {
    fn policy(&mut self, space: &Space, _: &Levels, terminal_below: u32) -> anyhow::Result<Policy> {
        Ok(policy(space, terminal_below))
    }
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
    /// level of each pass. With gammons the two passes are one sweep.
    pub fn build_cpu(space: Space, gammon: bool, progress: &dyn Progress) -> OneSided {
        let mut passes = vec![exact_pass(1, Plays::Best, false)];
        if has_first_off(&space, gammon) {
            passes.push(exact_pass(space.checkers, Plays::Best, false));
        }
        let mut done = Collected::sweep(&space, &passes, progress).into_iter();
        let off = done.next().expect("a pass per pass");
        OneSided::from_passes(space, off, done.next())
    }

    /// Solves the table with `solver` for the plays ([`CpuPlays`], or the GPU's), one pass
    /// after the other, and CPU threads for the distributions, calling `progress` with the
    /// positions done by each level of the distribution passes. The same table as
    /// [`OneSided::build_cpu`], which finds the plays inside its distribution sweeps instead.
    pub fn build_with(
        space: Space,
        gammon: bool,
        progress: &dyn Progress,
        solver: &mut dyn PlaySolver,
    ) -> anyhow::Result<OneSided> {
        let levels = Levels::new(&space);
        let mut pass = |below| -> anyhow::Result<Collected> {
            let policy = solver.policy(&space, &levels, below)?;
            let pass = exact_pass(below, Plays::Given(&policy), false);
            Ok(Collected::sweep(&space, &[pass], progress).remove(0))
        };
        let off = pass(1)?;
        let first_off = if has_first_off(&space, gammon) {
            Some(pass(space.checkers)?)
        } else {
            None
        };
        Ok(OneSided::from_passes(space, off, first_off))
    }

    /// The table from its passes: bearing off all checkers and, with 15, the first one.
    fn from_passes(space: Space, off: Collected, first_off: Option<Collected>) -> OneSided {
        let (len, dist) = off.dense();
        OneSided {
            space,
            mean: off.mean,
            len,
            dist,
            gammon: first_off.map(|g| {
                let (len, dist) = g.dense();
                (g.mean, len, dist)
            }),
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

#[cfg(feature = "gpu")]
pub mod gpu;
mod sweep;
mod task;

pub use sweep::{Chunk, Level, LevelSink, MAX_PASSES, sweep, sweep_bytes};

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

    #[test]
    fn sweep_equals_brute_force_over_every_play() {
        use crate::equivalence::brute_mean;
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
