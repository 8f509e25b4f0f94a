//! `rollsim bearoff build`: one- and two-sided tables, planned, checkpointed, in either format.

use rollsim_core::text::count;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Args as ClapArgs, ValueEnum};
use serde::Serialize;

use crate::{ComputeArgs, OutputArgs, input_error, print_json, progress_bar};
use rollsim_bearoff::build::{
    Options, build_one_sided_gnubg, build_two_sided as build_two_sided_columns,
};
use rollsim_bearoff::engines::Engines;
use rollsim_bearoff::format::{Table, write_gnubg_one_sided, write_rollsim};
use rollsim_bearoff::numeric::{CellKind, Fixed31};
use rollsim_bearoff::one_sided::has_first_off;
use rollsim_bearoff::plan::{HEADROOM_BYTES, Plan, Precision, one_sided_bytes};
use rollsim_bearoff::table::{Reached, Table as TwoSidedTable, partial_path};
use rollsim_bearoff::{OneSided, Space};
use rollsim_core::files::{parent_dir, write_atomically};
use rollsim_core::memory::{human, memory_limit};
use rollsim_gpu::{Backend, Gpu};

use super::{Format, format_name};

#[derive(ClapArgs, Debug)]
pub struct BuildArgs {
    /// Points per side (1 to 18; gnubg's standard table has 6).
    #[arg(long, default_value_t = 6)]
    points: u32,
    /// Checkers per side (1 to 15).
    #[arg(long, default_value_t = 15)]
    checkers: u32,
    /// The two-sided table (exact cubeless winning chances for every pair of positions).
    #[arg(long)]
    two_sided: bool,
    /// Two-sided: also the cubeful money equities (owned, centred, opponent owns) that gnubg
    /// stores.
    #[arg(long)]
    cubeful: bool,
    /// How values are stored in memory and in rollsim's file. Two-sided, auto: f32, and u16
    /// for cubeful equities that do not fit in memory as f32. One-sided (auto, f64 or
    /// fixed32), auto: exact f64 for rollsim's format, fixed32 for gnubg's 16 bits.
    #[arg(long, value_enum, default_value_t = PrecisionArg::Auto)]
    precision: PrecisionArg,
    /// Print what the build needs (memory, disk) against what the machine has, and stop;
    /// exit 2 if it does not fit.
    #[arg(long)]
    dry_run: bool,
    /// Two-sided: make the build durable and resumable at least this often (seconds). A
    /// build killed part-way resumes from its last checkpoint when run again. Default: 60.
    #[arg(long)]
    checkpoint_secs: Option<u64>,
    /// Two-sided: ignore the checkpoint of an earlier, unfinished build of --out.
    #[arg(long)]
    fresh: bool,
    /// Leave out the distributions of rolls until the first checker is off (one-sided, 15
    /// checkers; included by default, as gnubg's makebearoff does).
    #[arg(long)]
    no_gammon: bool,
    /// File format of --out.
    #[arg(long, value_enum, default_value_t = Format::Rollsim)]
    format: Format,
    /// gnubg one-sided only: write the uncompressed layout instead of the compressed one.
    #[arg(long)]
    uncompressed: bool,
    /// Output file (written to a temporary file, then renamed).
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    compute: ComputeArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    Auto,
    F64,
    F32,
    /// 32-bit fixed point (2^-29): exact integer arithmetic, the same bits on CPU and GPU.
    Fixed32,
    U16,
}

impl PrecisionArg {
    fn precision(self) -> Precision {
        match self {
            PrecisionArg::Auto => Precision::Auto,
            PrecisionArg::F64 => Precision::Cell(CellKind::F64),
            PrecisionArg::F32 => Precision::Cell(CellKind::F32),
            PrecisionArg::U16 => Precision::Cell(CellKind::U16),
            PrecisionArg::Fixed32 => Precision::Cell(CellKind::Fixed32),
        }
    }
}

#[derive(Serialize)]
struct BuildReport {
    kind: &'static str,
    points: u32,
    checkers: u32,
    positions: u64,
    gammon: bool,
    format: &'static str,
    out: String,
    bytes: u64,
    backend: rollsim_core::Device,
    #[serde(skip_serializing_if = "Option::is_none")]
    adapter: Option<String>,
    seconds: f64,
    positions_per_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    plan: Option<Plan>,
    /// Pairs already done by an earlier, killed build of the same table.
    #[serde(skip_serializing_if = "Option::is_none")]
    resumed_pairs: Option<u64>,
}

impl BuildReport {
    /// The report of a build of `positions` (or pairs) written to `out`.
    fn new(
        kind: &'static str,
        space: Space,
        positions: u64,
        format: Format,
        out: &Path,
        gpu: Option<&Gpu>,
        seconds: f64,
    ) -> BuildReport {
        BuildReport {
            kind,
            points: space.points,
            checkers: space.checkers,
            positions,
            gammon: false,
            format: format_name(format),
            out: out.display().to_string(),
            bytes: std::fs::metadata(out).map(|m| m.len()).unwrap_or(0),
            backend: rollsim_core::Device::of(gpu.is_some()),
            adapter: gpu.map(|g| g.adapter.name.clone()),
            seconds,
            positions_per_s: positions as f64 / seconds.max(1e-9),
            plan: None,
            resumed_pairs: None,
        }
    }

    fn print(&self, json: bool) -> anyhow::Result<()> {
        if json {
            return print_json(self);
        }
        let on = match &self.adapter {
            Some(name) => format!("the GPU ({name}) and CPU threads"),
            None => count(rayon::current_num_threads(), "CPU thread"),
        };
        outln!(
            "{} table, {} checkers on {} points: {} {} in {:.3} s ({:.0}/s) on {on}",
            self.kind,
            self.checkers,
            self.points,
            self.positions,
            if self.kind == "two-sided" {
                "pairs"
            } else {
                "positions"
            },
            self.seconds,
            self.positions_per_s,
        );
        if let Some(done) = self.resumed_pairs {
            outln!("resumed with {done} pairs done by an earlier build");
        }
        outln!(
            "wrote {} ({} bytes, {} format)",
            self.out,
            self.bytes,
            self.format
        );
        Ok(())
    }
}

pub(super) fn build(a: BuildArgs) -> anyhow::Result<()> {
    let space = Space::new(a.points, a.checkers).map_err(input_error)?;
    rollsim_core::files::check_output(&a.out)?;
    if a.uncompressed && (a.two_sided || a.format != Format::Gnubg) {
        return Err(input_error(
            "--uncompressed applies to gnubg one-sided files only",
        ));
    }
    let two_sided_flags = [
        (a.cubeful, "--cubeful"),
        (a.fresh, "--fresh"),
        (a.checkpoint_secs.is_some(), "--checkpoint-secs"),
    ];
    for (given, flag) in two_sided_flags {
        if given && !a.two_sided {
            return Err(input_error(format!(
                "{flag} applies to two-sided tables only"
            )));
        }
    }
    if a.no_gammon && a.two_sided {
        return Err(input_error(
            "--no-gammon applies to one-sided tables only (two-sided tables hold no gammons)",
        ));
    }
    a.compute.init_threads()?;
    if a.two_sided {
        build_two_sided(a, space)
    } else {
        build_one_sided(a, space)
    }
}

fn build_one_sided(a: BuildArgs, space: Space) -> anyhow::Result<()> {
    let gammon = has_first_off(&space, !a.no_gammon);
    let n = space.len() as u64;
    // rollsim's format stores exact f64 distributions; gnubg's 16 bits need no more than
    // fixed32 (see `Fixed31`), which takes 40% of the memory on 15x10.
    let exact = match (a.precision, a.format) {
        (PrecisionArg::F64, _) | (PrecisionArg::Auto, Format::Rollsim) => true,
        (PrecisionArg::Auto | PrecisionArg::Fixed32, Format::Gnubg) => false,
        (PrecisionArg::Fixed32, Format::Rollsim) => {
            return Err(input_error(
                "rollsim's format stores exact f64 distributions: --precision fixed32 applies \
                 to one-sided tables in --format gnubg",
            ));
        }
        (p, _) => {
            return Err(input_error(format!(
                "--precision {}: one-sided tables take auto, f64 or fixed32",
                p.to_possible_value()
                    .map_or("?".into(), |v| v.get_name().to_string())
            )));
        }
    };
    // The one-sided sweep is a few million positions bound by memory latency, and the GPU's
    // needs f64 (1/32 to 1/64 speed on consumer GPUs, none on Metal): `auto` takes CPU threads
    // without loading a GPU driver (on this machine the probe alone costs more than the
    // 15x6 table), and `gpu` asks for it.
    let engines = match a.compute.backend() {
        Backend::Gpu => f64_gpu()?,
        _ => None,
    };
    let gpu = engines.as_ref().and_then(|e| e.gpu());
    let streamed = a.format == Format::Gnubg && engines.is_none();
    let need = one_sided_bytes(space, gammon, streamed, exact, !a.uncompressed);
    let limit = memory_limit();
    if a.dry_run {
        outln!(
            "one-sided table, {} checkers on {} points: {n} positions, about {} of memory{}",
            space.checkers,
            space.points,
            human(need),
            limit.as_ref().map_or(String::new(), |l| format!("; {l}"))
        );
    }
    if let Some(l) = limit.filter(|l| need > l.available) {
        return Err(input_error(format!(
            "the one-sided table of {} checkers on {} points ({n} positions) needs about {} of \
             memory, but {l}; use fewer points or checkers{}",
            space.checkers,
            space.points,
            human(need),
            if exact && a.format == Format::Gnubg {
                ", or --precision fixed32"
            } else {
                ""
            }
        )));
    }
    if a.dry_run {
        return Ok(());
    }
    let start = Instant::now();
    let quiet = a.output.quiet || a.output.json;
    let passes = if gammon { 2 } else { 1 };
    let bar = progress_bar(passes * n, "positions", quiet);
    let progress = |k| bar.inc(k);
    if streamed {
        let dir = parent_dir(&a.out).to_path_buf();
        write_atomically(&a.out, |w| {
            let compressed = !a.uncompressed;
            match exact {
                true => build_one_sided_gnubg::<f64>(space, gammon, compressed, w, &dir, &progress),
                false => {
                    build_one_sided_gnubg::<Fixed31>(space, gammon, compressed, w, &dir, &progress)
                }
            }
        })
        .with_context(|| format!("writing {}", a.out.display()))?;
    } else {
        let t = match &engines {
            Some(e) => OneSided::build_with(space, gammon, &progress, e.plays()?.as_mut())?,
            None => OneSided::build_cpu(space, gammon, &progress),
        };
        let table = Table::One(t);
        write_atomically(&a.out, |w| match (&table, a.format) {
            (Table::One(t), Format::Gnubg) => write_gnubg_one_sided(t, !a.uncompressed, gammon, w),
            (t, _) => write_rollsim(t, w),
        })
        .with_context(|| format!("writing {}", a.out.display()))?;
    }
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    BuildReport {
        gammon,
        ..BuildReport::new("one-sided", space, n, a.format, &a.out, gpu, seconds)
    }
    .print(a.output.json)
}

/// The GPU's engines for `--backend gpu`, refused (by the engines) where the adapter lacks the
/// f64 arithmetic the exact one-sided sweep needs.
fn f64_gpu() -> anyhow::Result<Option<Box<dyn Engines>>> {
    let engines = crate::backend::bearoff(Backend::Gpu)?;
    engines.plays()?;
    Ok(Some(engines))
}

fn build_two_sided(a: BuildArgs, space: Space) -> anyhow::Result<()> {
    let n = space.len() as u64;
    let values = if a.cubeful { 4 } else { 1 };
    let gnubg_bytes = (a.format == Format::Gnubg).then_some(40 + 2 * values * n * n);
    if let Some(b) = gnubg_bytes.filter(|&b| b > u64::from(u32::MAX)) {
        return Err(input_error(format!(
            "gnubg's two-sided format cannot hold {} checkers on {} points: the file would be {} \
             bytes, and gnubg's reader computes offsets in 32 bits (at most 4 GiB); build \
             rollsim's format and cut a smaller table from it with `rollsim bearoff extract \
             --checkers C --format gnubg`",
            space.checkers, space.points, b
        )));
    }
    let dir = parent_dir(&a.out);
    // auto: a real GPU when there is one; the GPU's sweep stores fixed32 or u16 values.
    // `gpu` insists; `auto` takes a real GPU where the table fits it, else CPU threads.
    let explicit = a.compute.backend() == Backend::Gpu;
    let mut engines = crate::backend::bearoff(a.compute.backend())?;
    let mut gpu_plan = None;
    if engines.device() == rollsim_core::Device::Gpu {
        if !engines.stores(a.precision.precision()) {
            if explicit {
                return Err(input_error(format!(
                    "--precision {}: the GPU sweep stores fixed32 or u16 values (use --precision \
                     fixed32, u16 or auto, or --backend cpu)",
                    a.precision
                        .to_possible_value()
                        .map_or(String::new(), |v| v.get_name().to_string())
                )));
            }
        } else {
            let plan = engines.plan(space, a.cubeful, a.precision.precision(), dir, gnubg_bytes);
            match plan.gpu.as_ref().and_then(|p| p.refused.clone()) {
                Some(why) if explicit => {
                    if a.dry_run {
                        print_plan(&plan, a.output.json)?;
                    }
                    return Err(input_error(format!(
                        "the two-sided table does not fit the GPU's bindings: {why}; use \
                         --backend cpu"
                    )));
                }
                Some(why) if !(a.output.quiet || a.output.json) => eprintln!(
                    "rollsim: the table does not fit {} ({why}); building on CPU threads",
                    plan.gpu.as_ref().map_or("", |p| p.adapter.as_str())
                ),
                Some(_) => {}
                None => gpu_plan = Some(plan),
            }
        }
        if gpu_plan.is_none() {
            engines = Box::new(rollsim_bearoff::engines::Cpu);
        }
    }
    let gpu = engines.gpu();
    let plan = match gpu_plan {
        Some(p) => p,
        None => engines.plan(space, a.cubeful, a.precision.precision(), dir, gnubg_bytes),
    };
    let precision = a.precision.precision();
    let quiet = a.output.quiet || a.output.json;
    // gnubg's format is converted from rollsim's, built as a hidden `.OUT.rollsim` beside it.
    let table_path = match a.format {
        Format::Rollsim => a.out.clone(),
        Format::Gnubg => rollsim_core::files::sibling(&a.out, ".", ".rollsim")?,
    };
    // The rollsim table's build takes its own lock; the gnubg file is claimed here.
    let _gnubg_lock = match a.format {
        Format::Gnubg if !a.dry_run => Some(rollsim_core::files::lock_for_writing(&a.out)?),
        _ => None,
    };
    let partial_bytes = partial_allocated(&table_path);
    if a.dry_run {
        print_plan(&plan, a.output.json)?;
    }
    let finished = match a.format {
        Format::Gnubg if !a.dry_run && !a.fresh => {
            finished_table(&table_path, space, a.cubeful, precision, quiet)?
        }
        _ => None,
    };
    if let Some(table) = finished {
        let start = Instant::now();
        convert_to_gnubg(table, &table_path, &a.out, space.checkers)?;
        let seconds = start.elapsed().as_secs_f64();
        if !quiet {
            eprintln!(
                "converted {}, a finished table left by an earlier build",
                table_path.display()
            );
        }
        // Converting runs on CPU threads alone.
        return BuildReport {
            plan: Some(plan),
            ..BuildReport::new("two-sided", space, n * n, a.format, &a.out, None, seconds)
        }
        .print(a.output.json);
    }
    if !plan.fits_memory() {
        // The options are planned where the build would run.
        let replan = |space, cubeful, precision| engines.plan(space, cubeful, precision, dir, None);
        return Err(input_error(memory_refusal(
            &plan, a.cubeful, precision, &replan,
        )));
    }
    if !plan.fits_disk(partial_bytes) {
        return Err(input_error(format!(
            "the table needs {} of disk in {}, but {} is free",
            human(plan.disk_bytes.saturating_sub(partial_bytes)),
            dir.display(),
            human(plan.disk_available.unwrap_or(0))
        )));
    }
    if a.dry_run {
        return Ok(());
    }
    let passes = 1 + u64::from(a.cubeful);
    let bar = progress_bar(passes * n * n, "pairs", quiet);
    let start = Instant::now();
    let mut resumed_pairs = None;
    {
        let progress = |k| bar.inc(k);
        let mut resumed = |p: Reached, done: u64| {
            resumed_pairs = Some(done);
            if !quiet {
                eprintln!(
                    "resuming {} from its checkpoint: {done} pairs done ({:?} pass, {} levels); \
                     checking the columns written before it",
                    table_path.display(),
                    p.section,
                    p.levels_done
                );
            }
        };
        let sweeper = engines.columns();
        build_two_sided_columns(
            &table_path,
            &plan,
            sweeper.as_ref(),
            Options {
                checkpoint_every: Duration::from_secs(a.checkpoint_secs.unwrap_or(60)),
                fresh: a.fresh,
                durable: a.format == Format::Rollsim,
                progress: &progress,
                resumed: &mut resumed,
            },
        )
        .with_context(|| format!("building {}", table_path.display()))?;
    }
    bar.finish_and_clear();
    if a.format == Format::Gnubg {
        let table = TwoSidedTable::open(&table_path)
            .with_context(|| format!("reading back {}", table_path.display()))?;
        convert_to_gnubg(table, &table_path, &a.out, space.checkers)?;
    }
    let seconds = start.elapsed().as_secs_f64();
    BuildReport {
        plan: Some(plan),
        resumed_pairs,
        ..BuildReport::new("two-sided", space, n * n, a.format, &a.out, gpu, seconds)
    }
    .print(a.output.json)
}

/// The finished rollsim table a gnubg build left at `path` when it was stopped while
/// converting it, if it is whole (every checksum and value checked) and what this build would
/// make: its space, with cubeful equities or without, in the cells asked for (any, with
/// `auto`). Anything else of rollsim's there is removed, saying so; a symlink or anything else
/// planted there is refused.
fn finished_table(
    path: &Path,
    space: Space,
    cubeful: bool,
    precision: Precision,
    quiet: bool,
) -> anyhow::Result<Option<TwoSidedTable>> {
    use rollsim_core::files::{Create, open_owned};
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    drop(open_owned(path, Create::Existing)?);
    let why = match TwoSidedTable::open(path) {
        Ok(t) => {
            let l = t.layout();
            let cells = match precision {
                Precision::Auto => true,
                Precision::Cell(c) => l.cubeless == c && l.cubeful.is_none_or(|f| f == c),
            };
            if l.space != space || l.cubeful.is_some() != cubeful || !cells {
                format!("a table of {}", l.describe())
            } else {
                match t.verify(&|_| {})? {
                    bad if bad.is_empty() => return Ok(Some(t)),
                    bad => format!("damaged: {}", bad[0]),
                }
            }
        }
        Err(e) => e.to_string(),
    };
    if !quiet {
        eprintln!(
            "rollsim: removing {}, left by an earlier build ({why}), to build anew",
            path.display()
        );
    }
    std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    Ok(None)
}

/// Writes `table` (at `table_path`, hidden beside `out`) as gnubg's file `out`, then removes
/// it. On failure it is kept, and a rerun of the build converts it without building it again.
fn convert_to_gnubg(
    table: TwoSidedTable,
    table_path: &Path,
    out: &Path,
    checkers: u32,
) -> anyhow::Result<()> {
    write_atomically(out, |w| table.write_gnubg(checkers, w)).with_context(|| {
        format!(
            "writing {} (the finished table is kept in {}: run the build again to convert it)",
            out.display(),
            table_path.display()
        )
    })?;
    drop(table);
    std::fs::remove_file(table_path).with_context(|| format!("removing {}", table_path.display()))
}

/// Bytes of disk an unfinished build of `table` already holds.
fn partial_allocated(table: &Path) -> u64 {
    let Ok(partial) = partial_path(table) else {
        return 0;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(partial).map_or(0, |m| 512 * m.blocks())
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(partial).map_or(0, |m| m.len())
    }
}

fn print_plan(plan: &Plan, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(plan);
    }
    let fits = |ok: bool| if ok { "fits" } else { "does not fit" };
    outln!(
        "two-sided table, {} checkers on {} points: {} pairs, cubeless {}{}",
        plan.checkers,
        plan.points,
        plan.pairs,
        plan.cubeless_cell.name(),
        plan.cubeful_cell
            .map_or(String::new(), |c| format!(", cubeful {}", c.name()))
    );
    match &plan.gpu {
        Some(g) => {
            match &g.refused {
                Some(why) => outln!("GPU {}: does not fit: {why}", g.adapter),
                None if g.streamed => outln!(
                    "GPU {}: {} on the device, in {} bindings of at most {}; the window ({} of \
                     columns: {} of {} positions at once) on the host, each chunk's columns \
                     streamed through the device",
                    g.adapter,
                    human(g.device_bytes),
                    g.window_bindings,
                    human(g.binding_bytes),
                    human(plan.window_bytes),
                    plan.window_columns,
                    plan.positions,
                ),
                None => outln!(
                    "GPU {}: {} on the device ({} of columns: {} of {} positions at once, in {} \
                     bindings of at most {})",
                    g.adapter,
                    human(g.device_bytes),
                    human(plan.window_bytes),
                    plan.window_columns,
                    plan.positions,
                    g.window_bindings,
                    human(g.binding_bytes),
                ),
            }
            outln!(
                "memory: {} on the host; {} ({})",
                human(plan.memory_bytes),
                available(plan),
                fits(plan.fits_memory())
            );
        }
        None => outln!(
            "memory: {} ({} of columns: {} of {} positions at once, {}); {} ({})",
            human(plan.memory_bytes),
            human(plan.window_bytes),
            plan.window_columns,
            plan.positions,
            count(plan.threads, "thread"),
            available(plan),
            fits(plan.fits_memory())
        ),
    }
    outln!(
        "disk: {} ({} the table); free {} ({})",
        human(plan.disk_bytes),
        human(plan.file_bytes),
        plan.disk_available.map_or("unknown".into(), human),
        fits(plan.fits_disk(0))
    );
    Ok(())
}

/// The memory a plan saw, and what bounds it: "1.4 GB (ulimit -v: RLIMIT_AS 1.5 GB, …)".
fn available(plan: &Plan) -> String {
    match (plan.memory_available, &plan.memory_bound) {
        (Some(m), Some(bound)) => format!("{} available ({bound})", human(m)),
        (Some(m), None) => format!("{} available", human(m)),
        (None, _) => "unknown".into(),
    }
}

/// Why a table does not fit in memory, and what would.
fn memory_refusal(
    plan: &Plan,
    cubeful: bool,
    precision: Precision,
    replan: &dyn Fn(Space, bool, Precision) -> Plan,
) -> String {
    let space = Space::new(plan.points, plan.checkers).expect("a planned space");
    let mut options = Vec::new();
    let other = |cubeful, precision, checkers| {
        replan(
            Space::new(plan.points, checkers).expect("fewer checkers"),
            cubeful,
            precision,
        )
    };
    if cubeful && precision != Precision::Cell(CellKind::U16) {
        let p = other(true, Precision::Cell(CellKind::U16), plan.checkers);
        if p.fits_memory() {
            options.push(format!("--precision u16 ({})", human(p.memory_bytes)));
        }
    }
    if cubeful {
        let p = other(false, precision, plan.checkers);
        if p.fits_memory() {
            options.push(format!("no --cubeful ({})", human(p.memory_bytes)));
        }
    }
    if let Some(c) = (1..space.checkers)
        .rev()
        .find(|&c| other(cubeful, precision, c).fits_memory())
    {
        options.push(format!("--checkers {c}"));
    }
    options.push("a machine with more memory".into());
    format!(
        "the two-sided table of {} checkers on {} points{} needs {} of memory ({} of them the \
         window of columns), more than the {} less {} left to the system; options: {}",
        plan.checkers,
        plan.points,
        if cubeful {
            " with cubeful equities"
        } else {
            ""
        },
        human(plan.memory_bytes),
        human(plan.window_bytes),
        available(plan),
        human(HEADROOM_BYTES),
        options.join(", ")
    )
}
