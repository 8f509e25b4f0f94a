//! Whole games: the game loop and batches of games, with each player in a module of its own
//! (`mc`, `greedy`, `expectimax`, the `lockstep` they share) and the batch's `report`.

mod expectimax;
mod greedy;
mod lockstep;
mod mc;
mod report;
pub mod run;

pub use expectimax::*;
pub use greedy::*;
pub use lockstep::*;
pub use mc::*;
pub use report::*;

use rollsim_core::progress::Progress;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
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
    /// The moves played, one letter each ([`crate::replay::LETTERS`]), when logged.
    log: Option<Vec<u8>>,
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
            log: None,
        }
    }

    /// Goes on from `after`, an afterstate of this game, with a new tile from the game's own
    /// stream: the score and move count start again from 0 (training's midpoint restarts).
    pub fn resume_from(&mut self, after: Board) {
        let mut board = after;
        board.spawn(&mut self.rng);
        let index = self.index;
        let rng = self.rng.clone();
        *self = Game::from_board(board, index, rng);
    }

    /// Logs the moves from now on (for [`crate::replay::GameRecord`]).
    pub fn log_moves(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// The moves logged, if they are.
    pub fn move_log(&self) -> Option<&[u8]> {
        self.log.as_deref()
    }

    pub fn is_running(&self) -> bool {
        self.state == GameState::Running
    }

    /// Plays a legal move (as computed from the current board), then spawns. Whether the new
    /// board has a legal move is left to the player's next turn, which has to look anyway.
    #[inline]
    pub fn play(&mut self, m: Moved) {
        debug_assert!(self.is_running() && m.board != self.board);
        if let Some(log) = &mut self.log {
            // The direction is not passed in (no player needs it); found again only here.
            let t = tables();
            let k = Dir::ALL
                .iter()
                .position(|&d| self.board.slide_with(t, d) == m)
                .expect("a move of this board");
            log.push(crate::replay::LETTERS[k]);
        }
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

    /// The exponent of the largest tile the game reached: its board's, or 16 (65536) when it
    /// ended on a merge of two 32768 tiles.
    pub fn reached_exponent(&self) -> u8 {
        crate::reach::reached_exponent(self.board.max_exponent(), self.state == GameState::Overflow)
    }

    /// One move of the random player: a uniformly random legal move.
    pub fn play_random(&mut self) {
        match self.random_move() {
            Some((_, m)) => self.play(m),
            None => self.state = GameState::Over,
        }
    }

    /// The random player's next choice, drawn from the game's stream (which its spawns share).
    pub fn random_move(&mut self) -> Option<(Dir, Moved)> {
        random_legal_move(tables(), self.board, &mut self.rng)
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
    /// Its name, as files and reports write it.
    pub fn name(self) -> &'static str {
        match self {
            Objective::Score => "score",
            Objective::Tilesum => "tilesum",
        }
    }

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

    /// The candidate's mean and the sample standard deviation of its rollouts' values.
    pub fn mean_sd(self, move_score: u32, sums: &RolloutSums) -> (f64, f64) {
        match self {
            Objective::Score => {
                let (mean, sd) = sums.mean_sd(sums.score, sums.score_sq);
                (f64::from(move_score) + mean, sd)
            }
            Objective::Tilesum => sums.mean_sd(sums.tile_sum, sums.tile_sum_sq),
        }
    }
}

/// Which player plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
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

impl PlayerKind {
    /// Its name, as the command line and reports write it.
    pub fn name(self) -> &'static str {
        match self {
            PlayerKind::Random => "random",
            PlayerKind::Mc => "mc",
            PlayerKind::Ntuple => "ntuple",
            PlayerKind::Expectimax => "expectimax",
        }
    }
}

/// A player with what it plays by.
#[derive(Clone, Debug)]
pub enum Player {
    Random,
    Mc {
        /// Rollouts per legal move.
        rollouts: u32,
        objective: Objective,
        spending: Spending,
    },
    Ntuple {
        network: Arc<Network>,
    },
    Expectimax {
        network: Arc<Network>,
        /// Search depth in moves (1: the greedy player).
        depth: u32,
    },
}

impl Player {
    pub fn kind(&self) -> PlayerKind {
        match self {
            Player::Random => PlayerKind::Random,
            Player::Mc { .. } => PlayerKind::Mc,
            Player::Ntuple { .. } => PlayerKind::Ntuple,
            Player::Expectimax { .. } => PlayerKind::Expectimax,
        }
    }

    /// The value network of the network players.
    pub fn network(&self) -> Option<&Arc<Network>> {
        match self {
            Player::Ntuple { network } | Player::Expectimax { network, .. } => Some(network),
            Player::Random | Player::Mc { .. } => None,
        }
    }

    /// The network players' search depth in moves: 1 for the greedy player (and at least 1).
    pub fn depth(&self) -> u32 {
        match self {
            Player::Expectimax { depth, .. } => (*depth).max(1),
            _ => 1,
        }
    }
}

/// Settings of a batch of games.
#[derive(Clone, Debug)]
pub struct PlayConfig {
    pub player: Player,
    /// The games played: `games` of them from index `first` (each game is the same whichever
    /// batch plays it).
    pub first: u32,
    pub games: u32,
    pub seed: u64,
    /// Tile downgrading for the network players: leaves holding an exponent of this or more
    /// are valued as [`Board::downgraded`] (see [`Board::leaf`]). `None`: off.
    pub downgrade: Option<u8>,
    /// Log every game's moves (see [`crate::replay`]).
    pub record: bool,
}

impl PlayConfig {
    /// Games `0..games` of `seed`, by `player`, without tile downgrading.
    pub fn new(player: Player, games: u32, seed: u64) -> PlayConfig {
        PlayConfig {
            player,
            first: 0,
            games,
            seed,
            downgrade: None,
            record: false,
        }
    }

    /// The indices of the games played.
    pub fn indices(&self) -> std::ops::Range<u32> {
        self.first..self.first + self.games
    }

    /// The games played, at their start.
    pub fn new_games(&self) -> Vec<Game> {
        self.indices()
            .map(|i| {
                let mut g = Game::new(self.seed, i);
                if self.record {
                    g.log_moves();
                }
                g
            })
            .collect()
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
    progress: &dyn Progress,
) -> anyhow::Result<Played> {
    let start = Instant::now();
    let mut games = config.new_games();
    let mut rollouts = 0u64;
    match &config.player {
        Player::Random => {
            games.par_iter_mut().for_each(|g| {
                g.play_random_to_end();
                progress.inc(1);
            });
        }
        Player::Ntuple { network } | Player::Expectimax { network, .. } => {
            let depth = config.player.depth();
            games.par_iter_mut().for_each(|g| {
                play_network_game(g, network, depth, config.downgrade);
                progress.inc(1);
            });
        }
        &Player::Mc {
            rollouts: n,
            objective,
            spending,
        } => {
            let seed = config.seed;
            (games, rollouts) = play_mc_games(
                engine,
                seed,
                games,
                n,
                objective,
                spending,
                &mut |finished| {
                    progress.inc(finished.len() as u64);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::CpuEngine;

    fn config(player: Player, games: u32, seed: u64) -> PlayConfig {
        PlayConfig::new(player, games, seed)
    }

    /// The Monte Carlo player of these tests: 8 rollouts a move, score objective.
    const MC: Player = Player::Mc {
        rollouts: 8,
        objective: Objective::Score,
        spending: Spending {
            common: false,
            race: false,
        },
    };

    /// The names reports print are the ones the JSON carries.
    #[test]
    fn names_are_the_serialized_names() {
        let json = |v: serde_json::Value| v.as_str().unwrap().to_string();
        for k in [
            PlayerKind::Random,
            PlayerKind::Mc,
            PlayerKind::Ntuple,
            PlayerKind::Expectimax,
        ] {
            assert_eq!(k.name(), json(serde_json::to_value(k).unwrap()));
        }
        for o in [Objective::Score, Objective::Tilesum] {
            assert_eq!(o.name(), json(serde_json::to_value(o).unwrap()));
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
                    play_batch(&config(Player::Random, 64, 5), &mut CpuEngine, &|_| {})
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
                .install(|| play_batch(&config(MC, 3, 2), &mut CpuEngine, &|_| {}).unwrap())
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
        let random = play_batch(&config(Player::Random, 200, 2), &mut CpuEngine, &|_| {}).unwrap();
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
            dropped: false,
        };
        let cands = [c(Dir::Right, 4), c(Dir::Down, 4), c(Dir::Left, 0)];
        // A candidate dropped from a race is never chosen.
        let mut raced = cands;
        raced[0].dropped = true;
        assert_eq!(
            best_candidate(Objective::Score, &raced).unwrap().dir,
            Dir::Down
        );
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
            &config(Player::Random, 4, 0),
            &tally,
            2.0,
            rollsim_core::Device::Cpu,
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
        let greedy = config(
            Player::Ntuple {
                network: net.clone(),
            },
            6,
            5,
        );
        let batched = key(play_greedy_lockstep(&greedy, &mut values, &|_| {}).unwrap());
        assert_eq!(batched, network_games(PlayerKind::Ntuple, 1, 6, 5, 1));
        assert_eq!(std::mem::take(&mut values.1), steps(&batched));
        let deep = config(
            Player::Expectimax {
                network: net.clone(),
                depth: 2,
            },
            4,
            5,
        );
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
        let network = crate::train::tests::trained_small();
        let player = match player {
            PlayerKind::Ntuple => Player::Ntuple { network },
            _ => Player::Expectimax { network, depth },
        };
        let config = config(player, games, seed);
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
}
