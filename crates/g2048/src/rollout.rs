//! Random rollouts: the CPU twin of `shaders/g2048/rollout.wgsl`, and the CPU rollout engine.
//!
//! A rollout starts from a *root*: a board just after a candidate move, before its spawn. It
//! spawns a tile, then plays uniformly random legal moves, each followed by a spawn, until no
//! move is legal (or a move would merge two 32768 tiles, which ends it flagged). Its random
//! words come from the stream the root names plus the rollout's index, so any engine that runs
//! it, on any thread or GPU lane, draws the same words and plays the same game.

use std::ops::Range;

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use super::board::{Board, Dir, Moved, Tables, tables};
use rollsim_core::Device;
use rollsim_core::rng::{Stream, rollout_counter};

/// The 24 orders of the four directions, lexicographic, packed two bits a direction (first
/// direction in the low bits). A random player draws one word, picks an order with it and plays
/// the first legal move in that order: exactly uniform over the legal moves, one word per move
/// however many moves are legal, and the moves are tried lazily.
pub const DIRECTION_ORDERS: [u8; 24] = direction_orders();

const fn direction_orders() -> [u8; 24] {
    let mut out = [0u8; 24];
    let mut n = 0;
    let mut a = 0;
    while a < 4 {
        let mut b = 0;
        while b < 4 {
            let mut c = 0;
            while c < 4 {
                let d = 6 - a - b - c;
                if a != b && a != c && b != c {
                    out[n] = (a | b << 2 | c << 4 | d << 6) as u8;
                    n += 1;
                }
                c += 1;
            }
            b += 1;
        }
        a += 1;
    }
    out
}

/// A uniformly random legal move from one word of `rng`, or `None` when the game is over.
#[inline(always)]
pub fn random_legal_move(t: &Tables, board: Board, rng: &mut Stream) -> Option<(Dir, Moved)> {
    let order = DIRECTION_ORDERS[rng.below(24) as usize];
    for k in 0..4 {
        let dir = Dir::from_index(usize::from(order >> (2 * k) & 3));
        let m = board.slide_with(t, dir);
        if m.board != board {
            return Some((dir, m));
        }
    }
    None
}

/// How one rollout went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RolloutResult {
    /// Points scored by the rollout's own moves (not the candidate move's).
    pub score: u32,
    /// Sum of the tiles on the final board.
    pub tile_sum: u32,
    /// Moves played after the root.
    pub moves: u32,
    /// The rollout ended because its chosen move would have merged two 32768 tiles.
    pub overflow: bool,
}

/// Plays one rollout from `root` (which must have an empty cell: every legal move leaves one).
#[inline]
pub fn rollout(t: &Tables, root: Board, rng: &mut Stream) -> RolloutResult {
    let mut board = root;
    board.spawn(rng);
    let mut score = 0u32;
    let mut moves = 0u32;
    let mut overflow = false;
    while let Some((_, m)) = random_legal_move(t, board, rng) {
        if m.overflow {
            overflow = true;
            break;
        }
        board = m.board;
        score += m.score;
        moves += 1;
        board.spawn(rng);
    }
    RolloutResult {
        score,
        tile_sum: board.tile_sum(),
        moves,
        overflow,
    }
}

/// One root as the kernels take it: the board's two halves and the stream it names.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct Root {
    /// The board's low and high 32 bits.
    pub board: [u32; 2],
    /// Philox counter words 2 and 3 of the rollouts' streams (word 1 is the rollout index).
    pub stream: [u32; 2],
}

impl Root {
    /// The root of candidate `dir` of move `move_number` in game `game`.
    pub fn new(board: Board, game: u32, move_number: u32, dir: Dir) -> Root {
        let [_, c2, c3] = rollout_counter(game, move_number, dir as u32, 0);
        Root {
            board: [board.raw as u32, (board.raw >> 32) as u32],
            stream: [c2, c3],
        }
    }

    pub fn board(&self) -> Board {
        Board::from_raw(u64::from(self.board[0]) | u64::from(self.board[1]) << 32)
    }

    /// The random stream of rollout `index` of this root.
    #[inline]
    pub fn stream(&self, seed: u64, index: u32) -> Stream {
        Stream::new(seed, [index, self.stream[0], self.stream[1]])
    }
}

/// Exact integer sums over a root's rollouts: everything both objectives need, with the sums of
/// squares for their variances.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RolloutSums {
    pub rollouts: u32,
    pub score: u64,
    pub score_sq: u128,
    pub tile_sum: u64,
    pub tile_sum_sq: u128,
    pub moves: u64,
    pub overflows: u32,
}

impl RolloutSums {
    #[inline]
    pub fn with(mut self, r: RolloutResult) -> Self {
        let (s, t) = (u64::from(r.score), u64::from(r.tile_sum));
        self.rollouts += 1;
        self.score += s;
        self.score_sq += u128::from(s * s);
        self.tile_sum += t;
        self.tile_sum_sq += u128::from(t * t);
        self.moves += u64::from(r.moves);
        self.overflows += u32::from(r.overflow);
        self
    }

    pub fn merge(self, o: Self) -> Self {
        RolloutSums {
            rollouts: self.rollouts + o.rollouts,
            score: self.score + o.score,
            score_sq: self.score_sq + o.score_sq,
            tile_sum: self.tile_sum + o.tile_sum,
            tile_sum_sq: self.tile_sum_sq + o.tile_sum_sq,
            moves: self.moves + o.moves,
            overflows: self.overflows + o.overflows,
        }
    }

    /// Mean and sample standard deviation of `sum` and `sum_sq` over the rollouts.
    pub fn mean_sd(&self, sum: u64, sum_sq: u128) -> (f64, f64) {
        rollsim_core::stats::mean_sd(self.rollouts.into(), sum.into(), sum_sq)
    }
}

/// Plays rollouts `range` of `root` in order on this thread.
pub fn rollouts_of(seed: u64, root: &Root, range: Range<u32>) -> RolloutSums {
    let t = tables();
    let board = root.board();
    range.fold(RolloutSums::default(), |acc, i| {
        acc.with(rollout(t, board, &mut root.stream(seed, i)))
    })
}

/// Something that runs rollouts: the CPU engine here, or a GPU kernel. Every engine returns the
/// same sums for the same roots, bit for bit.
pub trait RolloutEngine {
    /// Where its rollouts run.
    fn backend(&self) -> Device;
    /// The GPU adapter's name, for GPU engines.
    fn adapter(&self) -> Option<String> {
        None
    }
    /// Rollouts `range` (by index) of every root under `seed`.
    fn evaluate_range(
        &mut self,
        seed: u64,
        roots: &[Root],
        range: Range<u32>,
    ) -> anyhow::Result<Vec<RolloutSums>>;
    /// The first `n` rollouts of every root under `seed`.
    fn evaluate(&mut self, seed: u64, roots: &[Root], n: u32) -> anyhow::Result<Vec<RolloutSums>> {
        self.evaluate_range(seed, roots, 0..n)
    }
    /// Starts [`RolloutEngine::evaluate`]; [`RolloutEngine::finish`] returns its sums. An engine
    /// that [overlaps](RolloutEngine::overlaps) returns at once and keeps up to two calls in
    /// flight, so that its caller can prepare one while the other runs, finishing them in the
    /// order started; the others evaluate here.
    fn start(&mut self, seed: u64, roots: &[Root], n: u32) -> anyhow::Result<Pending> {
        Ok(Pending::Ready(self.evaluate(seed, roots, n)?))
    }
    /// The sums of a started call.
    fn finish(&mut self, pending: Pending) -> anyhow::Result<Vec<RolloutSums>> {
        match pending {
            Pending::Ready(sums) => Ok(sums),
            Pending::InFlight(_) => anyhow::bail!("this engine started nothing in flight"),
        }
    }
    /// Whether [`RolloutEngine::start`] returns before the work is done.
    fn overlaps(&self) -> bool {
        false
    }
}

/// A started evaluation: its sums, or the engine's ticket for them.
#[derive(Debug)]
pub enum Pending {
    Ready(Vec<RolloutSums>),
    InFlight(usize),
}

/// The CPU engine: rayon's current pool.
pub struct CpuEngine;

impl RolloutEngine for CpuEngine {
    fn backend(&self) -> Device {
        Device::Cpu
    }

    fn evaluate_range(
        &mut self,
        seed: u64,
        roots: &[Root],
        range: Range<u32>,
    ) -> anyhow::Result<Vec<RolloutSums>> {
        Ok(evaluate_cpu_range(seed, roots, range))
    }
}

/// Rollouts per task on the CPU: enough to amortise rayon's task overhead (about 1 us) against
/// rollouts of tens of microseconds, few enough that a single root still spreads over all cores.
const CPU_CHUNK: u32 = 16;

/// The CPU engine: `n` rollouts of every root, spread over the current rayon pool. The sums are
/// integers, so the result does not depend on how the work was split.
pub fn evaluate_cpu(seed: u64, roots: &[Root], n: u32) -> Vec<RolloutSums> {
    evaluate_cpu_range(seed, roots, 0..n)
}

/// [`evaluate_cpu`] of rollouts `range` of every root.
pub fn evaluate_cpu_range(seed: u64, roots: &[Root], range: Range<u32>) -> Vec<RolloutSums> {
    let n = range.len() as u32;
    let chunks = n.div_ceil(CPU_CHUNK);
    roots
        .par_iter()
        .map(|root| {
            (0..chunks)
                .into_par_iter()
                .map(|c| {
                    let from = range.start + c * CPU_CHUNK;
                    rollouts_of(seed, root, from..(from + CPU_CHUNK).min(range.end))
                })
                .reduce(RolloutSums::default, RolloutSums::merge)
        })
        .collect()
}

/// Roots like those of a Monte Carlo player's early and middle game: the legal moves of
/// positions reached by random play, `count` of them.
pub fn sample_roots(count: usize) -> Vec<Root> {
    let mut roots = Vec::with_capacity(count);
    let mut game_index = 0;
    while roots.len() < count {
        let mut g = crate::Game::new(7, game_index);
        let stop = 20 + 7 * (game_index % 20);
        while g.is_running() && g.moves < stop {
            g.play_random();
        }
        for (d, m) in g.board.legal_moves() {
            if roots.len() < count && !m.overflow {
                roots.push(Root::new(m.board, game_index, g.moves, d));
            }
        }
        game_index += 1;
    }
    debug_assert!(roots.iter().all(|r| r.board().count_empty() > 0));
    roots
}

#[cfg(feature = "gpu")]
pub mod gpu;

#[cfg(test)]
mod tests {
    use super::*;

    /// Roots of different candidates: each a legal move's result (a cell left for the spawn),
    /// each with its own stream, and the boards themselves distinct but for a few
    /// transpositions.
    #[test]
    fn sample_roots_are_distinct_positions_after_a_move() {
        let roots = sample_roots(200);
        assert_eq!(roots.len(), 200);
        assert!(roots.iter().all(|r| r.board().count_empty() > 0));
        let streams: std::collections::HashSet<[u32; 2]> = roots.iter().map(|r| r.stream).collect();
        assert_eq!(streams.len(), roots.len(), "two roots share a stream");
        let boards: std::collections::HashSet<u64> = roots.iter().map(|r| r.board().raw).collect();
        assert!(
            boards.len() * 10 >= roots.len() * 9,
            "{} distinct boards",
            boards.len()
        );
    }

    #[test]
    fn direction_orders_are_the_24_permutations() {
        let mut seen: Vec<[u8; 4]> = DIRECTION_ORDERS
            .iter()
            .map(|&o| std::array::from_fn(|k| o >> (2 * k) & 3))
            .collect();
        assert_eq!(seen[0], [0, 1, 2, 3]);
        assert_eq!(seen[23], [3, 2, 1, 0]);
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 24);
        for p in &seen {
            let mut q = *p;
            q.sort();
            assert_eq!(q, [0, 1, 2, 3]);
        }
    }

    #[test]
    fn random_legal_move_is_uniform_over_legal_moves() {
        // Legal here: right and down only.
        let b: Board = "2 0 0 0 / 4 0 0 0 / 0 0 0 0 / 0 0 0 0".parse().unwrap();
        let t = tables();
        let mut rng = Stream::new(5, [0, 0, 0]);
        let n = 100_000;
        let mut right = 0;
        for _ in 0..n {
            let (d, _) = random_legal_move(t, b, &mut rng).unwrap();
            assert!(matches!(d, Dir::Right | Dir::Down));
            right += u32::from(d == Dir::Right);
        }
        let p = f64::from(right) / f64::from(n);
        assert!(
            (p - 0.5).abs() < 5.0 * (0.25 / f64::from(n)).sqrt(),
            "p = {p}"
        );
        let locked: Board = "2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 4 2".parse().unwrap();
        assert_eq!(random_legal_move(t, locked, &mut rng), None);
    }

    #[test]
    fn rollouts_end_in_game_over_with_consistent_sums() {
        let root: Board = "2 2 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0".parse().unwrap();
        let t = tables();
        for i in 0..200 {
            let mut rng = Stream::rollout(9, 0, 0, 0, i);
            let r = rollout(t, root, &mut rng);
            assert!(!r.overflow);
            assert!(r.moves > 10);
            // Tiles only enter by spawns: the final sum is the root's plus 2 or 4 per spawn.
            let spawns = r.moves + 1;
            assert!(r.tile_sum >= 4 + 2 * spawns && r.tile_sum <= 4 + 4 * spawns);
            assert_eq!(r.score % 4, 0, "every merge scores at least 4");
        }
    }

    #[test]
    fn rollouts_from_a_32768_pair_report_overflow() {
        // Two 32768 tiles side by side with room to move: random play merges them soon.
        let root: Board = "32768 32768 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0"
            .parse()
            .unwrap();
        let sums = rollouts_of(3, &Root::new(root, 0, 0, Dir::Left), 0..100);
        assert!(sums.overflows > 0);
        assert_eq!(sums.rollouts, 100);
    }

    #[test]
    fn evaluation_does_not_depend_on_the_thread_count() {
        let boards = [
            "2 2 4 8 / 0 0 0 0 / 0 0 0 0 / 0 0 0 2",
            "0x1234123400000000",
        ];
        let roots: Vec<Root> = boards
            .iter()
            .enumerate()
            .map(|(g, b)| Root::new(b.parse().unwrap(), g as u32, 17, Dir::Down))
            .collect();
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| evaluate_cpu(11, &roots, 100))
        };
        let one = run(1);
        assert_eq!(one, run(3));
        let sequential: Vec<RolloutSums> =
            roots.iter().map(|r| rollouts_of(11, r, 0..100)).collect();
        assert_eq!(one, sequential);
    }

    #[test]
    fn mean_and_sd_from_sums() {
        let mut s = RolloutSums::default();
        for score in [2u32, 4, 4, 4, 5, 5, 7, 9] {
            s = s.with(RolloutResult {
                score,
                tile_sum: 0,
                moves: 0,
                overflow: false,
            });
        }
        let (mean, sd) = s.mean_sd(s.score, s.score_sq);
        assert_eq!(mean, 5.0);
        assert!((sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }
}
