//! The two-sided sweep by columns, whose memory is the values themselves.
//!
//! `V(x, y)` are the values of the side on roll at x against y (its winning chance, or its
//! three cubeful money equities). Positions go by pip count, and every play lowers it. For each
//! position x:
//! 1. its **row** `V(x, u)` for every u: per roll, a max over the columns of x's plays
//!    (`C[x'][u] = V(u, x')`, what the opponent has after x plays to x'), then the weighted sum
//!    over the 21 rolls. Pure streaming over whole columns, vectorised, no gathers;
//! 2. its **column** `V(u, x)` for every u: the same max and sum over u's plays, read from the
//!    row just computed (one row, in cache), through per-die chains (the best after one, two and
//!    three steps of a die, as the one-sided sweep keeps them).
//!
//! Only columns are kept, each computed once and handed to a sink (the output file) as soon as
//! it is done. A play lowers the mover's pips by at most 24, so a column is read only while its
//! level lies within 24 pips of the current one: the sweep holds a window of 25 levels of
//! columns, two thirds of the table for 15 checkers on 6 points. Each pair is computed twice,
//! in its roller's row and in its opponent's column, in exchange for no strided writes; both
//! give the same bits (same plays, same order of summation, inputs equal by induction).
//!
//! Arithmetic: the max over plays is exact in the cell's working type (the recurrences only
//! negate and double), the sum over rolls is taken in f64 from +0.0 in roll order, and each
//! value is rounded once to its cell. So the error against exact arithmetic is at most half a
//! cell step per ply, and in practice far less (`results/bearoff/bearoff-precision.jsonl`: f32
//! within 1.1e-7 on 10x6, 7.6e-8 on the whole 15x15 table). With [`Fixed`] cells every step is
//! exact integer arithmetic, which the GPU kernel (`columns::gpu`) repeats bit for bit.
//!
//! [`Fixed`]: crate::numeric::Fixed

use rayon::prelude::*;

use super::cube::cube_decision;
use super::moves::Roll;
use super::numeric::Cell;
use super::numeric::{CellKind, Real};
use super::position::Space;

/// Most pips one roll removes (6-6): a column is read only by rows within this many levels.
pub const MAX_ROLL_PIPS: usize = 24;

/// The K values a two-sided sweep computes per pair.
pub trait Recurrence<const K: usize>: Sync {
    /// The side on roll is off: it won.
    const WON: [f64; K];
    /// Its opponent is off: it lost.
    const LOST: [f64; K];
    /// Every value lies in this range.
    const RANGE: (f64, f64);
    /// `V = OFFSET + Σ_r p(r) max_play after(V')`.
    const OFFSET: f64;
    /// The mover's K values, up to `OFFSET`, when the opponent is on roll with values `v`.
    /// Exact in any [`Real`]: it only negates, doubles and compares.
    fn after<W: Real>(v: [W; K]) -> [W; K];
    /// The body of `after` in WGSL (`shaders/bearoff/columns.wgsl`), from `v` into `a`.
    const WGSL_AFTER: &'static str;
}

/// Cubeless: the winning chance, `W = 1 - Σ_r p(r) min_play W'`.
pub struct Cubeless;

impl Recurrence<1> for Cubeless {
    const WON: [f64; 1] = [1.0];
    const LOST: [f64; 1] = [0.0];
    const RANGE: (f64, f64) = (0.0, 1.0);
    const OFFSET: f64 = 1.0;
    #[inline(always)]
    fn after<W: Real>([w]: [W; 1]) -> [W; 1] {
        [-w]
    }
    const WGSL_AFTER: &'static str = "a[0] = -v[0];";
}

/// Cubeful money equities of the side on roll before its cube decision: it owns the cube, the
/// cube is centred, its opponent owns it (gnubg's makebearoff recurrences).
pub struct Cubeful;

impl Recurrence<3> for Cubeful {
    const WON: [f64; 3] = [1.0; 3];
    const LOST: [f64; 3] = [-1.0; 3];
    const RANGE: (f64, f64) = (-1.0, 1.0);
    const OFFSET: f64 = 0.0;
    #[inline(always)]
    fn after<W: Real>([owns, centred, opponent_owns]: [W; 3]) -> [W; 3] {
        [
            // I own the cube: the opponent on roll cannot double.
            -opponent_owns,
            // Centred: the opponent may double, and I would own it.
            -cube_decision(centred, opponent_owns),
            // The opponent owns it and may double.
            -cube_decision(owns, opponent_owns),
        ]
    }
    const WGSL_AFTER: &'static str =
        "a[0] = -v[2]; a[1] = -cube_decision(v[1], v[2]); a[2] = -cube_decision(v[0], v[2]);";
}

/// One value of the mover at u in a column: `after`, what it has at u (the opponent to roll),
/// and its best after one, two and three steps of die d at index d - 1. Eight lanes of `first`,
/// so that the first steps of all dice are one vector; one block of 96 bytes for f32.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Chain<W> {
    first: [W; 8],
    second: [W; 6],
    after: W,
    third: [W; 7],
}

impl<W: Real> Chain<W> {
    const EMPTY: Chain<W> = Chain {
        first: [W::NEG_INFINITY; 8],
        second: [W::NEG_INFINITY; 6],
        after: W::NEG_INFINITY,
        third: [W::NEG_INFINITY; 7],
    };
}

/// Per-thread scratch for one position's row and column.
struct Scratch<W: Real, const K: usize> {
    /// The row, K planes of n.
    row: Vec<W>,
    chains: Vec<[Chain<W>; K]>,
    best: Vec<W>,
    acc: Vec<f64>,
}

/// Row block: every play column's block stays in L1/L2 across the 21 rolls (8 KB a column for
/// f32 cells).
const BLOCK: usize = 2048;

impl<W: Real, const K: usize> Scratch<W, K> {
    fn new(n: usize) -> Self {
        Scratch {
            row: vec![W::NEG_INFINITY; K * n],
            chains: vec![[Chain::EMPTY; K]; n],
            best: vec![W::NEG_INFINITY; K * BLOCK],
            acc: vec![0.0; K * BLOCK],
        }
    }

    /// Bytes of one thread's scratch per position (a row and its chains).
    fn bytes_per_position() -> u64 {
        (K * (std::mem::size_of::<W>() + std::mem::size_of::<Chain<W>>())) as u64
    }
}

/// Bytes the sweep holds: the window of `K`-value columns of `cell` cells, and each thread's
/// scratch (`threads` of them).
pub fn sweep_bytes(n: u64, window_columns: u64, k: u64, cell: CellKind, threads: u64) -> u64 {
    let per_position = match (k, cell) {
        (1, CellKind::F64) => Scratch::<f64, 1>::bytes_per_position(),
        (1, _) => Scratch::<f32, 1>::bytes_per_position(),
        (_, CellKind::F64) => Scratch::<f64, 3>::bytes_per_position(),
        _ => Scratch::<f32, 3>::bytes_per_position(),
    };
    let scratch = n.saturating_mul(per_position) + (1 << 20);
    (window_columns.saturating_mul(n))
        .saturating_mul(k * cell.bytes() as u64)
        .saturating_add(threads.saturating_mul(scratch))
}

/// Runs the sweep from level `first` (0 for a fresh build; on resuming, the window must hold
/// the columns of the 24 levels below it). Each finished column (K planes of n cells, the
/// side on roll's values against that position) goes to `sink` from the worker that computed
/// it; `level_done(l)` runs once every column of level l is in the sink.
pub fn sweep<const K: usize, R: Recurrence<K>, C: Cell>(
    moves: &Moves,
    first: usize,
    window: &mut [C],
    sink: &(dyn Fn(u32, &[C]) -> std::io::Result<()> + Sync),
    level_done: &mut (dyn FnMut(usize) -> std::io::Result<()> + Send),
) -> std::io::Result<()> {
    let record = K * moves.n;
    assert_eq!(window.len(), moves.window.capacity * record);
    // On a rayon worker: a parallel loop per level started from outside the pool parks and
    // wakes a thread each time (see `OneSided::build_cpu`).
    rayon::scope(|_| {
        for level in first..moves.levels.len() {
            let positions = &moves.levels[level];
            let start = moves.window.level_slot[level];
            let (before, rest) = window.split_at_mut(start * record);
            let (mine, after) = rest.split_at_mut(positions.len() * record);
            let others = Others {
                before,
                after,
                start: start + positions.len(),
                record,
            };
            mine.par_chunks_mut(record)
                .zip(positions.par_iter())
                .try_for_each_init(
                    || Scratch::<C::Work, K>::new(moves.n),
                    |scratch, (column, &x)| {
                        solve_position_fastest::<K, R, C>(moves, &others, scratch, x, column);
                        sink(x, column)
                    },
                )?;
            level_done(level)?;
        }
        Ok(())
    })
}

/// The window's columns outside the level being computed.
struct Others<'a, C> {
    before: &'a [C],
    after: &'a [C],
    /// The slot `after` begins at.
    start: usize,
    record: usize,
}

impl<C> Others<'_, C> {
    #[inline]
    fn column(&self, slot: usize) -> &[C] {
        if slot < self.start {
            &self.before[slot * self.record..(slot + 1) * self.record]
        } else {
            let s = slot - self.start;
            &self.after[s * self.record..(s + 1) * self.record]
        }
    }
}

/// [`solve_position`] compiled for the widest vectors this CPU has: AVX2 where it is there,
/// else the build's baseline (SSE4.2).
fn solve_position_fastest<const K: usize, R: Recurrence<K>, C: Cell>(
    moves: &Moves,
    others: &Others<C>,
    s: &mut Scratch<C::Work, K>,
    x: u32,
    column: &mut [C],
) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2,fma")]
        fn avx2<const K: usize, R: Recurrence<K>, C: Cell>(
            moves: &Moves,
            others: &Others<C>,
            s: &mut Scratch<C::Work, K>,
            x: u32,
            column: &mut [C],
        ) {
            solve_position::<K, R, C>(moves, others, s, x, column)
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has the features `avx2` was compiled for.
            return unsafe { avx2::<K, R, C>(moves, others, s, x, column) };
        }
    }
    solve_position::<K, R, C>(moves, others, s, x, column)
}

/// x's row, then its column into `column`.
#[inline(always)]
fn solve_position<const K: usize, R: Recurrence<K>, C: Cell>(
    moves: &Moves,
    others: &Others<C>,
    s: &mut Scratch<C::Work, K>,
    x: u32,
    column: &mut [C],
) {
    let n = moves.n;
    let range = R::RANGE;
    if x == 0 {
        // The side on roll against an opponent who is off has lost, but for the empty pair.
        for j in 0..K {
            column[j * n] = C::store(R::WON[j], range);
            column[j * n + 1..(j + 1) * n].fill(C::store(R::LOST[j], range));
        }
        return;
    }
    // The row: V(x, u) for every u.
    for u0 in (0..n).step_by(BLOCK) {
        let len = BLOCK.min(n - u0);
        s.acc[..K * len].fill(0.0);
        for (r, roll) in Roll::ALL_21.iter().enumerate() {
            let w = f64::from(roll.weight());
            row_roll::<K, R, C>(moves, others, x, r, w, (u0, len), s);
        }
        for j in 0..K {
            for (v, &a) in s.row[j * n + u0..j * n + u0 + len]
                .iter_mut()
                .zip(&s.acc[j * len..(j + 1) * len])
            {
                *v = C::store(R::OFFSET + a / 36.0 * C::Work::UNIT, range).load(range);
            }
        }
    }
    for j in 0..K {
        s.row[j * n] = C::store(R::LOST[j], range).load(range);
    }
    // The column: V(u, x) for every u, from the row through per-die chains.
    for (u, c) in s.chains.iter_mut().enumerate() {
        let after = R::after(std::array::from_fn(|j| s.row[j * n + u]));
        for j in 0..K {
            c[j].after = after[j];
        }
    }
    for c in &mut s.chains[0] {
        let v = c.after;
        (c.first, c.second, c.third) = ([v; 8], [v; 6], [v; 7]);
    }
    for j in 0..K {
        column[j * n] = C::store(R::WON[j], range);
    }
    // For one value, each u's 21 roll values go to a batch, and the batch's sums over the rolls
    // run with the lanes across u: the same additions in the same order per u, so the same
    // bits, but vector instructions and eight independent chains instead of one u's 21
    // dependent f64 additions. Three values keep the sums per u: batched, the cubeful pass
    // spilled its chains' registers.
    let mut rolls = [[C::Work::NEG_INFINITY; SUM_LANES]; 21];
    for u in 1..n {
        // `pair[a][j][b]`: the best value j after die a then die b (the roll a-b played a
        // first); `double[a][j]`: after four steps of die a.
        let mut pair = [[[C::Work::NEG_INFINITY; 8]; K]; 6];
        let mut double = [[C::Work::NEG_INFINITY; K]; 6];
        macro_rules! die {
            ($($a:literal)*) => {$(
                (pair[$a], double[$a]) = die_chain::<K, C::Work, $a>(moves, &mut s.chains, u);
            )*};
        }
        die!(0 1 2 3 4 5);
        // The rolls in Roll::ALL_21's order, as constant indices (a loop over them reads them).
        if K == 1 {
            let lane = (u - 1) % SUM_LANES;
            let mut r = 0;
            #[allow(clippy::needless_range_loop)]
            for a in 0..6 {
                for b in a..6 {
                    rolls[r][lane] = roll_value(&pair, &double, 0, a, b);
                    r += 1;
                }
            }
            if lane + 1 == SUM_LANES || u + 1 == n {
                let mut sum = [0.0f64; SUM_LANES];
                for (&w, values) in Roll::WEIGHTS.iter().zip(&rolls) {
                    for (s, v) in sum.iter_mut().zip(values) {
                        *s += f64::from(w) * v.raw();
                    }
                }
                for (c, &s) in column[u - lane..=u].iter_mut().zip(&sum) {
                    *c = C::store(R::OFFSET + s / 36.0 * C::Work::UNIT, range);
                }
            }
        } else {
            for j in 0..K {
                let (mut sum, mut r) = (0.0, 0);
                #[allow(clippy::needless_range_loop)]
                for a in 0..6 {
                    for b in a..6 {
                        sum +=
                            f64::from(Roll::WEIGHTS[r]) * roll_value(&pair, &double, j, a, b).raw();
                        r += 1;
                    }
                }
                column[j * n + u] = C::store(R::OFFSET + sum / 36.0 * C::Work::UNIT, range);
            }
        }
    }
}

/// Value j after the roll a-b (dice a + 1 and b + 1, a <= b), the better of its two orders.
#[inline(always)]
fn roll_value<const K: usize, W: Real>(
    pair: &[[[W; 8]; K]; 6],
    double: &[[W; K]; 6],
    j: usize,
    a: usize,
    b: usize,
) -> W {
    if a == b {
        double[a][j]
    } else {
        pair[a][j][b].max(pair[b][j][a])
    }
}

/// Lanes of the column's sums over the rolls (see [`solve_position`]).
const SUM_LANES: usize = 8;

/// The chains of die `A` at u (written into `chains[u]`, whose lower positions are done), and
/// what the rolls with an `A` take from them.
#[inline(always)]
fn die_chain<const K: usize, W: Real, const A: usize>(
    moves: &Moves,
    chains: &mut [[Chain<W>; K]],
    u: usize,
) -> ([[W; 8]; K], [W; K]) {
    let neg = W::NEG_INFINITY;
    let (mut pair, mut first, mut third, mut double) =
        ([[neg; 8]; K], [neg; K], [neg; K], [neg; K]);
    for &m in moves.die_moves(u, A) {
        let next = &chains[m as usize];
        for j in 0..K {
            for (p, &v) in pair[j].iter_mut().zip(&next[j].first) {
                *p = p.max(v);
            }
            first[j] = first[j].max(next[j].after);
            third[j] = third[j].max(next[j].second[A]);
            double[j] = double[j].max(next[j].third[A]);
        }
    }
    for j in 0..K {
        let c = &mut chains[u][j];
        c.first[A] = first[j];
        c.second[A] = pair[j][A];
        c.third[A] = third[j];
    }
    (pair, double)
}

/// Plays of one roll whose columns a row block takes at once: a roll's best over a group is
/// kept in registers, lane block by lane block, and only a roll with more plays than this
/// carries a partial best in memory from group to group.
const PLAY_GROUP: usize = 8;

/// `s.acc[j * len + i] += w ·` (max over the columns of x's plays with roll r of
/// `after(C[u0 + i])[j]`), through `s.best` for a roll of more than [`PLAY_GROUP`] plays.
#[inline(always)]
fn row_roll<const K: usize, R: Recurrence<K>, C: Cell>(
    moves: &Moves,
    others: &Others<C>,
    x: u32,
    r: usize,
    w: f64,
    (u0, len): (usize, usize),
    s: &mut Scratch<C::Work, K>,
) {
    let (best, acc) = (&mut s.best, &mut s.acc);
    let (n, range) = (moves.n, R::RANGE);
    let planes = |p: u32| -> [&[C]; K] {
        let c = others.column(moves.window.slot[p as usize] as usize);
        std::array::from_fn(|j| &c[j * n + u0..][..len])
    };
    let plays = moves.plays(x, r);
    assert!(!plays.is_empty(), "a position not off has plays");
    let groups = plays.len().div_ceil(PLAY_GROUP);
    // Lanes as fixed-size arrays, which LLVM vectorises; a plain loop over i stayed scalar for
    // three values. The plays innermost, so that a lane block's best stays in registers: with
    // the plays outermost, the best went to memory and back for every play, as a masked store
    // under AVX2. Sixteen lanes, not eight, for a fifth less time.
    const LANES: usize = 16;
    let whole = len / LANES * LANES;
    for (g, group) in plays.chunks(PLAY_GROUP).enumerate() {
        let mut cols: [[&[C]; K]; PLAY_GROUP] = [[&[]; K]; PLAY_GROUP];
        for (c, &p) in cols.iter_mut().zip(group) {
            *c = planes(p);
        }
        let cols = &cols[..group.len()];
        let (carried, last) = (g > 0, g + 1 == groups);
        // One lane block of the group: `width` lanes from `i`, `width` a constant for the
        // whole blocks (a variable one kept them scalar).
        macro_rules! block {
            ($i:expr, $width:expr) => {{
                let (i, width) = ($i, $width);
                let mut lanes = [[C::Work::NEG_INFINITY; LANES]; K];
                for c in cols {
                    let cells: [&[C]; K] = std::array::from_fn(|j| &c[j][i..i + width]);
                    for t in 0..width {
                        let v = R::after(std::array::from_fn(|j| cells[j][t].load(range)));
                        for j in 0..K {
                            lanes[j][t] = lanes[j][t].max(v[j]);
                        }
                    }
                }
                for j in 0..K {
                    let b = &mut best[j * len + i..][..width];
                    if carried {
                        // `maxnum` against memory: a select became a masked store.
                        for (l, &b) in lanes[j].iter_mut().zip(b.iter()) {
                            *l = l.maxnum(b);
                        }
                    }
                    if last {
                        for (a, l) in acc[j * len + i..][..width].iter_mut().zip(&lanes[j]) {
                            *a += w * l.raw();
                        }
                    } else {
                        b.copy_from_slice(&lanes[j][..width]);
                    }
                }
            }};
        }
        for i in (0..whole).step_by(LANES) {
            block!(i, LANES);
        }
        if whole < len {
            block!(whole, len - whole);
        }
    }
}

/// The whole table in memory, `[them][j][us]` (column `them`, value j, the side on roll at
/// `us`): for small tables, tests and benchmarks.
pub fn solve_in_memory<const K: usize, R: Recurrence<K>, C: Cell>(space: Space) -> Vec<C> {
    let moves = Moves::new(space);
    let n = moves.n;
    let out = std::sync::Mutex::new(vec![C::zeroed(); n * K * n]);
    let mut window = vec![C::zeroed(); moves.window.capacity * K * n];
    sweep::<K, R, C>(
        &moves,
        0,
        &mut window,
        &|x, col| {
            let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
            out[x as usize * K * n..][..K * n].copy_from_slice(col);
            Ok(())
        },
        &mut |_| Ok(()),
    )
    .expect("a sink in memory does not fail");
    out.into_inner().unwrap_or_else(|e| e.into_inner())
}

pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod layout;
mod moves;
pub mod seam;

pub use moves::{Moves, Window};

#[cfg(test)]
mod tests {
    use super::*;

    use crate::numeric::{Fixed, Q16};
    use crate::two_sided::TwoSided;

    #[test]
    fn every_level_is_reported_once_after_its_columns() {
        let moves = Moves::new(Space::new(4, 4).unwrap());
        let n = moves.n;
        let written = std::sync::Mutex::new(vec![false; n]);
        let mut window = vec![0f32; moves.window.capacity * n];
        let mut levels = Vec::new();
        sweep::<1, Cubeless, f32>(
            &moves,
            0,
            &mut window,
            &|x, _| {
                written.lock().unwrap()[x as usize] = true;
                Ok(())
            },
            &mut |l| {
                let w = written.lock().unwrap();
                assert!(moves.levels[l].iter().all(|&x| w[x as usize]));
                levels.push(l);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(levels, (0..moves.levels.len()).collect::<Vec<_>>());
    }

    #[test]
    fn cubeless_equals_the_pair_sweep() {
        for (points, checkers) in [(6, 4), (4, 6), (3, 3), (1, 5)] {
            let space = Space::new(points, checkers).unwrap();
            let n = space.len();
            let old = TwoSided::build(space);
            let new = solve_in_memory::<1, Cubeless, f64>(space);
            for us in 0..n {
                for them in 0..n {
                    if us == 0 && them == 0 {
                        continue;
                    }
                    let (a, b) = (old.win[us * n + them], new[them * n + us]);
                    assert!((a - b).abs() < 1e-13, "{us} {them}: {a} {b}");
                }
            }
        }
    }

    #[test]
    fn cubeful_equals_the_pair_sweep() {
        let space = Space::new(5, 4).unwrap();
        let n = space.len();
        let old = TwoSided::build_with_progress(space, true, &|_| {});
        let cube = old.cubeful.unwrap();
        let new = solve_in_memory::<3, Cubeful, f64>(space);
        for us in 0..n {
            for them in 0..n {
                if us == 0 && them == 0 {
                    continue;
                }
                for j in 0..3 {
                    let (a, b) = (cube[us * n + them][j], new[them * 3 * n + j * n + us]);
                    assert!((a - b).abs() < 1e-13, "{us} {them} {j}: {a} {b}");
                }
            }
        }
    }

    #[test]
    fn narrow_cells_stay_near_f64() {
        let space = Space::new(6, 5).unwrap();
        let exact = solve_in_memory::<1, Cubeless, f64>(space);
        let single = solve_in_memory::<1, Cubeless, f32>(space);
        let worst = exact
            .iter()
            .zip(&single)
            .map(|(&a, &b)| (a - f64::from(b)).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-6, "f32 cubeless off by {worst}");
        let fixed = solve_in_memory::<1, Cubeless, Fixed>(space);
        let worst = exact
            .iter()
            .zip(&fixed)
            .map(|(&a, &b)| (a - b.to_f64()).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-8, "fixed32 cubeless off by {worst}");
        let exact = solve_in_memory::<3, Cubeful, f64>(space);
        let wide = solve_in_memory::<3, Cubeful, Fixed>(space);
        let worst = exact
            .iter()
            .zip(&wide)
            .map(|(&a, &b)| (a - b.to_f64()).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-8, "fixed32 cubeful off by {worst}");
        let fixed = solve_in_memory::<3, Cubeful, u16>(space);
        let worst = exact
            .iter()
            .zip(&fixed)
            .map(|(&a, &b)| (a - b.load(Cubeful::RANGE).to_f64()).abs())
            .fold(0.0, f64::max);
        assert!(worst < 2e-4, "u16 cubeful off by {worst}");
        assert!(worst > 0.0);
    }

    #[test]
    fn a_small_table_is_the_block_of_a_large_one() {
        // gnubg's order puts positions with fewer checkers first, and a pair's value depends
        // only on pairs with no more checkers: the 4-checker table is the top-left block of the
        // 6-checker one, bit for bit.
        let (small, large) = (Space::new(6, 4).unwrap(), Space::new(6, 6).unwrap());
        let (a, b) = (
            solve_in_memory::<3, Cubeful, f32>(small),
            solve_in_memory::<3, Cubeful, f32>(large),
        );
        let (m, n) = (small.len(), large.len());
        for them in 0..m {
            for j in 0..3 {
                assert_eq!(
                    a[(them * 3 + j) * m..][..m],
                    b[(them * 3 + j) * n..][..m],
                    "column {them} value {j}"
                );
            }
        }
    }

    #[test]
    fn u16_cells_round_as_gnubg_does() {
        assert_eq!(u16::store(1.0, Cubeful::RANGE), 0xFFFF);
        assert_eq!(u16::store(-1.0, Cubeful::RANGE), 0);
        assert_eq!(u16::store(0.5, Cubeless::RANGE), 32768);
        assert_eq!(u16::store(0.0, Cubeful::RANGE), 32768);
        assert_eq!(
            u16::store(0.25, Cubeless::RANGE),
            crate::numeric::quantize(0.25)
        );
        assert_eq!(0xFFFFu16.load(Cubeful::RANGE), Q16::ONE);
        assert_eq!(0u16.load(Cubeful::RANGE), -Q16::ONE);
        assert_eq!(0u16.load(Cubeless::RANGE), Q16(0.0));
        // Half a step rounds up, as gnubg's quantize does, also when the sum's rounding error
        // puts it a hair below; a 36th of a step off the half is not a rounding error.
        for range in [Cubeless::RANGE, Cubeful::RANGE] {
            let at = |steps: f64| range.0 + steps / 65535.0 * (range.1 - range.0);
            assert_eq!(u16::store(at(100.5), range), 101);
            assert_eq!(u16::store(at(100.5 - 1e-9), range), 101);
            assert_eq!(u16::store(at(100.5 - 1.0 / 36.0), range), 100);
            assert_eq!(u16::store(at(32767.5), range), 32768);
        }
    }
}
