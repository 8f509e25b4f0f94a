//! `rollsim 2048 …`: play, train, eval, show.

use rollsim_core::memory::check_memory;
use rollsim_core::text::count;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use rollsim_2048::replay::{GameRecord, next_line, parse_line};

use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use serde::Serialize;

use super::experiment::{ExperimentArgs, MergeArgs};
use super::{ComputeArgs, CpuComputeArgs, OutputArgs, input_error, print_json, progress_bar};
use crate::args::{ObjectiveArg, PlayerArg, SpendingArgs};
use crate::backend::rollout_engine;
use rollsim_2048::engines::Engines;
use rollsim_2048::ntuple::{Rate, Recipe, small_tuples, standard_tuples};
use rollsim_2048::play::{Candidate, best_candidate, evaluate_games};
use rollsim_2048::train::{BlockStats, TrainConfig, new_network_weights, train, training_bytes};
use rollsim_2048::{
    Board, Element, Game, Network, NetworkError, Objective, PlayConfig, Player, PlayerKind, Report,
};

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

#[derive(ClapArgs, Debug)]
pub struct PlayArgs {
    /// random: uniformly random legal moves; mc: best mean over random rollouts per move;
    /// ntuple: greedy on an n-tuple network (--weights); expectimax: search to --depth moves
    /// with the network at the leaves.
    #[arg(long, value_enum, default_value_t = PlayerArg::Random)]
    player: PlayerArg,
    /// The n-tuple network file of the ntuple and expectimax players (from `2048 train`).
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Expectimax search depth in moves (1 = greedy; default 2). The cost grows about tenfold
    /// a move of depth, since the search has no pruning.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=8))]
    depth: Option<u32>,
    /// Tile downgrading (ntuple, expectimax): a leaf holding this tile or a larger one is
    /// valued with every tile above its largest missing tile halved, as TDL2048+ does for
    /// tiles the network has rarely seen (32768 is usual).
    #[arg(long, value_name = "TILE")]
    downgrade_at: Option<u32>,
    /// Write every game to FILE, one JSON line each (seed, game, score, largest tile, ending,
    /// moves), for `2048 replay`. Written atomically when the batch ends; `-` streams them to
    /// standard output as they end, and the report to stderr.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Number of games (played in flight together).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    games: u32,
    /// Rollouts per legal move (mc; default 100).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    rollouts: Option<u32>,
    /// What the mc player maximises: the points gained (default), or the tile sum of the final
    /// board.
    #[arg(long, value_enum)]
    objective: Option<ObjectiveArg>,
    #[command(flatten)]
    spending: SpendingArgs,
    /// Seed of every random choice (default: a random seed, printed in the report).
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    compute: ComputeArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(ClapArgs, Debug)]
pub struct ReplayArgs {
    /// A file from `2048 play --record`.
    file: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
}

/// Tuple shapes of a new network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TupleSet {
    /// Five 4-cell tuples (rows and 2x2 squares): 5 x 16^4 weights, learns in seconds.
    Small,
    /// The classic four 6-cell tuples: 4 x 16^6 weights (256 MiB as f32).
    Standard,
}

impl TupleSet {
    fn tuples(self) -> Vec<Vec<u8>> {
        match self {
            TupleSet::Small => small_tuples(),
            TupleSet::Standard => standard_tuples(),
        }
    }
}

#[derive(ClapArgs, Debug)]
pub struct TrainArgs {
    /// Training games in all: with --resume, the games already in the file count toward N.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1u64 << 32))]
    games: u64,
    /// The network file to write (at the end and at every checkpoint, atomically).
    #[arg(long)]
    out: PathBuf,
    /// Continue training the network in this file (its game count continues).
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Start a new network even though --out holds one (which it replaces).
    #[arg(long)]
    force: bool,
    /// Seed of the training games' spawns (default: a random seed, printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Learning rate, spread over the features of a board (with --tc, 1 is usual).
    #[arg(long, default_value_t = 0.1)]
    alpha: f32,
    /// Temporal coherence: each weight's rate scaled by |accumulated error| / accumulated
    /// |error|. Its state (8 bytes a weight) is kept in --out, so that --resume continues it.
    #[arg(long)]
    tc: bool,
    /// TD(λ): each game's afterstates updated backward toward their λ-returns when it ends
    /// (0: TD(0), online).
    #[arg(long, default_value_t = 0.0)]
    lambda: f32,
    /// Multi-stage network: split the weights at these tiles (e.g. 16384, or 8192,16384); a
    /// board's stage is how many of them its largest tile reaches. With --resume of a
    /// one-stage network: weight promotion, every stage starting from its trained weights.
    #[arg(long, value_delimiter = ',', value_name = "TILES")]
    stages: Vec<u32>,
    /// Carousel shaping: every other training game starts from a position where an earlier
    /// game first held this tile (e.g. 16384), so that half the training is spent beyond it.
    #[arg(long, value_name = "TILE")]
    restart_at: Option<u32>,
    /// Midpoint restarts (ziap/2048-tdl's): a training game longer than 10 moves goes on from
    /// its middle afterstate with a new tile, again until a run is that short, so that the end
    /// of every game is trained many times over.
    #[arg(long)]
    restart_midpoint: bool,
    /// Optimistic initialisation: every board's value before training (e.g. 320000). New
    /// networks only.
    #[arg(long, default_value_t = 0.0, value_name = "VALUE")]
    init: f32,
    /// Games per reported block.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    block: u64,
    /// Write --out every K games (checked at block ends).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    checkpoint_every: Option<u64>,
    /// Store the weights as f16 (half the size; training itself runs in f32).
    #[arg(long)]
    f16: bool,
    /// Tuple shapes of a new network (default standard; with --resume, the file's).
    #[arg(long, value_enum)]
    tuples: Option<TupleSet>,
    #[command(flatten)]
    compute: CpuComputeArgs,
    #[command(flatten)]
    output: OutputArgs,
}

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

/// The `2048 replay --json` object.
#[derive(Serialize)]
struct ReplayReport {
    file: String,
    games: u64,
    moves: u64,
}

fn replay(a: ReplayArgs) -> anyhow::Result<()> {
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

fn play(a: PlayArgs) -> anyhow::Result<()> {
    let kind = PlayerKind::from(a.player);
    let uses_network = matches!(kind, PlayerKind::Ntuple | PlayerKind::Expectimax);
    let name = kind.name();
    if uses_network && a.weights.is_none() {
        return Err(input_error(format!(
            "--player {name} needs --weights FILE (a network from `rollsim 2048 train`)"
        )));
    }
    let network_players = "--player ntuple or expectimax";
    let mc = kind == PlayerKind::Mc;
    super::refuse_flags(
        &[
            (
                !uses_network && a.weights.is_some(),
                "--weights",
                network_players,
            ),
            (
                !uses_network && a.downgrade_at.is_some(),
                "--downgrade-at",
                network_players,
            ),
            (
                kind != PlayerKind::Expectimax && a.depth.is_some(),
                "--depth",
                "--player expectimax",
            ),
            (!mc && a.rollouts.is_some(), "--rollouts", "--player mc"),
            (!mc && a.objective.is_some(), "--objective", "--player mc"),
            (!mc && a.spending.crn, "--crn", "--player mc"),
            (!mc && a.spending.race, "--race", "--player mc"),
        ],
        &format!("--player {name}"),
    )?;
    let downgrade = a
        .downgrade_at
        .map(|t| tile_flag("--downgrade-at", t))
        .transpose()?;
    if kind == PlayerKind::Random && a.compute.backend() == rollsim_gpu::Backend::Gpu {
        return Err(input_error(
            "--player random plays on CPU threads (it has nothing for a GPU to do); --backend \
             gpu is for mc, ntuple and expectimax",
        ));
    }
    // Said up front, since nothing else shows it when stderr is not a terminal.
    if let Some(depth) = a.depth.filter(|&d| d >= 4)
        && !a.output.quiet
        && !a.output.json
    {
        eprintln!(
            "note: expectimax depth {depth} costs about ten times depth {} a move \
             (docs/measured.md has measured times)",
            depth - 1
        );
    }
    a.compute.init_threads()?;
    let network = || -> anyhow::Result<Arc<Network>> {
        let path = a.weights.as_ref().expect("checked above");
        Ok(Arc::new(load_network(path, "--weights")?))
    };
    let player = match kind {
        PlayerKind::Random => Player::Random,
        PlayerKind::Mc => Player::Mc {
            rollouts: a.rollouts.unwrap_or(100),
            objective: a.objective.map_or(Objective::Score, Objective::from),
            spending: a.spending.into(),
        },
        PlayerKind::Ntuple => Player::Ntuple {
            network: network()?,
        },
        PlayerKind::Expectimax => Player::Expectimax {
            network: network()?,
            depth: a.depth.unwrap_or(2),
        },
    };
    let seed = a.seed.unwrap_or_else(rand::random);
    // `--record -` streams the records to standard output, and the report to stderr.
    let record_to_stdout = a
        .record
        .as_deref()
        .is_some_and(rollsim_core::files::is_stdout);
    if let Some(path) = a.record.as_deref().filter(|_| !record_to_stdout) {
        rollsim_core::files::check_output(path)?;
        if let Some(weights) = &a.weights {
            rollsim_core::files::check_not_an_input(path, &[weights])?;
        }
    }
    let config = PlayConfig {
        downgrade,
        record: a.record.is_some(),
        ..PlayConfig::new(player, a.games, seed)
    };
    // Random play runs on CPU threads whatever the backend, without opening a GPU.
    let engines: Box<dyn Engines> = match kind {
        PlayerKind::Random => Box::new(rollsim_2048::engines::Cpu),
        _ => crate::backend::game2048(a.compute.backend())?,
    };
    let bar = progress_bar(u64::from(a.games), "games", a.output.quiet);
    let start = std::time::Instant::now();
    let run_blocks = |sink: &mut dyn FnMut(&[Game]) -> anyhow::Result<()>| {
        rollsim_2048::play::run::play(&config, engines.as_ref(), &|n| bar.inc(n), sink)
    };
    let record = |g: &Game| GameRecord::of(config.player.kind(), seed, g).expect("moves logged");
    let ran = match &a.record {
        None => run_blocks(&mut |_| Ok(()))?,
        Some(_) if record_to_stdout => {
            let ran = run_blocks(&mut |games| {
                for g in games {
                    outln!("{}", serde_json::to_string(&record(g))?);
                }
                Ok(())
            })?;
            crate::output::report_to_stderr();
            ran
        }
        Some(path) => {
            let mut ran = None;
            rollsim_core::files::write_atomically(path, |w| -> anyhow::Result<()> {
                ran = Some(run_blocks(&mut |games| {
                    for g in games {
                        serde_json::to_writer(&mut *w, &record(g))?;
                        w.write_all(b"\n")?;
                    }
                    Ok(())
                })?);
                Ok(())
            })
            .with_context(|| format!("cannot write --record {}", path.display()))?;
            ran.expect("written")
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let report = Report::new(&config, &ran.tally, seconds, ran.device, ran.adapter);
    crate::output::emit(&report, a.output.json)
}

impl crate::output::Report for Report {
    fn text(&self) {
        print_report(self);
    }
}

fn print_report(r: &Report) {
    let player = match r.player {
        PlayerKind::Random => "random".to_string(),
        PlayerKind::Ntuple | PlayerKind::Expectimax => {
            let net = match &r.network {
                Some(n) => format!(
                    "{} tuples of {} cells, {}, trained {} games",
                    n.tuples.len(),
                    n.tuples
                        .iter()
                        .map(|t| t.len().to_string())
                        .collect::<Vec<_>>()
                        .join("/"),
                    n.element.name(),
                    n.training_games
                ),
                None => String::new(),
            };
            let downgrade = match r.downgrade_at {
                Some(t) => format!(", leaves downgraded from {t}"),
                None => String::new(),
            };
            match r.depth {
                Some(d) => format!("expectimax depth {d} ({net}{downgrade})"),
                None => format!("ntuple greedy ({net}{downgrade})"),
            }
        }
        PlayerKind::Mc => {
            let s = r.spending.unwrap_or_default();
            format!(
                "mc ({} rollouts per move, objective {}{}{})",
                r.rollouts.unwrap_or(0),
                r.objective.map_or("", Objective::name),
                if s.common {
                    ", common random numbers"
                } else {
                    ""
                },
                if s.race { ", racing" } else { "" }
            )
        }
    };
    let backend = match &r.adapter {
        Some(a) => format!("{} ({a})", r.backend),
        None => format!("{} ({})", r.backend, count(r.threads, "thread")),
    };
    outln!("player      {player}");
    outln!("backend     {backend}");
    outln!("games       {} (seed {})", r.games, r.seed);
    outln!(
        "score       mean {:.1} [95% CI {:.1}, {:.1}], median {:.1}, sd {:.1}, min {}, max {}",
        r.score.mean,
        r.score.mean_ci95.lo,
        r.score.mean_ci95.hi,
        r.score.median,
        r.score.sd,
        r.score.min,
        r.score.max
    );
    let reach: Vec<String> = r
        .reach
        .iter()
        // Every tile reached, and the first one not reached (its interval bounds the rate).
        .scan(true, |more, (t, p)| {
            let show = *more;
            *more = *p > 0.0;
            Some(show.then_some((t, p)))
        })
        .flatten()
        .map(|(t, p)| {
            let ci = r.reach_ci95[t];
            format!(
                "{t} {:.1}% [{:.1}, {:.1}]",
                100.0 * p,
                100.0 * ci.lo,
                100.0 * ci.hi
            )
        })
        .collect();
    outln!(
        "reached     {}",
        if reach.is_empty() {
            "-".into()
        } else {
            reach.join(", ")
        }
    );
    if r.overflow_games > 0 {
        outln!(
            "overflow    {} games stopped at a 32768+32768 merge",
            r.overflow_games
        );
    }
    outln!("moves/game  {:.1}", r.moves_per_game);
    let mut speed = format!(
        "{:.3} s: {:.1} games/s, {:.0} moves/s",
        r.seconds, r.games_per_s, r.moves_per_s
    );
    if let Some(rps) = r.rollouts_per_s {
        speed += &format!(", {rps:.0} rollouts/s");
    }
    outln!("speed       {speed}");
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

fn eval(a: EvalArgs) -> anyhow::Result<()> {
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

/// The `2048 train --json` object.
#[derive(Serialize)]
struct TrainReport {
    /// Training games of the network written (resumed games included).
    games: u64,
    /// Games played by this run.
    games_this_run: u64,
    seed: u64,
    alpha: f32,
    rate: Rate,
    lambda: f32,
    threads: usize,
    tuples: Vec<Vec<u8>>,
    /// What the weights are and how they were trained, as the file records it.
    recipe: Recipe,
    element: Element,
    out: String,
    seconds: f64,
    moves: u64,
    moves_per_s: f64,
    /// Per block: games so far, mean and max score, reach rates, moves/s.
    curve: Vec<BlockStats>,
}

fn block_line(b: &BlockStats) -> String {
    let reach: Vec<String> = b
        .reach
        .range(rollsim_2048::reach::SHOWN_FROM..)
        .map(|(t, p)| format!("{t} {:5.1}%", 100.0 * p))
        .collect();
    format!(
        "games {:>9}  mean {:>9.1}  max {:>7}  {}  {:>6.3} M moves/s  {:>7.1} s",
        b.games,
        b.mean_score,
        b.max_score,
        reach.join("  "),
        b.moves_per_s / 1e6,
        b.seconds
    )
}

fn train_command(a: TrainArgs) -> anyhow::Result<()> {
    a.compute.init("n-tuple training and its TD updates")?;
    if !(a.alpha.is_finite() && a.alpha > 0.0) {
        return Err(input_error(format!(
            "--alpha must be a positive number, not {}",
            a.alpha
        )));
    }
    if !(0.0..=1.0).contains(&a.lambda) {
        return Err(input_error(format!(
            "--lambda must be from 0 to 1, not {}",
            a.lambda
        )));
    }
    if !a.init.is_finite() {
        return Err(input_error(format!(
            "--init must be a number, not {}",
            a.init
        )));
    }
    if a.resume.is_some() && a.init != 0.0 {
        return Err(input_error(
            "--init shapes a new network; a resumed one keeps its file's weights",
        ));
    }
    let out_dir = a
        .out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !out_dir.is_dir() {
        return Err(input_error(format!(
            "--out {}: the directory {} does not exist",
            a.out.display(),
            out_dir.display()
        )));
    }
    rollsim_core::files::check_output(&a.out)?;
    // Held to the end: a second training into the same file would lose one run's games.
    let _lock = rollsim_core::files::lock_for_writing(&a.out)?;
    if a.resume.is_none() && !a.force && a.out.exists() {
        return Err(input_error(format!(
            "--out {} already exists (an earlier training, or its checkpoint); continue it with \
             --resume {0}, or replace it with --force",
            a.out.display()
        )));
    }
    let rate = if a.tc { Rate::Coherence } else { Rate::Fixed };
    let plan = |weights: u64, need: u64| {
        let tc = if a.tc { " and their TC state" } else { "" };
        check_memory(&format!("training {weights} weights{tc}"), need).map_err(input_error)
    };
    let mut net = match &a.resume {
        Some(path) => {
            let net = load_network(path, "--resume")?;
            let stages = a.stages.len() as u64 + 1;
            let weights = match a.stages.is_empty() {
                true => net.len() as u64,
                false => (net.stage_len() as u64).saturating_mul(stages),
            };
            plan(weights, training_bytes(Some(&net), weights, rate))?;
            if let Some(set) = a.tuples
                && set.tuples() != net.tuples()
            {
                return Err(input_error(format!(
                    "--tuples {set:?} does not match the tuples of {}: {:?}",
                    path.display(),
                    net.tuples()
                )));
            }
            let net = net.into_f32();
            if a.stages.is_empty() {
                net
            } else {
                // Weight promotion: each new stage starts from the trained weights.
                net.into_stages(&a.stages).map_err(|e| {
                    input_error(format!("--stages on --resume {}: {e}", path.display()))
                })?
            }
        }
        None => {
            let recipe = Recipe {
                stages: a.stages.clone(),
                init: a.init,
                training: Vec::new(),
            };
            let tuples = a.tuples.unwrap_or(TupleSet::Standard).tuples();
            let splits = recipe
                .split_exponents()
                .map_err(|e| input_error(format!("{e}")))?;
            let weights = new_network_weights(&tuples, splits.len() + 1);
            plan(weights, training_bytes(None, weights, rate))?;
            Network::with_recipe(tuples, recipe).map_err(|e| input_error(format!("{e}")))?
        }
    };
    let already = net.games();
    if already >= a.games {
        return Err(input_error(format!(
            "the network has already played {already} training games, --games {} asks for no more",
            a.games
        )));
    }
    let threads = match a.compute.threads.count {
        Some(t) => usize::from(t),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let seed = a.seed.unwrap_or_else(rand::random);
    let element = if a.f16 { Element::F16 } else { Element::F32 };
    let restart_at = a
        .restart_at
        .map(|t| tile_flag("--restart-at", t))
        .transpose()?;
    let config = TrainConfig {
        games: a.games - already,
        seed,
        alpha: a.alpha,
        rate,
        lambda: a.lambda,
        threads,
        block: a.block,
        restart_at,
        restart_midpoint: a.restart_midpoint,
    };
    if !a.output.json {
        outln!(
            "training {} games ({} to go) of {} tuples ({} weights; {}) by {} alpha {} lambda {}, \
             seed {seed}, {}",
            a.games,
            config.games,
            net.tuples().len(),
            net.len(),
            net.recipe().describe(),
            rate.name(),
            a.alpha,
            a.lambda,
            count(threads, "thread")
        );
    }
    let bar = super::progress_bar_with_message(config.games, "games", a.output.quiet);
    let out = a.out.clone();
    let save = |net: &Network| {
        net.save(&out, element)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))
    };
    let summary = train(&mut net, &config, &|n| bar.inc(n), &mut |b, net| {
        bar.set_message(format!("mean {:.0} (last block)", b.mean_score));
        if !a.output.json {
            bar.suspend(|| outln!("{}", block_line(b)));
        }
        if let Some(k) = a.checkpoint_every
            && b.games / k > (b.games - b.block_games) / k
            && b.games < a.games
        {
            save(net)?;
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    save(&net)?;
    let report = TrainReport {
        games: net.games(),
        games_this_run: summary.games,
        seed,
        alpha: a.alpha,
        rate,
        lambda: a.lambda,
        threads,
        tuples: net.tuples().to_vec(),
        recipe: net.recipe().clone(),
        element,
        out: a.out.display().to_string(),
        seconds: summary.seconds,
        moves: summary.moves,
        moves_per_s: summary.moves_per_s,
        curve: summary.blocks,
    };
    if a.output.json {
        return print_json(&report);
    }
    outln!(
        "{} games in {:.1} s: {:.0} moves/s; wrote {} ({}, {} training games)",
        report.games_this_run,
        report.seconds,
        report.moves_per_s,
        report.out,
        element.name(),
        report.games
    );
    Ok(())
}

/// The exponent of the tile `t` that `flag` was given: a tile from 8 to 32768.
fn tile_flag(flag: &str, t: u32) -> anyhow::Result<u8> {
    rollsim_2048::board::tile_exponent(t)
        .filter(|&e| e >= 3)
        .ok_or_else(|| input_error(format!("{flag} {t} is not a tile from 8 to 32768")))
}
