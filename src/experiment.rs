//! `rollsim 2048 experiment` and `rollsim 2048 merge`: rollout-count sweeps of the Monte Carlo
//! player, resumable and sharded, and their summary.

use std::path::PathBuf;

use clap::Args as ClapArgs;

use super::{ComputeArgs, OutputArgs, input_error, print_json, progress_bar_with_message};
use crate::args::{ObjectiveArg, SpendingArgs};
use crate::backend::rollout_engine;
use rollsim_2048::experiment::{
    self, ExperimentError, Header, Results, Shard, Summary, parse_rollouts, read_results,
    summarize, write_csv,
};
use rollsim_2048::reach::{Reached, SHOWN_FROM};
use rollsim_core::progress::Progress;

#[derive(ClapArgs, Debug)]
pub struct ExperimentArgs {
    /// The results file (JSON lines) to create, or to continue when it exists.
    #[arg(long, value_name = "FILE", required_unless_present = "report")]
    out: Option<PathBuf>,
    /// Summarise a results file (per N: score mean with 95% CI, median, reach rates with Wilson
    /// 95% intervals) and write FILE.csv; plays nothing.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["out", "rollouts", "games", "seed", "shard", "objective", "crn", "race", "backend", "threads"])]
    report: Option<PathBuf>,
    /// Rollouts per move of each sweep point, comma-separated: e.g. 10,100,1000.
    #[arg(long, value_name = "N,N,…", required_unless_present = "report")]
    rollouts: Option<String>,
    /// Games per sweep point (all shards together).
    #[arg(long, required_unless_present = "report")]
    games: Option<u32>,
    /// What the mc player maximises.
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Score)]
    objective: ObjectiveArg,
    #[command(flatten)]
    spending: SpendingArgs,
    /// Seed of every game (recorded in the file; required so shards and reruns agree).
    #[arg(long, required_unless_present = "report")]
    seed: Option<u64>,
    /// Play only the games whose index is I mod N (shards numbered 0..N-1).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    #[command(flatten)]
    compute: ComputeArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(ClapArgs, Debug)]
pub struct MergeArgs {
    /// The merged results file to write.
    out: PathBuf,
    /// The shards' results files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// Experiment errors are bad input (exit code 2); I/O and device errors are not.
fn classify(e: anyhow::Error) -> anyhow::Error {
    match e.downcast::<ExperimentError>() {
        Ok(ExperimentError(m)) => input_error(m),
        Err(e) => e,
    }
}

pub fn experiment(a: ExperimentArgs) -> anyhow::Result<()> {
    if let Some(path) = &a.report {
        experiment::check_csv(path)?;
        let file = read_results(path).map_err(classify)?;
        return report(path, &summarize(&file), a.output.json);
    }
    let (Some(out), Some(rollouts), Some(games), Some(seed)) =
        (&a.out, &a.rollouts, a.games, a.seed)
    else {
        return Err(input_error(
            "--out, --rollouts, --games and --seed are required",
        ));
    };
    rollsim_core::files::check_output(out)?;
    experiment::check_csv(out)?;
    let rollouts = parse_rollouts(rollouts).map_err(input_error)?;
    if games == 0 {
        return Err(input_error("--games must be at least 1"));
    }
    let shard: Shard = match &a.shard {
        Some(s) => s.parse().map_err(input_error)?,
        None => Shard::ALL,
    };
    a.compute.init_threads()?;
    let header = Header::new(
        seed,
        a.objective.into(),
        a.spending.into(),
        games,
        rollouts,
        shard,
    );
    // The engine before the results file: a bad device setting is refused before anything is
    // written.
    let mut engine = rollout_engine(a.compute.backend())?;
    let mut results = Results::open(out, &header).map_err(classify)?;
    if results.repaired {
        eprintln!(
            "rollsim: {}: dropped a cut-short last line (an interrupted write)",
            out.display()
        );
    }
    let pending = results.pending(&header);
    let total: u64 = pending.iter().map(|&(_, g)| g).sum();
    if results.resumed && !a.output.json && !a.output.quiet {
        eprintln!(
            "rollsim: {}: resuming, {} games done, {total} to play",
            out.display(),
            results.done.len()
        );
    }
    if total > 0 {
        let bar = Points(progress_bar_with_message(total, "games", a.output.quiet));
        experiment::run(&header, &mut results, engine.as_mut(), &bar)?;
        bar.0.finish_and_clear();
    }
    let file = read_results(out).map_err(classify)?;
    report(out, &summarize(&file), a.output.json)
}

/// One bar over every sweep point, its message naming the point being played.
struct Points(indicatif::ProgressBar);

impl Progress for Points {
    fn start(&self, _: u64, what: &str) {
        self.0.set_message(what.to_string());
    }
    fn inc(&self, n: u64) {
        self.0.inc(n);
    }
}

fn report(path: &std::path::Path, s: &Summary, json: bool) -> anyhow::Result<()> {
    // The summary first, then the CSV: a CSV that cannot be written loses no figure.
    if json {
        print_json(s)?;
        write_csv(path, s)?;
        return Ok(());
    }
    let objective = s.objective.name();
    outln!(
        "experiment  seed {}, objective {}{}{}, {} games per N, shard {}{}",
        s.seed,
        objective,
        if s.spending.common {
            ", common random numbers"
        } else {
            ""
        },
        if s.spending.race { ", racing" } else { "" },
        s.games,
        s.shard,
        if s.complete { "" } else { " (incomplete)" }
    );
    use crate::output::{Align::Right, Table};
    let tiles: Vec<String> = Reached::default()
        .counts()
        .filter(|&(t, _)| t >= SHOWN_FROM)
        .map(|(t, _)| format!("{t} [95% CI]"))
        .collect();
    let mut columns = vec![
        ("rollouts", Right),
        ("games", Right),
        ("mean score [95% CI]", Right),
        ("median", Right),
        ("simulated moves/game", Right),
    ];
    columns.extend(tiles.iter().map(|t| (t.as_str(), Right)));
    let mut table = Table::new(&columns);
    for p in &s.points {
        let mut cells = vec![
            p.rollouts.to_string(),
            if p.games == p.expected {
                p.games.to_string()
            } else {
                format!("{}/{}", p.games, p.expected)
            },
            format!(
                "{:.1} [{:.1}, {:.1}]",
                p.score.mean, p.score.mean_ci95.lo, p.score.mean_ci95.hi
            ),
            format!("{:.1}", p.score.median),
            match p.simulated_moves_per_game {
                // Files written before the effort was kept.
                0.0 => "-".to_string(),
                m => format!("{m:.3e}"),
            },
        ];
        cells.extend(p.reach.iter().filter(|r| r.tile >= SHOWN_FROM).map(|r| {
            format!(
                "{:.1}% [{:.1}, {:.1}]",
                100.0 * r.rate,
                100.0 * r.ci95.lo,
                100.0 * r.ci95.hi
            )
        }));
        table.row(cells);
    }
    table.print();
    let csv = write_csv(path, s)?;
    outln!("wrote {}", csv.display());
    Ok(())
}

pub fn merge(a: MergeArgs) -> anyhow::Result<()> {
    rollsim_core::files::check_output(&a.out)?;
    let games = experiment::merge(&a.out, &a.files).map_err(classify)?;
    outln!(
        "merged {games} games from {} files into {}",
        a.files.len(),
        a.out.display()
    );
    Ok(())
}
