//! The GPU path against the CPU path, whole games at a time: same moves, same rollout sums,
//! bit for bit. On a machine without a GPU these tests print that they skipped, unless
//! ROLLSIM_REQUIRE_GPU=1 (as in CI, on lavapipe), where a missing adapter fails them.

use rollsim_2048::play::{Candidate, evaluate_games, play_batch};
use rollsim_2048::rollout::gpu::GpuRolloutEngine;
use rollsim_2048::{Board, CpuEngine, Game, Objective, PlayConfig, PlayerKind, RolloutEngine};
use rollsim_gpu::test_gpu;

fn gpu_engine(test: &str) -> Option<GpuRolloutEngine> {
    test_gpu(test).map(|g| GpuRolloutEngine::new(g).expect("rollout engine"))
}

fn config(games: u32, seed: u64, rollouts: u32, objective: Objective) -> PlayConfig {
    PlayConfig {
        first: 0,
        player: PlayerKind::Mc,
        games,
        seed,
        rollouts,
        objective,
        network: None,
        depth: 1,
    }
}

fn outcome(engine: &mut dyn RolloutEngine, c: &PlayConfig) -> Vec<(u64, u64, u32)> {
    play_batch(c, engine, &|_| {})
        .unwrap()
        .games
        .iter()
        .map(|g| (g.board.raw, g.score, g.moves))
        .collect()
}

#[test]
fn mc_games_are_identical_on_gpu_and_cpu() {
    let Some(mut gpu) = gpu_engine("mc_games_are_identical_on_gpu_and_cpu") else {
        return;
    };
    for (seed, objective) in [
        (1, Objective::Score),
        (2, Objective::Tilesum),
        (0xdead_beef_0000_0001, Objective::Score),
    ] {
        let c = config(3, seed, 6, objective);
        assert_eq!(
            outcome(&mut gpu, &c),
            outcome(&mut CpuEngine, &c),
            "seed {seed}"
        );
    }
}

/// Every candidate's sums, from positions near the end of the game and with 32768-scale tiles.
fn candidates(engine: &mut dyn RolloutEngine, boards: &[Board], seed: u64) -> Vec<Vec<Candidate>> {
    let games: Vec<Game> = boards
        .iter()
        .enumerate()
        .map(|(i, &b)| Game::from_position(seed, i as u32, b))
        .collect();
    let refs: Vec<&Game> = games.iter().collect();
    evaluate_games(engine, seed, &refs, 64).unwrap()
}

#[test]
fn hard_positions_give_identical_sums() {
    let Some(mut gpu) = gpu_engine("hard_positions_give_identical_sums") else {
        return;
    };
    let boards: Vec<Board> = [
        // One move from the end.
        "2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 8 8",
        "2 4 8 16 / 4 8 16 32 / 8 16 32 64 / 16 32 64 0",
        // 32768-scale: a pair that may merge (overflow), and a nearly full big board.
        "32768 0 0 32768 / 0 0 0 0 / 2 0 0 0 / 0 0 0 0",
        "32768 16384 8192 4096 / 256 512 1024 2048 / 128 64 32 16 / 2 4 8 0",
        "16384 16384 8192 8192 / 4096 4096 2048 2048 / 1024 1024 512 512 / 2 0 0 2",
    ]
    .iter()
    .map(|b| b.parse().unwrap())
    .collect();
    for seed in [3, 4] {
        let g = candidates(&mut gpu, &boards, seed);
        let c = candidates(&mut CpuEngine, &boards, seed);
        for (i, (g, c)) in g.iter().zip(&c).enumerate() {
            let key = |v: &Vec<Candidate>| v.iter().map(|x| (x.dir, x.sums)).collect::<Vec<_>>();
            assert_eq!(key(g), key(c), "board {i}, seed {seed}");
        }
        assert!(
            c[2].iter().any(|x| x.sums.overflows > 0),
            "the 32768 pair must overflow"
        );
    }
}

#[test]
fn games_with_huge_tiles_play_identically() {
    let Some(mut gpu) = gpu_engine("games_with_huge_tiles_play_identically") else {
        return;
    };
    // Continue a game from a 32768-scale position with both engines, move by move.
    let start: Board = "32768 16384 8192 4096 / 0 512 1024 2048 / 0 0 0 16 / 0 0 0 2"
        .parse()
        .unwrap();
    let play = |engine: &mut dyn RolloutEngine| {
        let mut g = Game::from_position(9, 0, start);
        let mut trace = Vec::new();
        while g.is_running() && trace.len() < 40 {
            let cands = evaluate_games(engine, 9, &[&g], 16).unwrap().remove(0);
            match rollsim_2048::play::best_candidate(Objective::Score, &cands) {
                Some(c) => {
                    trace.push((c.dir, c.sums));
                    g.play(c.moved);
                }
                None => break,
            }
        }
        (trace, g.board, g.score)
    };
    assert_eq!(play(&mut gpu), play(&mut CpuEngine));
}

#[test]
fn greedy_network_games_are_identical_with_gpu_lookups() {
    use rollsim_2048::ntuple::gpu::GpuNetwork;
    use rollsim_2048::ntuple::{Network, small_tuples};
    use rollsim_2048::play::play_greedy_lockstep;
    use rollsim_core::rng::Stream;
    use std::sync::Arc;
    let Some(gpu) = test_gpu("greedy_network_games_are_identical_with_gpu_lookups") else {
        return;
    };
    // A network with random weights: arbitrary, but every move choice depends on them.
    let mut net = Network::new(small_tuples()).unwrap();
    let mut rng = Stream::new(8, [8, 8, 8]);
    for i in 0..net.len() {
        net.set_weight(i, (f64::from(rng.next_u32()) / 1e7) as f32);
    }
    let net = Arc::new(net);
    let config = PlayConfig {
        first: 0,
        player: PlayerKind::Ntuple,
        games: 12,
        seed: 4,
        rollouts: 1,
        objective: Objective::Score,
        network: Some(net.clone()),
        depth: 1,
    };
    let cpu = outcome(&mut CpuEngine, &config);
    let mut lookups = GpuNetwork::new(gpu, &net).unwrap();
    let gpu_games = play_greedy_lockstep(&config, &mut lookups, &|_| {})
        .unwrap()
        .games
        .iter()
        .map(|g| (g.board.raw, g.score, g.moves))
        .collect::<Vec<_>>();
    assert_eq!(gpu_games, cpu);
    assert!(cpu.iter().any(|&(_, _, moves)| moves > 50));
}
