//! `rollsim 2048 …`: play, train, eval, show.

use rollsim_core::memory::check_memory;
use std::path::Path;

use clap::Subcommand;

use super::experiment::{ExperimentArgs, MergeArgs};
use super::input_error;
use rollsim_2048::{Board, Network, NetworkError};

mod board;
mod play;
mod replay;
mod train;

use board::{EvalArgs, ShowArgs, eval, show};
use play::{PlayArgs, play};
use replay::{ReplayArgs, replay};
use train::{TrainArgs, train_command};

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Play a batch of games and report scores, tile reach rates and speed.
    Play(PlayArgs),
    /// Train an n-tuple network by TD learning on afterstates (TD(0) or TD(λ), fixed rates or
    /// temporal coherence), on CPU threads.
    Train(TrainArgs),
    /// Replay the games of a `play --record` file, checking every move and result.
    Replay(ReplayArgs),
    /// Evaluate every legal move of one board with Monte Carlo rollouts.
    Eval(EvalArgs),
    /// Show a board in every text format, with its legal moves.
    Show(ShowArgs),
    /// Rollout-count sweep of the mc player: resumable, shardable; or --report a results file.
    Experiment(ExperimentArgs),
    /// Merge the results files of an experiment's shards into one unsharded file.
    Merge(MergeArgs),
}

/// How a 2048 board is written, for every command that takes one.
const BOARD_HELP: &str = "The board: 16 tiles, row by row, rows split by newlines, '/' or '|' and \
    tiles by spaces or commas (0, '.', '_' or '-' for an empty cell), e.g. \
    \"2 4 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 2\"; or 16 hex digits (0x optional), one exponent a \
    cell, the last digit row 1 column 1, as `show` prints them";

pub fn run(c: Command) -> anyhow::Result<()> {
    match c {
        Command::Play(a) => play(a),
        Command::Train(a) => train_command(a),
        Command::Replay(a) => replay(a),
        Command::Eval(a) => eval(a),
        Command::Show(a) => show(a),
        Command::Experiment(a) => super::experiment::experiment(a),
        Command::Merge(a) => super::experiment::merge(a),
    }
}

fn parse_board(text: &str) -> anyhow::Result<Board> {
    text.parse::<Board>()
        .map_err(|e| input_error(format!("invalid board: {e}")))
}

/// Loads a network file named on the command line; any failure is bad input.
fn load_network(path: &Path, flag: &str) -> anyhow::Result<Network> {
    // The weights (and any TC state) are held as the file stores them.
    if let Ok(m) = std::fs::metadata(path) {
        check_memory(&format!("loading {flag} {}", path.display()), m.len())
            .map_err(input_error)?;
    }
    Network::load(path).map_err(|e: NetworkError| {
        input_error(format!("cannot load {flag} {}: {e}", path.display()))
    })
}

/// The exponent of the tile `t` that `flag` was given: a tile from 8 to 32768.
fn tile_flag(flag: &str, t: u32) -> anyhow::Result<u8> {
    rollsim_2048::board::tile_exponent(t)
        .filter(|&e| e >= 3)
        .ok_or_else(|| input_error(format!("{flag} {t} is not a tile from 8 to 32768")))
}
