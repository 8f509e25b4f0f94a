//! `rollsim bearoff …`: build and query bearoff databases.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use serde::Serialize;

use super::{ComputeArgs, input_error, print_json, progress_bar};
use crate::bearoff::format::{
    self, GnubgOneSided, Table, read_gnubg_one_sided, read_gnubg_two_sided, read_rollsim,
    write_gnubg_one_sided, write_gnubg_two_sided, write_rollsim,
};
use crate::bearoff::one_sided::{PIPS_PER_ROLL, has_first_off, mean_sd, race_win_probability};
use crate::bearoff::two_sided::{TwoSided, cube_decision, cubeful_equities};
use crate::bearoff::{OneSided, Space};
use crate::files::write_atomically;
use crate::gpu::bearoff::{solve_one_sided, solve_two_sided};
use crate::gpu::{Backend, Gpu, GpuError};

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build a one-sided (default) or two-sided bearoff database.
    Build(BuildArgs),
    /// Look positions up in a database (rollsim's or gnubg's format).
    Query(QueryArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rollsim's own format: exact f64 values, header, checksum.
    Rollsim,
    /// GNU Backgammon's .bd format (uint16 fixed point).
    Gnubg,
}

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
    /// stores; computed on CPU threads.
    #[arg(long)]
    cubeful: bool,
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
    /// Print the build report as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(ClapArgs, Debug)]
pub struct QueryArgs {
    /// The database file.
    file: PathBuf,
    /// One position (its distribution), or two (the side on roll first: its winning chance).
    /// Checker counts from the 1-point up, e.g. 3,2,0,0,0,1.
    #[arg(num_args = 1..=2, required = true)]
    positions: Vec<String>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(c: Command) -> anyhow::Result<()> {
    match c {
        Command::Build(a) => build(a),
        Command::Query(a) => query(a),
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
    backend: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    adapter: Option<String>,
    seconds: f64,
    positions_per_s: f64,
}

fn build(a: BuildArgs) -> anyhow::Result<()> {
    let space = Space::new(a.points, a.checkers).map_err(input_error)?;
    if a.uncompressed && (a.two_sided || a.format != Format::Gnubg) {
        return Err(input_error(
            "--uncompressed applies to gnubg one-sided files only",
        ));
    }
    a.compute.init_threads()?;
    // The GPU sweep needs f64 shader arithmetic: `auto` falls back to CPU threads without it.
    let gpu = match Gpu::for_backend(a.compute.backend)? {
        Some(g) if g.f64 => Some(g),
        Some(g) if a.compute.backend == Backend::Gpu => {
            return Err(GpuError::Unsupported(format!(
                "{} has no f64 shader arithmetic (SHADER_F64), which the exact bearoff sweep needs",
                g.adapter.name
            ))
            .into());
        }
        _ => None,
    };
    let n = space.len() as u64;
    let gammon = !a.two_sided && has_first_off(&space, !a.no_gammon);
    let start = Instant::now();
    let quiet = a.quiet || a.json;
    if a.cubeful && !a.two_sided {
        return Err(input_error("--cubeful applies to two-sided tables only"));
    }
    let (table, positions, backend) = if a.two_sided {
        let sweeps = if a.cubeful { 2 } else { 1 };
        let bar = progress_bar(sweeps * n * n, "pairs", quiet);
        let mut t = match gpu {
            Some(g) => {
                let t = solve_two_sided(g, space)?;
                bar.inc(n * n);
                t
            }
            None => TwoSided::build_with_progress(space, false, &|k| bar.inc(k)),
        };
        if a.cubeful {
            t.cubeful = Some(cubeful_equities(space, &|k| bar.inc(k)));
        }
        bar.finish_and_clear();
        (
            Table::Two(t),
            n * n,
            if gpu.is_some() { "gpu" } else { "cpu" },
        )
    } else {
        let passes = if gammon { 4 } else { 2 };
        let bar = progress_bar(passes * n, "position passes", quiet);
        let t = match gpu {
            Some(g) => {
                OneSided::build_with(space, gammon, &|k| bar.inc(k), &mut |s, levels, below| {
                    let p = solve_one_sided(g, s, levels, below)?;
                    bar.inc(n);
                    Ok(p)
                })?
            }
            None => OneSided::build_cpu(space, gammon, &|k| bar.inc(k)),
        };
        bar.finish_and_clear();
        (Table::One(t), n, if gpu.is_some() { "gpu" } else { "cpu" })
    };
    let seconds = start.elapsed().as_secs_f64();
    write_atomically(&a.out, |w| match (&table, a.format) {
        (t, Format::Rollsim) => write_rollsim(t, w),
        (Table::One(t), Format::Gnubg) => write_gnubg_one_sided(t, !a.uncompressed, gammon, w),
        (Table::Two(t), Format::Gnubg) => write_gnubg_two_sided(t, w),
    })
    .with_context(|| format!("writing {}", a.out.display()))?;
    let report = BuildReport {
        kind: if a.two_sided {
            "two-sided"
        } else {
            "one-sided"
        },
        points: space.points,
        checkers: space.checkers,
        positions,
        gammon,
        format: match a.format {
            Format::Rollsim => "rollsim",
            Format::Gnubg => "gnubg",
        },
        out: a.out.display().to_string(),
        bytes: std::fs::metadata(&a.out).map(|m| m.len()).unwrap_or(0),
        backend,
        adapter: gpu
            .filter(|_| backend == "gpu")
            .map(|g| g.adapter.name.clone()),
        seconds,
        positions_per_s: positions as f64 / seconds.max(1e-9),
    };
    if a.json {
        return print_json(&report);
    }
    let on = match &report.adapter {
        Some(name) => format!("the GPU ({name}) and CPU threads"),
        None => format!("{} CPU threads", rayon::current_num_threads()),
    };
    println!(
        "{} table, {} checkers on {} points: {} {} in {:.3} s ({:.0}/s) on {on}",
        report.kind,
        space.checkers,
        space.points,
        positions,
        if a.two_sided { "pairs" } else { "positions" },
        seconds,
        report.positions_per_s,
    );
    println!(
        "wrote {} ({} bytes, {} format)",
        report.out, report.bytes, report.format
    );
    Ok(())
}

/// One position's entry in a one-sided table: the exact mean where the file has it, the
/// distribution, and the first-checker-off distribution where present.
struct OneSidedEntry {
    exact_mean: Option<f64>,
    dist: Vec<f64>,
    gammon: Option<Vec<f64>>,
}

/// A database as read from a file.
enum Loaded {
    Rollsim(Table),
    GnubgOne(GnubgOneSided),
    GnubgTwo(format::GnubgTwoSided),
}

fn load(path: &std::path::Path) -> anyhow::Result<Loaded> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let bad = |e: format::FormatError| input_error(format!("{}: {e}", path.display()));
    if bytes.starts_with(b"gnubg-OS") {
        Ok(Loaded::GnubgOne(read_gnubg_one_sided(&bytes).map_err(bad)?))
    } else if bytes.starts_with(b"gnubg-TS") {
        Ok(Loaded::GnubgTwo(read_gnubg_two_sided(&bytes).map_err(bad)?))
    } else {
        Ok(Loaded::Rollsim(read_rollsim(&bytes).map_err(bad)?))
    }
}

#[derive(Serialize)]
struct PositionReport {
    position: String,
    index: u32,
    mean: f64,
    sd: f64,
    epc: f64,
    /// P(exactly k rolls), k = 0, 1, …
    distribution: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gammon_mean: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gammon_distribution: Option<Vec<f64>>,
}

#[derive(Serialize)]
struct RaceReport {
    on_roll: String,
    opponent: String,
    win: f64,
    /// "exact" from a two-sided table, or "one-sided estimate".
    method: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cubeful: Option<CubefulReport>,
}

/// Money equities of the side on roll, before its cube decision, per cube position; and the
/// decision with the cube centred.
#[derive(Serialize)]
struct CubefulReport {
    owned: f64,
    centred: f64,
    opponent_owns: f64,
    centred_action: &'static str,
    centred_equity: f64,
}

fn query(a: QueryArgs) -> anyhow::Result<()> {
    let loaded = load(&a.file)?;
    let space = match &loaded {
        Loaded::Rollsim(Table::One(t)) => t.space,
        Loaded::Rollsim(Table::Two(t)) => t.space,
        Loaded::GnubgOne(g) => Space::new(g.points, g.checkers)?,
        Loaded::GnubgTwo(g) => Space::new(g.points, g.checkers)?,
    };
    let mut idx = Vec::new();
    let mut checkers = Vec::new();
    for p in &a.positions {
        let counts = space
            .parse(p)
            .map_err(|e| input_error(format!("bad position {p:?}: {e}")))?;
        idx.push(space.index(&counts));
        checkers.push(counts.iter().map(|&c| u32::from(c)).sum::<u32>());
    }
    let one_sided = |i: u32| -> Option<OneSidedEntry> {
        match &loaded {
            Loaded::Rollsim(Table::One(t)) => Some(OneSidedEntry {
                exact_mean: Some(t.mean[i as usize]),
                dist: t.distribution(i).to_vec(),
                gammon: t.gammon_distribution(i).map(<[f64]>::to_vec),
            }),
            Loaded::GnubgOne(g) => {
                let f = |d: &[u16; 32]| d.iter().map(|&x| f64::from(x) / 65535.0).collect();
                Some(OneSidedEntry {
                    exact_mean: None,
                    dist: f(&g.dist[i as usize]),
                    gammon: g.gammon_dist.as_ref().map(|gd| f(&gd[i as usize])),
                })
            }
            _ => None,
        }
    };
    if let [i] = idx[..] {
        let Some(OneSidedEntry {
            exact_mean,
            dist,
            gammon,
        }) = one_sided(i)
        else {
            return Err(input_error(
                "a two-sided table needs two positions: the side on roll, then its opponent",
            ));
        };
        let (m, sd) = mean_sd(&dist);
        let mean = exact_mean.unwrap_or(m);
        // Rolls to the first checker off mean something only with all 15 on the board.
        let gammon = gammon.filter(|_| checkers[0] == 15);
        let r = PositionReport {
            position: a.positions[0].clone(),
            index: i,
            mean,
            sd,
            epc: mean * PIPS_PER_ROLL,
            gammon_mean: gammon.as_ref().map(|g| mean_sd(g).0),
            distribution: trim(dist),
            gammon_distribution: gammon.map(trim),
        };
        if a.json {
            return print_json(&r);
        }
        println!("position {} (index {})", r.position, r.index);
        println!(
            "expected rolls {:.6}, sd {:.6}, effective pip count {:.3}",
            r.mean, r.sd, r.epc
        );
        print_distribution("rolls", &r.distribution);
        if let (Some(gm), Some(gd)) = (r.gammon_mean, &r.gammon_distribution) {
            println!("first checker off: expected rolls {gm:.6}");
            print_distribution("rolls to first off", gd);
        }
        return Ok(());
    }
    let (us, them) = (idx[0], idx[1]);
    let cubeful = match &loaded {
        Loaded::Rollsim(Table::Two(t)) => t.cubeful.as_ref().map(|c| {
            let [owned, centred, opponent_owns] = c[us as usize * space.len() + them as usize];
            let equity = cube_decision(centred, opponent_owns);
            CubefulReport {
                owned,
                centred,
                opponent_owns,
                centred_action: if equity == centred {
                    "no double"
                } else if equity == 1.0 {
                    "double, pass"
                } else {
                    "double, take"
                },
                centred_equity: equity,
            }
        }),
        _ => None,
    };
    let (win, method) = match &loaded {
        Loaded::Rollsim(Table::Two(t)) => (t.win(us, them), "exact"),
        Loaded::GnubgTwo(g) => {
            let n = space.len();
            let equity = f64::from(g.equity[us as usize * n + them as usize]) / 32767.5 - 1.0;
            (equity / 2.0 + 0.5, "exact (gnubg, 16-bit)")
        }
        _ => {
            let a_dist = one_sided(us).expect("one-sided table").dist;
            let b_dist = one_sided(them).expect("one-sided table").dist;
            (race_win_probability(&a_dist, &b_dist), "one-sided estimate")
        }
    };
    let r = RaceReport {
        on_roll: a.positions[0].clone(),
        opponent: a.positions[1].clone(),
        win,
        method,
        cubeful,
    };
    if a.json {
        return print_json(&r);
    }
    println!(
        "side on roll {} vs {}: wins {:.6} ({})",
        r.on_roll, r.opponent, r.win, r.method
    );
    if let Some(c) = &r.cubeful {
        println!(
            "money equity before its cube decision: {:+.6} owning the cube, {:+.6} centred, \
             {:+.6} when the opponent owns it",
            c.owned, c.centred, c.opponent_owns
        );
        println!(
            "cube centred: {}, equity {:+.6}",
            c.centred_action, c.centred_equity
        );
    }
    Ok(())
}

/// The distribution without its trailing zeros.
fn trim(mut d: Vec<f64>) -> Vec<f64> {
    while d.len() > 1 && d.last() == Some(&0.0) {
        d.pop();
    }
    d
}

fn print_distribution(what: &str, d: &[f64]) {
    for (k, p) in d.iter().enumerate().filter(|(_, p)| **p > 0.0) {
        if *p >= 1e-4 {
            println!("  {k:>3} {what}: {p:.6}");
        } else {
            println!("  {k:>3} {what}: {p:.3e}");
        }
    }
}
