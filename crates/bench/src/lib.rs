//! Throughput workloads, shared by `rollsim bench` and `benches/`.

use rollsim_core::{Device, text};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use rollsim_2048::play::{Spending, play_mc_games};
pub use rollsim_2048::rollout::sample_roots;
use rollsim_2048::rollout::{RolloutEngine, RolloutSums, Root};
use rollsim_2048::{Game, Objective};

/// What a CPU figure ran on: "N threads", the pool's size.
fn cpu_threads() -> String {
    text::count(rayon::current_num_threads(), "thread")
}

/// The unit of a time, where less is better; every other unit is a rate.
pub const SECONDS: &str = "s";

/// How much faster a figure of `unit` is than `base`: their ratio, inverted for times.
pub fn speedup(unit: &str, figure: f64, base: f64) -> f64 {
    match unit {
        SECONDS => base / figure,
        _ => figure / base,
    }
}

/// One measured figure.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    pub workload: String,
    pub backend: Device,
    /// CPU threads, or the adapter's name for GPU figures.
    pub on: String,
    pub figure: f64,
    pub unit: String,
    /// Secondary figures of the same run, e.g. moves/s next to rollouts/s.
    pub extra: Vec<(String, f64)>,
    pub seconds: f64,
}

/// Plays random games `first..first + count` to the end, one after another: `(games, moves)`.
pub fn random_games(seed: u64, first: u32, count: u32) -> (u64, u64) {
    let moves = (first..first + count)
        .map(|i| {
            let mut g = Game::new(seed, i);
            g.play_random_to_end();
            u64::from(g.moves)
        })
        .sum();
    (u64::from(count), moves)
}

/// Random playouts for at least `min_seconds` on `threads` threads (1: this thread alone).
pub fn random_playouts(threads: usize, min_seconds: f64) -> anyhow::Result<Measurement> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let block = 1024u32;
    let start = Instant::now();
    let (mut games, mut moves, mut next) = (0u64, 0u64, 0u32);
    while start.elapsed().as_secs_f64() < min_seconds {
        let round = threads as u32 * 4;
        let (g, m) = pool.install(|| {
            (0..round)
                .into_par_iter()
                .map(|b| random_games(1, next + b * block, block))
                .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        });
        games += g;
        moves += m;
        next += round * block;
    }
    let secs = start.elapsed().as_secs_f64();
    Ok(Measurement {
        workload: if threads == 1 {
            "2048 random playouts, 1 thread".into()
        } else {
            "2048 random playouts, all threads".into()
        },
        backend: Device::Cpu,
        on: text::count(threads, "thread"),
        figure: moves as f64 / secs,
        unit: "moves/s".into(),
        extra: vec![("games/s".into(), games as f64 / secs)],
        seconds: secs,
    })
}

/// Bytes the Monte Carlo workloads hold for each root: the root and its sums, and on the GPU a
/// staged copy of each.
pub const BYTES_PER_ROOT: u64 = 2 * (size_of::<Root>() + size_of::<RolloutSums>()) as u64;

/// Bytes of the standard network's f32 weights, which the lookup and the training workloads
/// each hold.
pub fn standard_network_bytes() -> u64 {
    use rollsim_2048::ntuple::{Rate, standard_tuples};
    use rollsim_2048::train::{new_network_weights, training_bytes};
    training_bytes(
        None,
        new_network_weights(&standard_tuples(), 1),
        Rate::Fixed,
    )
}

/// Rollouts on `engine` over `roots` with `n` each, repeated for at least `min_seconds`.
pub fn rollouts(
    engine: &mut dyn RolloutEngine,
    roots: &[Root],
    n: u32,
    min_seconds: f64,
) -> anyhow::Result<Measurement> {
    let start = Instant::now();
    let (mut rollouts, mut moves, mut seed) = (0u64, 0u64, 0u64);
    while start.elapsed().as_secs_f64() < min_seconds {
        let sums = engine.evaluate(seed, roots, n)?;
        rollouts += sums.iter().map(|s| u64::from(s.rollouts)).sum::<u64>();
        moves += sums.iter().map(|s| s.moves).sum::<u64>();
        seed += 1;
    }
    let workload = format!("2048 mc rollouts ({} roots x {n})", roots.len());
    Ok(rollout_rate(
        engine,
        workload,
        rollouts,
        ("moves/s", moves),
        start,
    ))
}

/// A rollout engine's measurement since `start`: rollouts/s, and `moves` (of `unit`) a second.
fn rollout_rate(
    engine: &dyn RolloutEngine,
    workload: String,
    rollouts: u64,
    (unit, moves): (&str, u64),
    start: Instant,
) -> Measurement {
    let secs = start.elapsed().as_secs_f64();
    Measurement {
        workload,
        backend: engine.backend(),
        on: engine.adapter().unwrap_or_else(cpu_threads),
        figure: rollouts as f64 / secs,
        unit: "rollouts/s".into(),
        extra: vec![(unit.into(), moves as f64 / secs)],
        seconds: secs,
    }
}

/// `count` Monte Carlo games at `n` rollouts a move, played in lockstep to the end as
/// `2048 play --player mc` plays them: the engine's rollouts and the CPU's choices together.
pub fn mc_games(engine: &mut dyn RolloutEngine, count: u32, n: u32) -> anyhow::Result<Measurement> {
    let start = Instant::now();
    let games = (0..count).map(|g| Game::new(1, g)).collect();
    let plain = Spending::default();
    let (games, rollouts) = play_mc_games(
        engine,
        1,
        games,
        n,
        Objective::Score,
        plain,
        &mut |_| Ok(()),
    )?;
    let moves: u64 = games.iter().map(|g| u64::from(g.moves)).sum();
    let workload = format!("2048 mc games ({count} x {n} rollouts a move)");
    Ok(rollout_rate(
        engine,
        workload,
        rollouts,
        ("game moves/s", moves),
        start,
    ))
}

/// Builds a one-sided (with gammon distributions, as gnubg's makebearoff does) or two-sided
/// bearoff table on CPU threads or with the GPU's engines, again and again while the builds so
/// far took under `budget` seconds (at most [`MAX_BUILDS`] times): the median build time and
/// positions (or pairs) per second. A table that takes longer than the budget is built once.
/// An adapter the engines refuse for the one-sided sweep (no f64) is `GpuError::Unsupported`.
pub fn bearoff_build(
    points: u32,
    checkers: u32,
    two_sided: bool,
    gpu: Option<&rollsim_bearoff::engines::Gpu>,
    budget: f64,
) -> anyhow::Result<Measurement> {
    use rollsim_bearoff::columns::gpu;
    use rollsim_bearoff::columns::{Cubeless, solve_in_memory};
    use rollsim_bearoff::engines::Engines;
    use rollsim_bearoff::{OneSided, Space};
    let space = Space::new(points, checkers)?;
    // The GPU's one-sided plays, asked of the engines before anything is timed.
    let mut plays = match (two_sided, gpu) {
        (false, Some(e)) => Some(e.plays()?),
        _ => None,
    };
    let mut build = || -> anyhow::Result<usize> {
        Ok(match (gpu, plays.as_mut()) {
            (_, Some(p)) => OneSided::build_with(space, true, &|_| {}, p.as_mut())?
                .mean
                .len(),
            (Some(e), None) => {
                gpu::solve_in_memory::<1, Cubeless, rollsim_bearoff::numeric::Fixed>(e.0, space)?
                    .len()
            }
            (None, None) if two_sided => solve_in_memory::<1, Cubeless, f32>(space).len(),
            (None, None) => OneSided::build(space, true).mean.len(),
        })
    };
    let mut times = Vec::new();
    let mut positions = 0;
    while times.is_empty() || (times.iter().sum::<f64>() < budget && times.len() < MAX_BUILDS) {
        let start = Instant::now();
        positions = build()?;
        times.push(start.elapsed().as_secs_f64());
    }
    let total = times.iter().sum();
    let secs = rollsim_core::stats::median(&mut times);
    let kind = if two_sided { "two-sided" } else { "one-sided" };
    let mut extra = vec![(
        if two_sided { "pairs/s" } else { "positions/s" }.into(),
        positions as f64 / secs,
    )];
    if times.len() > 1 {
        extra.push(("builds (median taken)".into(), times.len() as f64));
    }
    Ok(Measurement {
        workload: format!("bearoff {kind} {checkers}x{points} build"),
        backend: Device::of(gpu.is_some()),
        on: match gpu {
            Some(e) => e.0.adapter.name.clone(),
            None => cpu_threads(),
        },
        figure: secs,
        unit: SECONDS.into(),
        extra,
        seconds: total,
    })
}

/// The most builds [`bearoff_build`] times: a median of 15 is steady to a few percent on a
/// shared 2-core machine where single builds of 15x6 range from 45 to 95 ms.
pub const MAX_BUILDS: usize = 15;

/// Boards to value in the lookup benchmark: positions reached by random play.
pub fn sample_boards(count: usize) -> Vec<rollsim_2048::Board> {
    let roots = sample_roots(count.min(4096));
    (0..count).map(|i| roots[i % roots.len()].board()).collect()
}

/// N-tuple value lookups on CPU threads: boards valued per second (each 32 weight lookups for
/// the standard network), repeated for at least `min_seconds`.
pub fn ntuple_lookups_cpu(
    net: &rollsim_2048::ntuple::Network,
    boards: &[rollsim_2048::Board],
    min_seconds: f64,
) -> Measurement {
    let start = Instant::now();
    let mut done = 0u64;
    let mut sink = 0f32;
    while start.elapsed().as_secs_f64() < min_seconds {
        sink += boards.par_iter().map(|&b| net.value(b)).sum::<f32>();
        done += boards.len() as u64;
    }
    std::hint::black_box(sink);
    let secs = start.elapsed().as_secs_f64();
    Measurement {
        workload: format!("2048 ntuple lookups ({} features)", net.features()),
        backend: Device::Cpu,
        on: cpu_threads(),
        figure: done as f64 / secs,
        unit: "boards/s".into(),
        extra: vec![],
        seconds: secs,
    }
}

/// The same on the GPU, end to end (upload, dispatch, readback).
pub fn ntuple_lookups_gpu(
    gpu: &rollsim_2048::engines::Gpu,
    net: &rollsim_2048::ntuple::Network,
    boards: &[rollsim_2048::Board],
    min_seconds: f64,
) -> anyhow::Result<Measurement> {
    use rollsim_2048::engines::Engines;
    let mut g = gpu.values(net)?;
    g.values(&boards[..boards.len().min(64)])?;
    let start = Instant::now();
    let mut done = 0u64;
    while start.elapsed().as_secs_f64() < min_seconds {
        std::hint::black_box(g.values(boards)?);
        done += boards.len() as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    Ok(Measurement {
        workload: format!("2048 ntuple lookups ({} features)", net.features()),
        backend: Device::Gpu,
        on: gpu.gpu.adapter.name.clone(),
        figure: done as f64 / secs,
        unit: "boards/s".into(),
        extra: vec![],
        seconds: secs,
    })
}

/// TD(0) training of the standard network on all threads for `games` games: moves per second.
pub fn ntuple_training(games: u64) -> anyhow::Result<Measurement> {
    use rollsim_2048::ntuple::{Network, standard_tuples};
    use rollsim_2048::train::{TrainConfig, train};
    let mut net = Network::new(standard_tuples())?;
    let config = TrainConfig {
        games,
        seed: 1,
        threads: rayon::current_num_threads(),
        block: games,
        ..TrainConfig::default()
    };
    let s = train(&mut net, &config, &|_| {}, &mut |_, _| Ok(()))?;
    Ok(Measurement {
        workload: format!("2048 ntuple training (first {games} games)"),
        backend: Device::Cpu,
        on: text::count(config.threads, "thread"),
        figure: s.moves_per_s,
        unit: "moves/s".into(),
        extra: vec![],
        seconds: s.seconds,
    })
}

/// The 15-puzzle solve loop on random boards for at least `min_seconds`: boards per second.
pub fn puzzle_solve_loop(min_seconds: f64) -> Measurement {
    use rollsim_puzzle::generate::random_board;
    use rollsim_puzzle::solve_loop::{LoopSolver, Plan};
    let solver = LoopSolver::get(Plan::Lookahead);
    let start = Instant::now();
    let (mut boards, mut moves) = (0u64, 0u64);
    while start.elapsed().as_secs_f64() < min_seconds {
        let first = boards as u32;
        moves += (first..first + 4096)
            .into_par_iter()
            .map(|i| solver.solve(&random_board(1, i, 4)).moves.len() as u64)
            .sum::<u64>();
        boards += 4096;
    }
    let secs = start.elapsed().as_secs_f64();
    Measurement {
        workload: "15-puzzle solve loop".into(),
        backend: Device::Cpu,
        on: cpu_threads(),
        figure: boards as f64 / secs,
        unit: "boards/s".into(),
        extra: vec![("moves per board".into(), moves as f64 / boards as f64)],
        seconds: secs,
    }
}

/// Optimal 15-puzzle solves (IDA* with pattern databases `partition`, cached in the default
/// directory) of `count` random boards: boards per second, after loading or building the
/// databases.
pub fn puzzle_optimal(
    partition: rollsim_puzzle::pdb::Partition,
    count: u32,
) -> anyhow::Result<Measurement> {
    use rollsim_core::progress::Silent;
    use rollsim_puzzle::generate::random_board;
    use rollsim_puzzle::ida::{PdbHeuristic, solve};
    use rollsim_puzzle::pdb::{default_dir, load_or_build};
    let dir = default_dir();
    let dbs = partition
        .patterns()
        .iter()
        .map(|tiles| load_or_build(dir.as_deref(), 4, tiles, &Silent).0)
        .collect();
    let heur = PdbHeuristic::new(dbs);
    let start = Instant::now();
    let moves: u64 = (0..count)
        .into_par_iter()
        .map(|i| solve(&heur, &random_board(2, i, 4)).moves.len() as u64)
        .sum();
    let secs = start.elapsed().as_secs_f64();
    Ok(Measurement {
        workload: format!("15-puzzle optimal ({} databases)", partition.name()),
        backend: Device::Cpu,
        on: cpu_threads(),
        figure: f64::from(count) / secs,
        unit: "boards/s".into(),
        extra: vec![("moves per board".into(), moves as f64 / f64::from(count))],
        seconds: secs,
    })
}
