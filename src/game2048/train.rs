//! `rollsim 2048 train`: an n-tuple network trained by TD learning.

use rollsim_core::memory::check_memory;
use rollsim_core::text::count;
use std::path::{Path, PathBuf};

use clap::{Args as ClapArgs, ValueEnum};
use serde::Serialize;

use crate::{CpuComputeArgs, OutputArgs, input_error, print_json};
use rollsim_2048::ntuple::{Rate, Recipe, small_tuples, standard_tuples};
use rollsim_2048::train::{BlockStats, TrainConfig, new_network_weights, train, training_bytes};
use rollsim_2048::{Element, Network};

use super::{load_network, tile_flag};

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

pub(super) fn train_command(a: TrainArgs) -> anyhow::Result<()> {
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
    let bar = crate::progress_bar_with_message(config.games, "games", a.output.quiet);
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
