//! The Monte Carlo player: every legal move valued by random rollouts to the end, all games'
//! candidates in one engine call per step.

use super::*;

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
    let mut played = 0u64;
    // By game index, which is unique within a batch.
    let effort = std::cell::RefCell::new(FxHashMap::<u32, Effort>::default());
    let mut choose = |live: &[&Game]| {
        let candidates = evaluate_games(engine, seed, live, rollouts)?;
        let mut effort = effort.borrow_mut();
        Ok(live
            .iter()
            .zip(&candidates)
            .map(|(g, cands)| {
                let e = effort.entry(g.index).or_default();
                for c in cands {
                    e.rollouts += u64::from(c.sums.rollouts);
                    e.simulated_moves += c.sums.moves;
                }
                played += cands.len() as u64 * u64::from(rollouts);
                best_candidate(objective, cands).map(|c| c.moved)
            })
            .collect())
    };
    lockstep(&mut games, &mut choose, &mut |ended| {
        let effort = effort.borrow();
        let ended: Vec<(&Game, Effort)> = ended
            .iter()
            .map(|&g| (g, effort.get(&g.index).copied().unwrap_or_default()))
            .collect();
        finished(&ended)
    })?;
    Ok((games, played))
}
