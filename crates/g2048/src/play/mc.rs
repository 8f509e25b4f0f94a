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
    let (roots, moves) = candidate_roots(games);
    Ok(candidates(moves, engine.evaluate(seed, &roots, n)?))
}

/// Each game's legal moves.
type Legal = Vec<Vec<(Dir, Moved)>>;

/// Every running game's legal moves, and the roots of those that have a board to roll out
/// from (a move that would merge two 32768 tiles has none).
fn candidate_roots(games: &[&Game]) -> (Vec<Root>, Legal) {
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
                .map(|&(d, m)| Root::new(m.board, g.index, g.moves, d)),
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
    finished: &mut Finished,
) -> anyhow::Result<(Vec<Game>, u64)> {
    let mut choice = Choice {
        objective,
        rollouts,
        played: 0,
        effort: FxHashMap::default(),
    };
    let mut ended = |choice: &Choice, ended: &[&Game]| {
        let ended: Vec<(&Game, Effort)> = ended
            .iter()
            .map(|&g| (g, choice.effort.get(&g.index).copied().unwrap_or_default()))
            .collect();
        finished(&ended)
    };
    if engine.overlaps() && games.len() >= 2 {
        in_halves(engine, seed, &mut games, &mut choice, &mut ended)?;
    } else {
        let choice = std::cell::RefCell::new(choice);
        let mut choose = |live: &[&Game]| {
            let (roots, moves) = candidate_roots(live);
            let sums = engine.evaluate(seed, &roots, rollouts)?;
            Ok(choice.borrow_mut().moves(live, candidates(moves, sums)))
        };
        lockstep(&mut games, &mut choose, &mut |g| ended(&choice.borrow(), g))?;
        return Ok((games, choice.into_inner().played));
    }
    Ok((games, choice.played))
}

/// The Monte Carlo player's choices, and what it spent on them.
struct Choice {
    objective: Objective,
    rollouts: u32,
    played: u64,
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
                self.played += cands.len() as u64 * u64::from(self.rollouts);
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
        h.start(engine, seed, choice.rollouts)?;
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
            h.start(engine, seed, choice.rollouts)?;
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
    fn start(&mut self, engine: &mut dyn RolloutEngine, seed: u64, n: u32) -> anyhow::Result<()> {
        if self.running.is_empty() {
            return Ok(());
        }
        let live: Vec<&Game> = self.running.iter().map(|&i| &self.games[i]).collect();
        let (roots, moves) = candidate_roots(&live);
        self.pending = Some((engine.start(seed, &roots, n)?, moves));
        Ok(())
    }
}
