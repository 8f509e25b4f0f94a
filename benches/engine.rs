//! Criterion benches of the 2048 engine: random playouts on one thread, and Monte Carlo
//! rollouts on all threads. `rollsim bench` measures the same workloads side by side with the
//! GPU; these give criterion's statistics for the CPU hot loops.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rollsim_2048::board::{Board, Dir, tables};
use rollsim_2048::rollout::evaluate_cpu;
use rollsim_bench::{random_games, sample_roots};

fn engine(c: &mut Criterion) {
    let t = tables();
    let boards: Vec<Board> = sample_roots(256).iter().map(|r| r.board()).collect();
    let mut g = c.benchmark_group("2048");
    g.throughput(Throughput::Elements(4 * boards.len() as u64));
    g.bench_function("slide all four directions", |b| {
        b.iter(|| {
            boards
                .iter()
                .map(|&x| {
                    Dir::ALL
                        .iter()
                        .map(|&d| x.slide_with(t, d).board.raw)
                        .sum::<u64>()
                })
                .fold(0u64, u64::wrapping_add)
        })
    });
    // About 120 moves per random game.
    let games = 64;
    let moves = random_games(1, 0, games).1;
    g.throughput(Throughput::Elements(moves));
    g.bench_function("random playouts, 1 thread (moves)", |b| {
        b.iter(|| random_games(1, 0, games))
    });
    let roots = sample_roots(64);
    let n = 64;
    g.throughput(Throughput::Elements(roots.len() as u64 * u64::from(n)));
    g.sample_size(10);
    g.bench_function("mc rollouts, all threads (rollouts)", |b| {
        b.iter(|| evaluate_cpu(0, &roots, n))
    });
    g.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
