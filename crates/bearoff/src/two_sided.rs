//! A two-sided bearoff table in memory (as rollsim's format 1 stores it).
//!
//! `W(us, them) = Σ_r p(r) max_play (1 - W(them, us'))`, with `W(0, ·) = 1` (the side on roll
//! is off) and `W(us, 0) = 0` otherwise. Tables are built by the sweep by columns
//! (`super::columns`); the tests keep here the earlier sweep by pairs as an independent
//! reference: by total pip count of the pair, keeping per pair, as the one-sided sweep does,
//! the best outcome of one, two and three steps of each die, at 152 bytes a pair.

#[cfg(test)]
use rayon::prelude::*;
#[cfg(test)]
use rollsim_core::progress::Progress;

#[cfg(test)]
use super::cube::cube_decision;
#[cfg(test)]
use super::levels::Levels;
#[cfg(test)]
use super::moves::{Roll, Unranked};
use super::position::Space;
#[cfg(test)]
use rollsim_core::memory::huge_filled;

/// A solved two-sided table over `space` for both sides.
pub struct TwoSided {
    pub space: Space,
    /// `win[us * n + them]`: P(the side on roll, at position `us`, wins), n = space.len().
    pub win: Vec<f64>,
    /// With the cube (money play, no gammons in a bearoff), as gnubg stores it: per pair, in
    /// `win`'s order, the equity of the side on roll before its own cube decision when it owns
    /// the cube, when the cube is centred, and when its opponent owns it.
    pub cubeful: Option<Vec<[f64; 3]>>,
}

#[cfg(test)]
/// `chains[j][k][d - 1]`: the mover's best value j after k + 1 steps of die d, the opponent then
/// on roll. Stored opponent-major (`them * n + us`): a pair's lookups all fall in its
/// opponent's row, which stays in cache (924 x 144 bytes a value for 6 checkers on 6 points).
type Chains<const K: usize> = [[[f64; 6]; 3]; K];

#[cfg(test)]
/// What a two-sided sweep computes per pair: K values of the side on roll, their terminal
/// values, and what the mover gets from the opponent's K values after its play.
trait Values<const K: usize>: Sync {
    /// The side on roll is off: it won.
    const WON: [f64; K];
    /// Its opponent is off: it lost.
    const LOST: [f64; K];
    /// The mover's K values when the opponent is on roll with values `v`.
    fn after(v: &[f64; K]) -> [f64; K];
}

#[cfg(test)]
/// Cubeless: the winning chance.
struct Cubeless;

#[cfg(test)]
impl Values<1> for Cubeless {
    const WON: [f64; 1] = [1.0];
    const LOST: [f64; 1] = [0.0];
    fn after(v: &[f64; 1]) -> [f64; 1] {
        [1.0 - v[0]]
    }
}

#[cfg(test)]
/// Cubeful equities: owned, centred, opponent owns.
struct Cubeful;

#[cfg(test)]
impl Values<3> for Cubeful {
    const WON: [f64; 3] = [1.0; 3];
    const LOST: [f64; 3] = [-1.0; 3];
    fn after(v: &[f64; 3]) -> [f64; 3] {
        let [owns, centred, opponent_owns] = *v;
        [
            // I own the cube: the opponent on roll cannot double.
            -opponent_owns,
            // Centred: the opponent may double, and I would own it.
            -cube_decision(centred, opponent_owns),
            // The opponent owns it and may double.
            -cube_decision(owns, opponent_owns),
        ]
    }
}

impl TwoSided {
    pub fn win(&self, us: u32, them: u32) -> f64 {
        self.win[us as usize * self.space.len() + them as usize]
    }
}

#[cfg(test)]
impl TwoSided {
    /// Solves the cubeless table on CPU threads.
    pub fn build(space: Space) -> TwoSided {
        TwoSided::build_with_progress(space, false, &|_| {})
    }

    /// Solves the table on CPU threads (with cubeful equities if asked), calling `progress`
    /// with the pairs done by each level of each sweep.
    pub fn build_with_progress(space: Space, cubeful: bool, progress: &dyn Progress) -> TwoSided {
        let win = sweep::<1, Cubeless>(space, progress);
        TwoSided {
            space,
            win: win.into_iter().map(|[w]| w).collect(),
            cubeful: cubeful.then(|| cubeful_equities(space, progress)),
        }
    }
}

#[cfg(test)]
/// The cubeful equities of every pair (see [`TwoSided::cubeful`]), on CPU threads.
pub fn cubeful_equities(space: Space, progress: &dyn Progress) -> Vec<[f64; 3]> {
    sweep::<3, Cubeful>(space, progress)
}

#[cfg(test)]
/// The sweep by levels of total pip count, on a rayon worker: a parallel loop per level
/// started from outside the pool wakes a worker and sleeps for each.
fn sweep<const K: usize, V: Values<K>>(space: Space, progress: &dyn Progress) -> Vec<[f64; K]> {
    rayon::scope(|_| sweep_levels::<K, V>(space, progress))
}

#[cfg(test)]
fn sweep_levels<const K: usize, V: Values<K>>(
    space: Space,
    progress: &dyn Progress,
) -> Vec<[f64; K]> {
    let n = space.len();
    let levels = Levels::new(&space).by_pips;
    let moves = die_move_lists(&space);
    let mut values = huge_filled(n * n, [0f64; K]);
    let mut chains = huge_filled(n * n, [[[0f64; 6]; 3]; K]);
    for total in 0..pair_levels(&levels) {
        let pairs = level_pairs(&levels, total);
        let done: Vec<([f64; K], Chains<K>)> = pairs
            .par_iter()
            // Pairs of about a microsecond each: tasks of 64 at least.
            .with_min_len(64)
            .map(|&(us, them)| solve_pair::<K, V>(n, &moves, &values, &chains, us, them))
            .collect();
        for (&(us, them), (v, c)) in pairs.iter().zip(done) {
            values[us as usize * n + them as usize] = v;
            chains[them as usize * n + us as usize] = c;
        }
        progress.inc(pairs.len() as u64);
    }
    values
}

#[cfg(test)]
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

#[cfg(test)]
/// The number of pair levels (total pip counts 0 ..) for one-sided levels `levels`.
pub fn pair_levels(levels: &[Vec<u32>]) -> usize {
    2 * levels.len() - 1
}

#[cfg(test)]
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

#[cfg(test)]
fn solve_pair<const K: usize, V: Values<K>>(
    n: usize,
    moves: &[[Vec<u32>; 6]],
    values: &[[f64; K]],
    chains: &[Chains<K>],
    us: u32,
    them: u32,
) -> ([f64; K], Chains<K>) {
    // A pair with a side off: its values, and chains that see the other side's terminal ones.
    if us == 0 {
        return (V::WON, V::after(&V::LOST).map(|v| [[v; 6]; 3]));
    }
    if them == 0 {
        return (V::LOST, V::after(&V::WON).map(|v| [[v; 6]; 3]));
    }
    let mut best = [[[f64::NEG_INFINITY; 6]; 3]; K];
    let mut roll_best = [[f64::NEG_INFINITY; 21]; K];
    for a in 0..6 {
        for &m in &moves[us as usize][a] {
            let after = V::after(&values[them as usize * n + m as usize]);
            let next = &chains[them as usize * n + m as usize];
            for j in 0..K {
                let steps = [after[j], next[j][0][a], next[j][1][a]];
                for k in 0..3 {
                    best[j][k][a] = best[j][k][a].max(steps[k]);
                }
                for (b, &r) in Roll::INDEX[a].iter().enumerate() {
                    let v = if a == b { next[j][2][a] } else { next[j][0][b] };
                    roll_best[j][r] = roll_best[j][r].max(v);
                }
            }
        }
    }
    // Summed in roll order from +0.0, exactly as the GPU kernel does.
    let value = std::array::from_fn(|j| {
        let mut sum = 0.0;
        for (roll, v) in Roll::ALL_21.iter().zip(roll_best[j]) {
            sum += f64::from(roll.weight()) * v;
        }
        sum / 36.0
    });
    (value, best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::one_sided::{OneSided, race_win_probability};

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
    fn cubeful_equities_equal_brute_force_and_order_sensibly() {
        use crate::equivalence::brute_equities as brute;
        use std::collections::HashMap;
        let space = Space::new(3, 3).unwrap();
        let t = TwoSided::build_with_progress(space, true, &|_| {});
        let cube = t.cubeful.as_ref().unwrap();
        let n = space.len() as u32;
        let mut memo = HashMap::new();
        let (mut a, mut b) = ([0u8; 3], [0u8; 3]);
        for us in 1..n {
            for them in 1..n {
                space.position(us, &mut a);
                space.position(them, &mut b);
                let want = brute(&a, &b, &mut memo);
                let got = cube[(us * n + them) as usize];
                for j in 0..3 {
                    assert!(
                        (got[j] - want[j]).abs() < 1e-12,
                        "{a:?} {b:?}: {got:?} vs {want:?}"
                    );
                }
                // Owning the cube is worth at least the cubeless equity, which is worth at
                // least letting the opponent own it.
                let cubeless = 2.0 * t.win(us, them) - 1.0;
                assert!(got[0] >= cubeless - 1e-12 && cubeless >= got[2] - 1e-12);
            }
        }
    }

    #[test]
    fn sweep_equals_brute_force_over_every_play() {
        use crate::equivalence::brute_win as brute;
        use std::collections::HashMap;
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
