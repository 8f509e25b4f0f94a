//! `rollsim 2048 eval` and `show`: one board, its moves valued or shown.

use clap::Args as ClapArgs;
use serde::Serialize;

use crate::args::ObjectiveArg;
use crate::backend::rollout_engine;
use crate::{ComputeArgs, OutputArgs, print_json};
use rollsim_2048::play::{Candidate, best_candidate, evaluate_games};
use rollsim_2048::{Game, Objective};

use super::{BOARD_HELP, parse_board};

#[derive(ClapArgs, Debug)]
pub struct EvalArgs {
    #[arg(help = BOARD_HELP)]
    board: String,
    /// Rollouts per legal move.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    rollouts: u32,
    /// What ranks the moves: the points gained, or the tile sum of the final boards.
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Score)]
    objective: ObjectiveArg,
    /// Seed of the rollouts' random choices.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    compute: ComputeArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(ClapArgs, Debug)]
pub struct ShowArgs {
    #[arg(help = BOARD_HELP)]
    board: String,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Serialize)]
struct MoveEval {
    dir: String,
    /// The board after the move; none for a move that would merge two 32768 tiles, which
    /// ends the game (`overflow`) and is not rolled out.
    board: Option<String>,
    overflow: bool,
    move_score: u32,
    /// The move's points plus the mean points of its rollouts.
    score_mean: Option<f64>,
    score_sd: Option<f64>,
    tilesum_mean: Option<f64>,
    tilesum_sd: Option<f64>,
    moves_mean: Option<f64>,
    overflows: u32,
    /// The exact total the player compares (score objective: move points times rollouts plus
    /// the rollouts' points; tilesum: the rollouts' final tile sums), as a decimal string.
    total: String,
    best: bool,
}

#[derive(Serialize)]
struct EvalReport {
    board: String,
    seed: u64,
    rollouts: u32,
    objective: Objective,
    backend: rollsim_core::Device,
    #[serde(skip_serializing_if = "Option::is_none")]
    adapter: Option<String>,
    best: Option<String>,
    moves: Vec<MoveEval>,
}

pub(super) fn eval(a: EvalArgs) -> anyhow::Result<()> {
    let board = parse_board(&a.board)?;
    a.compute.init_threads()?;
    let mut engine = rollout_engine(a.compute.backend())?;
    let objective = Objective::from(a.objective);
    let game = Game::from_position(a.seed, 0, board);
    let candidates: Vec<Candidate> = evaluate_games(engine.as_mut(), a.seed, &[&game], a.rollouts)?
        .pop()
        .unwrap_or_default();
    // No move is best when every one would merge two 32768 tiles: each ends the game.
    let best = best_candidate(objective, &candidates)
        .filter(|c| !c.moved.overflow)
        .map(|c| c.dir);
    let moves: Vec<MoveEval> = candidates
        .iter()
        .map(|c| {
            let s = &c.sums;
            let (score_mean, score_sd) = s.mean_sd(s.score, s.score_sq);
            let (tilesum_mean, tilesum_sd) = s.mean_sd(s.tile_sum, s.tile_sum_sq);
            let rolled = (!c.moved.overflow).then_some(());
            MoveEval {
                dir: c.dir.to_string(),
                board: rolled.map(|()| c.moved.board.hex()),
                overflow: c.moved.overflow,
                move_score: c.moved.score,
                score_mean: rolled.map(|()| score_mean + f64::from(c.moved.score)),
                score_sd: rolled.map(|()| score_sd),
                tilesum_mean: rolled.map(|()| tilesum_mean),
                tilesum_sd: rolled.map(|()| tilesum_sd),
                moves_mean: rolled.map(|()| s.moves as f64 / f64::from(s.rollouts)),
                overflows: s.overflows,
                total: objective.total(c.moved.score, s).to_string(),
                best: Some(c.dir) == best,
            }
        })
        .collect();
    let report = EvalReport {
        board: board.hex(),
        seed: a.seed,
        rollouts: a.rollouts,
        objective,
        backend: engine.backend(),
        adapter: engine.adapter(),
        best: best.map(|d| d.to_string()),
        moves,
    };
    if a.output.json {
        return print_json(&report);
    }
    outln!("{board}\n");
    if report.moves.is_empty() {
        outln!("game over: no legal move");
        return Ok(());
    }
    use crate::output::{Align::*, Table};
    let mut table = Table::new(&[
        ("move", Left),
        ("points", Right),
        ("score mean", Right),
        ("sd", Right),
        ("tilesum", Right),
        ("sd", Right),
        ("moves", Right),
    ]);
    for m in &report.moves {
        let best = if m.best { " <- best" } else { "" };
        let stats = [
            m.score_mean,
            m.score_sd,
            m.tilesum_mean,
            m.tilesum_sd,
            m.moves_mean,
        ];
        let mut cells = vec![m.dir.to_string()];
        if stats.iter().all(Option::is_some) {
            cells.push(m.move_score.to_string());
            cells.extend(stats.iter().flatten().map(|v| format!("{v:.1}")));
            table.row_with_note(cells, best.trim_start());
        } else {
            cells.push("-".into());
            cells.extend(std::iter::repeat_n(String::new(), 5));
            let note = format!("merges two 32768 tiles: ends the game, not rolled out{best}");
            table.row_with_note(cells, note);
        }
    }
    table.print();
    Ok(())
}

#[derive(Serialize)]
struct ShowReport {
    hex: String,
    grid: String,
    empty: u32,
    max_tile: u32,
    tile_sum: u32,
    game_over: bool,
    moves: Vec<ShownMove>,
}

#[derive(Serialize)]
struct ShownMove {
    dir: String,
    board: String,
    score: u32,
    overflow: bool,
}

pub(super) fn show(a: ShowArgs) -> anyhow::Result<()> {
    let board = parse_board(&a.board)?;
    let moves: Vec<ShownMove> = board
        .legal_moves()
        .map(|(d, m)| ShownMove {
            dir: d.to_string(),
            board: if m.overflow {
                String::new()
            } else {
                m.board.hex()
            },
            score: m.score,
            overflow: m.overflow,
        })
        .collect();
    let max = board.max_exponent();
    let report = ShowReport {
        hex: board.hex(),
        grid: board.one_line(),
        empty: board.count_empty(),
        max_tile: if max == 0 { 0 } else { 1 << max },
        tile_sum: board.tile_sum(),
        game_over: moves.is_empty(),
        moves,
    };
    if a.output.json {
        return print_json(&report);
    }
    outln!("{board}\n");
    outln!("hex         {}", report.hex);
    outln!("one line    {}", report.grid);
    outln!(
        "empty {}, max tile {}, tile sum {}",
        report.empty,
        report.max_tile,
        report.tile_sum
    );
    if report.game_over {
        outln!("game over: no legal move");
    }
    for m in &report.moves {
        if m.overflow {
            outln!(
                "{:<6} would merge two 32768 tiles (not representable)",
                m.dir
            );
        } else {
            outln!("{:<6} +{:<6} {}", m.dir, m.score, m.board);
        }
    }
    Ok(())
}
