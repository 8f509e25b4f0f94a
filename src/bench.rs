//! `rollsim bench`: every workload on every backend it can use, side by side.

use rollsim_core::Device;
use rollsim_core::text::count;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use serde::Serialize;

use super::print_json;
use crate::OutputArgs;
use crate::args::BackendArg;
use crate::backend::{GpuEngines, gpu_engines};
use rollsim_2048::CpuEngine;
use rollsim_2048::ntuple::{Network, standard_tuples};
use rollsim_2048::rollout::gpu::GpuRolloutEngine;
use rollsim_bench::{
    BYTES_PER_ROOT, Measurement, bearoff_build, mc_games, ntuple_lookups_cpu, ntuple_lookups_gpu,
    ntuple_training, puzzle_optimal, puzzle_solve_loop, random_playouts, rollouts, sample_boards,
    sample_roots, standard_network_bytes,
};
use rollsim_core::files::{check_output, check_side_file, write_atomically};
use rollsim_core::memory::check_memory;
use rollsim_gpu::{Backend, GpuError};
use rollsim_puzzle::pdb::Partition;

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// A first look in well under a minute: shorter runs, smaller batches.
    #[arg(long)]
    quick: bool,
    /// Restrict to one backend: cpu, gpu (any adapter), or auto (CPU plus a real GPU only).
    /// Default: every backend this machine has, a software GPU such as lavapipe included.
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    #[command(flatten)]
    threads: super::ThreadArgs,
    /// Roots per Monte Carlo batch (default 256, 64 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    roots: Option<u32>,
    /// Rollouts per root (default 256, 64 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    rollouts: Option<u32>,
    /// GPU rollouts per invocation, played back to back (default: the engine's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    per_invocation: Option<u32>,
    /// Seconds per workload (default 5, 1 with --quick).
    #[arg(long)]
    seconds: Option<f64>,
    /// Write the figures with the machine description as JSON to this file, and as CSV beside
    /// it (`rec.json`: `rec.csv`; another name gets `.csv` added); each written to a temporary
    /// file, then renamed.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run only these workloads (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', num_args = 1.., value_name = "NAME",
          value_parser = clap::builder::PossibleValuesParser::new(workload_names()))]
    only: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Compare two records written by `rollsim bench --out` (say, two machines, or before and
    /// after a change): each workload's figures and the speed ratio NEW/OLD.
    Compare {
        /// The earlier record (`rollsim bench --out OLD`).
        old: PathBuf,
        /// The later record, compared with OLD.
        new: PathBuf,
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Serialize)]
struct BenchReport {
    rollsim_version: &'static str,
    git_commit: &'static str,
    os: String,
    /// Seconds since 1970 when the run ended.
    unix_time: u64,
    cpu: String,
    cpu_threads: usize,
    adapter: Option<rollsim_gpu::AdapterSummary>,
    /// The kernel's own time from timestamp queries, where the adapter has them.
    gpu_kernel_seconds: Option<f64>,
    measurements: Vec<Measurement>,
}

/// Bearoff tables to build: gnubg's standard sizes; the large ones only in the full run.
fn bearoff_tables(quick: bool) -> &'static [(u32, u32, bool)] {
    if quick {
        &[(6, 15, false), (6, 6, true)]
    } else {
        &[
            (6, 15, false),
            (8, 15, false),
            (10, 15, false),
            (6, 6, true),
            (8, 6, true),
        ]
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// What every workload is run with.
struct Run<'a> {
    quick: bool,
    secs: f64,
    threads: usize,
    roots: &'a [rollsim_2048::Root],
    rollouts: u32,
    /// Whether `--roots` chose the roots (else a real GPU gets a batch to fill it).
    roots_given: bool,
    per_invocation: Option<u32>,
    /// The lookups' network, made only when they run.
    network: Option<&'a Network>,
    boards: &'a [rollsim_2048::Board],
    /// The GPU rollouts' kernel time from timestamp queries, where the adapter has them.
    kernel_seconds: std::cell::Cell<Option<f64>>,
}

impl Run<'_> {
    fn network(&self) -> anyhow::Result<&Network> {
        self.network
            .ok_or_else(|| anyhow::anyhow!("internal error: no network for the lookups"))
    }
}

/// Games and rollouts a move of the mc-games workload: a few seconds of lavapipe, or a batch
/// of hundreds of thousands of rollouts a step on a real GPU.
fn mc_games_size(quick: bool, real_gpu: bool) -> (u32, u32) {
    match (quick, real_gpu) {
        (_, true) => (1024, 100),
        (true, false) => (16, 8),
        (false, false) => (32, 10),
    }
}

/// Adds the share of a measurement's wall time the device spent in kernels, where the adapter
/// has timestamps.
fn with_device_busy(m: &mut Measurement, kernel_seconds: Option<f64>) {
    if let Some(k) = kernel_seconds {
        m.extra
            .push(("% device busy".into(), 100.0 * k / m.seconds));
    }
}

type CpuRun = fn(&Run) -> anyhow::Result<Vec<Measurement>>;
type GpuRun = fn(&Run, &GpuEngines) -> anyhow::Result<Vec<Measurement>>;

/// One workload of `bench`: its name for `--only`, and how it runs on each backend it has.
struct Workload {
    name: &'static str,
    cpu: Option<CpuRun>,
    gpu: Option<GpuRun>,
}

/// Every workload, in the order they run (the CPU's first, then the GPU's).
const WORKLOADS: &[Workload] = &[
    Workload {
        name: "playouts",
        cpu: Some(|c| {
            let mut out = vec![random_playouts(1, c.secs)?];
            if c.threads > 1 {
                out.push(random_playouts(c.threads, c.secs)?);
            }
            Ok(out)
        }),
        gpu: None,
    },
    Workload {
        name: "rollouts",
        cpu: Some(|c| Ok(vec![rollouts(&mut CpuEngine, c.roots, c.rollouts, c.secs)?])),
        gpu: Some(|c, e| {
            let g = e.gpu();
            let mut engine = GpuRolloutEngine::new(g)?;
            if let Some(k) = c.per_invocation {
                engine = engine.with_rollouts_per_invocation(k);
            }
            // One untimed call compiles the pipeline and sizes the buffers.
            // A batch to fill a large GPU: 65,536 roots of 256 rollouts are 16.7 M.
            let big;
            let roots = match g.adapter.real_gpu && !c.roots_given {
                true => {
                    big = sample_roots(1 << 16);
                    &big
                }
                false => c.roots,
            };
            engine.evaluate_warm(roots, c.rollouts)?;
            let before = engine.gpu_seconds;
            let mut m = rollouts(&mut engine, roots, c.rollouts, c.secs)?;
            let kernel = engine.gpu_seconds.zip(before).map(|(a, b)| a - b);
            c.kernel_seconds.set(kernel);
            with_device_busy(&mut m, kernel);
            Ok(vec![m])
        }),
    },
    Workload {
        name: "mc-games",
        cpu: Some(|c| {
            let (games, n) = mc_games_size(c.quick, false);
            Ok(vec![mc_games(&mut CpuEngine, games, n)?])
        }),
        // Each batch waited for, then in two alternating halves: what the overlap gains.
        gpu: Some(|c, e| {
            let g = e.gpu();
            let (games, n) = mc_games_size(c.quick, g.adapter.real_gpu);
            let mut out = Vec::new();
            for overlap in [false, true] {
                let mut engine = GpuRolloutEngine::new(g)?.with_overlap(overlap);
                engine.evaluate_warm(c.roots, n)?;
                let before = engine.gpu_seconds;
                let mut m = mc_games(&mut engine, games, n)?;
                m.workload += if overlap {
                    ", halves overlapped"
                } else {
                    ", each step waited for"
                };
                with_device_busy(&mut m, engine.gpu_seconds.zip(before).map(|(a, b)| a - b));
                out.push(m);
            }
            Ok(out)
        }),
    },
    Workload {
        name: "ntuple-lookups",
        cpu: Some(|c| Ok(vec![ntuple_lookups_cpu(c.network()?, c.boards, c.secs)])),
        gpu: Some(|c, e| {
            Ok(vec![ntuple_lookups_gpu(
                &e.g2048,
                c.network()?,
                c.boards,
                c.secs,
            )?])
        }),
    },
    Workload {
        name: "ntuple-training",
        cpu: Some(|c| Ok(vec![ntuple_training(if c.quick { 500 } else { 5000 })?])),
        gpu: None,
    },
    Workload {
        name: "puzzle-loop",
        cpu: Some(|c| Ok(vec![puzzle_solve_loop(c.secs)])),
        gpu: None,
    },
    Workload {
        name: "puzzle-optimal",
        // The 6-6-3 databases build in seconds (then come from the cache); 7-8 takes minutes.
        cpu: Some(|c| {
            let (partition, boards) = match c.quick {
                true => (Partition::P555, 20),
                false => (Partition::P663, 100),
            };
            Ok(vec![puzzle_optimal(partition, boards)?])
        }),
        gpu: None,
    },
    Workload {
        name: "bearoff",
        cpu: Some(|c| {
            bearoff_tables(c.quick)
                .iter()
                .map(|&(points, checkers, two)| bearoff_build(points, checkers, two, None, c.secs))
                .collect()
        }),
        // The two-sided sweep on every adapter; the one-sided one where the engines say the
        // adapter can (f64).
        gpu: Some(|c, e| {
            let mut out = Vec::new();
            // The large tables would take minutes on a software adapter.
            let quick = c.quick || !e.gpu().adapter.real_gpu;
            for &(points, checkers, two) in bearoff_tables(quick) {
                match bearoff_build(points, checkers, two, Some(&e.bearoff), c.secs) {
                    Ok(m) => out.push(m),
                    // A table larger than the adapter's buffers, or an adapter without what
                    // the sweep needs, is no reason to stop the run.
                    Err(e)
                        if e.downcast_ref::<GpuError>()
                            .is_some_and(|e| matches!(e, GpuError::Unsupported(_))) =>
                    {
                        eprintln!("  skipped bearoff {checkers}x{points} on the gpu: {e}");
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(out)
        }),
    },
];

/// The names `--only` takes.
pub fn workload_names() -> Vec<&'static str> {
    WORKLOADS.iter().map(|w| w.name).collect()
}

/// What to say when `bench` runs without a GPU, and how to get one.
const NO_GPU: &str = "no GPU in this run, so no GPU rows. rollsim reaches GPUs through wgpu \
(Vulkan, Metal, DX12); on Linux install the vendor's Vulkan driver, or Mesa's (Debian and \
Ubuntu: mesa-vulkan-drivers, with the lavapipe software adapter, which `--backend auto` leaves \
out and `--backend gpu` takes). `rollsim devices` lists what rollsim sees.";

pub fn run(a: Args) -> anyhow::Result<()> {
    if let Some(Command::Compare { old, new, output }) = &a.command {
        return compare(old, new, output.json);
    }
    if let Some(path) = &a.out {
        check_output(path)?;
        check_side_file(&beside(path, "csv"), CSV_SIGNATURE)?;
    }
    a.threads.init()?;
    let secs = a.seconds.unwrap_or(if a.quick { 1.0 } else { 5.0 });
    if !(secs.is_finite() && secs > 0.0) {
        return Err(super::input_error(format!(
            "--seconds must be positive, not {secs}"
        )));
    }
    let selected = |w: &Workload| a.only.is_empty() || a.only.iter().any(|n| n == w.name);
    let runs = |name: &str| WORKLOADS.iter().any(|w| w.name == name && selected(w));
    let default = if a.quick { 64 } else { 256 };
    let roots = match runs("rollouts") || runs("mc-games") {
        true => a.roots.unwrap_or(default),
        false => 0,
    };
    let lookups = runs("ntuple-lookups");
    let board_count = if a.quick { 1 << 16 } else { 1 << 18 };
    // Planned before any of it is allocated: the Monte Carlo roots, the lookups' network and
    // boards, and the network training makes while the lookups' is held.
    let network = standard_network_bytes();
    let planned: Vec<(String, u64)> = [
        (
            roots > 0,
            format!("--roots {roots}"),
            u64::from(roots) * BYTES_PER_ROOT,
        ),
        (lookups, "ntuple-lookups".into(), network + 8 * board_count),
        (runs("ntuple-training"), "ntuple-training".into(), network),
    ]
    .into_iter()
    .filter_map(|(runs, what, bytes)| runs.then_some((what, bytes)))
    .collect();
    let named: Vec<&str> = planned.iter().map(|p| p.0.as_str()).collect();
    let need = planned.iter().map(|p| p.1).sum();
    check_memory(&format!("bench ({})", named.join(", ")), need).map_err(super::input_error)?;
    let gpu = match a.backend {
        Some(b) => gpu_engines(b.into())?,
        // Any adapter; without one the run goes on, and says why.
        None => gpu_engines(Backend::Gpu).unwrap_or_else(|e| {
            eprintln!("{e}");
            None
        }),
    };
    if gpu.is_none() && a.backend != Some(BackendArg::Cpu) {
        eprintln!("{NO_GPU}");
    }
    let threads = rayon::current_num_threads();
    // The standard 4x6-tuple network (its weights do not change the lookup speed).
    let network = lookups
        .then(|| Network::new(standard_tuples()))
        .transpose()?;
    let boards = match lookups {
        true => sample_boards(board_count as usize),
        false => Vec::new(),
    };
    let roots = sample_roots(roots as usize);
    let context = Run {
        quick: a.quick,
        secs,
        threads,
        roots: &roots,
        rollouts: a.rollouts.unwrap_or(default),
        roots_given: a.roots.is_some(),
        per_invocation: a.per_invocation,
        network: network.as_ref(),
        boards: &boards,
        kernel_seconds: std::cell::Cell::new(None),
    };
    let mut out = Vec::new();
    let mut keep = |ms: Vec<Measurement>| {
        for m in ms {
            if !a.output.json {
                eprintln!("  measured {} on {} {}", m.workload, m.backend, m.on);
            }
            out.push(m);
        }
    };
    if a.backend != Some(BackendArg::Gpu) {
        for w in WORKLOADS.iter().filter(|w| selected(w)) {
            if let Some(run) = w.cpu {
                keep(run(&context)?);
            }
        }
    }
    if let Some(g) = &gpu {
        for w in WORKLOADS.iter().filter(|w| selected(w)) {
            if let Some(run) = w.gpu {
                keep(run(&context, g)?);
            }
        }
    }
    if out.is_empty() {
        return Err(super::input_error(format!(
            "nothing to measure: {} {} no workload on {}",
            a.only.join(", "),
            if a.only.len() == 1 { "has" } else { "have" },
            if gpu.is_some() {
                "the gpu"
            } else {
                "this backend"
            }
        )));
    }
    let report = BenchReport {
        rollsim_version: env!("CARGO_PKG_VERSION"),
        git_commit: env!("ROLLSIM_GIT_COMMIT"),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        unix_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        cpu: cpu_model(),
        cpu_threads: threads,
        adapter: gpu.as_ref().map(|g| g.gpu().adapter.clone()),
        gpu_kernel_seconds: context.kernel_seconds.get(),
        measurements: out,
    };
    // The figures first, so that a failing write loses none of them.
    crate::output::emit(&report, a.output.json)?;
    if let Some(path) = &a.out {
        let json = serde_json::to_vec_pretty(&report)?;
        let named = |p: &Path| format!("writing {}", p.display());
        write_atomically(path, |w| w.write_all(&json)).with_context(|| named(path))?;
        let csv_path = beside(path, "csv");
        write_atomically(&csv_path, |w| w.write_all(csv(&report).as_bytes()))
            .with_context(|| named(&csv_path))?;
    }
    Ok(())
}

/// The name of the CSV written beside a record: `rec.json` gives `rec.csv`, any other name
/// gets the extension added (`rec.csv` gives `rec.csv.csv`), so it is never the record
/// itself.
fn beside(record: &Path, ext: &str) -> PathBuf {
    match record.extension() {
        Some(e) if e == "json" => record.with_extension(ext),
        _ => {
            let mut name = record.as_os_str().to_owned();
            name.push(".");
            name.push(ext);
            PathBuf::from(name)
        }
    }
}

impl crate::output::Report for BenchReport {
    fn text(&self) {
        print_table(self);
    }
}

fn print_table(r: &BenchReport) {
    outln!("cpu: {} ({})", r.cpu, count(r.cpu_threads, "thread"));
    if let Some(a) = &r.adapter {
        outln!(
            "gpu: {} ({}, {}, {})",
            a.name,
            a.device_type,
            a.backend,
            a.driver
        );
    }
    use crate::output::{Align::*, Table};
    let mut table = Table::new(&[
        ("workload", Left),
        ("backend", Left),
        ("on", Left),
        ("figure", Right),
        ("unit", Left),
        ("also", Left),
    ]);
    // The CPU figure of the same workload, for the GPU rows.
    let cpu_figure = |w: &str| {
        r.measurements
            .iter()
            .find(|m| m.backend == Device::Cpu && m.workload == w)
            .map(|m| m.figure)
    };
    for m in &r.measurements {
        let mut also: Vec<String> = m.extra.iter().map(|(u, v)| format!("{v:.0} {u}")).collect();
        let figure = if m.figure < 100.0 {
            format!("{:.3}", m.figure)
        } else {
            format!("{:.0}", m.figure)
        };
        if m.backend == Device::Gpu
            && let Some(c) = cpu_figure(&m.workload)
        {
            let speed = rollsim_bench::speedup(&m.unit, m.figure, c);
            also.push(format!("{speed:.2}x cpu speed"));
        }
        table.row(vec![
            m.workload.clone(),
            m.backend.to_string(),
            m.on.clone(),
            figure,
            m.unit.clone(),
            also.join(", "),
        ]);
    }
    table.print();
    if let Some(k) = r.gpu_kernel_seconds {
        outln!("gpu kernel time (timestamp queries): {k:.3} s");
    }
}

/// The figures as CSV, one row per measurement, each with the machine description: under a
/// bare header, text in quotes and numbers bare.
/// The first bytes of every CSV `bench --out` writes: a CSV beside the record that does not
/// start so was not written by rollsim, and is not replaced.
const CSV_SIGNATURE: &[u8] = b"workload,backend,on,figure,";

fn csv(r: &BenchReport) -> String {
    let (adapter, driver) = r
        .adapter
        .as_ref()
        .map_or((String::new(), String::new()), |a| {
            (a.name.clone(), format!("{} {}", a.driver, a.driver_info))
        });
    let mut header = csv::Writer::from_writer(Vec::new());
    header
        .write_record([
            "workload",
            "backend",
            "on",
            "figure",
            "unit",
            "seconds",
            "also",
            "cpu",
            "cpu_threads",
            "adapter",
            "driver",
            "rollsim_version",
            "git_commit",
        ])
        .expect("writing to memory");
    let mut w = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::NonNumeric)
        .from_writer(header.into_inner().expect("writing to memory"));
    for m in &r.measurements {
        let also: Vec<String> = m.extra.iter().map(|(u, v)| format!("{v} {u}")).collect();
        w.write_record([
            m.workload.as_str(),
            m.backend.name(),
            &m.on,
            &m.figure.to_string(),
            &m.unit,
            &m.seconds.to_string(),
            &also.join("; "),
            &r.cpu,
            &r.cpu_threads.to_string(),
            &adapter,
            &driver,
            r.rollsim_version,
            r.git_commit,
        ])
        .expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("UTF-8 fields")
}

/// What `compare` reads of a record.
#[derive(serde::Deserialize)]
struct Saved {
    #[serde(default)]
    git_commit: Option<String>,
    cpu: String,
    #[serde(default)]
    adapter: Option<serde_json::Value>,
    measurements: Vec<SavedMeasurement>,
}

#[derive(serde::Deserialize)]
struct SavedMeasurement {
    workload: String,
    backend: String,
    figure: f64,
    unit: String,
}

#[derive(Serialize)]
struct Comparison {
    workload: String,
    backend: String,
    unit: String,
    old: f64,
    new: f64,
    /// NEW's speed over OLD's (for times, OLD/NEW): above 1 is faster.
    speedup: f64,
}

fn load_record(path: &std::path::Path) -> anyhow::Result<Saved> {
    // A record is a few kilobytes.
    let bytes = rollsim_core::files::read_input(path, 64 << 20)?;
    let saved: Saved = serde_json::from_slice(&bytes).map_err(|e| {
        super::input_error(format!(
            "{} is not a record of `rollsim bench --out`: {e}",
            path.display()
        ))
    })?;
    // Every figure is a rate or a time: a speedup of zero, a negative or a missing one means
    // nothing.
    if let Some(m) = saved
        .measurements
        .iter()
        .find(|m| !(m.figure.is_finite() && m.figure > 0.0))
    {
        return Err(super::input_error(format!(
            "{}: the figure of {} ({}) is {}, not a measurement",
            path.display(),
            m.workload,
            m.backend,
            m.figure
        )));
    }
    Ok(saved)
}

fn compare(old: &std::path::Path, new: &std::path::Path, json: bool) -> anyhow::Result<()> {
    let (a, b) = (load_record(old)?, load_record(new)?);
    let rows: Vec<Comparison> =
        b.measurements
            .iter()
            .filter_map(|n| {
                let o = a.measurements.iter().find(|o| {
                    o.workload == n.workload && o.backend == n.backend && o.unit == n.unit
                })?;
                let speedup = rollsim_bench::speedup(&n.unit, n.figure, o.figure);
                Some(Comparison {
                    workload: n.workload.clone(),
                    backend: n.backend.clone(),
                    unit: n.unit.clone(),
                    old: o.figure,
                    new: n.figure,
                    speedup,
                })
            })
            .collect();
    if rows.is_empty() {
        return Err(super::input_error(
            "the two records have no workload in common",
        ));
    }
    if json {
        return print_json(&rows);
    }
    let describe = |s: &Saved| {
        let gpu = s
            .adapter
            .as_ref()
            .and_then(|a| a.get("name"))
            .and_then(|n| n.as_str())
            .unwrap_or("no GPU");
        format!(
            "{}, {gpu}, commit {}",
            s.cpu,
            s.git_commit.as_deref().unwrap_or("unknown")
        )
    };
    outln!("old: {} ({})", old.display(), describe(&a));
    outln!("new: {} ({})", new.display(), describe(&b));
    use crate::output::{Align::*, Table};
    let mut table = Table::new(&[
        ("workload", Left),
        ("backend", Left),
        ("old", Right),
        ("new", Right),
        ("unit", Left),
        ("speedup", Right),
    ]);
    for r in &rows {
        table.row(vec![
            r.workload.clone(),
            r.backend.to_string(),
            format!("{:.3}", r.old),
            format!("{:.3}", r.new),
            r.unit.clone(),
            format!("{:.2}x", r.speedup),
        ]);
    }
    table.print();
    Ok(())
}
