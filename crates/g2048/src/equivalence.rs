//! One equivalence suite for every backend: each test is written once, generic over a
//! [`Device`], and instantiated per backend by [`rollsim_core::per_backend`]. Each compares the
//! device's engines with a reference that shares nothing with their fast paths: rollouts played
//! one after another on one thread, and players that value each board as they meet it. On the
//! CPU it tests the CPU twins; on the GPU the kernels (lavapipe in CI, where
//! `ROLLSIM_REQUIRE_GPU=1` makes a missing adapter a failure, not a skip).

use std::sync::Arc;

#[cfg(feature = "gpu")]
use crate::engines::Gpu;
use crate::engines::{Cpu, Engines};
use crate::ntuple::{BatchValues, Network, small_tuples};
use crate::play::{
    Candidate, Effort, Spending, best_candidate, evaluate_games, play_batch,
    play_expectimax_lockstep, play_greedy_lockstep, play_mc_games,
};
use crate::rollout::{Pending, RolloutSums, rollouts_of, sample_roots};
use crate::{Board, CpuEngine, Dir, Game, Objective, PlayConfig, Player, RolloutEngine, Root};
use rollsim_core::rng::Stream;

/// The production engines of a test's device.
trait Device: Engines + Sized {
    /// The device, or `None` (the test then says it skipped).
    fn open(test: &str) -> Option<Self>;
}

impl Device for Cpu {
    fn open(_: &str) -> Option<Cpu> {
        Some(Cpu)
    }
}

#[cfg(feature = "gpu")]
impl Device for Gpu {
    fn open(test: &str) -> Option<Gpu> {
        // Overlapping (the default on hardware only), so that lockstep play takes its halves.
        rollsim_gpu::test_gpu(test).map(|g| Gpu::new(g).with_overlap(true))
    }
}

rollsim_core::per_backend!(
    cpu: Cpu,
    #[cfg(feature = "gpu")] gpu: Gpu;
    [
        rollout_sums_equal_sequential_rollouts,
        candidates_at_hard_positions_equal_sequential_ones,
        mc_games_equal_sequential_games,
        mc_games_in_alternating_halves_equal_lockstep_games,
        games_with_huge_tiles_play_as_sequential_ones,
        values_equal_network_values,
        lockstep_network_players_play_the_per_game_games,
    ]
);

/// The reference: every rollout in order, on this thread.
struct Sequential;

impl RolloutEngine for Sequential {
    fn backend(&self) -> rollsim_core::Device {
        rollsim_core::Device::Cpu
    }
    fn evaluate_range(
        &mut self,
        seed: u64,
        roots: &[Root],
        range: std::ops::Range<u32>,
    ) -> anyhow::Result<Vec<RolloutSums>> {
        Ok(roots
            .iter()
            .map(|r| rollouts_of(seed, r, range.clone()))
            .collect())
    }
}

fn boards(text: &[&str]) -> Vec<Board> {
    text.iter().map(|b| b.parse().unwrap()).collect()
}

fn rollout_sums_equal_sequential_rollouts<D: Device>() {
    let Some(d) = D::open("rollout_sums_equal_sequential_rollouts") else {
        return;
    };
    let mut engine = d.rollouts().unwrap();
    let hard = boards(&[
        "2 0 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 2",
        "2 4 8 16 / 32 64 128 256 / 512 1024 2048 4096 / 8192 16384 0 0",
        "32768 32768 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0",
        "2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 4 0",
    ]);
    let hard: Vec<Root> = (0..)
        .zip(hard)
        .map(|(g, b)| Root::new(b, g, 3 * g, Dir::Left))
        .collect();
    for seed in [0, 1, u64::MAX] {
        let sums = engine.evaluate(seed, &hard, 37).unwrap();
        assert_eq!(
            sums,
            Sequential.evaluate(seed, &hard, 37).unwrap(),
            "seed {seed}"
        );
        assert!(sums[2].overflows > 0, "the 32768 pair must overflow");
    }
    // Around the kernel's workgroup of 64 rollouts, and many roots at once.
    let roots = sample_roots(23);
    for n in [1, 63, 64, 65] {
        let want = Sequential.evaluate(5, &roots, n).unwrap();
        assert_eq!(engine.evaluate(5, &roots, n).unwrap(), want, "{n} rollouts");
    }
    // Rollouts from a later index, and a run of them in two parts.
    let want = Sequential.evaluate_range(5, &roots, 40..100).unwrap();
    assert_eq!(engine.evaluate_range(5, &roots, 40..100).unwrap(), want);
    let (a, b) = (
        engine.evaluate_range(5, &roots, 0..40).unwrap(),
        Sequential.evaluate(5, &roots, 100).unwrap(),
    );
    let merged: Vec<RolloutSums> = a.iter().zip(&want).map(|(a, w)| a.merge(*w)).collect();
    assert_eq!(merged, b);
}

/// Every candidate's sums, from positions near the end of the game and with 32768-scale tiles.
fn candidates(engine: &mut dyn RolloutEngine, boards: &[Board], seed: u64) -> Vec<Vec<Candidate>> {
    let games: Vec<Game> = (0..)
        .zip(boards)
        .map(|(i, &b)| Game::from_position(seed, i, b))
        .collect();
    let refs: Vec<&Game> = games.iter().collect();
    evaluate_games(engine, seed, &refs, 64).unwrap()
}

fn candidates_at_hard_positions_equal_sequential_ones<D: Device>() {
    let Some(d) = D::open("candidates_at_hard_positions_equal_sequential_ones") else {
        return;
    };
    let boards = boards(&[
        // One move from the end.
        "2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 8 8",
        "2 4 8 16 / 4 8 16 32 / 8 16 32 64 / 16 32 64 0",
        // 32768-scale: a pair that may merge (overflow), and a nearly full big board.
        "32768 0 0 32768 / 0 0 0 0 / 2 0 0 0 / 0 0 0 0",
        "32768 16384 8192 4096 / 256 512 1024 2048 / 128 64 32 16 / 2 4 8 0",
        "16384 16384 8192 8192 / 4096 4096 2048 2048 / 1024 1024 512 512 / 2 0 0 2",
    ]);
    let key = |v: &Vec<Candidate>| v.iter().map(|x| (x.dir, x.sums)).collect::<Vec<_>>();
    for seed in [3, 4] {
        let got = candidates(d.rollouts().unwrap().as_mut(), &boards, seed);
        let want = candidates(&mut Sequential, &boards, seed);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(key(g), key(w), "board {i}, seed {seed}");
        }
        assert!(
            want[2].iter().any(|x| x.sums.overflows > 0),
            "the 32768 pair must overflow"
        );
    }
}

fn config(player: Player, games: u32, seed: u64) -> PlayConfig {
    PlayConfig::new(player, games, seed)
}

fn outcome(engine: &mut dyn RolloutEngine, c: &PlayConfig) -> Vec<(u64, u64, u32)> {
    play_batch(c, engine, &|_| {})
        .unwrap()
        .games
        .iter()
        .map(|g| (g.board.raw, g.score, g.moves))
        .collect()
}

fn mc_games_equal_sequential_games<D: Device>() {
    let Some(d) = D::open("mc_games_equal_sequential_games") else {
        return;
    };
    let spendings = [(false, false), (true, false), (false, true), (true, true)]
        .map(|(common, race)| Spending { common, race });
    for (seed, objective, spending) in [
        (1, Objective::Score, spendings[0]),
        (2, Objective::Tilesum, spendings[0]),
        (0xdead_beef_0000_0001, Objective::Score, spendings[0]),
        (3, Objective::Score, spendings[1]),
        (4, Objective::Score, spendings[2]),
        (5, Objective::Tilesum, spendings[2]),
        (6, Objective::Score, spendings[3]),
    ] {
        let mc = Player::Mc {
            rollouts: 12,
            objective,
            spending,
        };
        let c = config(mc, 3, seed);
        let want = outcome(&mut Sequential, &c);
        assert_eq!(
            outcome(d.rollouts().unwrap().as_mut(), &c),
            want,
            "seed {seed}"
        );
        // Deterministic for a seed.
        assert_eq!(
            outcome(d.rollouts().unwrap().as_mut(), &c),
            want,
            "seed {seed}"
        );
    }
}

/// Each option plays other games than the plain player (the rollouts it draws differ), and a
/// race spends at most the plain budget, on fewer rollouts of candidates clearly behind.
#[test]
fn spending_options_change_the_games_within_the_budget() {
    let play = |spending| {
        let c = config(
            Player::Mc {
                rollouts: 40,
                objective: Objective::Score,
                spending,
            },
            4,
            7,
        );
        let played = play_batch(&c, &mut CpuEngine, &|_| {}).unwrap();
        let games: Vec<(u64, u32)> = played.games.iter().map(|g| (g.score, g.moves)).collect();
        (games, played.rollouts)
    };
    let plain = play(Spending::default());
    for (common, race) in [(true, false), (false, true)] {
        let other = play(Spending { common, race });
        assert_ne!(other.0, plain.0, "common {common}, race {race}");
    }
    // Per move a race spends at most 40 a candidate, and less when it drops some early.
    let (games, rollouts) = play(Spending {
        common: false,
        race: true,
    });
    let moves: u64 = games.iter().map(|&(_, m)| u64::from(m)).sum();
    assert!(
        rollouts <= moves * 4 * 40,
        "{rollouts} rollouts over {moves} moves"
    );
    assert!(
        rollouts > moves * 40,
        "{rollouts} rollouts over {moves} moves"
    );
}

/// Overlaps as a GPU engine does, on any engine: `start` keeps the call, `finish` makes it.
struct Deferred {
    inner: Box<dyn RolloutEngine>,
    calls: [Option<(u64, Vec<Root>, u32)>; 2],
    started: u32,
}

impl RolloutEngine for Deferred {
    fn backend(&self) -> rollsim_core::Device {
        self.inner.backend()
    }
    fn evaluate_range(
        &mut self,
        seed: u64,
        roots: &[Root],
        range: std::ops::Range<u32>,
    ) -> anyhow::Result<Vec<RolloutSums>> {
        assert!(
            self.calls.iter().all(Option::is_none),
            "evaluated with calls in flight"
        );
        self.inner.evaluate_range(seed, roots, range)
    }
    fn start(&mut self, seed: u64, roots: &[Root], n: u32) -> anyhow::Result<Pending> {
        let free = self
            .calls
            .iter()
            .position(Option::is_none)
            .expect("a free slot");
        self.calls[free] = Some((seed, roots.to_vec(), n));
        self.started += 1;
        Ok(Pending::InFlight(free))
    }
    fn finish(&mut self, pending: Pending) -> anyhow::Result<Vec<RolloutSums>> {
        let Pending::InFlight(slot) = pending else {
            panic!("nothing deferred is ready");
        };
        let (seed, roots, n) = self.calls[slot].take().expect("a call in flight");
        self.inner.evaluate(seed, &roots, n)
    }
    fn overlaps(&self) -> bool {
        true
    }
}

/// Games played in two alternating halves (the device's own overlap, or [`Deferred`]'s where it
/// has none) are the games of plain lockstep, and end in the same order with the same effort.
fn mc_games_in_alternating_halves_equal_lockstep_games<D: Device>() {
    let Some(d) = D::open("mc_games_in_alternating_halves_equal_lockstep_games") else {
        return;
    };
    let play = |engine: &mut dyn RolloutEngine, games: u32| {
        let mut ended = Vec::new();
        let (games, rollouts) = play_mc_games(
            engine,
            4,
            (0..games).map(|g| Game::new(4, g)).collect(),
            5,
            Objective::Score,
            Spending::default(),
            &mut |done| {
                ended.extend(done.iter().map(|&(g, e)| (g.index, g.moves, e)));
                Ok(())
            },
        )
        .unwrap();
        let games: Vec<(u64, u64, u32)> = games
            .iter()
            .map(|g| (g.board.raw, g.score, g.moves))
            .collect();
        (games, rollouts, ended)
    };
    for games in [2, 9] {
        let want = play(&mut Sequential, games);
        assert!(
            want.2
                .iter()
                .all(|&(_, _, e): &(u32, u32, Effort)| e.simulated_moves > 0)
        );
        let engine = d.rollouts().unwrap();
        if engine.overlaps() {
            let mut engine = engine;
            assert_eq!(play(engine.as_mut(), games), want, "{games} games");
        } else {
            let mut deferred = Deferred {
                inner: engine,
                calls: [None, None],
                started: 0,
            };
            assert_eq!(play(&mut deferred, games), want, "{games} games");
            assert!(
                deferred.started > 10,
                "the halves started {}",
                deferred.started
            );
        }
    }
}

fn games_with_huge_tiles_play_as_sequential_ones<D: Device>() {
    let Some(d) = D::open("games_with_huge_tiles_play_as_sequential_ones") else {
        return;
    };
    // A game continued from a 32768-scale position, move by move.
    let start: Board = "32768 16384 8192 4096 / 0 512 1024 2048 / 0 0 0 16 / 0 0 0 2"
        .parse()
        .unwrap();
    let play = |engine: &mut dyn RolloutEngine| {
        let mut g = Game::from_position(9, 0, start);
        let mut trace = Vec::new();
        while g.is_running() && trace.len() < 40 {
            let cands = evaluate_games(engine, 9, &[&g], 16).unwrap().remove(0);
            match best_candidate(Objective::Score, &cands) {
                Some(c) => {
                    trace.push((c.dir, c.sums));
                    g.play(c.moved);
                }
                None => break,
            }
        }
        (trace, g.board, g.score)
    };
    let want = play(&mut Sequential);
    assert!(want.0.len() > 5, "the game ends too soon to compare");
    assert_eq!(play(d.rollouts().unwrap().as_mut()), want);
}

/// A network of `tuples` with `count` arbitrary weights: every value and move choice depends
/// on them.
pub(crate) fn random_network(tuples: Vec<Vec<u8>>, seed: u64, count: usize) -> Network {
    random_staged_network(tuples, &[], seed, count)
}

/// [`random_network`] with stages split at the tiles `stages`.
pub(crate) fn random_staged_network(
    tuples: Vec<Vec<u8>>,
    stages: &[u32],
    seed: u64,
    count: usize,
) -> Network {
    let recipe = crate::ntuple::Recipe {
        stages: stages.to_vec(),
        ..Default::default()
    };
    let mut net = Network::with_recipe(tuples, recipe).unwrap();
    let mut rng = Stream::new(seed, [1, 2, 3]);
    let n = net.len() as u32;
    for _ in 0..count {
        let i = rng.below(n) as usize;
        let v = (f64::from(rng.next_u32()) / 4e6 - 500.0) as f32;
        net.set_weight(i, v);
    }
    net
}

pub(crate) fn random_boards(count: usize, seed: u64) -> Vec<Board> {
    let mut rng = Stream::new(seed, [7, 7, 7]);
    (0..count)
        .map(|_| Board::from_raw((0..16).fold(0, |r, c| r | u64::from(rng.below(12)) << (4 * c))))
        .collect()
}

/// The same f32 additions in the same order: equal to the last bit on the CPU and on
/// lavapipe; the promise for any driver is a relative 1e-6.
pub(crate) fn assert_values(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (a, b) in got.iter().zip(want) {
        assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} vs {b}");
    }
}

fn values_equal_network_values<D: Device>() {
    let Some(d) = D::open("values_equal_network_values") else {
        return;
    };
    let f32_net = random_network(small_tuples(), 1, 200_000);
    let mut f16_net = random_network(small_tuples(), 5, 200_000);
    // Subnormal, zero and negative-zero f16 weights too.
    for (i, v) in [(0, 3e-6f32), (1, -5e-8), (2, -0.0), (16, 1e-7)] {
        f16_net.set_weight(i, v);
    }
    let f16_net = f16_net.into_f16();
    // Three stages: random boards' largest tiles (up to 2048) fall in each.
    let staged = random_staged_network(small_tuples(), &[256, 1024], 6, 600_000);
    let mut boards = random_boards(5000, 2);
    boards.push(Board::EMPTY);
    for net in [&f32_net, &f16_net, &staged] {
        let want: Vec<f32> = boards.iter().map(|&b| net.value(b)).collect();
        let mut values = d.values(net).unwrap();
        assert_values(&values.values(&boards).unwrap(), &want);
        // An empty batch, and a second, smaller one on the same buffers.
        assert!(values.values(&[]).unwrap().is_empty());
        assert_values(&values.values(&boards[..17]).unwrap(), &want[..17]);
    }
}

fn lockstep_network_players_play_the_per_game_games<D: Device>() {
    let Some(d) = D::open("lockstep_network_players_play_the_per_game_games") else {
        return;
    };
    let net = Arc::new(random_network(small_tuples(), 8, 300_000));
    let key = |c: &PlayConfig, values: Option<&mut dyn BatchValues>| {
        let played = match values {
            None => play_batch(c, &mut CpuEngine, &|_| {}),
            Some(v) if c.player.depth() > 1 => play_expectimax_lockstep(c, v, &|_| {}),
            Some(v) => play_greedy_lockstep(c, v, &|_| {}),
        };
        let games = played.unwrap().games;
        games
            .iter()
            .map(|g| (g.board.raw, g.score, g.moves))
            .collect::<Vec<_>>()
    };
    let players = [
        (
            Player::Ntuple {
                network: net.clone(),
            },
            12,
        ),
        (
            Player::Expectimax {
                network: net.clone(),
                depth: 2,
            },
            3,
        ),
    ];
    for (player, games) in players {
        let kind = player.kind();
        let c = config(player, games, 4);
        let want = key(&c, None);
        assert!(want.iter().any(|&(_, _, moves)| moves > 50));
        assert_eq!(
            key(&c, Some(d.values(&net).unwrap().as_mut())),
            want,
            "{kind:?}"
        );
        // Leaves from 128 up valued downgraded: other games, the same on every path.
        let c = PlayConfig {
            downgrade: Some(7),
            ..c
        };
        let downgraded = key(&c, None);
        assert_ne!(downgraded, want, "{kind:?}: downgrading changed nothing");
        assert_eq!(
            key(&c, Some(d.values(&net).unwrap().as_mut())),
            downgraded,
            "{kind:?}"
        );
    }
}
