//! The Monte Carlo player: every legal move valued by random rollouts to the end, all games'
//! candidates in one engine call per step.

use super::*;
use crate::rollout::Pending;

/// One evaluated candidate move.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub dir: Dir,
    pub moved: Moved,
    pub sums: RolloutSums,
    /// Left behind in a race (see [`Spending::race`]): never chosen.
    pub dropped: bool,
}

/// The candidate with the best total; ties go to the first in [`Dir::ALL`] order. A move that
/// would merge two 32768 tiles ends the game, so it comes last (as for the network players):
/// chosen only when no other move is legal. Candidates dropped from a race are not chosen; the
/// others have played the same rollouts, so their totals compare their means exactly.
pub fn best_candidate(objective: Objective, candidates: &[Candidate]) -> Option<&Candidate> {
    let key = |c: &Candidate| (!c.moved.overflow, objective.total(c.moved.score, &c.sums));
    candidates
        .iter()
        .filter(|c| !c.dropped)
        .fold(None, |best: Option<&Candidate>, c| match best {
            Some(b) if key(b) >= key(c) => Some(b),
            _ => Some(c),
        })
}

/// How a Monte Carlo player spends a move's budget of `n` rollouts for each candidate. The
/// default, every candidate `n` rollouts on streams of its own, is the plain player.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Spending {
    /// Common random numbers: every candidate of a move plays the same rollout streams, so that
    /// the noise their comparison sees is the part in which they differ.
    #[serde(default)]
    pub common: bool,
    /// Racing: the budget goes out in rounds of `n / RACE_ROUNDS` rollouts for each candidate
    /// still in the race; from the second round on, a candidate whose mean lies clearly below
    /// the best one's (their [`RACE_Z`] confidence bounds apart) is dropped, and its share goes
    /// to the others in further rounds.
    #[serde(default)]
    pub race: bool,
}

impl Spending {
    pub fn is_plain(&self) -> bool {
        *self == Spending::default()
    }
}

/// A race's first round gives every candidate a quarter of its budget.
pub const RACE_ROUNDS: u32 = 4;
/// A candidate is dropped when its upper bound, mean + z sd / sqrt(rollouts), lies below the
/// best one's lower bound: z = 2.576, each bound one-sided at 99.5%.
pub const RACE_Z: f64 = 2.576;

/// Evaluates every legal move of every running game with `n` rollouts each, in one call to the
/// engine, and returns each game's candidates (empty for games not running). A move that would
/// merge two 32768 tiles is a candidate with no rollouts.
pub fn evaluate_games(
    engine: &mut dyn RolloutEngine,
    seed: u64,
    games: &[&Game],
    n: u32,
) -> anyhow::Result<Vec<Vec<Candidate>>> {
    let (roots, moves) = candidate_roots(games, false);
    Ok(candidates(moves, engine.evaluate(seed, &roots, n)?))
}

/// [`evaluate_games`] as a race (see [`Spending::race`]): each game's candidates share its
/// budget of `n` rollouts apiece, in rounds that all games in the race play in one engine call.
pub fn race_games(
    engine: &mut dyn RolloutEngine,
    seed: u64,
    games: &[&Game],
    n: u32,
    objective: Objective,
    common: bool,
) -> anyhow::Result<Vec<Vec<Candidate>>> {
    let (roots, moves) = candidate_roots(games, common);
    let mut cands = candidates(moves, vec![RolloutSums::default(); roots.len()]);
    // Each root's game and candidate, in the order of `roots`.
    let at: Vec<(usize, usize)> = cands
        .iter()
        .enumerate()
        .flat_map(|(g, c)| {
            c.iter()
                .enumerate()
                .filter(|(_, c)| !c.moved.overflow)
                .map(move |(k, _)| (g, k))
        })
        .collect();
    let mut left: Vec<u64> = cands
        .iter()
        .map(|c| u64::from(n) * c.iter().filter(|c| !c.moved.overflow).count() as u64)
        .collect();
    let round = (n / RACE_ROUNDS).max(1);
    let mut first = 0u32;
    loop {
        // The candidates of every game that can give each of its runners another round.
        let racing: Vec<usize> = (0..roots.len())
            .filter(|&r| {
                let (g, k) = at[r];
                let runners = cands[g]
                    .iter()
                    .filter(|c| !c.dropped && !c.moved.overflow)
                    .count();
                !cands[g][k].dropped
                    && (first == 0 || runners > 1)
                    && left[g] >= u64::from(round) * runners as u64
            })
            .collect();
        if racing.is_empty() {
            break;
        }
        let these: Vec<Root> = racing.iter().map(|&r| roots[r]).collect();
        let sums = engine.evaluate_range(seed, &these, first..first + round)?;
        for (&r, s) in racing.iter().zip(sums) {
            let (g, k) = at[r];
            cands[g][k].sums = cands[g][k].sums.merge(s);
            left[g] -= u64::from(round);
        }
        first += round;
        // No drops on the first round alone: at 100 rollouts a move, dropping after it played
        // 34,815 over 100 games, waiting for the second 37,100 (plain: 36,777). A quarter of
        // the budget is too few rollouts for a normal bound on skewed scores.
        if first >= 2 * round {
            for c in &mut cands {
                drop_the_clearly_behind(objective, c);
            }
        }
    }
    Ok(cands)
}

/// Drops the runners whose upper bound lies below the leader's lower bound (see [`RACE_Z`]).
fn drop_the_clearly_behind(objective: Objective, cands: &mut [Candidate]) {
    let bounds = |c: &Candidate| {
        let (mean, sd) = objective.mean_sd(c.moved.score, &c.sums);
        let half = RACE_Z * sd / f64::from(c.sums.rollouts.max(1)).sqrt();
        (mean - half, mean + half)
    };
    let runners = |c: &&mut Candidate| !c.dropped && !c.moved.overflow && c.sums.rollouts > 1;
    let Some(best_low) = cands
        .iter_mut()
        .filter(runners)
        .map(|c| bounds(c).0)
        .max_by(f64::total_cmp)
    else {
        return;
    };
    for c in cands.iter_mut().filter(runners) {
        if bounds(c).1 < best_low {
            c.dropped = true;
        }
    }
}

/// Each game's legal moves.
type Legal = Vec<Vec<(Dir, Moved)>>;

/// Every running game's legal moves, and the roots of those that have a board to roll out
/// from (a move that would merge two 32768 tiles has none).
fn candidate_roots(games: &[&Game], common: bool) -> (Vec<Root>, Legal) {
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
                .filter(|(_, m)| !m.overflow)
                .map(|&(d, m)| match common {
                    // Every candidate on the streams of the first direction's.
                    true => Root::new(m.board, g.index, g.moves, Dir::ALL[0]),
                    false => Root::new(m.board, g.index, g.moves, d),
                }),
        );
        moves.push(legal);
    }
    (roots, moves)
}

/// The candidates of [`candidate_roots`]'s moves with the roots' sums.
fn candidates(moves: Legal, sums: Vec<RolloutSums>) -> Vec<Vec<Candidate>> {
    let mut sums = sums.into_iter();
    moves
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
                    dropped: false,
                })
                .collect()
        })
        .collect()
}

/// What a Monte Carlo player spent on one game: the rollouts of its candidates, and the moves
/// those rollouts simulated (the measure of compute that players of one budget share).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effort {
    pub rollouts: u64,
    pub simulated_moves: u64,
}

/// Hears of the games that ended in a step, each with its effort.
pub type Finished<'a> = dyn FnMut(&[(&Game, Effort)]) -> anyhow::Result<()> + 'a;

/// The Monte Carlo player on `games`, new games under `seed` (each played exactly as the game
/// of its index in a full batch: its moves depend only on the seed, its index and `rollouts`,
/// not on which other games share the batch), advanced in lockstep: every running game's
/// candidates are evaluated in one engine call per step. After each step, `finished` gets the
/// games that ended in it (if any), each with its effort. Returns the games, in their order,
/// and the rollouts played.
pub fn play_mc_games(
    engine: &mut dyn RolloutEngine,
    seed: u64,
    mut games: Vec<Game>,
    rollouts: u32,
    objective: Objective,
    spending: Spending,
    finished: &mut Finished,
) -> anyhow::Result<(Vec<Game>, u64)> {
    let mut choice = Choice {
        objective,
        rollouts,
        effort: FxHashMap::default(),
    };
    let mut ended = |choice: &Choice, ended: &[&Game]| {
        let ended: Vec<(&Game, Effort)> = ended
            .iter()
            .map(|&g| (g, choice.effort.get(&g.index).copied().unwrap_or_default()))
            .collect();
        finished(&ended)
    };
    // A race's rounds follow each other, so it plays in plain lockstep.
    let choice = if engine.overlaps() && games.len() >= 2 && !spending.race {
        in_halves(
            engine,
            seed,
            &mut games,
            spending.common,
            &mut choice,
            &mut ended,
        )?;
        choice
    } else {
        let choice = std::cell::RefCell::new(choice);
        let mut choose = |live: &[&Game]| {
            let cands = match spending.race {
                true => race_games(engine, seed, live, rollouts, objective, spending.common)?,
                false => {
                    let (roots, moves) = candidate_roots(live, spending.common);
                    candidates(moves, engine.evaluate(seed, &roots, rollouts)?)
                }
            };
            Ok(choice.borrow_mut().moves(live, cands))
        };
        lockstep(&mut games, &mut choose, &mut |g| ended(&choice.borrow(), g))?;
        choice.into_inner()
    };
    let played = choice.effort.values().map(|e| e.rollouts).sum();
    Ok((games, played))
}

/// The Monte Carlo player's choices, and what it spent on them.
struct Choice {
    objective: Objective,
    rollouts: u32,
    /// By game index, which is unique within a batch.
    effort: FxHashMap<u32, Effort>,
}

impl Choice {
    /// Each live game's best candidate, its effort counted.
    fn moves(&mut self, live: &[&Game], candidates: Vec<Vec<Candidate>>) -> Vec<Option<Moved>> {
        live.iter()
            .zip(&candidates)
            .map(|(g, cands)| {
                let e = self.effort.entry(g.index).or_default();
                for c in cands {
                    e.rollouts += u64::from(c.sums.rollouts);
                    e.simulated_moves += c.sums.moves;
                }
                best_candidate(self.objective, cands).map(|c| c.moved)
            })
            .collect()
    }
}

/// Lockstep play in two halves that alternate on an engine that overlaps: while one half's
/// rollouts run, the other's moves are chosen and its next rollouts started. Every game plays
/// as in [`lockstep`] (its moves depend on nothing but its own position), and the games that
/// end in a step are reported in the same order: the first half's, then the second's.
fn in_halves(
    engine: &mut dyn RolloutEngine,
    seed: u64,
    games: &mut [Game],
    common: bool,
    choice: &mut Choice,
    ended: &mut dyn FnMut(&Choice, &[&Game]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let (a, b) = games.split_at_mut(games.len() / 2);
    let mut halves = [a, b].map(|games| Half {
        running: running_games(games),
        games,
        pending: None,
    });
    for h in &mut halves {
        h.start(engine, seed, choice.rollouts, common)?;
    }
    while halves.iter().any(|h| h.pending.is_some()) {
        for h in &mut halves {
            let Some((pending, moves)) = h.pending.take() else {
                continue;
            };
            let sums = engine.finish(pending)?;
            let live: Vec<&Game> = h.running.iter().map(|&i| &h.games[i]).collect();
            let chosen = choice.moves(&live, candidates(moves, sums));
            advance(h.games, &mut h.running, chosen, &mut |g| ended(choice, g))?;
            h.start(engine, seed, choice.rollouts, common)?;
        }
    }
    Ok(())
}

/// One half of [`in_halves`]: its games, those running, and their started evaluation.
struct Half<'g> {
    games: &'g mut [Game],
    running: Vec<usize>,
    pending: Option<(Pending, Legal)>,
}

impl Half<'_> {
    /// Starts the evaluation of the running games' candidates (none when all are over).
    fn start(
        &mut self,
        engine: &mut dyn RolloutEngine,
        seed: u64,
        n: u32,
        common: bool,
    ) -> anyhow::Result<()> {
        if self.running.is_empty() {
            return Ok(());
        }
        let live: Vec<&Game> = self.running.iter().map(|&i| &self.games[i]).collect();
        let (roots, moves) = candidate_roots(&live, common);
        self.pending = Some((engine.start(seed, &roots, n)?, moves));
        Ok(())
    }
}
