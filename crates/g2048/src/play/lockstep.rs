//! Lockstep play: every running game of a batch moves once per step, so that a player can value
//! all their positions in one batch (a GPU dispatch).

use super::*;

/// Plays the batch's games in lockstep with `choose` (see [`lockstep`]).
pub(super) fn play_lockstep(
    config: &PlayConfig,
    choose: &mut ChooseMoves,
    progress: &dyn Progress,
) -> anyhow::Result<Played> {
    let start = Instant::now();
    let mut games = config.new_games();
    lockstep(&mut games, choose, &mut |ended| {
        progress.inc(ended.len() as u64);
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
    let mut running = running_games(games);
    while !running.is_empty() {
        let live: Vec<&Game> = running.iter().map(|&i| &games[i]).collect();
        let moves = choose(&live)?;
        advance(games, &mut running, moves, ended)?;
    }
    Ok(())
}

/// The positions of `games` still running.
pub(super) fn running_games(games: &[Game]) -> Vec<usize> {
    (0..games.len())
        .filter(|&i| games[i].is_running())
        .collect()
}

/// One step of lockstep play: the `running` games (positions in `games`) play their `moves`,
/// those that end leave `running` and `ended` hears of them, in order.
pub(super) fn advance(
    games: &mut [Game],
    running: &mut Vec<usize>,
    moves: Vec<Option<Moved>>,
    ended: &mut dyn FnMut(&[&Game]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
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
    Ok(())
}
