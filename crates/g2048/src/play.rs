//! Whole games: the game loop, the random and Monte Carlo players, and the batch report.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
// The transposition tables' keys are boards, already well-mixed words: Fx hashing, not SipHash,
// which would cost more than a leaf evaluation.
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use super::board::{Board, Dir, Moved, tables};
use super::ntuple::{BatchValues, Element, Network};
use super::reach::Reached;
use super::rollout::{RolloutEngine, RolloutSums, Root, random_legal_move};
use rollsim_core::rng::{MAX_MOVE_NUMBER, Stream};
use rollsim_core::stats::Histogram;

/// How a game stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GameState {
    Running,
    /// No legal move.
    Over,
    /// The chosen move would have merged two 32768 tiles; the game stops before it.
    Overflow,
}

/// One real game: its board, its score and its own random stream (spawns, random choices).
#[derive(Clone, Debug)]
pub struct Game {
    pub index: u32,
    pub board: Board,
    pub score: u64,
    pub moves: u32,
    pub state: GameState,
    rng: Stream,
}

impl Game {
    /// Game `index` under `seed`: two random tiles on an empty board.
    pub fn new(seed: u64, index: u32) -> Game {
        let mut rng = Stream::game(seed, index);
        let mut board = Board::EMPTY;
        board.spawn(&mut rng);
        board.spawn(&mut rng);
        Game::from_board(board, index, rng)
    }

    /// Game `index` under `seed` from a given position (no tiles added).
    pub fn from_position(seed: u64, index: u32, board: Board) -> Game {
        Game::from_board(board, index, Stream::game(seed, index))
    }

    fn from_board(board: Board, index: u32, rng: Stream) -> Game {
        let state = if board.is_game_over() {
            GameState::Over
        } else {
            GameState::Running
        };
        Game {
            index,
            board,
            score: 0,
            moves: 0,
            state,
            rng,
        }
    }

    pub fn is_running(&self) -> bool {
        self.state == GameState::Running
    }

    /// Plays a legal move (as computed from the current board), then spawns. Whether the new
    /// board has a legal move is left to the player's next turn, which has to look anyway.
    #[inline]
    pub fn play(&mut self, m: Moved) {
        debug_assert!(self.is_running() && m.board != self.board);
        if m.overflow {
            self.state = GameState::Overflow;
            return;
        }
        self.board = m.board;
        self.score += u64::from(m.score);
        self.moves += 1;
        self.board.spawn(&mut self.rng);
        if self.moves == MAX_MOVE_NUMBER {
            self.state = GameState::Over;
        }
    }

    /// One move of the random player: a uniformly random legal move.
    pub fn play_random(&mut self) {
        match random_legal_move(tables(), self.board, &mut self.rng) {
            Some((_, m)) => self.play(m),
            None => self.state = GameState::Over,
        }
    }

    /// Plays random moves to the end.
    pub fn play_random_to_end(&mut self) {
        while self.is_running() {
            self.play_random();
        }
    }
}

/// What a Monte Carlo player maximises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// The move's own points plus the mean points of its rollouts.
    Score,
    /// The mean sum of the tiles on the rollouts' final boards.
    Tilesum,
}

impl Objective {
    /// The candidate's total over its `sums.rollouts` rollouts, exact: comparing totals over the
    /// same number of rollouts compares means, with no float rounding to break ties differently
    /// on different engines.
    pub fn total(self, move_score: u32, sums: &RolloutSums) -> u128 {
        match self {
            Objective::Score => {
                u128::from(move_score) * u128::from(sums.rollouts) + u128::from(sums.score)
            }
            Objective::Tilesum => u128::from(sums.tile_sum),
        }
    }
}

/// One evaluated candidate move.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub dir: Dir,
    pub moved: Moved,
    pub sums: RolloutSums,
}

/// The candidate with the best total; ties go to the first in [`Dir::ALL`] order. A move that
/// would merge two 32768 tiles ends the game, so it comes last (as for the network players):
/// chosen only when no other move is legal.
pub fn best_candidate(objective: Objective, candidates: &[Candidate]) -> Option<&Candidate> {
    let key = |c: &Candidate| (!c.moved.overflow, objective.total(c.moved.score, &c.sums));
    candidates
        .iter()
        .fold(None, |best: Option<&Candidate>, c| match best {
            Some(b) if key(b) >= key(c) => Some(b),
            _ => Some(c),
        })
}

/// Evaluates every legal move of every running game with `n` rollouts each, in one call to the
/// engine, and returns each game's candidates (empty for games not running). A move that would
/// merge two 32768 tiles is a candidate with no rollouts.
pub fn evaluate_games(
    engine: &mut dyn RolloutEngine,
    seed: u64,
    games: &[&Game],
    n: u32,
) -> anyhow::Result<Vec<Vec<Candidate>>> {
    let mut roots = Vec::new();
    let mut moves: Vec<Vec<(Dir, Moved)>> = Vec::with_capacity(games.len());
    for g in games {
        let legal: Vec<(Dir, Moved)> = if g.is_running() {
            g.board.legal_moves().collect()
        } else {
            Vec::new()
        };
        // A move that would merge two 32768 tiles has no board to roll out from.
        roots.extend(
            legal
                .iter()
                .filter(|(_, m)| !m.overflow)
                .map(|&(d, m)| Root::new(m.board, g.index, g.moves, d)),
        );
        moves.push(legal);
    }
    let sums = engine.evaluate(seed, &roots, n)?;
    let mut sums = sums.into_iter();
    Ok(moves
        .into_iter()
        .map(|legal| {
            legal
                .into_iter()
                .map(|(dir, moved)| Candidate {
                    dir,
                    moved,
                    sums: match moved.overflow {
                        true => RolloutSums::default(),
                        false => sums.next().expect("one sum per root"),
                    },
                })
                .collect()
        })
        .collect())
}

/// Which player plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayerKind {
    /// A uniformly random legal move.
    Random,
    /// Monte Carlo: the move with the best mean over random rollouts.
    Mc,
    /// An n-tuple network, greedy: the move with the best reward + V(afterstate).
    Ntuple,
    /// Expectimax over moves and spawns to a depth in moves, the network at the leaves.
    Expectimax,
}

/// Settings of a batch of games.
#[derive(Clone, Debug)]
pub struct PlayConfig {
    pub player: PlayerKind,
    /// The games played: `games` of them from index `first` (each game is the same whichever
    /// batch plays it).
    pub first: u32,
    pub games: u32,
    pub seed: u64,
    pub rollouts: u32,
    pub objective: Objective,
    /// The value network of the ntuple and expectimax players.
    pub network: Option<Arc<Network>>,
    /// Expectimax search depth in moves (1 = greedy).
    pub depth: u32,
}

impl PlayConfig {
    /// The indices of the games played.
    pub fn indices(&self) -> std::ops::Range<u32> {
        self.first..self.first + self.games
    }
}

/// The greedy one-ply choice of a network: the legal move with the largest
/// `reward + V(afterstate)`, with that value; ties go to the first in [`Dir::ALL`] order. A move
/// that would merge two 32768 tiles counts as `-inf` (it ends the game), so it is chosen only
/// when no other move is legal. `None` when no move is legal.
#[inline]
pub fn greedy_move(net: &Network, board: Board) -> Option<(Dir, Moved, f32)> {
    let a = Afterstates::of(board);
    let mut values = [0f32; 4];
    net.values4(&a.boards[..a.len], &mut values);
    a.pick(&values[..a.len])
}

/// A board's legal moves as a greedy network player sees them: the afterstates to evaluate, in
/// [`Dir::ALL`] order, and the first move that would merge two 32768 tiles, if any.
pub struct Afterstates {
    pub moves: [(Dir, Moved); 4],
    pub boards: [Board; 4],
    pub len: usize,
    pub overflow: Option<(Dir, Moved)>,
}

impl Afterstates {
    #[inline]
    pub fn of(board: Board) -> Afterstates {
        let t = tables();
        let none = Moved {
            board,
            score: 0,
            overflow: false,
        };
        let mut a = Afterstates {
            moves: [(Dir::Up, none); 4],
            boards: [Board::EMPTY; 4],
            len: 0,
            overflow: None,
        };
        for d in Dir::ALL {
            let m = board.slide_with(t, d);
            if m.board == board {
                continue;
            }
            if m.overflow {
                a.overflow = a.overflow.or(Some((d, m)));
                continue;
            }
            a.moves[a.len] = (d, m);
            a.boards[a.len] = m.board;
            a.len += 1;
        }
        a
    }

    /// The greedy choice given the afterstates' `values` (see [`greedy_move`]).
    #[inline]
    pub fn pick(&self, values: &[f32]) -> Option<(Dir, Moved, f32)> {
        match self.best(values) {
            Some((k, v)) => Some((self.moves[k].0, self.moves[k].1, v)),
            None => self.overflow.map(|(d, m)| (d, m, f32::NEG_INFINITY)),
        }
    }

    /// Which afterstate the greedy choice takes, and its `reward + V`: the first of the largest;
    /// None if no move short of a 32768 merge is legal.
    #[inline]
    pub fn best(&self, values: &[f32]) -> Option<(usize, f32)> {
        let mut best: Option<(usize, f32)> = None;
        for (k, (&(_, m), &value)) in self.moves[..self.len].iter().zip(values).enumerate() {
            let v = m.score as f32 + value;
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((k, v));
            }
        }
        best
    }
}

/// The greedy network player with every running game's afterstates valued in one call to
/// `values` per step (the GPU lookup kernel): the same moves as [`greedy_move`] whenever
/// `values` returns [`Network::value`]'s values.
pub fn play_greedy_lockstep(
    config: &PlayConfig,
    values: &mut dyn BatchValues,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<Played> {
    let mut choose = |live: &[&Game]| {
        let after: Vec<Afterstates> = live.iter().map(|g| Afterstates::of(g.board)).collect();
        let boards: Vec<Board> = after
            .iter()
            .flat_map(|a| a.boards[..a.len].to_vec())
            .collect();
        let v = values.values(&boards)?;
        let mut at = 0;
        Ok(after
            .iter()
            .map(|a| {
                let choice = a.pick(&v[at..at + a.len]).map(|(_, m, _)| m);
                at += a.len;
                choice
            })
            .collect())
    };
    play_lockstep(config, &mut choose, progress)
}

/// Plays the batch's games in lockstep with `choose` (see [`lockstep`]).
fn play_lockstep(
    config: &PlayConfig,
    choose: &mut ChooseMoves,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<Played> {
    let start = Instant::now();
    let mut games: Vec<Game> = config
        .indices()
        .map(|i| Game::new(config.seed, i))
        .collect();
    lockstep(&mut games, choose, &mut |ended| {
        progress(ended.len() as u64);
        Ok(())
    })?;
    Ok(Played {
        games,
        rollouts: 0,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// A batched player's step: the running games in, each one's move out (`None`: no legal move).
pub type ChooseMoves<'a> = dyn FnMut(&[&Game]) -> anyhow::Result<Vec<Option<Moved>>> + 'a;

/// Plays `games` in lockstep until every one is over: at each step `choose` gets the running
/// games and returns each one's move (`None`: no legal move, the game is over), the moves are
/// played, and `ended` hears of the games that ended. One implementation for every player that
/// batches its evaluations across games.
pub fn lockstep(
    games: &mut [Game],
    choose: &mut ChooseMoves,
    ended: &mut dyn FnMut(&[&Game]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut running: Vec<usize> = (0..games.len())
        .filter(|&i| games[i].is_running())
        .collect();
    while !running.is_empty() {
        let live: Vec<&Game> = running.iter().map(|&i| &games[i]).collect();
        let moves = choose(&live)?;
        for (&i, m) in running.iter().zip(moves) {
            match m {
                Some(m) => games[i].play(m),
                None => games[i].state = GameState::Over,
            }
        }
        let done: Vec<usize> = running
            .iter()
            .copied()
            .filter(|&i| !games[i].is_running())
            .collect();
        running.retain(|&i| games[i].is_running());
        if !done.is_empty() {
            ended(&done.iter().map(|&i| &games[i]).collect::<Vec<_>>())?;
        }
    }
    Ok(())
}

/// Expectimax search with an n-tuple network at the leaves.
///
/// A max node (a board to move on) takes the best `reward + chance(afterstate)` over its legal
/// moves, or 0 when none is legal (a lost game is worth nothing more, as in training). A chance
/// node (an afterstate) averages the max nodes of every spawn: each empty cell with probability
/// `1 / empty`, a 2 there with 0.9 and a 4 with 0.1. Depth counts moves: at depth 1 a chance
/// node is the network's value of the afterstate, so depth 1 is exactly the greedy player.
/// Chance-node values are kept in a transposition table keyed by (afterstate, depth), cleared
/// at every decision. All arithmetic is f32 in a fixed order: results depend only on the board.
pub struct Expectimax<L: Leaves> {
    leaves: L,
    table: FxHashMap<(u64, u32), f32>,
    /// Chance nodes evaluated (not found in the table) since the searcher was made.
    pub evaluated: u64,
}

/// Where expectimax gets the values of its leaves: the network itself, or (for batched
/// evaluation, as on a GPU) a recorder of the leaves a search needs and then a table of their
/// values. The search has no pruning, so which leaves it reads does not depend on their values,
/// and a recorded search followed by a looked-up one plays exactly as a direct one.
pub trait Leaves {
    /// The value of an afterstate.
    fn value(&mut self, after: Board) -> f32;
    /// The greedy choice of a board whose afterstates are leaves (see [`greedy_move`]).
    fn greedy(&mut self, board: Board) -> Option<(Dir, Moved, f32)>;
}

impl Leaves for &Network {
    fn value(&mut self, after: Board) -> f32 {
        Network::value(self, after)
    }

    fn greedy(&mut self, board: Board) -> Option<(Dir, Moved, f32)> {
        greedy_move(self, board)
    }
}

/// Records the leaves a search reads (their values read as 0).
pub struct RecordLeaves<'s>(pub &'s mut FxHashSet<u64>);

impl Leaves for RecordLeaves<'_> {
    fn value(&mut self, after: Board) -> f32 {
        self.0.insert(after.raw);
        0.0
    }

    fn greedy(&mut self, board: Board) -> Option<(Dir, Moved, f32)> {
        let a = Afterstates::of(board);
        self.0.extend(a.boards[..a.len].iter().map(|b| b.raw));
        a.pick(&[0.0; 4][..a.len])
    }
}

/// Reads leaf values from a table filled by a batched evaluation of recorded leaves.
pub struct LookupLeaves<'m>(pub &'m FxHashMap<u64, f32>);

impl Leaves for LookupLeaves<'_> {
    fn value(&mut self, after: Board) -> f32 {
        self.0[&after.raw]
    }

    fn greedy(&mut self, board: Board) -> Option<(Dir, Moved, f32)> {
        let a = Afterstates::of(board);
        let values: Vec<f32> = a.boards[..a.len].iter().map(|b| self.0[&b.raw]).collect();
        a.pick(&values)
    }
}

impl<'a> Expectimax<&'a Network> {
    pub fn new(net: &'a Network) -> Self {
        Expectimax::with(net)
    }
}

impl<L: Leaves> Expectimax<L> {
    /// A searcher reading its leaves from `leaves`.
    pub fn with(leaves: L) -> Self {
        Expectimax {
            leaves,
            table: FxHashMap::default(),
            evaluated: 0,
        }
    }

    /// The best move of `board` searched to `depth` moves (at least 1), with its value.
    pub fn best_move(&mut self, board: Board, depth: u32) -> Option<(Dir, Moved, f32)> {
        self.table.clear();
        let t = tables();
        let mut best: Option<(Dir, Moved, f32)> = None;
        for d in Dir::ALL {
            let m = board.slide_with(t, d);
            if m.board == board {
                continue;
            }
            let v = if m.overflow {
                f32::NEG_INFINITY
            } else {
                m.score as f32 + self.chance(m.board, depth.max(1))
            };
            if best.is_none_or(|(_, _, b)| v > b) {
                best = Some((d, m, v));
            }
        }
        best
    }

    fn chance(&mut self, after: Board, depth: u32) -> f32 {
        if depth <= 1 {
            return self.leaves.value(after);
        }
        if let Some(&v) = self.table.get(&(after.raw, depth)) {
            return v;
        }
        self.evaluated += 1;
        let mut sum = 0f32;
        let mut empty = 0u32;
        for i in 0..16 {
            if after.get(i) != 0 {
                continue;
            }
            empty += 1;
            let two = Board::from_raw(after.raw | 1 << (4 * i));
            let four = Board::from_raw(after.raw | 2 << (4 * i));
            sum += 0.9 * self.max_node(two, depth - 1) + 0.1 * self.max_node(four, depth - 1);
        }
        let v = if empty == 0 { 0.0 } else { sum / empty as f32 };
        self.table.insert((after.raw, depth), v);
        v
    }

    fn max_node(&mut self, board: Board, depth: u32) -> f32 {
        if depth <= 1 {
            // The greedy choice, its afterstates looked up together (prefetched); a move
            // that would overflow is no move here.
            return match self.leaves.greedy(board) {
                Some((_, m, v)) if !m.overflow => v,
                _ => 0.0,
            };
        }
        let t = tables();
        let mut best = 0f32;
        let mut any = false;
        for d in Dir::ALL {
            let m = board.slide_with(t, d);
            if m.board == board || m.overflow {
                continue;
            }
            let v = m.score as f32 + self.chance(m.board, depth);
            if !any || v > best {
                best = v;
                any = true;
            }
        }
        best
    }
}

/// The expectimax player with every running game's leaves valued in one call to `values` per
/// step (the GPU lookup kernel): each game's search runs twice, first recording the leaves it
/// reads, then reading their values; the same moves as [`Expectimax`] on the network whenever
/// `values` returns [`Network::value`]'s values.
pub fn play_expectimax_lockstep(
    config: &PlayConfig,
    values: &mut dyn BatchValues,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<Played> {
    let depth = config.depth.max(1);
    let mut choose = |live: &[&Game]| {
        let leaves: Vec<u64> = {
            let mut set = FxHashSet::default();
            for g in live {
                Expectimax::with(RecordLeaves(&mut set)).best_move(g.board, depth);
            }
            set.into_iter().collect()
        };
        let boards: Vec<Board> = leaves.iter().map(|&r| Board::from_raw(r)).collect();
        let v = values.values(&boards)?;
        let table: FxHashMap<u64, f32> = leaves.into_iter().zip(v).collect();
        Ok(live
            .par_iter()
            .map(|g| {
                Expectimax::with(LookupLeaves(&table))
                    .best_move(g.board, depth)
                    .map(|(_, m, _)| m)
            })
            .collect())
    };
    play_lockstep(config, &mut choose, progress)
}

/// Plays `g` to the end with the network: greedy at depth 1, expectimax deeper.
pub fn play_network_game(g: &mut Game, net: &Network, depth: u32) {
    let mut search = (depth > 1).then(|| Expectimax::new(net));
    while g.is_running() {
        let choice = match &mut search {
            Some(s) => s.best_move(g.board, depth),
            None => greedy_move(net, g.board),
        };
        match choice {
            Some((_, m, _)) => g.play(m),
            None => g.state = GameState::Over,
        }
    }
}

/// The finished games of a batch, and what it cost.
pub struct Played {
    pub games: Vec<Game>,
    pub rollouts: u64,
    pub seconds: f64,
}

/// Plays a batch. Random, ntuple and expectimax games run one per rayon task (each game's
/// moves depend only on its own board and stream, so results do not depend on the thread
/// count); Monte Carlo games advance in lockstep, every running game's candidates evaluated in
/// one engine call per step, so a GPU engine sees one large batch per step. `progress` is called
/// with the number of finished games.
pub fn play_batch(
    config: &PlayConfig,
    engine: &mut dyn RolloutEngine,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<Played> {
    let start = Instant::now();
    let mut games: Vec<Game> = config
        .indices()
        .map(|i| Game::new(config.seed, i))
        .collect();
    let mut rollouts = 0u64;
    match config.player {
        PlayerKind::Random => {
            games.par_iter_mut().for_each(|g| {
                g.play_random_to_end();
                progress(1);
            });
        }
        PlayerKind::Ntuple | PlayerKind::Expectimax => {
            let net = config
                .network
                .as_deref()
                .ok_or_else(|| anyhow::anyhow!("the {:?} player needs a network", config.player))?;
            let depth = if config.player == PlayerKind::Ntuple {
                1
            } else {
                config.depth.max(1)
            };
            games.par_iter_mut().for_each(|g| {
                play_network_game(g, net, depth);
                progress(1);
            });
        }
        PlayerKind::Mc => {
            let indices: Vec<u32> = config.indices().collect();
            (games, rollouts) = play_mc_games(
                engine,
                config.seed,
                &indices,
                config.rollouts,
                config.objective,
                &mut |finished| {
                    progress(finished.len() as u64);
                    Ok(())
                },
            )?;
        }
    }
    Ok(Played {
        games,
        rollouts,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The Monte Carlo player on the games numbered `indices` under `seed` (each exactly the game
/// of that index in a full batch: its moves depend only on the seed, its index and `rollouts`,
/// not on which other games share the batch), advanced in lockstep: every running game's
/// candidates are evaluated in one engine call per step. After each step, `finished` gets the
/// games that ended in it (if any). Returns the games, in `indices` order, and the rollouts
/// played.
pub fn play_mc_games(
    engine: &mut dyn RolloutEngine,
    seed: u64,
    indices: &[u32],
    rollouts: u32,
    objective: Objective,
    finished: &mut dyn FnMut(&[&Game]) -> anyhow::Result<()>,
) -> anyhow::Result<(Vec<Game>, u64)> {
    let mut games: Vec<Game> = indices.iter().map(|&i| Game::new(seed, i)).collect();
    let mut played = 0u64;
    let mut choose = |live: &[&Game]| {
        let candidates = evaluate_games(engine, seed, live, rollouts)?;
        Ok(candidates
            .iter()
            .map(|cands| {
                played += cands.len() as u64 * u64::from(rollouts);
                best_candidate(objective, cands).map(|c| c.moved)
            })
            .collect())
    };
    lockstep(&mut games, &mut choose, finished)?;
    Ok((games, played))
}

/// Score statistics of a batch.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ScoreStats {
    pub mean: f64,
    pub median: f64,
    pub max: u64,
    pub min: u64,
    /// Sample standard deviation.
    pub sd: f64,
}

/// The network a batch was played with, as reported.
#[derive(Clone, Debug, Serialize)]
pub struct NetworkInfo {
    pub tuples: Vec<Vec<u8>>,
    pub element: Element,
    pub training_games: u64,
}

/// The report of `rollsim 2048 play`, also its `--json` object.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub player: PlayerKind,
    pub games: u32,
    pub seed: u64,
    pub backend: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollouts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objective: Option<Objective>,
    /// Expectimax depth in moves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkInfo>,
    pub threads: usize,
    pub score: ScoreStats,
    /// Fraction of games whose largest tile reached each value, 128 to 32768.
    pub reach: BTreeMap<u32, f64>,
    /// Games that stopped because a move would have merged two 32768 tiles.
    pub overflow_games: u32,
    pub moves_per_game: f64,
    pub seconds: f64,
    pub games_per_s: f64,
    pub moves_per_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollouts_per_s: Option<f64>,
}

/// What a report needs of the games of a batch, gathered block by block, so that a batch of a
/// billion games never holds a billion games: per score its games (distinct scores are far
/// fewer than games), the tiles reached, the moves.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    scores: Histogram,
    reach: Reached,
    overflow: u64,
    moves: u64,
    pub rollouts: u64,
}

impl Tally {
    pub fn add(&mut self, played: &Played) {
        for g in &played.games {
            self.scores.add(g.score);
            self.reach.add(g.board.max_exponent());
            self.overflow += u64::from(g.state == GameState::Overflow);
            self.moves += u64::from(g.moves);
        }
        self.rollouts += played.rollouts;
    }

    /// Mean, median, extremes and sample standard deviation of the scores.
    fn score_stats(&self) -> ScoreStats {
        let s = self.scores.summary();
        ScoreStats {
            mean: if s.n == 0 { 0.0 } else { s.mean },
            median: s.median,
            max: s.max,
            min: s.min,
            sd: if s.n == 0 { 0.0 } else { s.sd },
        }
    }
}

impl Report {
    pub fn new(
        config: &PlayConfig,
        tally: &Tally,
        seconds: f64,
        backend: String,
        adapter: Option<String>,
    ) -> Report {
        let games = tally.reach.games();
        let n = games.max(1) as f64;
        let reach = tally.reach.rates();
        let secs = seconds.max(1e-9);
        let mc = config.player == PlayerKind::Mc;
        Report {
            player: config.player,
            games: config.games,
            seed: config.seed,
            backend,
            adapter,
            rollouts: mc.then_some(config.rollouts),
            objective: mc.then_some(config.objective),
            depth: (config.player == PlayerKind::Expectimax).then_some(config.depth.max(1)),
            network: matches!(config.player, PlayerKind::Ntuple | PlayerKind::Expectimax)
                .then_some(config.network.as_deref())
                .flatten()
                .map(|n| NetworkInfo {
                    tuples: n.tuples().to_vec(),
                    element: n.element(),
                    training_games: n.games(),
                }),
            threads: rayon::current_num_threads(),
            score: tally.score_stats(),
            reach,
            overflow_games: tally.overflow as u32,
            moves_per_game: tally.moves as f64 / n,
            seconds,
            games_per_s: games as f64 / secs,
            moves_per_s: tally.moves as f64 / secs,
            rollouts_per_s: mc.then_some(tally.rollouts as f64 / secs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::CpuEngine;

    fn config(player: PlayerKind, games: u32, seed: u64) -> PlayConfig {
        PlayConfig {
            first: 0,
            player,
            games,
            seed,
            rollouts: 8,
            objective: Objective::Score,
            network: None,
            depth: 1,
        }
    }

    #[test]
    fn games_start_with_two_tiles_and_reproduce() {
        let g = Game::new(1, 0);
        assert_eq!(g.board.count_empty(), 14);
        assert_eq!(Game::new(1, 0).board, g.board);
        let boards: Vec<Board> = (0..50).map(|i| Game::new(1, i).board).collect();
        assert!(boards.iter().any(|&b| b != boards[0]));
    }

    #[test]
    fn random_games_reproduce_across_thread_counts() {
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    play_batch(&config(PlayerKind::Random, 64, 5), &mut CpuEngine, &|_| {})
                        .unwrap()
                        .games
                        .iter()
                        .map(|g| (g.board, g.score, g.moves))
                        .collect::<Vec<_>>()
                })
        };
        let a = run(1);
        assert_eq!(a, run(4));
        assert!(a.iter().all(|&(b, _, m)| b.is_game_over() && m > 0));
    }

    #[test]
    fn score_is_the_sum_of_merges() {
        // Replay the same game move by move and add up the move scores.
        let mut g = Game::new(3, 7);
        let mut replay = g.clone();
        let mut total = 0;
        while g.is_running() {
            g.play_random();
            if let Some((_, m)) = random_legal_move(tables(), replay.board, &mut replay.rng) {
                total += u64::from(m.score);
                replay.play(m);
            }
        }
        assert_eq!(g.score, total);
        assert_eq!(g.board, replay.board);
    }

    #[test]
    fn mc_beats_random_and_reproduces_across_thread_counts() {
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    play_batch(&config(PlayerKind::Mc, 3, 2), &mut CpuEngine, &|_| {}).unwrap()
                })
        };
        let a = run(1);
        let b = run(3);
        let key = |p: &Played| {
            p.games
                .iter()
                .map(|g| (g.board, g.score))
                .collect::<Vec<_>>()
        };
        assert_eq!(key(&a), key(&b));
        let random =
            play_batch(&config(PlayerKind::Random, 200, 2), &mut CpuEngine, &|_| {}).unwrap();
        let mean =
            |p: &Played| p.games.iter().map(|g| g.score as f64).sum::<f64>() / p.games.len() as f64;
        // Random play averages about 1,100 points; 8 rollouts a move already reach several
        // thousand.
        assert!(
            mean(&a) > 2.0 * mean(&random),
            "mc {} random {}",
            mean(&a),
            mean(&random)
        );
    }

    #[test]
    fn best_candidate_breaks_ties_by_direction_order() {
        let sums = RolloutSums {
            rollouts: 4,
            score: 40,
            tile_sum: 100,
            ..Default::default()
        };
        let moved = Moved {
            board: Board::EMPTY,
            score: 0,
            overflow: false,
        };
        let c = |dir, score| Candidate {
            dir,
            moved: Moved { score, ..moved },
            sums,
        };
        let cands = [c(Dir::Right, 4), c(Dir::Down, 4), c(Dir::Left, 0)];
        assert_eq!(
            best_candidate(Objective::Score, &cands).unwrap().dir,
            Dir::Right
        );
        assert_eq!(
            best_candidate(Objective::Tilesum, &cands).unwrap().dir,
            Dir::Right
        );
        let cands = [c(Dir::Up, 0), c(Dir::Left, 1)];
        assert_eq!(
            best_candidate(Objective::Score, &cands).unwrap().dir,
            Dir::Left
        );
        assert!(best_candidate(Objective::Score, &[]).is_none());
    }

    #[test]
    fn a_move_that_would_merge_two_32768s_is_never_rolled_out_nor_preferred() {
        let board: Board = "32768 32768 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 4"
            .parse()
            .unwrap();
        let game = Game::from_position(3, 0, board);
        let c = evaluate_games(&mut CpuEngine, 3, &[&game], 8)
            .unwrap()
            .pop()
            .unwrap();
        for x in &c {
            assert_eq!(x.moved.overflow, x.sums.rollouts == 0, "{:?}", x.dir);
        }
        for objective in [Objective::Score, Objective::Tilesum] {
            let best = best_candidate(objective, &c).unwrap();
            assert!(!best.moved.overflow, "{objective:?}: {:?}", best.dir);
        }
    }

    #[test]
    fn report_statistics() {
        let mut games: Vec<Game> = (0..4).map(|i| Game::new(0, i)).collect();
        for (g, s) in games.iter_mut().zip([100, 300, 200, 400]) {
            g.score = s;
            g.moves = 10;
        }
        games[0].board = "2048 0 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0".parse().unwrap();
        // Tallied in two blocks, as a long batch is.
        let mut tally = Tally::default();
        for part in [&games[..1], &games[1..]] {
            tally.add(&Played {
                games: part.to_vec(),
                rollouts: 0,
                seconds: 1.0,
            });
        }
        let r = Report::new(
            &config(PlayerKind::Random, 4, 0),
            &tally,
            2.0,
            "cpu".into(),
            None,
        );
        assert_eq!(r.score.mean, 250.0);
        assert_eq!(r.score.median, 250.0);
        assert_eq!(r.score.max, 400);
        assert!((r.score.sd - (50000.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert_eq!(r.reach[&2048], 0.25);
        assert_eq!(r.reach[&4096], 0.0);
        assert_eq!(r.moves_per_s, 20.0);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["reach"]["2048"], 0.25);
        assert_eq!(json["player"], "random");
        assert!(json.get("rollouts_per_s").is_none());
    }

    /// The batched players (record the leaves, value them in one call, search again) play the
    /// very games of the direct ones when the batch values are the network's, with one call
    /// per step for all games in flight.
    #[test]
    fn batched_leaf_evaluation_plays_the_same_games() {
        let net = crate::train::tests::trained_small();
        let key = |p: Played| {
            p.games
                .iter()
                .map(|g| (g.board, g.score, g.moves))
                .collect::<Vec<_>>()
        };
        /// CPU lookups that count the batches asked for.
        struct Counted<'a>(crate::ntuple::CpuValues<'a>, u32);
        impl BatchValues for Counted<'_> {
            fn values(&mut self, boards: &[Board]) -> anyhow::Result<Vec<f32>> {
                self.1 += 1;
                self.0.values(boards)
            }
        }
        let mut values = Counted(crate::ntuple::CpuValues(&net), 0);
        // Every step plays a move in each running game; the last finds the last game over.
        let steps = |games: &[(Board, u64, u32)]| games.iter().map(|g| g.2).max().unwrap() + 1;
        let greedy = PlayConfig {
            first: 0,
            network: Some(net.clone()),
            depth: 1,
            ..config(PlayerKind::Ntuple, 6, 5)
        };
        let batched = key(play_greedy_lockstep(&greedy, &mut values, &|_| {}).unwrap());
        assert_eq!(batched, network_games(PlayerKind::Ntuple, 1, 6, 5, 1));
        assert_eq!(std::mem::take(&mut values.1), steps(&batched));
        let deep = PlayConfig {
            first: 0,
            network: Some(net.clone()),
            depth: 2,
            ..config(PlayerKind::Expectimax, 4, 5)
        };
        let batched = key(play_expectimax_lockstep(&deep, &mut values, &|_| {}).unwrap());
        assert_eq!(batched, network_games(PlayerKind::Expectimax, 2, 4, 5, 1));
        assert_eq!(values.1, steps(&batched));
    }

    fn network_games(
        player: PlayerKind,
        depth: u32,
        games: u32,
        seed: u64,
        threads: usize,
    ) -> Vec<(Board, u64, u32)> {
        let config = PlayConfig {
            first: 0,
            player,
            games,
            seed,
            network: Some(crate::train::tests::trained_small()),
            depth,
            ..config(player, games, seed)
        };
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| play_batch(&config, &mut CpuEngine, &|_| {}).unwrap())
            .games
            .iter()
            .map(|g| (g.board, g.score, g.moves))
            .collect()
    }

    fn mean(games: &[(Board, u64, u32)]) -> f64 {
        games.iter().map(|g| g.1 as f64).sum::<f64>() / games.len() as f64
    }

    #[test]
    fn network_players_play_full_games_independent_of_threads() {
        let greedy = network_games(PlayerKind::Ntuple, 1, 24, 8, 1);
        assert_eq!(greedy, network_games(PlayerKind::Ntuple, 1, 24, 8, 3));
        assert!(greedy.iter().all(|&(b, _, m)| b.is_game_over() && m > 0));
        // Depth 1 is exactly the greedy player.
        assert_eq!(greedy, network_games(PlayerKind::Expectimax, 1, 24, 8, 2));
        let deep = network_games(PlayerKind::Expectimax, 2, 6, 8, 1);
        assert_eq!(deep, network_games(PlayerKind::Expectimax, 2, 6, 8, 2));
        assert!(deep.iter().all(|&(b, _, _)| b.is_game_over()));
    }

    #[test]
    fn expectimax_depth_2_beats_greedy_on_the_same_games() {
        // The same 16 games (same spawns streams) at depth 1 and 2: a deterministic comparison.
        let greedy = network_games(PlayerKind::Ntuple, 1, 16, 21, 2);
        let deep = network_games(PlayerKind::Expectimax, 2, 16, 21, 2);
        assert!(
            mean(&deep) >= mean(&greedy),
            "depth 2 {} greedy {}",
            mean(&deep),
            mean(&greedy)
        );
    }

    #[test]
    fn expectimax_chance_nodes_average_the_spawns() {
        // A network valuing every board at 0: depth 2 values a move by its points plus the
        // expected points of the best reply, computed here by hand.
        let net = Network::new(vec![vec![0]]).unwrap();
        let b: Board = "2 2 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0".parse().unwrap();
        let mut search = Expectimax::new(&net);
        let (dir, m, v) = search.best_move(b, 2).unwrap();
        assert_eq!((dir, m.score), (Dir::Right, 4));
        // After "right" the board is a 4 at cell 3; the spawn lands on one of 15 empty cells. A
        // 4 spawned in its row or column (cells 0, 1, 2, 7, 11, 15) merges with it for 8
        // points; a 2 never merges.
        let expected = 4.0 + 6.0 * 0.1 * 8.0 / 15.0;
        assert!((v - expected).abs() < 1e-5, "{v} vs {expected}");
        assert!(search.evaluated >= 3);
        let over: Board = "2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 4 2".parse().unwrap();
        assert!(search.best_move(over, 3).is_none());
    }

    #[test]
    fn network_players_need_a_network() {
        let c = config(PlayerKind::Ntuple, 2, 0);
        assert!(play_batch(&c, &mut CpuEngine, &|_| {}).is_err());
    }
}
