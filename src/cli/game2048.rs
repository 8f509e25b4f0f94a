//! `rollsim 2048 …`: play, eval, show.

use clap::{Args as ClapArgs, Subcommand};
use serde::Serialize;

use super::{ComputeArgs, input_error, print_json, progress_bar};
use crate::game2048::play::{Candidate, best_candidate, evaluate_games, play_batch};
use crate::game2048::{Board, Game, Objective, PlayConfig, PlayerKind, Report};
use crate::gpu::rollout::rollout_engine;

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Play a batch of games and report scores, tile reach rates and speed.
    Play(PlayArgs),
    /// Evaluate every legal move of one board with Monte Carlo rollouts.
    Eval(EvalArgs),
    /// Show a board in every text format, with its legal moves.
    Show(ShowArgs),
}

#[derive(ClapArgs, Debug)]
pub struct PlayArgs {
    /// random: uniformly random legal moves; mc: best mean over random rollouts per move.
    #[arg(long, value_enum, default_value_t = PlayerKind::Random)]
    player: PlayerKind,
    /// Number of games (played in flight together).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    games: u32,
    /// Rollouts per legal move (mc).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    rollouts: u32,
    /// What the mc player maximises: the points gained, or the tile sum of the final board.
    #[arg(long, value_enum, default_value_t = Objective::Score)]
    objective: Objective,
    /// Seed of every random choice (default: a random seed, printed in the report).
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    compute: ComputeArgs,
    /// Print one JSON object on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(ClapArgs, Debug)]
pub struct EvalArgs {
    /// The board: a 4x4 grid of tiles (rows split by newlines or '/'), or 0x and 16 hex digits.
    board: String,
    /// Rollouts per legal move.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    rollouts: u32,
    #[arg(long, value_enum, default_value_t = Objective::Score)]
    objective: Objective,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    compute: ComputeArgs,
    #[arg(long)]
    json: bool,
}

#[derive(ClapArgs, Debug)]
pub struct ShowArgs {
    /// The board: a 4x4 grid of tiles (rows split by newlines or '/'), or 0x and 16 hex digits.
    board: String,
    #[arg(long)]
    json: bool,
}

pub fn run(c: Command) -> anyhow::Result<()> {
    match c {
        Command::Play(a) => play(a),
        Command::Eval(a) => eval(a),
        Command::Show(a) => show(a),
    }
}

fn parse_board(text: &str) -> anyhow::Result<Board> {
    text.parse::<Board>()
        .map_err(|e| input_error(format!("invalid board: {e}")))
}

fn play(a: PlayArgs) -> anyhow::Result<()> {
    a.compute.init_threads()?;
    let seed = a.seed.unwrap_or_else(rand::random);
    let config = PlayConfig {
        player: a.player,
        games: a.games,
        seed,
        rollouts: a.rollouts,
        objective: a.objective,
    };
    // Random play needs no rollouts: it runs on CPU threads whatever the backend.
    let mut engine = match a.player {
        PlayerKind::Mc => rollout_engine(a.compute.backend)?,
        PlayerKind::Random => Box::new(crate::game2048::CpuEngine),
    };
    let bar = progress_bar(u64::from(a.games), "games", a.quiet);
    let played = play_batch(&config, engine.as_mut(), &|n| bar.inc(n))?;
    bar.finish_and_clear();
    let report = Report::new(&config, &played, engine.backend().into(), engine.adapter());
    if a.json {
        return print_json(&report);
    }
    print_report(&report);
    Ok(())
}

fn print_report(r: &Report) {
    let player = match r.player {
        PlayerKind::Random => "random".to_string(),
        PlayerKind::Mc => format!(
            "mc ({} rollouts per move, objective {})",
            r.rollouts.unwrap_or(0),
            serde_json::to_value(r.objective)
                .unwrap_or_default()
                .as_str()
                .unwrap_or("")
        ),
    };
    let backend = match &r.adapter {
        Some(a) => format!("{} ({a})", r.backend),
        None => format!("{} ({} threads)", r.backend, r.threads),
    };
    println!("player      {player}");
    println!("backend     {backend}");
    println!("games       {} (seed {})", r.games, r.seed);
    println!(
        "score       mean {:.1}, median {:.1}, sd {:.1}, min {}, max {}",
        r.score.mean, r.score.median, r.score.sd, r.score.min, r.score.max
    );
    let reach: Vec<String> = r
        .reach
        .iter()
        .filter(|&(_, &p)| p > 0.0)
        .map(|(t, p)| format!("{t} {:.1}%", 100.0 * p))
        .collect();
    println!(
        "reached     {}",
        if reach.is_empty() {
            "-".into()
        } else {
            reach.join(", ")
        }
    );
    if r.overflow_games > 0 {
        println!(
            "overflow    {} games stopped at a 32768+32768 merge",
            r.overflow_games
        );
    }
    println!("moves/game  {:.1}", r.moves_per_game);
    let mut speed = format!(
        "{:.3} s: {:.1} games/s, {:.0} moves/s",
        r.seconds, r.games_per_s, r.moves_per_s
    );
    if let Some(rps) = r.rollouts_per_s {
        speed += &format!(", {rps:.0} rollouts/s");
    }
    println!("speed       {speed}");
}

#[derive(Serialize)]
struct MoveEval {
    dir: String,
    board: String,
    move_score: u32,
    /// The move's points plus the mean points of its rollouts.
    score_mean: f64,
    score_sd: f64,
    tilesum_mean: f64,
    tilesum_sd: f64,
    moves_mean: f64,
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
    backend: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    adapter: Option<String>,
    best: Option<String>,
    moves: Vec<MoveEval>,
}

fn eval(a: EvalArgs) -> anyhow::Result<()> {
    let board = parse_board(&a.board)?;
    a.compute.init_threads()?;
    let mut engine = rollout_engine(a.compute.backend)?;
    let game = Game::from_position(a.seed, 0, board);
    let candidates: Vec<Candidate> = evaluate_games(engine.as_mut(), a.seed, &[&game], a.rollouts)?
        .pop()
        .unwrap_or_default();
    let best = best_candidate(a.objective, &candidates).map(|c| c.dir);
    let moves: Vec<MoveEval> = candidates
        .iter()
        .map(|c| {
            let s = &c.sums;
            let (score_mean, score_sd) = s.mean_sd(s.score, s.score_sq);
            let (tilesum_mean, tilesum_sd) = s.mean_sd(s.tile_sum, s.tile_sum_sq);
            MoveEval {
                dir: c.dir.to_string(),
                board: c.moved.board.hex(),
                move_score: c.moved.score,
                score_mean: score_mean + f64::from(c.moved.score),
                score_sd,
                tilesum_mean,
                tilesum_sd,
                moves_mean: s.moves as f64 / f64::from(s.rollouts),
                overflows: s.overflows,
                total: a.objective.total(c.moved.score, s).to_string(),
                best: Some(c.dir) == best,
            }
        })
        .collect();
    let report = EvalReport {
        board: board.hex(),
        seed: a.seed,
        rollouts: a.rollouts,
        objective: a.objective,
        backend: engine.backend().into(),
        adapter: engine.adapter(),
        best: best.map(|d| d.to_string()),
        moves,
    };
    if a.json {
        return print_json(&report);
    }
    println!("{board}\n");
    if report.moves.is_empty() {
        println!("game over: no legal move");
        return Ok(());
    }
    println!(
        "{:<6} {:>6} {:>12} {:>10} {:>12} {:>10} {:>10}",
        "move", "points", "score mean", "sd", "tilesum", "sd", "moves"
    );
    for m in &report.moves {
        println!(
            "{:<6} {:>6} {:>12.1} {:>10.1} {:>12.1} {:>10.1} {:>10.1}{}",
            m.dir,
            m.move_score,
            m.score_mean,
            m.score_sd,
            m.tilesum_mean,
            m.tilesum_sd,
            m.moves_mean,
            if m.best { "  <- best" } else { "" }
        );
    }
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

fn show(a: ShowArgs) -> anyhow::Result<()> {
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
    if a.json {
        return print_json(&report);
    }
    println!("{board}\n");
    println!("hex         {}", report.hex);
    println!("one line    {}", report.grid);
    println!(
        "empty {}, max tile {}, tile sum {}",
        report.empty, report.max_tile, report.tile_sum
    );
    if report.game_over {
        println!("game over: no legal move");
    }
    for m in &report.moves {
        if m.overflow {
            println!(
                "{:<6} would merge two 32768 tiles (not representable)",
                m.dir
            );
        } else {
            println!("{:<6} +{:<6} {}", m.dir, m.score, m.board);
        }
    }
    Ok(())
}
