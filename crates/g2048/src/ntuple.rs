//! N-tuple networks: the value function of the learning 2048 players.
//!
//! A network is a list of *tuples*, each a short list of board cells (row-major, cell `i` is
//! nibble `i` of [`Board::raw`]). Each tuple owns `16^k` weights, `k` its number of cells, one per
//! combination of the cells' exponents. The value of a board is the sum, over the 8 symmetries
//! of the square and over the tuples, of the weight its cells select on the symmetric board:
//! symmetric boards share weights, so every tuple is in effect looked up at 8 places.
//!
//! # Indexing (shared with any other implementation, such as a GPU twin)
//!
//! - Symmetry `s` turns board `b` into `B_s` with `B_s[i] = b[SYMMETRIES[s][i]]`. The order is
//!   identity, mirror (columns reversed), flip (rows reversed), rotation by 180°, then the
//!   transposes (main-diagonal reflection) of those four: `B_{4+j} = transpose(B_j)`.
//! - Feature `(t, s)`: with the cells `c_0 .. c_{k-1}` of tuple `t`, its index is
//!   `Σ_j B_s[c_j] << 4j` (the first cell in the lowest nibble) and its weight is
//!   `weights[offset[t] + index]`, where `offset[t]` is the sum of `16^k` over the tuples before
//!   `t`. Equivalently, read on the original board: cells `SYMMETRIES[s][c_j]`
//!   ([`Network::feature_cells`]).
//! - The value is `Σ_s Σ_t w(t, s)` in `f32`, summed as 8 per-symmetry partial sums (each over
//!   the tuples in order) combined pairwise: `((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))`.
//!   Another summation order gives a value within float rounding of this one.
//!
//! # Weights
//!
//! Training uses `f32` weights shared by all training threads without locks: each is an
//! [`AtomicU32`] holding the `f32`'s bits, read and written with `Relaxed` loads and stores.
//! Racing updates may lose one another's increments (the "Hogwild!" trade-off every fast n-tuple
//! trainer makes), but there is no data race and no undefined behaviour. For storage and
//! inference a network can hold `f16` weights instead (half the memory: 128 MiB for the
//! standard network), converted as [`to_f16`] documents.
//!
//! # Feature extraction
//!
//! The 8 symmetric boards are computed with a few word operations each (one transpose, two
//! nibble-reversing mirrors, four row-reversing flips), then each tuple is compiled into *runs*
//! of consecutive cells, so a feature index is one shift and mask per run: the four standard
//! 6-tuples need 1, 1, 2 and 2 runs: a quarter of the time of reading the cells one by one
//! through per-feature cell lists, which is what the tests compare against
//! ([`Network::feature_cells`]).

mod features;
mod file;
mod recipe;
mod shapes;
mod symmetry;

pub use features::*;
pub use file::*;
pub use recipe::*;
pub use shapes::*;
pub use symmetry::*;

use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use half::f16;

use super::board::Board;
use rollsim_core::container::{Container, FrameError, check_checksum};
use rollsim_core::files::CrcWriter;
use rollsim_core::memory::{huge_vec, prefetch};

/// The most cells a tuple may have (16^6 = 16.7 M weights per tuple).
pub const MAX_CELLS: usize = 6;
/// The most tuples a network may have.
pub const MAX_TUPLES: usize = 32;
/// The most weights a network may have in all (2^28: 1 GiB as f32).
pub const MAX_WEIGHTS: usize = 1 << 28;

/// The largest finite `f16`; larger `f32` magnitudes saturate to it in [`to_f16`].
pub const F16_MAX: f32 = 65504.0;

/// Rounds an `f32` weight to `f16` as stored: round to nearest, ties to even (IEEE 754), with
/// magnitudes beyond [`F16_MAX`] saturated to ±65504 instead of becoming infinite. Magnitudes
/// below 2^-14 become subnormal `f16`s (spacing 2^-24) and below 2^-25 become ±0. NaN stays
/// NaN (networks refuse to store one). Widening back to `f32` is exact, so a stored `f16`
/// weight reads back as `to_f16(w).to_f32()`: within a relative 2^-11 of `w` (for
/// 2^-14 <= |w| <= 65504).
#[inline]
pub fn to_f16(x: f32) -> f16 {
    f16::from_f32(x.clamp(-F16_MAX, F16_MAX))
}

/// The element type of stored weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Element {
    F32,
    F16,
}

impl Element {
    fn code(self) -> u32 {
        match self {
            Element::F32 => 1,
            Element::F16 => 2,
        }
    }

    /// Bytes per weight.
    pub fn size(self) -> usize {
        match self {
            Element::F32 => 4,
            Element::F16 => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Element::F32 => "f32",
            Element::F16 => "f16",
        }
    }
}

/// What can go wrong building, reading or writing a network.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    // Transparent: "{0}" here would print the OS error twice under `{:#}`.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A file that cannot be read as a network at all: missing, a FIFO, a directory.
    #[error(transparent)]
    Input(#[from] rollsim_core::files::InputFileError),
    #[error("not a rollsim n-tuple network file (bad magic)")]
    BadMagic,
    #[error("unsupported n-tuple file version {0} (this build reads version {v})", v = FORMAT.version)]
    Version(u32),
    #[error("unknown weight element type {0} (1 = f32, 2 = f16)")]
    Element(u32),
    #[error("bad tuple shapes: {0}")]
    Tuples(String),
    #[error("bad recipe: {0}")]
    Recipe(String),
    #[error("truncated: expected {expected} bytes, found {found}")]
    Truncated { expected: u64, found: u64 },
    #[error("oversized: expected {expected} bytes, found more")]
    Oversized { expected: u64 },
    #[error("checksum mismatch: stored {stored:08x}, computed {computed:08x} (corrupt file)")]
    Checksum { stored: u32, computed: u32 },
    #[error("weight {index} is {value} (not finite): the network diverged or the file is corrupt")]
    NotFinite { index: usize, value: f32 },
}

enum Weights {
    F32(Box<[AtomicU32]>),
    F16(Box<[f16]>),
}

/// Calls `$self.$f::<R>(args)` with `R` the smallest supported run count covering every tuple.
macro_rules! by_runs {
    ($self:ident . $f:ident ( $($arg:expr),* )) => {
        match $self.max_runs {
            0 | 1 => $self.$f::<1>($($arg),*),
            2 => $self.$f::<2>($($arg),*),
            3 => $self.$f::<3>($($arg),*),
            _ => $self.$f::<MAX_CELLS>($($arg),*),
        }
    };
}

/// An n-tuple network: tuple shapes, weights (one set per stage), how they were made, and
/// the number of games it was trained on.
pub struct Network {
    tuples: Vec<Vec<u8>>,
    compiled: Vec<Compiled>,
    /// The most runs of consecutive cells in any tuple (the standard network's: 2).
    max_runs: usize,
    /// Weights per stage: stage `s`'s weights are `s * stage_len ..`.
    stage_len: usize,
    /// The recipe's stage splits as exponents.
    splits: Vec<u8>,
    weights: Weights,
    /// Temporal coherence state while training with it: per weight, its accumulated error
    /// (the low 32 bits, f32) and absolute error (the high 32). Kept beside the weights, not
    /// interleaved, so that valuing boards touches only the weights' cache lines.
    coherence: Option<Box<[AtomicU64]>>,
    recipe: Recipe,
    games: u64,
}

/// The TC state word of accumulated error `e` and absolute error `a`.
#[inline(always)]
fn coherence_word(e: f32, a: f32) -> u64 {
    u64::from(e.to_bits()) | u64::from(a.to_bits()) << 32
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Network")
            .field("tuples", &self.tuples)
            .field("element", &self.element())
            .field("weights", &self.len())
            .field("recipe", &self.recipe)
            .field("coherence", &self.coherence.is_some())
            .field("games", &self.games)
            .finish()
    }
}

impl Network {
    /// A network of the given tuple shapes with every weight 0 (f32, one stage, trained on 0
    /// games).
    pub fn new(tuples: Vec<Vec<u8>>) -> Result<Network, NetworkError> {
        Network::with_recipe(tuples, Recipe::default())
    }

    /// A new f32 network of the recipe's stages, with every board valued at its `init`. The
    /// recipe's training sessions are kept (a new network has usually none).
    pub fn with_recipe(tuples: Vec<Vec<u8>>, recipe: Recipe) -> Result<Network, NetworkError> {
        let n = weights_needed(&tuples, &recipe)?;
        let w = (recipe.init / (8 * tuples.len()) as f32).to_bits();
        let mut v = huge_vec(n);
        v.extend((0..n).map(|_| AtomicU32::new(w)));
        let weights = Weights::F32(v.into_boxed_slice());
        Ok(Network::assemble(tuples, weights, 0, recipe))
    }

    /// `tuples` and `recipe` checked (see [`Network::with_recipe`]), and `recipe` valid.
    fn assemble(tuples: Vec<Vec<u8>>, weights: Weights, games: u64, recipe: Recipe) -> Network {
        let mut offset = 0;
        let compiled: Vec<Compiled> = tuples
            .iter()
            .map(|cells| {
                let c = Compiled::new(cells, offset);
                offset += 1 << (4 * cells.len());
                c
            })
            .collect();
        let max_runs = compiled
            .iter()
            .map(|c: &Compiled| c.nruns)
            .max()
            .unwrap_or(1);
        Network {
            tuples,
            compiled,
            max_runs,
            stage_len: offset,
            splits: recipe.split_exponents().expect("a checked recipe"),
            weights,
            coherence: None,
            recipe,
            games,
        }
    }

    /// Splits a one-stage f32 network into the stages of `splits` (tile values), each stage
    /// starting from the network's weights and TC state: weight promotion (Jaśkowski), done
    /// at once rather than weight by weight. The recipe keeps its sessions.
    pub fn into_stages(self, splits: &[u32]) -> Result<Network, NetworkError> {
        if !self.splits.is_empty() {
            return Err(NetworkError::Recipe(format!(
                "the network has stages already ({:?})",
                self.recipe.stages
            )));
        }
        let recipe = Recipe {
            stages: splits.to_vec(),
            ..self.recipe.clone()
        };
        let n = weights_needed(&self.tuples, &recipe)?;
        let Weights::F32(w) = &self.weights else {
            return Err(NetworkError::Recipe(
                "stages are made from f32 weights".into(),
            ));
        };
        let len = self.stage_len;
        let mut weights = huge_vec(n);
        weights.extend((0..n).map(|i| AtomicU32::new(w[i % len].load(Relaxed))));
        let coherence = self.coherence.as_ref().map(|c| {
            let mut v = huge_vec(n);
            v.extend((0..n).map(|i| AtomicU64::new(c[i % len].load(Relaxed))));
            v.into_boxed_slice()
        });
        let mut net = Network::assemble(
            self.tuples.clone(),
            Weights::F32(weights.into_boxed_slice()),
            self.games,
            recipe,
        );
        net.coherence = coherence;
        Ok(net)
    }

    /// What the weights are and how they were trained.
    pub fn recipe(&self) -> &Recipe {
        &self.recipe
    }

    /// Records a training session's games (see [`Recipe::record`]) and sets the game count.
    pub fn record_training(
        &mut self,
        rate: Rate,
        alpha: f32,
        lambda: f32,
        shaping: Shaping,
        games: u64,
    ) {
        self.games += games;
        self.recipe
            .record(rate, alpha, lambda, shaping, self.games, games);
    }

    /// Weights per stage.
    pub fn stage_len(&self) -> usize {
        self.stage_len
    }

    /// The stage splits as exponents (empty for one stage).
    pub fn split_exponents(&self) -> &[u8] {
        &self.splits
    }

    /// Where the weights of board `b`'s stage start.
    #[inline(always)]
    fn stage_base(&self, b: u64) -> usize {
        if self.splits.is_empty() {
            0
        } else {
            stage_of(Board::from_raw(b), &self.splits) * self.stage_len
        }
    }

    /// Whether the network holds temporal coherence state (and so trains by TC).
    pub fn has_coherence(&self) -> bool {
        self.coherence.is_some()
    }

    /// Starts temporal coherence: every weight's accumulated errors at 0, so its first update
    /// is at the full rate. Kept when it is already there.
    pub fn enable_coherence(&mut self) {
        if self.coherence.is_none() {
            let n = self.len();
            let mut v = huge_vec(n);
            v.extend((0..n).map(|_| AtomicU64::new(0)));
            self.coherence = Some(v.into_boxed_slice());
        }
    }

    /// Drops the temporal coherence state (training goes on at fixed rates).
    pub fn disable_coherence(&mut self) {
        self.coherence = None;
    }

    /// Weight `i`'s TC state: accumulated error and absolute error.
    pub fn coherence_state(&self, i: usize) -> Option<(f32, f32)> {
        self.coherence.as_ref().map(|c| {
            let v = c[i].load(Relaxed);
            (f32::from_bits(v as u32), f32::from_bits((v >> 32) as u32))
        })
    }

    /// The tuple shapes, as cell lists.
    pub fn tuples(&self) -> &[Vec<u8>] {
        &self.tuples
    }

    /// Where each tuple's weights start.
    pub fn offsets(&self) -> Vec<usize> {
        self.compiled.iter().map(|c| c.offset).collect()
    }

    /// Features per board: 8 per tuple.
    pub fn features(&self) -> usize {
        8 * self.tuples.len()
    }

    /// The number of weights, every stage's.
    pub fn len(&self) -> usize {
        match &self.weights {
            Weights::F32(w) => w.len(),
            Weights::F16(w) => w.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn element(&self) -> Element {
        match self.weights {
            Weights::F32(_) => Element::F32,
            Weights::F16(_) => Element::F16,
        }
    }

    /// Training games played so far (recorded in the file header).
    pub fn games(&self) -> u64 {
        self.games
    }

    pub fn set_games(&mut self, games: u64) {
        self.games = games;
    }

    /// The cells of the original board that feature `(tuple, symmetry)` reads, in index order
    /// (the first in the lowest nibble).
    pub fn feature_cells(&self, tuple: usize, symmetry: usize) -> Vec<u8> {
        self.tuples[tuple]
            .iter()
            .map(|&c| SYMMETRIES[symmetry][usize::from(c)])
            .collect()
    }

    /// The weight indexes of the board's features, tuple-major: entry `8 t + s` is feature
    /// `(t, s)`.
    pub fn feature_indexes(&self, b: Board) -> Vec<usize> {
        let syms = symmetric_boards(b);
        let base = self.stage_base(b.raw);
        self.compiled
            .iter()
            .flat_map(|c| syms.map(|s| base + c.index::<MAX_CELLS>(s)))
            .collect()
    }

    /// Weight `i` as an `f32`.
    pub fn weight(&self, i: usize) -> f32 {
        match &self.weights {
            Weights::F32(w) => f32::from_bits(w[i].load(Relaxed)),
            Weights::F16(w) => w[i].to_f32(),
        }
    }

    /// Sets weight `i` (rounded by [`to_f16`] in an f16 network).
    pub fn set_weight(&mut self, i: usize, value: f32) {
        match &mut self.weights {
            Weights::F32(w) => *w[i].get_mut() = value.to_bits(),
            Weights::F16(w) => w[i] = to_f16(value),
        }
    }

    /// The value of a board: the sum of its features' weights (see the module documentation for
    /// the summation order).
    #[inline]
    pub fn value(&self, b: Board) -> f32 {
        by_runs!(self.value_r(b))
    }

    #[inline(always)]
    fn value_r<const R: usize>(&self, b: Board) -> f32 {
        let syms = symmetric_boards(b);
        let base = self.stage_base(b.raw);
        match &self.weights {
            Weights::F32(w) => self.sum::<R>(&syms, |i| f32::from_bits(w[base + i].load(Relaxed))),
            Weights::F16(w) => self.sum::<R>(&syms, |i| w[base + i].to_f32()),
        }
    }

    /// The values of up to 4 boards, as [`Network::value`] computes them, with every feature's
    /// weight prefetched before any is summed, so that the lookups of all the boards overlap in
    /// memory: with the standard network, greedy training moves (one thread, the first 3,000
    /// games) ran at 0.8 M/s one board at a time and 1.3-1.45 M/s this way. The indexes go
    /// through this thread's [`Features`] (see [`Network::values4_indexed`]).
    #[inline]
    pub fn values4(&self, boards: &[Board], out: &mut [f32]) {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Features> = const {
                std::cell::RefCell::new(Features { per_board: 0, idx: Vec::new() })
            };
        }
        SCRATCH.with_borrow_mut(|f| {
            f.fit(self, 4);
            self.values4_indexed(boards, out, f);
        });
    }

    /// [`Network::values4`] that leaves board `k`'s feature indexes in row `k` of `f`, for a
    /// TD update of the chosen board without extracting them again. Each index is computed once,
    /// then prefetched and summed.
    #[inline]
    pub fn values4_indexed(&self, boards: &[Board], out: &mut [f32], f: &mut Features) {
        by_runs!(self.values4_r(boards, out, f))
    }

    #[inline(always)]
    fn values4_r<const R: usize>(&self, boards: &[Board], out: &mut [f32], f: &mut Features) {
        debug_assert!(boards.len() <= 4 && out.len() >= boards.len());
        debug_assert_eq!(f.per_board, 8 * self.compiled.len());
        for (k, &b) in boards.iter().enumerate().take(4) {
            self.index_r::<R>(b, f.row_mut(k), false);
        }
        for (k, o) in out.iter_mut().enumerate().take(boards.len()) {
            *o = self.value_indexed(f.row(k));
        }
    }

    /// Extracts board `b`'s feature indexes into row `k` of `f` and prefetches their weights,
    /// and their TC state too when `for_update` (and the network has it): where a TD update
    /// will soon come.
    #[inline]
    pub fn index_board(&self, b: Board, f: &mut Features, k: usize, for_update: bool) {
        by_runs!(self.index_r(b, f.row_mut(k), for_update))
    }

    #[inline(always)]
    fn index_r<const R: usize>(&self, b: Board, row: &mut [u32], for_update: bool) {
        let syms = symmetric_boards(b);
        let base = self.stage_base(b.raw);
        for (c, out) in self.compiled.iter().zip(row.chunks_exact_mut(8)) {
            for (o, &x) in out.iter_mut().zip(&syms) {
                let i = base + c.index::<R>(x);
                *o = i as u32;
                match &self.weights {
                    Weights::F32(w) => prefetch(&w[i]),
                    Weights::F16(w) => prefetch(&w[i]),
                }
                if for_update && let Some(c) = &self.coherence {
                    prefetch(&c[i]);
                }
            }
        }
    }

    /// Prefetches the TC state of the features in `idx` (nothing without TC state).
    #[inline]
    pub fn prefetch_coherence(&self, idx: &[u32]) {
        if let Some(c) = &self.coherence {
            for &i in idx {
                prefetch(&c[i as usize]);
            }
        }
    }

    /// The value of the board whose feature indexes are `idx` (a row of [`Features`]).
    #[inline(always)]
    pub fn value_indexed(&self, idx: &[u32]) -> f32 {
        match &self.weights {
            Weights::F32(w) => sum_indexed(idx, |i| f32::from_bits(w[i].load(Relaxed))),
            Weights::F16(w) => sum_indexed(idx, |i| w[i].to_f32()),
        }
    }

    #[inline(always)]
    fn sum<const R: usize>(&self, syms: &[u64; 8], get: impl Fn(usize) -> f32) -> f32 {
        sum_tuples(
            self.compiled.iter().map(|c| syms.map(|x| c.index::<R>(x))),
            get,
        )
    }

    /// One TD step on `b`: moves its value toward `target` by adding
    /// `step * (target - value(b))` to each of its features' weights, and returns that error.
    /// `step` is the learning rate already divided by [`Network::features`]; with TC state
    /// (see [`Rate::Coherence`]) each weight's step is scaled by its coherence. Only f32
    /// networks train; an f16 network is left unchanged (convert it with
    /// [`Network::into_f32`] first). Training uses [`Network::td_update_indexed`] on indexes
    /// it already has.
    pub fn td_update(&self, b: Board, target: f32, step: f32) -> f32 {
        let idx: Vec<u32> = self.feature_indexes(b).iter().map(|&i| i as u32).collect();
        self.td_update_indexed(&idx, target, step)
    }

    /// [`Network::td_update`] of the board whose feature indexes are `idx` (a row of
    /// [`Features`]).
    #[inline]
    pub fn td_update_indexed(&self, idx: &[u32], target: f32, step: f32) -> f32 {
        let Weights::F32(w) = &self.weights else {
            debug_assert!(false, "td_update on an f16 network");
            return 0.0;
        };
        let error = target - self.value_indexed(idx);
        let delta = step * error;
        // Loads and stores, not compare-and-swaps: a racing update may be lost, never torn.
        // A weight two features share is loaded after the first one's store, so it moves
        // twice, as it should.
        match &self.coherence {
            None => {
                for &i in idx {
                    let w = &w[i as usize];
                    let v = f32::from_bits(w.load(Relaxed)) + delta;
                    w.store(v.to_bits(), Relaxed);
                }
            }
            Some(c) => {
                for &i in idx {
                    let c = &c[i as usize];
                    let s = c.load(Relaxed);
                    let (e, a) = (f32::from_bits(s as u32), f32::from_bits((s >> 32) as u32));
                    let rate = if a > 0.0 { e.abs() / a } else { 1.0 };
                    let w = &w[i as usize];
                    let v = f32::from_bits(w.load(Relaxed)) + rate * delta;
                    w.store(v.to_bits(), Relaxed);
                    c.store(coherence_word(e + delta, a + delta.abs()), Relaxed);
                }
            }
        }
        error
    }

    /// The same network with f32 weights (exact when widening from f16).
    pub fn into_f32(self) -> Network {
        let weights = match self.weights {
            Weights::F32(w) => Weights::F32(w),
            Weights::F16(w) => {
                let mut v = huge_vec(w.len());
                v.extend(w.iter().map(|x| AtomicU32::new(x.to_f32().to_bits())));
                Weights::F32(v.into_boxed_slice())
            }
        };
        Network { weights, ..self }
    }

    /// The same network with f16 weights, each rounded by [`to_f16`], and no TC state.
    pub fn into_f16(self) -> Network {
        let weights = match self.weights {
            Weights::F32(w) => {
                let mut v = huge_vec(w.len());
                v.extend(w.iter().map(|x| to_f16(f32::from_bits(x.load(Relaxed)))));
                Weights::F16(v.into_boxed_slice())
            }
            Weights::F16(w) => Weights::F16(w),
        };
        Network {
            weights,
            coherence: None,
            ..self
        }
    }

    /// Every weight as an `f32` (a GPU upload, say).
    pub fn weights_f32(&self) -> Vec<f32> {
        (0..self.len()).map(|i| self.weight(i)).collect()
    }

    /// Every weight as `f16` bits, rounded by [`to_f16`] where the network holds f32.
    pub fn weights_f16_bits(&self) -> Vec<u16> {
        match &self.weights {
            Weights::F16(w) => w.iter().map(|x| x.to_bits()).collect(),
            Weights::F32(w) => w
                .iter()
                .map(|x| to_f16(f32::from_bits(x.load(Relaxed))).to_bits())
                .collect(),
        }
    }
}

/// The value summed as the module documentation says, from indexes in [`Features`] order.
#[inline(always)]
fn sum_indexed(idx: &[u32], get: impl Fn(usize) -> f32) -> f32 {
    sum_tuples(
        idx.chunks_exact(8)
            .map(|t| std::array::from_fn(|s| t[s] as usize)),
        get,
    )
}

/// The summation order of every value (see the module documentation): per symmetry a partial
/// sum over the tuples in order, each tuple's 8 features' indexes given symmetry by symmetry,
/// then [`combine`].
#[inline(always)]
fn sum_tuples(tuples: impl Iterator<Item = [usize; 8]>, get: impl Fn(usize) -> f32) -> f32 {
    let mut p = [0f32; 8];
    for t in tuples {
        for s in 0..8 {
            p[s] += get(t[s]);
        }
    }
    combine(p)
}

#[inline(always)]
fn combine(p: [f32; 8]) -> f32 {
    ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))
}

/// Network values of many boards at once: where the lockstep network players send every
/// afterstate or leaf of a step. [`CpuValues`] looks them up on CPU threads, `gpu::GpuNetwork`
/// on a GPU; both return [`Network::value`]'s bits.
pub trait BatchValues {
    fn values(&mut self, boards: &[Board]) -> anyhow::Result<Vec<f32>>;
}

/// [`Network::value`] of each board, on CPU threads.
pub struct CpuValues<'a>(pub &'a Network);

impl BatchValues for CpuValues<'_> {
    fn values(&mut self, boards: &[Board]) -> anyhow::Result<Vec<f32>> {
        use rayon::prelude::*;
        Ok(boards.par_iter().map(|&b| self.0.value(b)).collect())
    }
}

#[cfg(feature = "gpu")]
pub mod gpu;

#[cfg(test)]
mod tests {
    use super::*;
    use rollsim_core::rng::Stream;

    fn random_board(rng: &mut Stream, max: u32) -> Board {
        Board::from_raw((0..16).fold(0u64, |r, c| r | u64::from(rng.below(max)) << (4 * c)))
    }

    /// A board's symmetric image read cell by cell through the symmetry table.
    fn naive_symmetric(b: Board, s: usize) -> Board {
        let mut out = Board::EMPTY;
        for (i, &from) in SYMMETRIES[s].iter().enumerate() {
            out.set(i, b.get(usize::from(from)));
        }
        out
    }

    /// Odd shapes: out-of-order cells, single cells, descending runs, a tuple touching cell 15.
    fn odd_tuples() -> Vec<Vec<u8>> {
        vec![
            vec![3, 0, 7],
            vec![15],
            vec![5, 4, 3, 2, 1, 0],
            vec![10, 11, 14, 15, 2],
            vec![12, 13, 14, 15],
        ]
    }

    fn networks() -> Vec<Network> {
        [standard_tuples(), small_tuples(), odd_tuples()]
            .into_iter()
            .map(|t| Network::new(t).unwrap())
            .collect()
    }

    #[test]
    fn symmetry_tables_are_the_eight_distinct_symmetries() {
        for (s, perm) in SYMMETRIES.iter().enumerate() {
            let mut seen = *perm;
            seen.sort_unstable();
            assert_eq!(seen, std::array::from_fn(|i| i as u8), "symmetry {s}");
            assert!(!SYMMETRIES[..s].contains(perm), "symmetry {s} repeats");
        }
        // Spot checks: mirror sends column 0 to 3, transpose swaps cells 1 and 4.
        assert_eq!(SYMMETRIES[1][0], 3);
        assert_eq!(SYMMETRIES[2][0], 12);
        assert_eq!(SYMMETRIES[4][1], 4);
        assert_eq!(SYMMETRIES[3][0], 15);
    }

    #[test]
    fn symmetric_boards_match_the_symmetry_tables() {
        let mut rng = Stream::new(1, [0, 0, 0]);
        for _ in 0..20_000 {
            let b = random_board(&mut rng, 16);
            let fast = symmetric_boards(b);
            for (s, &x) in fast.iter().enumerate() {
                assert_eq!(x, naive_symmetric(b, s).raw, "symmetry {s} of {b:?}");
            }
        }
    }

    #[test]
    fn feature_indexes_match_explicit_cell_lists() {
        let mut rng = Stream::new(2, [0, 0, 0]);
        for net in networks() {
            let offsets = net.offsets();
            for k in 0..5_000 {
                let b = random_board(&mut rng, [3, 8, 16][k % 3]);
                let fast = net.feature_indexes(b);
                for t in 0..net.tuples().len() {
                    for s in 0..8 {
                        let naive = net
                            .feature_cells(t, s)
                            .iter()
                            .enumerate()
                            .map(|(j, &c)| usize::from(b.get(usize::from(c))) << (4 * j))
                            .sum::<usize>();
                        assert_eq!(fast[8 * t + s], offsets[t] + naive, "{b:?} t {t} s {s}");
                    }
                }
            }
        }
    }

    /// A network whose every weight is a small integer: sums are exact in any order.
    fn integer_network(tuples: Vec<Vec<u8>>, seed: u64) -> Network {
        let mut net = Network::new(tuples).unwrap();
        let mut rng = Stream::new(seed, [0, 0, 0]);
        for i in 0..net.len() {
            net.set_weight(i, rng.below(2001) as f32 - 1000.0);
        }
        net
    }

    #[test]
    fn values_are_the_documented_sums_and_symmetric_boards_are_equal() {
        let mut rng = Stream::new(3, [0, 0, 0]);
        for tuples in [small_tuples(), odd_tuples()] {
            let net = integer_network(tuples, 4);
            for _ in 0..2_000 {
                let b = random_board(&mut rng, 12);
                let idx = net.feature_indexes(b);
                let mut p = [0f32; 8];
                for (k, &i) in idx.iter().enumerate() {
                    p[k % 8] += net.weight(i);
                }
                let v = net.value(b);
                assert_eq!(v, combine(p));
                assert_eq!(v, idx.iter().map(|&i| net.weight(i)).sum::<f32>());
                for s in 0..8 {
                    assert_eq!(net.value(naive_symmetric(b, s)), v, "{b:?} symmetry {s}");
                }
            }
        }
        // With fractional weights, within rounding.
        let mut net = Network::new(small_tuples()).unwrap();
        for i in 0..net.len() {
            net.set_weight(i, (rng.next_u32() as f32 / u32::MAX as f32 - 0.5) * 100.0);
        }
        for _ in 0..1_000 {
            let b = random_board(&mut rng, 12);
            let v = net.value(b);
            for s in 0..8 {
                let w = net.value(naive_symmetric(b, s));
                assert!((w - v).abs() <= 1e-4 * v.abs().max(1.0), "{v} {w}");
            }
        }
    }

    #[test]
    fn td_update_moves_the_value_toward_the_target() {
        let net = Network::new(small_tuples()).unwrap();
        let b: Board = "2 4 8 16 / 32 64 128 256 / 512 1024 2 4 / 8 16 32 64"
            .parse()
            .unwrap();
        // All 40 features distinct here, so a full step lands on the target.
        let mut idx = net.feature_indexes(b);
        idx.sort_unstable();
        idx.dedup();
        assert_eq!(idx.len(), 40);
        let err = net.td_update(b, 100.0, 1.0 / 40.0);
        assert_eq!(err, 100.0);
        assert!((net.value(b) - 100.0).abs() < 1e-3);
        let err = net.td_update(b, 0.0, 0.5 / 40.0);
        assert!((err + 100.0).abs() < 1e-3);
        assert!((net.value(b) - 50.0).abs() < 1e-3);
    }

    fn bytes(net: &Network, element: Element) -> Vec<u8> {
        let mut out = Vec::new();
        net.write_to(&mut out, element).unwrap();
        assert_eq!(out.len() as u64, net.file_size(element));
        out
    }

    #[test]
    fn file_round_trips_f32_exactly_and_f16_within_rounding() {
        let mut net = Network::new(odd_tuples()).unwrap();
        let mut rng = Stream::new(5, [0, 0, 0]);
        for i in 0..net.len() {
            let x = f32::from_bits(rng.next_u32());
            net.set_weight(
                i,
                if x.is_finite() {
                    x.clamp(-1e6, 1e6)
                } else {
                    0.5
                },
            );
        }
        net.set_games(123_456_789_012);
        let back = Network::read_from(&bytes(&net, Element::F32)[..]).unwrap();
        assert_eq!(back.element(), Element::F32);
        assert_eq!(back.tuples(), net.tuples());
        assert_eq!(back.games(), 123_456_789_012);
        let bits = |n: &Network| {
            n.weights_f32()
                .iter()
                .map(|x| x.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&back), bits(&net));

        let half = Network::read_from(&bytes(&net, Element::F16)[..]).unwrap();
        assert_eq!(half.element(), Element::F16);
        assert_eq!(half.games(), net.games());
        for i in 0..net.len() {
            let (w, h) = (net.weight(i), half.weight(i));
            assert_eq!(h, to_f16(w).to_f32());
            if w.abs() > F16_MAX {
                assert_eq!(h, F16_MAX.copysign(w));
            } else if w.abs() >= 6.2e-5 {
                assert!((h - w).abs() <= w.abs() / 2048.0, "{w} -> {h}");
            } else {
                assert!((h - w).abs() <= 2f32.powi(-25), "{w} -> {h}");
            }
        }
        // f16 to f32 to f16 is lossless.
        let widened = Network::read_from(&bytes(&half, Element::F32)[..]).unwrap();
        assert_eq!(bits(&widened), bits(&half));
        assert_eq!(bytes(&widened, Element::F16), bytes(&half, Element::F16));
        assert_eq!(bits(&half.into_f32()), bits(&widened));
    }

    #[test]
    fn f16_rounding_is_nearest_even_and_saturates() {
        assert_eq!(to_f16(1.0 + 2f32.powi(-11)).to_f32(), 1.0, "tie to even");
        assert_eq!(
            to_f16(1.0 + 3.0 * 2f32.powi(-11)).to_f32(),
            1.0 + 2f32.powi(-9),
            "tie to even"
        );
        assert_eq!(to_f16(1e9).to_f32(), 65504.0);
        assert_eq!(to_f16(-65520.0).to_f32(), -65504.0);
        assert_eq!(to_f16(2f32.powi(-26)).to_f32(), 0.0);
        assert_eq!(to_f16(2f32.powi(-24)).to_f32(), 2f32.powi(-24));
    }

    #[test]
    fn truncated_foreign_and_corrupt_files_fail_with_named_errors() {
        let mut net = integer_network(vec![vec![0, 1], vec![5]], 6);
        net.set_games(42);
        for element in [Element::F32, Element::F16] {
            let good = bytes(&net, element);
            assert!(Network::read_from(&good[..]).is_ok());
            for len in 0..good.len() {
                let e = Network::read_from(&good[..len]).unwrap_err();
                assert!(
                    matches!(e, NetworkError::Truncated { found, .. } if found == len as u64),
                    "{len}: {e}"
                );
            }
            let mut long = good.clone();
            long.push(0);
            assert!(matches!(
                Network::read_from(&long[..]),
                Err(NetworkError::Oversized { .. })
            ));
            for i in 0..good.len() {
                for flip in [0x01u8, 0x80, 0xff] {
                    let mut bad = good.clone();
                    bad[i] ^= flip;
                    let e = Network::read_from(&bad[..]).unwrap_err();
                    let expected = match i {
                        0..8 => matches!(e, NetworkError::BadMagic),
                        8..12 => matches!(e, NetworkError::Version(_)),
                        _ => true,
                    };
                    assert!(expected, "byte {i} ^ {flip:#x}: {e}");
                }
            }
        }
        let e = Network::read_from(&b"PK\x03\x04 not a network at all, a zip file"[..]);
        assert!(matches!(e, Err(NetworkError::BadMagic)));
        assert!(
            e.unwrap_err()
                .to_string()
                .contains("not a rollsim n-tuple network")
        );
    }

    #[test]
    fn save_and_load_files_atomically_and_check_sizes_first() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join("net.bin");
        let net = integer_network(small_tuples(), 7);
        net.save(&path, Element::F16).unwrap();
        let back = Network::load(&path).unwrap();
        assert_eq!(back.element(), Element::F16);
        assert_eq!(back.weights_f16_bits(), net.weights_f16_bits());
        // Nothing left beside it.
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 1);
        let data = std::fs::read(&path).unwrap();
        std::fs::write(&path, &data[..data.len() - 100]).unwrap();
        let e = Network::load(&path).unwrap_err();
        assert!(
            matches!(e, NetworkError::Truncated { expected, found }
                if expected == data.len() as u64 && found == data.len() as u64 - 100),
            "{e}"
        );
        // A NaN weight is refused, and the old file stays.
        let mut bad = Network::new(vec![vec![0]]).unwrap();
        bad.set_weight(3, f32::NAN);
        assert!(matches!(
            bad.save(&path, Element::F32),
            Err(NetworkError::NotFinite { index: 3, .. })
        ));
        assert_eq!(std::fs::read(&path).unwrap().len(), data.len() - 100);
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 1);
        assert!(matches!(
            Network::load(&dir.join("missing")),
            Err(NetworkError::Input(_))
        ));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn each_stage_values_boards_as_its_own_network_would() {
        let mut rng = Stream::new(9, [0, 0, 0]);
        let splits = [64u32, 512];
        let recipe = Recipe {
            stages: splits.to_vec(),
            ..Recipe::default()
        };
        let mut staged = Network::with_recipe(small_tuples(), recipe).unwrap();
        assert_eq!(staged.len(), 3 * staged.stage_len());
        let mut alone: Vec<Network> = (0..3)
            .map(|_| Network::new(small_tuples()).unwrap())
            .collect();
        for (s, net) in alone.iter_mut().enumerate() {
            for i in 0..net.len() {
                let w = rng.below(2001) as f32 - 1000.0;
                net.set_weight(i, w);
                staged.set_weight(s * net.len() + i, w);
            }
        }
        for _ in 0..3_000 {
            let b = random_board(&mut rng, 12);
            let stage = splits
                .iter()
                .filter(|&&t| 1u32 << b.max_exponent() >= t)
                .count();
            assert_eq!(staged.value(b), alone[stage].value(b), "{b:?}");
            let mut values = [0f32; 1];
            staged.values4(&[b], &mut values);
            assert_eq!(values[0], alone[stage].value(b));
        }
    }

    #[test]
    fn promoted_stages_start_from_the_one_stage_weights() {
        let mut one = integer_network(small_tuples(), 12);
        one.enable_coherence();
        let mut rng = Stream::new(13, [0, 0, 0]);
        let b = random_board(&mut rng, 12);
        one.td_update(b, 500.0, 0.01);
        let state = one.coherence_state(one.feature_indexes(b)[0]);
        let values: Vec<f32> = (0..500)
            .map(|_| one.value(random_board(&mut rng, 13)))
            .collect();
        let mut rng = Stream::new(13, [0, 0, 0]);
        let _ = random_board(&mut rng, 12);
        let staged = one.into_stages(&[512, 4096]).unwrap();
        assert_eq!(staged.recipe().stages, vec![512, 4096]);
        for v in values {
            assert_eq!(staged.value(random_board(&mut rng, 13)), v);
        }
        let i = staged.feature_indexes(b)[0] % staged.stage_len();
        for s in 0..3 {
            assert_eq!(staged.coherence_state(s * staged.stage_len() + i), state);
        }
        assert!(staged.into_stages(&[8192]).is_err(), "stages already");
    }

    #[test]
    fn optimistic_networks_value_every_board_at_their_initial_value() {
        let recipe = Recipe {
            init: 320_000.0,
            ..Recipe::default()
        };
        let net = Network::with_recipe(small_tuples(), recipe).unwrap();
        let mut rng = Stream::new(10, [0, 0, 0]);
        for _ in 0..100 {
            let v = net.value(random_board(&mut rng, 15));
            assert!((v - 320_000.0).abs() < 0.1, "{v}");
        }
    }

    #[test]
    fn coherence_keeps_consistent_weights_at_full_rate_and_slows_cancelling_ones() {
        let b: Board = "2 4 8 16 / 32 64 128 256 / 512 1024 2 4 / 8 16 32 64"
            .parse()
            .unwrap();
        let step = 1.0 / 40.0;
        // Errors of one sign: the rate stays 1, as under fixed rates.
        let mut tc = Network::new(small_tuples()).unwrap();
        tc.enable_coherence();
        let fixed = Network::new(small_tuples()).unwrap();
        for target in [100.0, 150.0, 400.0] {
            tc.td_update(b, target, step);
            fixed.td_update(b, target, step);
            assert!((tc.value(b) - fixed.value(b)).abs() < 1e-3);
        }
        let i = tc.feature_indexes(b)[0];
        let (e, a) = tc.coherence_state(i).unwrap();
        assert!(e > 0.0 && (e - a).abs() < 1e-3, "{e} {a}");
        // Alternating errors: |E| / A falls, and the steps with it.
        let mut tc = Network::new(small_tuples()).unwrap();
        tc.enable_coherence();
        tc.td_update(b, 100.0, step); // rate 1: the value lands on 100
        tc.td_update(b, 0.0, step); // rate 1 again (E = A): lands on 0
        assert!(tc.value(b).abs() < 1e-3);
        // Now E = 0 against A = 5 per weight: a step toward 100 moves nothing.
        tc.td_update(b, 100.0, step);
        assert!(tc.value(b).abs() < 1e-3, "{}", tc.value(b));
        tc.disable_coherence();
        tc.td_update(b, 100.0, step);
        assert!((tc.value(b) - 100.0).abs() < 1e-3);
    }

    #[test]
    fn version_2_files_keep_the_recipe_and_tc_state_and_version_1_files_load() {
        let recipe = Recipe {
            stages: vec![2048],
            init: 10.0,
            training: Vec::new(),
        };
        let mut net = Network::with_recipe(odd_tuples(), recipe).unwrap();
        net.enable_coherence();
        let mut rng = Stream::new(11, [0, 0, 0]);
        for _ in 0..200 {
            net.td_update(random_board(&mut rng, 13), 50.0, 0.01);
        }
        net.record_training(Rate::Coherence, 1.0, 0.5, Shaping::default(), 200);
        let data = bytes(&net, Element::F32);
        let back = Network::read_from(&data[..]).unwrap();
        assert_eq!(back.recipe(), net.recipe());
        assert_eq!(back.games(), 200);
        assert_eq!(back.weights_f32(), net.weights_f32());
        assert!(back.has_coherence());
        for i in (0..net.len()).step_by(97) {
            assert_eq!(back.coherence_state(i), net.coherence_state(i));
        }
        assert!(
            net.coherence_state(net.feature_indexes(random_board(&mut rng, 13))[0])
                .is_some()
        );
        // Without TC state, f16: the recipe still there.
        let mut plain = Network::read_from(&data[..]).unwrap();
        plain.disable_coherence();
        let small = bytes(&plain.into_f16(), Element::F16);
        let back = Network::read_from(&small[..]).unwrap();
        assert!(!back.has_coherence());
        assert_eq!(back.recipe().stages, vec![2048]);
        // A version-1 file, as earlier builds wrote it: word 28 zero, no JSON block.
        let one = Network::new(odd_tuples()).unwrap();
        let v2 = bytes(&one, Element::F32);
        let j = one.meta_json().len();
        let records = HEADER + TUPLE_RECORD * odd_tuples().len();
        let mut v1 = v2[..records].to_vec();
        v1[8..12].copy_from_slice(&1u32.to_le_bytes());
        v1[28..32].copy_from_slice(&0u32.to_le_bytes());
        v1.extend_from_slice(&v2[records + j..v2.len() - 4]);
        let crc = crc32fast::hash(&v1);
        v1.extend_from_slice(&crc.to_le_bytes());
        let back = Network::read_from(&v1[..]).unwrap();
        assert_eq!(back.recipe(), &Recipe::default());
        assert_eq!(back.weights_f32(), one.weights_f32());
        // A version-1 header with a recipe length is refused.
        let mut bad = v1.clone();
        bad[28] = 1;
        assert!(Network::read_from(&bad[..]).is_err());
    }

    #[test]
    fn bad_shapes_are_refused() {
        for tuples in [
            vec![],
            vec![vec![]],
            vec![vec![0, 1, 2, 3, 4, 5, 6]],
            vec![vec![16]],
            vec![vec![1, 2, 1]],
            vec![vec![0]; MAX_TUPLES + 1],
        ] {
            assert!(
                matches!(Network::new(tuples.clone()), Err(NetworkError::Tuples(_))),
                "{tuples:?}"
            );
        }
        let net = Network::new(standard_tuples()).unwrap();
        assert_eq!(net.len(), 4 << 24);
        assert_eq!(net.features(), 32);
        let json = r#"{"recipe":{"stages":[],"init":0.0,"training":[]},"coherence_state":false}"#;
        assert_eq!(net.meta_json(), json.as_bytes());
        let j = json.len() as u64;
        assert_eq!(net.file_size(Element::F32), 268_435_524 + j);
        assert_eq!(net.file_size(Element::F16), 134_217_796 + j);
    }
}
