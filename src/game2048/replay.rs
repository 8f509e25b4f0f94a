//! `rollsim 2048 replay`: every move of a `play --record` file checked.

use rollsim_core::text::count;
use std::path::PathBuf;

use anyhow::Context;
use rollsim_2048::replay::{next_line, parse_line};

use clap::Args as ClapArgs;
use serde::Serialize;

use crate::{OutputArgs, input_error};

#[derive(ClapArgs, Debug)]
pub struct ReplayArgs {
    /// A file from `2048 play --record`.
    file: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
}

/// The `2048 replay --json` object.
#[derive(Serialize)]
struct ReplayReport {
    file: String,
    games: u64,
    moves: u64,
}

pub(super) fn replay(a: ReplayArgs) -> anyhow::Result<()> {
    let named = || format!("--record file {}", a.file.display());
    let (file, _) = rollsim_core::files::open_input(&a.file, u64::MAX)?;
    let (mut games, mut moves) = (0u64, 0u64);
    let mut reader = std::io::BufReader::new(file);
    let mut line = Vec::new();
    // Every way a line fails to be a record (foreign bytes, a byte-order mark, a line too long,
    // bad JSON) is the file's fault: bad input, naming the line. Only reading it is an I/O error.
    for n in 1.. {
        let at_line = |e| input_error(format!("{}, line {n}: {e}", named()));
        if !next_line(&mut reader, &mut line)
            .with_context(named)?
            .map_err(at_line)?
        {
            break;
        }
        let Some(r) = parse_line(&line).map_err(at_line)? else {
            continue;
        };
        r.replay().map_err(|e| {
            input_error(format!(
                "{}, line {n} (seed {}, game {}): {e}",
                named(),
                r.seed,
                r.game
            ))
        })?;
        games += 1;
        moves += r.moves.len() as u64;
    }
    // Zero games replayed is no evidence of legal play: the file is not a record of games.
    if games == 0 {
        return Err(input_error(format!(
            "{}: no game records (the file is empty or blank; `2048 play --record FILE` \
             writes one JSON line a game)",
            named()
        )));
    }
    let report = ReplayReport {
        file: a.file.display().to_string(),
        games,
        moves,
    };
    crate::output::emit(&report, a.output.json)
}

impl crate::output::Report for ReplayReport {
    fn text(&self) {
        outln!(
            "replayed {} ({} moves) from {}: every move legal, every score, largest tile and \
             ending as recorded",
            count(self.games as usize, "game"),
            self.moves,
            self.file
        );
    }
}
