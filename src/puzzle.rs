//! `rollsim puzzle …`: solve, bench.

use rollsim_core::memory::{check_fits, check_memory, human};
use rollsim_core::text::count;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use rayon::prelude::*;
use serde::Serialize;

use super::{CpuComputeArgs, OutputArgs, input_error, print_json, progress_bar};
use crate::args::{PartitionArg, PlanArg};
use crate::output::Bar;
use rollsim_puzzle::pdb::{self, Source};
use rollsim_puzzle::{
    Astar, Board, LoopSolver, Optimal, Partition, PdbHeuristic, Plan, STAGES, Solver,
    moves_to_string, random_board,
};

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Solve one board (--board) or one board per line of a file (--file).
    Solve(SolveArgs),
    /// Solve N random solvable boards; report solve rate, lengths, per-stage moves and speed.
    Bench(BenchArgs),
}

/// Which solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The solve-loop heuristic: six stages of loop turning (4x4 only).
    Loop,
    /// Shortest solutions: IDA* over additive pattern databases.
    Optimal,
    /// A* with the Manhattan distance and a node limit (the baseline).
    Astar,
}

impl Method {
    /// The name `--method` takes.
    fn name(self) -> &'static str {
        match self {
            Method::Loop => "loop",
            Method::Optimal => "optimal",
            Method::Astar => "astar",
        }
    }
}

#[derive(ClapArgs, Debug)]
pub struct SolverArgs {
    /// loop: the solve loop; optimal: IDA* with pattern databases; astar: A*, Manhattan, node limit.
    #[arg(long, value_enum, default_value_t = Method::Loop)]
    method: Method,
    /// Solve loop: which loops tiles 1 and 2 turn (lookahead: the pair with the shortest whole
    /// solution; greedy: each the cheapest alone), or shortest (each stage by its shortest moves).
    /// Default: lookahead.
    #[arg(long, value_enum)]
    plan: Option<PlanArg>,
    /// Optimal: the pattern-database partition of the 15-puzzle (3x3 boards always use 4-4).
    /// Databases are built once and cached (--pdb-dir): the default 7-8 takes minutes and about
    /// 5.4 GB of memory to build, 6-6-3 seconds. Default: 7-8.
    #[arg(long, value_enum)]
    pdb: Option<PartitionArg>,
    /// Optimal: where databases are cached (default $XDG_CACHE_HOME/rollsim or ~/.cache/rollsim).
    #[arg(long, value_name = "DIR")]
    pdb_dir: Option<PathBuf>,
    /// A*: most nodes expanded per board before giving up (default: 1000000).
    #[arg(long, value_name = "N")]
    node_limit: Option<u64>,
    /// Replay every solution and confirm it reaches the goal (the default).
    #[arg(long, overrides_with = "no_verify")]
    verify: bool,
    /// Skip the replay check.
    #[arg(long, overrides_with = "verify")]
    no_verify: bool,
    #[command(flatten)]
    compute: CpuComputeArgs,
}

#[derive(ClapArgs, Debug)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["board", "file"])))]
pub struct SolveArgs {
    /// The board: rows of numbers (split by newlines, '/' or '|'; 0 or _ the blank) or 16 hex
    /// digits (123456789abcdef0 is the goal).
    #[arg(long)]
    board: Option<String>,
    /// A file of boards, one per line (blank lines and lines starting with # are skipped).
    #[arg(long, value_name = "F")]
    file: Option<PathBuf>,
    #[command(flatten)]
    solver: SolverArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(ClapArgs, Debug)]
pub struct BenchArgs {
    /// Number of random solvable boards.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    count: u32,
    /// Seed of the boards (default: a random seed, printed in the report).
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    solver: SolverArgs,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(c: Command) -> anyhow::Result<()> {
    match c {
        Command::Solve(a) => solve(a),
        Command::Bench(a) => bench(a),
    }
}

/// One board's outcome.
#[derive(Serialize, Clone, Debug)]
struct BoardResult {
    board: String,
    solved: bool,
    length: Option<usize>,
    /// The directions the blank moves: U, D, L, R.
    moves: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stages: Option<BTreeMap<&'static str, u32>>,
    /// optimal: nodes generated; astar: nodes expanded.
    #[serde(skip_serializing_if = "Option::is_none")]
    nodes: Option<u64>,
    seconds: f64,
}

#[derive(Serialize, Debug)]
struct Moves {
    mean: Option<f64>,
    max: Option<usize>,
    min: Option<usize>,
}

#[derive(Serialize, Debug)]
struct Summary {
    method: Method,
    #[serde(skip_serializing_if = "Option::is_none")]
    plan: Option<Plan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pdb: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node_limit: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    boards: usize,
    solved: usize,
    solve_rate: f64,
    /// Over the solved boards.
    moves: Moves,
    /// Mean moves per stage (loop).
    #[serde(skip_serializing_if = "Option::is_none")]
    stages: Option<BTreeMap<&'static str, f64>>,
    /// Mean nodes per board (optimal: generated; astar: expanded).
    #[serde(skip_serializing_if = "Option::is_none")]
    nodes_mean: Option<f64>,
    verified: bool,
    threads: usize,
    /// Seconds spent loading or building the pattern databases (optimal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pdb_seconds: Option<f64>,
    /// Mean single-thread seconds per board.
    seconds_per_board: f64,
    /// Wall-clock seconds solving (and checking) all boards.
    seconds: f64,
    boards_per_s: f64,
}

/// The method's solver, ready, and how its results are reported.
struct Solvers {
    method: Method,
    plan: Plan,
    node_limit: u64,
    verify: bool,
    solver: Box<dyn Solver>,
    pdb_seconds: Option<f64>,
    pdb_name: Option<&'static str>,
}

impl Solvers {
    fn new(a: &SolverArgs, boards: &[Board], quiet: bool) -> anyhow::Result<Solvers> {
        let widths = |w: usize| boards.iter().any(|b| b.width() == w);
        let is = |m: Method| a.method == m;
        super::refuse_flags(
            &[
                (
                    a.plan.is_some() && !is(Method::Loop),
                    "--plan",
                    "--method loop",
                ),
                (
                    a.pdb.is_some() && !is(Method::Optimal),
                    "--pdb",
                    "--method optimal",
                ),
                (
                    a.pdb_dir.is_some() && !is(Method::Optimal),
                    "--pdb-dir",
                    "--method optimal",
                ),
                (
                    a.node_limit.is_some() && !is(Method::Astar),
                    "--node-limit",
                    "--method astar",
                ),
            ],
            &format!("--method {}", a.method.name()),
        )?;
        let pdb = a.pdb.map_or(Partition::P78, Partition::from);
        if a.method == Method::Loop && widths(3) {
            return Err(input_error(
                "the solve loop is for 4x4 boards; use --method optimal or astar for 3x3 boards",
            ));
        }
        let plan = a.plan.map_or(Plan::Lookahead, Plan::from);
        let node_limit = a.node_limit.unwrap_or(1_000_000);
        let mut s = Solvers {
            method: a.method,
            plan,
            node_limit,
            verify: !a.no_verify,
            // The loop's tables are built here, before the clock starts.
            solver: match a.method {
                Method::Loop => Box::new(LoopSolver::get(plan)),
                Method::Astar => Box::new(Astar { node_limit }),
                Method::Optimal => Box::new(Optimal {
                    width3: None,
                    width4: None,
                }),
            },
            pdb_seconds: None,
            pdb_name: None,
        };
        if a.method == Method::Optimal {
            if pdb.width() != 4 && widths(4) {
                return Err(input_error(format!(
                    "--pdb {} is for 3x3 boards; choose 7-8, 6-6-3 or 5-5-5 for 4x4 boards",
                    pdb.name()
                )));
            }
            let t0 = Instant::now();
            if let Some(d) = &a.pdb_dir
                && d.exists()
                && !d.is_dir()
            {
                return Err(input_error(format!(
                    "--pdb-dir {}: a file, not a directory",
                    d.display()
                )));
            }
            let dir = a.pdb_dir.clone().or_else(pdb::default_dir);
            if dir.is_none() && !quiet {
                eprintln!(
                    "note: no cache directory (set --pdb-dir, XDG_CACHE_HOME or HOME): \
                     the pattern databases are built in memory and not kept"
                );
            }
            let width3 = match widths(3) {
                true => Some(load(Partition::P44, dir.as_deref(), quiet)?),
                false => None,
            };
            let width4 = match widths(4) {
                true => Some(load(pdb, dir.as_deref(), quiet)?),
                false => None,
            };
            s.pdb_name = Some(if widths(4) {
                pdb.name()
            } else {
                Partition::P44.name()
            });
            s.solver = Box::new(Optimal { width3, width4 });
            s.pdb_seconds = Some(t0.elapsed().as_secs_f64());
        }
        Ok(s)
    }

    fn solve(&self, board: &Board) -> anyhow::Result<BoardResult> {
        let t0 = Instant::now();
        let solution = self.solver.solve(board);
        let seconds = t0.elapsed().as_secs_f64();
        if self.verify {
            solution.check(board).with_context(|| {
                format!(
                    "internal error: the {:?} solver's solution for {} fails the check",
                    self.method,
                    board.compact()
                )
            })?;
        }
        let moves = solution.moves.as_deref();
        Ok(BoardResult {
            board: board.compact(),
            solved: moves.is_some(),
            length: moves.map(<[_]>::len),
            moves: moves.map(moves_to_string),
            stages: solution.stages_by_name().map(Iterator::collect),
            nodes: solution.nodes,
            seconds,
        })
    }

    fn summarise(&self, results: &[BoardResult], seconds: f64, seed: Option<u64>) -> Summary {
        let solved: Vec<&BoardResult> = results.iter().filter(|r| r.solved).collect();
        let lengths: Vec<usize> = solved.iter().filter_map(|r| r.length).collect();
        let mean = |total: f64, n: usize| (n > 0).then(|| total / n as f64);
        let stages = (self.method == Method::Loop).then(|| {
            STAGES
                .iter()
                .map(|&s| {
                    let total: u64 = solved
                        .iter()
                        .map(|r| u64::from(r.stages.as_ref().map_or(0, |m| m[s])))
                        .sum();
                    (s, mean(total as f64, solved.len()).unwrap_or(0.0))
                })
                .collect()
        });
        let nodes: Vec<u64> = results.iter().filter_map(|r| r.nodes).collect();
        Summary {
            method: self.method,
            plan: (self.method == Method::Loop).then_some(self.plan),
            pdb: self.pdb_name,
            node_limit: (self.method == Method::Astar).then_some(self.node_limit),
            seed,
            boards: results.len(),
            solved: solved.len(),
            solve_rate: solved.len() as f64 / results.len().max(1) as f64,
            moves: Moves {
                mean: mean(lengths.iter().sum::<usize>() as f64, lengths.len()),
                max: lengths.iter().copied().max(),
                min: lengths.iter().copied().min(),
            },
            stages,
            nodes_mean: mean(nodes.iter().sum::<u64>() as f64, nodes.len()),
            verified: self.verify,
            threads: rayon::current_num_threads(),
            pdb_seconds: self.pdb_seconds,
            seconds_per_board: mean(results.iter().map(|r| r.seconds).sum(), results.len())
                .unwrap_or(0.0),
            seconds,
            boards_per_s: results.len() as f64 / seconds.max(1e-9),
        }
    }
}

fn load(p: Partition, dir: Option<&Path>, quiet: bool) -> anyhow::Result<PdbHeuristic> {
    let (need, builds) = pdb::load_or_build_bytes(dir, p.width(), &p.patterns());
    let what = match builds {
        0 => format!("reading the {} pattern databases", p.name()),
        _ => format!("building the {} pattern databases", p.name()),
    };
    check_memory(&what, need).map_err(|e| {
        let smaller = (p == Partition::P78).then(|| {
            let q = Partition::P663;
            let (bytes, _) = pdb::load_or_build_bytes(dir, q.width(), &q.patterns());
            format!("; --pdb {} needs about {}", q.name(), human(bytes))
        });
        input_error(e + &smaller.unwrap_or_default())
    })?;
    let bar = Bar::new("placements", quiet);
    let mut dbs = Vec::new();
    for tiles in p.patterns() {
        let (db, source) = pdb::load_or_build(dir, p.width(), &tiles, &bar);
        if let Source::Built {
            save_error: Some(e),
            ..
        } = &source
            && !quiet
        {
            eprintln!("warning: could not save the database ({e}); it is used from memory");
        }
        dbs.push(db);
    }
    Ok(PdbHeuristic::new(dbs))
}

fn parse_board(text: &str) -> anyhow::Result<Board> {
    text.parse::<Board>()
        .map_err(|e| input_error(format!("invalid board: {e}")))
}

/// Solves `boards` in parallel, in order, with a progress bar when there are several.
fn solve_all(
    solvers: &Solvers,
    boards: &[Board],
    quiet: bool,
) -> anyhow::Result<(Vec<BoardResult>, f64)> {
    let bar = progress_bar(boards.len() as u64, "boards", quiet || boards.len() < 2);
    let t0 = Instant::now();
    let results = boards
        .par_iter()
        .map(|b| {
            let r = solvers.solve(b);
            bar.inc(1);
            r
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let seconds = t0.elapsed().as_secs_f64();
    bar.finish_and_clear();
    Ok((results, seconds))
}

#[derive(Serialize)]
struct SolveReport<'a> {
    results: &'a [BoardResult],
    summary: &'a Summary,
}

fn solve(a: SolveArgs) -> anyhow::Result<()> {
    let boards = match (&a.board, &a.file) {
        (Some(text), _) => vec![parse_board(text)?],
        (None, Some(path)) => {
            // One board a line: a gigabyte is tens of millions of boards.
            let text = rollsim_core::files::read_input_text(path, 1 << 30)?;
            let mut boards = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let board = line.parse::<Board>().map_err(|e| {
                    input_error(format!(
                        "{} line {}: invalid board: {e}",
                        path.display(),
                        i + 1
                    ))
                })?;
                if a.solver.method == Method::Loop && board.width() == 3 {
                    return Err(input_error(format!(
                        "{} line {}: a 3x3 board, but the solve loop is for 4x4 boards; use \
                         --method optimal or astar",
                        path.display(),
                        i + 1
                    )));
                }
                boards.push(board);
            }
            if boards.is_empty() {
                return Err(input_error(format!("{} holds no boards", path.display())));
            }
            // Each board is kept with its result (its solution and stage counts): under 1 kB.
            check_fits("puzzle solve --file", boards.len() as u64, 1024).map_err(input_error)?;
            boards
        }
        (None, None) => unreachable!("clap requires --board or --file"),
    };
    a.solver.compute.init("the 15-puzzle solvers")?;
    let solvers = Solvers::new(&a.solver, &boards, a.output.quiet)?;
    let (results, seconds) = solve_all(&solvers, &boards, a.output.quiet)?;
    let summary = solvers.summarise(&results, seconds, None);
    if a.output.json {
        return print_json(&SolveReport {
            results: &results,
            summary: &summary,
        });
    }
    if let [(r, b)] = &results.iter().zip(&boards).collect::<Vec<_>>()[..] {
        outln!("{b}\n");
        outln!("method    {}", method_name(&summary));
        match (&r.length, &r.moves) {
            (Some(len), Some(m)) => {
                let mut line = format!("{len} moves");
                if let Some(st) = &r.stages {
                    let parts: Vec<String> =
                        STAGES.iter().map(|s| format!("{s} {}", st[s])).collect();
                    line += &format!(" ({})", parts.join(", "));
                }
                if solvers.method == Method::Optimal {
                    line += ", optimal";
                }
                outln!("length    {line}");
                outln!("moves     {}", if m.is_empty() { "-" } else { m });
                outln!("          (the directions the blank moves: U up, D down, L left, R right)");
            }
            _ => outln!(
                "unsolved  the node limit ({}) was reached first",
                solvers.node_limit
            ),
        }
        if let Some(n) = r.nodes {
            outln!("nodes     {n}");
        }
        outln!(
            "checked   {}",
            match (summary.verified, r.solved) {
                (true, true) => "yes: replayed, every move legal, ends at the goal",
                (true, false) => "- (no solution to check)",
                (false, _) => "no (--no-verify)",
            }
        );
        outln!("time      {:.4} s", r.seconds);
        return Ok(());
    }
    for r in &results {
        match (&r.length, &r.moves) {
            (Some(len), Some(m)) => outln!("{} {len:>3} {m}", r.board),
            _ => outln!("{}   - unsolved within the node limit", r.board),
        }
    }
    outln!();
    print_summary(&summary);
    Ok(())
}

fn method_name(s: &Summary) -> String {
    match s.method {
        Method::Loop => format!("loop (plan {})", s.plan.map_or("", Plan::name)),
        Method::Optimal => format!("optimal (IDA*, {} pattern databases)", s.pdb.unwrap_or("?")),
        Method::Astar => format!(
            "astar (Manhattan, at most {} nodes expanded)",
            s.node_limit.unwrap_or(0)
        ),
    }
}

fn print_summary(s: &Summary) {
    outln!("method    {}", method_name(s));
    let seed = s.seed.map(|x| format!(" (seed {x})")).unwrap_or_default();
    outln!(
        "boards    {}{seed}, solved {} ({:.2}%){}",
        s.boards,
        s.solved,
        100.0 * s.solve_rate,
        match (s.verified, s.solved) {
            (true, 0) => String::new(),
            (true, 1) => ", its solution checked".to_string(),
            (true, n) => format!(", all {n} solutions checked"),
            (false, _) => ", not checked".to_string(),
        }
    );
    match (s.moves.mean, s.moves.max, s.moves.min) {
        (Some(mean), Some(max), Some(min)) => {
            outln!("moves     mean {mean:.2}, max {max}, min {min}")
        }
        _ => outln!("moves     -"),
    }
    if let Some(st) = &s.stages {
        let parts: Vec<String> = STAGES.iter().map(|k| format!("{k} {:.2}", st[k])).collect();
        outln!("stages    {}", parts.join(", "));
    }
    if let Some(n) = s.nodes_mean {
        outln!("nodes     mean {n:.0} per board");
    }
    if let Some(p) = s.pdb_seconds {
        outln!("databases {p:.2} s to load or build");
    }
    outln!(
        "speed     {:.3} s on {}: {:.1} boards/s, {:.6} s per board (one thread)",
        s.seconds,
        count(s.threads, "thread"),
        s.boards_per_s,
        s.seconds_per_board
    );
}

fn bench(a: BenchArgs) -> anyhow::Result<()> {
    a.solver.compute.init("the 15-puzzle solvers")?;
    let seed = a.seed.unwrap_or_else(rand::random);
    // Each board is kept with its result (its text, solution and stage counts): under 1 kB.
    rollsim_core::memory::check_fits("puzzle bench --count", u64::from(a.count), 1024)
        .map_err(input_error)?;
    let boards: Vec<Board> = (0..a.count)
        .into_par_iter()
        .map(|i| random_board(seed, i, 4))
        .collect();
    let solvers = Solvers::new(&a.solver, &boards, a.output.quiet)?;
    let (results, seconds) = solve_all(&solvers, &boards, a.output.quiet)?;
    let summary = solvers.summarise(&results, seconds, Some(seed));
    if a.output.json {
        return print_json(&summary);
    }
    print_summary(&summary);
    Ok(())
}
