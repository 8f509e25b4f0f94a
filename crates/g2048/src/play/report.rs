//! What a batch of games reports: score statistics, tile reach, speed, tallied block by block.

use super::*;

/// Score statistics of a batch.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ScoreStats {
    pub mean: f64,
    pub median: f64,
    pub max: u64,
    pub min: u64,
    /// Sample standard deviation.
    pub sd: f64,
    /// The mean's 95% interval (normal approximation).
    pub mean_ci95: rollsim_core::stats::Interval,
}

/// The network a batch was played with, as reported.
#[derive(Clone, Debug, Serialize)]
pub struct NetworkInfo {
    pub tuples: Vec<Vec<u8>>,
    pub element: Element,
    pub training_games: u64,
    /// What the weights are and how they were trained.
    pub recipe: crate::ntuple::Recipe,
}

/// The report of `rollsim 2048 play`, also its `--json` object.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub player: PlayerKind,
    pub games: u32,
    pub seed: u64,
    pub backend: rollsim_core::Device,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollouts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objective: Option<Objective>,
    /// How the Monte Carlo player spent its rollouts, when not plainly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spending: Option<Spending>,
    /// Expectimax depth in moves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// The tile from which leaves are valued downgraded (network players).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub downgrade_at: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkInfo>,
    pub threads: usize,
    pub score: ScoreStats,
    /// Fraction of games whose largest tile reached each value, 128 to 65536.
    pub reach: BTreeMap<u32, f64>,
    /// The 95% Wilson interval of each reach rate.
    pub reach_ci95: BTreeMap<u32, rollsim_core::stats::Interval>,
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
            self.reach.add(g.reached_exponent());
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
            mean_ci95: s.mean_interval(rollsim_core::stats::Z95),
        }
    }
}

impl Report {
    pub fn new(
        config: &PlayConfig,
        tally: &Tally,
        seconds: f64,
        backend: rollsim_core::Device,
        adapter: Option<String>,
    ) -> Report {
        let games = tally.reach.games();
        let n = games.max(1) as f64;
        let reach = tally.reach.rates();
        let secs = seconds.max(1e-9);
        let (rollouts, objective, spending) = match config.player {
            Player::Mc {
                rollouts,
                objective,
                spending,
            } => (
                Some(rollouts),
                Some(objective),
                Some(spending).filter(|s| !s.is_plain()),
            ),
            _ => (None, None, None),
        };
        let mc = rollouts.is_some();
        Report {
            player: config.player.kind(),
            games: config.games,
            seed: config.seed,
            backend,
            adapter,
            rollouts,
            objective,
            spending,
            depth: matches!(config.player, Player::Expectimax { .. })
                .then(|| config.player.depth()),
            downgrade_at: config.downgrade.map(|e| 1 << e),
            network: config.player.network().map(|n| NetworkInfo {
                tuples: n.tuples().to_vec(),
                element: n.element(),
                training_games: n.games(),
                recipe: n.recipe().clone(),
            }),
            threads: rayon::current_num_threads(),
            score: tally.score_stats(),
            reach,
            reach_ci95: tally.reach.intervals95(),
            overflow_games: tally.overflow as u32,
            moves_per_game: tally.moves as f64 / n,
            seconds,
            games_per_s: games as f64 / secs,
            moves_per_s: tally.moves as f64 / secs,
            rollouts_per_s: mc.then_some(tally.rollouts as f64 / secs),
        }
    }
}
