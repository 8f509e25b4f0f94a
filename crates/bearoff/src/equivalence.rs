//! One equivalence suite for every backend: each test is written once, generic over a
//! [`Device`], and instantiated per backend by [`rollsim_core::per_backend`]. Each compares a
//! device's sweeps with references that share nothing with them: brute force over every play
//! of every roll on small spaces (the references live here, for the other tests too), and on
//! larger ones the sweep that finds its plays inside its own distribution passes, and the
//! whole two-sided table solved in memory. On the CPU it tests the CPU twins; on the GPU the
//! kernels (lavapipe in CI, where `ROLLSIM_REQUIRE_GPU=1` makes a missing adapter a failure).

use std::collections::HashMap;
use std::time::Duration;

use crate::Space;
use crate::build::{Options, build_two_sided};
use crate::columns::{Cubeful, Cubeless, solve_in_memory};
use crate::cube::cube_decision;
#[cfg(feature = "gpu")]
use crate::engines::Gpu;
use crate::engines::{Cpu, Engines};
use crate::moves::{Roll, slow_plays};
use crate::numeric::{CellKind, Fixed, Real};
use crate::one_sided::{OneSided, PlaySolver};
use crate::plan::{Plan, Precision};
use crate::table::Table;

/// The production engines of a test's device, and what the tests expect of its cells.
trait Device: Engines + Sized {
    /// The cells its two-sided sweep stores, and how far they may be from exact values.
    const CELL: CellKind;
    const TOLERANCE: f64;
    /// The device, or `None` (the test then says it skipped).
    fn open(test: &str) -> Option<Self>;
}

impl Device for Cpu {
    const CELL: CellKind = CellKind::F64;
    const TOLERANCE: f64 = 1e-12;
    fn open(_: &str) -> Option<Cpu> {
        Some(Cpu)
    }
}

#[cfg(feature = "gpu")]
impl Device for Gpu {
    /// Fixed point of 2^-29 per cell, rounded at every level: 2.6e-9 from f64 at worst on
    /// 10x6 (`results/bearoff/bearoff-precision.jsonl`).
    const CELL: CellKind = CellKind::Fixed32;
    const TOLERANCE: f64 = 1e-8;
    fn open(test: &str) -> Option<Gpu> {
        rollsim_gpu::test_gpu(test).map(Gpu)
    }
}

/// The device's one-sided plays, or `None` where it has none (f64), which skips the test or,
/// where the tests' needs are required, fails it (`rollsim_core::testing`).
fn plays_of<'a, D: Device>(d: &'a D, test: &str) -> Option<Box<dyn PlaySolver + 'a>> {
    rollsim_core::testing::need(test, "one-sided plays (f64 shaders)", d.plays())
}

rollsim_core::per_backend!(
    cpu: Cpu,
    #[cfg(feature = "gpu")] gpu: Gpu;
    [
        one_sided_plays_equal_brute_force,
        one_sided_tables_equal_the_fused_sweep,
        two_sided_builds_equal_brute_force,
        two_sided_builds_equal_the_table_solved_in_memory,
    ]
);

/// Expected rolls to bear off by brute force over every play of every roll, memoised on the
/// counts.
pub(crate) fn brute_mean(c: &[u8], memo: &mut HashMap<Vec<u8>, f64>) -> f64 {
    if c.iter().all(|&x| x == 0) {
        return 0.0;
    }
    if let Some(&v) = memo.get(c) {
        return v;
    }
    let mut sum = 0.0;
    for roll in Roll::ALL_21 {
        let (a, b, w) = (roll.low, roll.high, roll.weight());
        let best = slow_plays(c, a.into(), b.into())
            .iter()
            .map(|p| brute_mean(p, memo))
            .fold(f64::INFINITY, f64::min);
        sum += f64::from(w) * best;
    }
    let v = 1.0 + sum / 36.0;
    memo.insert(c.to_vec(), v);
    v
}

pub(crate) type Memo<T> = HashMap<(Vec<u8>, Vec<u8>), T>;

/// The chance that the side on roll at `us` wins against `them`, by brute force.
pub(crate) fn brute_win(us: &[u8], them: &[u8], memo: &mut Memo<f64>) -> f64 {
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
    for roll in Roll::ALL_21 {
        let (a, b, w) = (roll.low, roll.high, roll.weight());
        let best = slow_plays(us, a.into(), b.into())
            .iter()
            .map(|p| 1.0 - brute_win(them, p, memo))
            .fold(f64::NEG_INFINITY, f64::max);
        sum += f64::from(w) * best;
    }
    memo.insert(key, sum / 36.0);
    sum / 36.0
}

/// The side on roll's money equities (it owns the cube, centred, its opponent owns it) by
/// brute force: the recurrences of gnubg's makebearoff, on checker counts with every play.
pub(crate) fn brute_equities(us: &[u8], them: &[u8], memo: &mut Memo<[f64; 3]>) -> [f64; 3] {
    if us.iter().all(|&x| x == 0) {
        return [1.0; 3];
    }
    if them.iter().all(|&x| x == 0) {
        return [-1.0; 3];
    }
    let key = (us.to_vec(), them.to_vec());
    if let Some(&v) = memo.get(&key) {
        return v;
    }
    let mut sum = [0.0; 3];
    for roll in Roll::ALL_21 {
        let (a, b, w) = (roll.low, roll.high, roll.weight());
        let mut best = [f64::NEG_INFINITY; 3];
        for p in slow_plays(us, a.into(), b.into()) {
            let [o, c, u] = brute_equities(them, &p, memo);
            let mine = [-u, -cube_decision(c, u), -cube_decision(o, u)];
            for j in 0..3 {
                best[j] = best[j].max(mine[j]);
            }
        }
        for j in 0..3 {
            sum[j] += f64::from(w) * best[j];
        }
    }
    let v = sum.map(|x| x / 36.0);
    memo.insert(key, v);
    v
}

fn one_sided_plays_equal_brute_force<D: Device>() {
    let test = "one_sided_plays_equal_brute_force";
    let Some(d) = D::open(test) else {
        return;
    };
    let Some(mut plays) = plays_of(&d, test) else {
        return;
    };
    for (points, checkers) in [(5, 5), (3, 9), (8, 2)] {
        let space = Space::new(points, checkers).unwrap();
        let t = OneSided::build_with(space, false, &|_| {}, plays.as_mut()).unwrap();
        let mut memo = HashMap::new();
        let mut counts = vec![0u8; points as usize];
        for i in 0..space.len() as u32 {
            space.position(i, &mut counts);
            let want = brute_mean(&counts, &mut memo);
            let got = t.mean[i as usize];
            assert!((got - want).abs() < 1e-12, "{counts:?}: {got} vs {want}");
        }
    }
}

fn one_sided_tables_equal_the_fused_sweep<D: Device>() {
    let test = "one_sided_tables_equal_the_fused_sweep";
    let Some(d) = D::open(test) else {
        return;
    };
    let Some(mut plays) = plays_of(&d, test) else {
        return;
    };
    // Same operations in the same order on IEEE f64: equal to the last bit on lavapipe. The
    // promise for any driver is 1e-12.
    let close = |a: &[f64], b: &[f64], what: &str| {
        assert_eq!(a.len(), b.len(), "{what}");
        for (x, y) in a.iter().zip(b) {
            assert!(
                (x - y).abs() <= 1e-12 * y.abs().max(1.0),
                "{what}: {x} vs {y}"
            );
        }
    };
    for (points, checkers) in [(6, 15), (4, 5), (9, 3)] {
        let space = Space::new(points, checkers).unwrap();
        let got = OneSided::build_with(space, true, &|_| {}, plays.as_mut()).unwrap();
        let want = OneSided::build_cpu(space, true, &|_| {});
        let what = format!("{checkers}x{points}");
        close(&got.mean, &want.mean, &what);
        close(&got.dist, &want.dist, &what);
        match (&got.gammon, &want.gammon) {
            (Some(g), Some(w)) => {
                close(&g.0, &w.0, &what);
                close(&g.2, &w.2, &what);
            }
            (None, None) => {}
            _ => panic!("{what}: first-off distributions in one table only"),
        }
    }
}

/// The table of `space` built through the build's own path (its file, the device's sweep)
/// into a temporary directory, and opened.
fn build<D: Device>(d: &D, space: Space, cubeful: bool) -> (tempfile::TempDir, Table) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.rsb");
    let plan = Plan::new(
        space,
        cubeful,
        Precision::Cell(D::CELL),
        2,
        dir.path(),
        None,
    );
    let options = Options {
        checkpoint_every: Duration::MAX,
        fresh: true,
        durable: false,
        progress: &|_| {},
        resumed: &mut |_, _| {},
    };
    build_two_sided(&out, &plan, d.columns().as_ref(), options).unwrap();
    let table = Table::open(&out).unwrap();
    (dir, table)
}

fn two_sided_builds_equal_brute_force<D: Device>() {
    let Some(d) = D::open("two_sided_builds_equal_brute_force") else {
        return;
    };
    for (points, checkers, cubeful) in [(4, 3, false), (3, 3, true)] {
        let space = Space::new(points, checkers).unwrap();
        let (_dir, t) = build(&d, space, cubeful);
        let n = space.len() as u32;
        let (mut wins, mut equities) = (HashMap::new(), HashMap::new());
        let (mut a, mut b) = (vec![0u8; points as usize], vec![0u8; points as usize]);
        for us in 1..n {
            for them in 1..n {
                space.position(us, &mut a);
                space.position(them, &mut b);
                let want = brute_win(&a, &b, &mut wins);
                let got = t.win(us, them).unwrap();
                assert!(
                    (got - want).abs() < D::TOLERANCE,
                    "{a:?} {b:?}: {got} vs {want}"
                );
                if let Some(e) = t.equities(us, them).unwrap() {
                    let want = brute_equities(&a, &b, &mut equities);
                    let got = [e.owned, e.centred, e.opponent_owns];
                    for (g, w) in got.iter().zip(want) {
                        assert!((g - w).abs() < 2.0 * D::TOLERANCE, "{a:?} {b:?}: {got:?}");
                    }
                }
            }
        }
        assert_eq!(t.equities(1, 1).unwrap().is_some(), cubeful);
    }
}

fn two_sided_builds_equal_the_table_solved_in_memory<D: Device>() {
    let Some(d) = D::open("two_sided_builds_equal_the_table_solved_in_memory") else {
        return;
    };
    for checkers in [6, 8] {
        let space = Space::new(6, checkers).unwrap();
        let n = space.len();
        let (_dir, t) = build(&d, space, true);
        // The same cells from the in-memory sweep: exact for f64, and for fixed32 the same
        // integer arithmetic the kernel does.
        let (cubeless, cubeful): (Vec<f64>, Vec<f64>) = match D::CELL {
            CellKind::Fixed32 => (
                cells(solve_in_memory::<1, Cubeless, Fixed>(space)),
                cells(solve_in_memory::<3, Cubeful, Fixed>(space)),
            ),
            _ => (
                solve_in_memory::<1, Cubeless, f64>(space),
                solve_in_memory::<3, Cubeful, f64>(space),
            ),
        };
        for us in 0..n as u32 {
            for them in 0..n as u32 {
                // Columns by opponent: the record of `them`, at `us`.
                let at = them as usize * n + us as usize;
                assert_eq!(
                    t.win(us, them).unwrap(),
                    cubeless[at],
                    "6x{checkers} {us} {them}"
                );
                let e = t.equities(us, them).unwrap().unwrap();
                let at = them as usize * 3 * n + us as usize;
                let want = [cubeful[at], cubeful[at + n], cubeful[at + 2 * n]];
                assert_eq!([e.owned, e.centred, e.opponent_owns], want, "6x{checkers}");
            }
        }
    }
}

fn cells(v: Vec<Fixed>) -> Vec<f64> {
    v.into_iter().map(Fixed::to_f64).collect()
}
