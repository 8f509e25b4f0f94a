//! The two-sided bearoff database: the exact cubeless probability that the side on roll wins,
//! for every pair of one-sided positions, under the plays that maximise it.
//!
//! `W(us, them) = Σ_r p(r) max_play (1 - W(them, us'))`, with `W(0, ·) = 1` (the side on roll
//! is off) and `W(us, 0) = 0` otherwise. The sweep goes by total pip count of the pair, and, as
//! in the one-sided sweep, keeps per pair the best outcome of one, two and three steps of each
//! die, so a roll's best play is a few lookups.

use rayon::prelude::*;

use super::moves::{ROLLS, Unranked};
use super::one_sided::{Levels, MIN_TASK, roll_index};
use super::position::Space;

/// A solved two-sided table over `space` for both sides.
pub struct TwoSided {
    pub space: Space,
    /// `win[us * n + them]`: P(the side on roll, at position `us`, wins), n = space.len().
    pub win: Vec<f64>,
}

/// `best[k][d - 1]`: the mover's best winning chance after k + 1 steps of die d, the opponent
/// then on roll. Stored opponent-major (`them * n + us`): a pair's lookups all fall in its
/// opponent's row, which stays in cache (924 x 144 bytes for 6 checkers on 6 points).
type Chains = [[f64; 6]; 3];

impl TwoSided {
    /// Solves the table on CPU threads.
    pub fn build(space: Space) -> TwoSided {
        TwoSided::build_with_progress(space, &|_| {})
    }

    /// Solves the table on CPU threads, calling `progress` with the pairs done by each level.
    pub fn build_with_progress(space: Space, progress: &(dyn Fn(u64) + Sync)) -> TwoSided {
        let n = space.len();
        let levels = Levels::new(&space).by_pips;
        let moves = die_move_lists(&space);
        let mut win = vec![0f64; n * n];
        let mut chains = vec![[[0f64; 6]; 3]; n * n];
        for total in 0..pair_levels(&levels) {
            let pairs = level_pairs(&levels, total);
            let done: Vec<(f64, Chains)> = pairs
                .par_iter()
                .with_min_len(MIN_TASK)
                .map(|&(us, them)| solve_pair(n, &moves, &win, &chains, us, them))
                .collect();
            for (&(us, them), (w, c)) in pairs.iter().zip(done) {
                win[us as usize * n + them as usize] = w;
                chains[them as usize * n + us as usize] = c;
            }
            progress(pairs.len() as u64);
        }
        TwoSided { space, win }
    }

    pub fn win(&self, us: u32, them: u32) -> f64 {
        self.win[us as usize * self.space.len() + them as usize]
    }
}

/// Every position's single-die successors, per die.
pub fn die_move_lists(space: &Space) -> Vec<[Vec<u32>; 6]> {
    let mut buf = [0u32; 18];
    (0..space.len() as u32)
        .map(|i| {
            let u = Unranked::new(space, i);
            std::array::from_fn(|d| {
                let k = u.die_moves(d as u32 + 1, &mut buf);
                buf[..k].to_vec()
            })
        })
        .collect()
}

/// The number of pair levels (total pip counts 0 ..) for one-sided levels `levels`.
pub fn pair_levels(levels: &[Vec<u32>]) -> usize {
    2 * levels.len() - 1
}

/// The pairs `(us, them)` whose pips add up to `total`, in sweep order: `us` by level then
/// index, `them` likewise.
pub fn level_pairs(levels: &[Vec<u32>], total: usize) -> Vec<(u32, u32)> {
    let top = levels.len() - 1;
    (total.saturating_sub(top)..=total.min(top))
        .flat_map(|pu| {
            let them = &levels[total - pu];
            levels[pu]
                .iter()
                .flat_map(move |&us| them.iter().map(move |&t| (us, t)))
        })
        .collect()
}

fn solve_pair(
    n: usize,
    moves: &[[Vec<u32>; 6]],
    win: &[f64],
    chains: &[Chains],
    us: u32,
    them: u32,
) -> (f64, Chains) {
    if us == 0 {
        return (1.0, [[1.0; 6]; 3]);
    }
    if them == 0 {
        return (0.0, [[0.0; 6]; 3]);
    }
    const ROLL_INDEX: [[usize; 6]; 6] = roll_index();
    let mut best = [[f64::NEG_INFINITY; 6]; 3];
    let mut roll_best = [f64::NEG_INFINITY; 21];
    for a in 0..6 {
        for &m in &moves[us as usize][a] {
            let after = 1.0 - win[them as usize * n + m as usize];
            let next = &chains[them as usize * n + m as usize];
            let steps = [after, next[0][a], next[1][a]];
            for k in 0..3 {
                best[k][a] = best[k][a].max(steps[k]);
            }
            for b in 0..6 {
                let v = if a == b { next[2][a] } else { next[0][b] };
                let r = ROLL_INDEX[a][b];
                roll_best[r] = roll_best[r].max(v);
            }
        }
    }
    // Summed in roll order from +0.0, exactly as the GPU kernel does.
    let mut sum = 0.0;
    for (&(_, _, w), v) in ROLLS.iter().zip(roll_best) {
        sum += f64::from(w) * v;
    }
    (sum / 36.0, best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bearoff::one_sided::{OneSided, race_win_probability};

    #[test]
    fn single_checkers_agree_with_the_one_sided_formula() {
        // With one checker a side every play of a roll ends on the same point, so each side's
        // distribution is fixed and the race formula is exact.
        let space = Space::new(6, 3).unwrap();
        let two = TwoSided::build(space);
        let one = OneSided::build(space, false);
        let singles: Vec<u32> = (1..=6).collect();
        for &us in &singles {
            for &them in &singles {
                let formula = race_win_probability(one.distribution(us), one.distribution(them));
                assert!((two.win(us, them) - formula).abs() < 1e-14, "{us} {them}");
            }
        }
    }

    #[test]
    fn probabilities_are_sane() {
        let space = Space::new(4, 4).unwrap();
        let two = TwoSided::build(space);
        let n = space.len() as u32;
        assert!(two.win.iter().all(|&w| (0.0..=1.0).contains(&w)));
        // A checker on the 1 to 3 point is off with any roll: the side on roll wins.
        for them in 1..n {
            assert_eq!(two.win(1, them), 1.0);
            assert_eq!(two.win(3, them), 1.0);
        }
    }

    #[test]
    fn sweep_equals_brute_force_over_every_play() {
        use crate::bearoff::moves::slow_plays;
        use std::collections::HashMap;
        fn brute(us: &[u8], them: &[u8], memo: &mut HashMap<(Vec<u8>, Vec<u8>), f64>) -> f64 {
            if us.iter().all(|&x| x == 0) {
                return 1.0;
            }
            if them.iter().all(|&x| x == 0) {
                return 0.0;
            }
            let key = (us.to_vec(), them.to_vec());
            if let Some(&v) = memo.get(&key) {
                return v;
            }
            let mut sum = 0.0;
            for &(a, b, w) in &ROLLS {
                let best = slow_plays(us, a.into(), b.into())
                    .iter()
                    .map(|p| 1.0 - brute(them, p, memo))
                    .fold(f64::NEG_INFINITY, f64::max);
                sum += f64::from(w) * best;
            }
            memo.insert(key, sum / 36.0);
            sum / 36.0
        }
        let space = Space::new(4, 3).unwrap();
        let two = TwoSided::build(space);
        let n = space.len() as u32;
        let mut memo = HashMap::new();
        let (mut a, mut b) = ([0u8; 4], [0u8; 4]);
        for us in 1..n {
            for them in 1..n {
                space.position(us, &mut a);
                space.position(them, &mut b);
                let want = brute(&a, &b, &mut memo);
                assert!((two.win(us, them) - want).abs() < 1e-12, "{a:?} {b:?}");
            }
        }
    }
}
