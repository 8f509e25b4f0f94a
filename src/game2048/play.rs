//! Whole games: the game loop, the random and Monte Carlo players, and the batch report.

use std::collections::BTreeMap;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::board::{Board, Dir, Moved, tables};
use super::rollout::{RolloutEngine, RolloutSums, Root, random_legal_move};
use crate::rng::{MAX_MOVE_NUMBER, Stream};

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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
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

/// The candidate with the best total; ties go to the first in [`Dir::ALL`] order.
pub fn best_candidate(objective: Objective, candidates: &[Candidate]) -> Option<&Candidate> {
    candidates
        .iter()
        .fold(None, |best: Option<&Candidate>, c| match best {
            Some(b)
                if objective.total(b.moved.score, &b.sums)
                    >= objective.total(c.moved.score, &c.sums) =>
            {
                Some(b)
            }
            _ => Some(c),
        })
}

/// Evaluates every legal move of every running game with `n` rollouts each, in one call to the
/// engine, and returns each game's candidates (empty for games not running).
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
        roots.extend(
            legal
                .iter()
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
                    sums: sums.next().expect("one sum per root"),
                })
                .collect()
        })
        .collect())
}

/// Which player plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum PlayerKind {
    /// A uniformly random legal move.
    Random,
    /// Monte Carlo: the move with the best mean over random rollouts.
    Mc,
}

/// Settings of a batch of games.
#[derive(Clone, Debug)]
pub struct PlayConfig {
    pub player: PlayerKind,
    pub games: u32,
    pub seed: u64,
    pub rollouts: u32,
    pub objective: Objective,
}

/// The finished games of a batch, and what it cost.
pub struct Played {
    pub games: Vec<Game>,
    pub rollouts: u64,
    pub seconds: f64,
}

/// Plays a batch. Random games run one per rayon task; Monte Carlo games advance in lockstep,
/// every running game's candidates evaluated in one engine call per step, so a GPU engine sees
/// one large batch per step. `progress` is called with the number of finished games.
pub fn play_batch(
    config: &PlayConfig,
    engine: &mut dyn RolloutEngine,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<Played> {
    let start = Instant::now();
    let mut games: Vec<Game> = (0..config.games)
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
        PlayerKind::Mc => {
            let mut running: Vec<usize> = (0..games.len()).collect();
            while !running.is_empty() {
                let live: Vec<&Game> = running.iter().map(|&i| &games[i]).collect();
                let candidates = evaluate_games(engine, config.seed, &live, config.rollouts)?;
                for (&i, cands) in running.iter().zip(&candidates) {
                    rollouts += cands.len() as u64 * u64::from(config.rollouts);
                    let g = &mut games[i];
                    match best_candidate(config.objective, cands) {
                        Some(c) => g.play(c.moved),
                        None => g.state = GameState::Over,
                    }
                }
                let before = running.len();
                running.retain(|&i| games[i].is_running());
                progress((before - running.len()) as u64);
            }
        }
    }
    Ok(Played {
        games,
        rollouts,
        seconds: start.elapsed().as_secs_f64(),
    })
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

impl Report {
    pub fn new(
        config: &PlayConfig,
        played: &Played,
        backend: String,
        adapter: Option<String>,
    ) -> Report {
        let games = &played.games;
        let n = games.len().max(1) as f64;
        let mut scores: Vec<u64> = games.iter().map(|g| g.score).collect();
        scores.sort_unstable();
        let mean = scores.iter().sum::<u64>() as f64 / n;
        let median = match scores.len() {
            0 => f64::NAN,
            l if l % 2 == 1 => scores[l / 2] as f64,
            l => (scores[l / 2 - 1] + scores[l / 2]) as f64 / 2.0,
        };
        let sd = if scores.len() > 1 {
            let ss: f64 = scores.iter().map(|&s| (s as f64 - mean).powi(2)).sum();
            (ss / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        let reach = (7..=15)
            .map(|e| {
                let hit = games.iter().filter(|g| g.board.max_exponent() >= e).count();
                (1u32 << e, hit as f64 / n)
            })
            .collect();
        let moves: u64 = games.iter().map(|g| u64::from(g.moves)).sum();
        let secs = played.seconds.max(1e-9);
        let mc = config.player == PlayerKind::Mc;
        Report {
            player: config.player,
            games: config.games,
            seed: config.seed,
            backend,
            adapter,
            rollouts: mc.then_some(config.rollouts),
            objective: mc.then_some(config.objective),
            threads: rayon::current_num_threads(),
            score: ScoreStats {
                mean,
                median,
                max: scores.last().copied().unwrap_or(0),
                min: scores.first().copied().unwrap_or(0),
                sd,
            },
            reach,
            overflow_games: games
                .iter()
                .filter(|g| g.state == GameState::Overflow)
                .count() as u32,
            moves_per_game: moves as f64 / n,
            seconds: played.seconds,
            games_per_s: games.len() as f64 / secs,
            moves_per_s: moves as f64 / secs,
            rollouts_per_s: mc.then_some(played.rollouts as f64 / secs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game2048::rollout::CpuEngine;

    fn config(player: PlayerKind, games: u32, seed: u64) -> PlayConfig {
        PlayConfig {
            player,
            games,
            seed,
            rollouts: 8,
            objective: Objective::Score,
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
    fn report_statistics() {
        let mut games: Vec<Game> = (0..4).map(|i| Game::new(0, i)).collect();
        for (g, s) in games.iter_mut().zip([100, 300, 200, 400]) {
            g.score = s;
            g.moves = 10;
        }
        games[0].board = "2048 0 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0".parse().unwrap();
        let played = Played {
            games,
            rollouts: 0,
            seconds: 2.0,
        };
        let r = Report::new(
            &config(PlayerKind::Random, 4, 0),
            &played,
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
}
