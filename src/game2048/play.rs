//! `rollsim 2048 play`: a batch of games by any player, on any backend.

use rollsim_core::text::count;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use rollsim_2048::replay::GameRecord;

use clap::Args as ClapArgs;

use crate::args::{ObjectiveArg, PlayerArg, SpendingArgs};
use crate::{ComputeArgs, OutputArgs, input_error, progress_bar};
use rollsim_2048::engines::Engines;
use rollsim_2048::{Game, Network, Objective, PlayConfig, Player, PlayerKind, Report};

use super::{load_network, tile_flag};

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

pub(super) fn play(a: PlayArgs) -> anyhow::Result<()> {
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
    crate::refuse_flags(
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
