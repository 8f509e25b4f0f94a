//! The one-sided bearoff database: for every position of one side, the distribution of the
//! number of rolls to bear off under the play that minimises the expected number of rolls, and
//! (with 15 checkers) the distribution of rolls until the first checker is off.
//!
//! The sweep goes level by level in pip count (every move lowers it), so all successors of a
//! level are known before it starts and a level's positions are independent. For each position
//! it keeps, besides its value V, the best value reachable by k = 1, 2, 3 steps of one die
//! (and where that best chain ends). A roll's best play is then one die's step followed by the
//! best single step of the other die, in either order, or for a double one step followed by
//! the best three-step chain: per position a few dozen lookups instead of enumerating every
//! play of every roll.

use rayon::prelude::*;
use rollsim_core::lockstep;
use rollsim_core::progress::Progress;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::levels::{self, Levels, ring_slots};
use super::moves::{Roll, Unranked};
use super::numeric::Prob;
use super::position::{Counts, Space};
use rollsim_core::memory::{huge_filled, prefetch_at};

/// A level's tasks shrink towards its end: each takes `1 / (GUIDE * members)` of the positions
/// left, and at least `LAST_TASK`, so that the members finish a level close together. A 15x6
/// position takes about a microsecond; with tasks of a sixteenth of a level (at least 64
/// positions) the members waited 2.7-3.9 ms a build for each other's last task, with these
/// mostly 0.5-0.9 ms; whole 15x6 builds 0.0464 -> 0.0435 s, 15x8 0.630 -> 0.577 s
/// (`results/bearoff/one-sided-guided-tasks.txt`).
const GUIDE: usize = 4;
const LAST_TASK: usize = 16;

/// The optimal policy for one value: per position, the position each roll's best play reaches.
pub struct Policy {
    pub value: Vec<f64>,
    /// `succ[21 * i + r]`: the position reached by the best play of roll `Roll::ALL_21[r]`.
    pub succ: Vec<u32>,
}

/// What a sweep solves (see [`sweep`]).
#[derive(Clone, Copy)]
pub struct Pass<'a> {
    /// Positions with fewer checkers are done: 1 for bearing off all, 15 for the first off.
    pub terminal_below: u32,
    /// Distribution entries kept: P(0 ..`rolls` rolls).
    pub rolls: usize,
    pub plays: Plays<'a>,
    /// Give the sink each position's plays ([`Level::plays`]).
    pub keep_plays: bool,
}

/// Which plays a sweep makes: the best, found by its own chains, or those of a policy solved
/// elsewhere (the GPU's).
#[derive(Clone, Copy)]
pub enum Plays<'a> {
    Best,
    Given(&'a Policy),
}

/// Levels the rings keep: a position's successors lie at most 24 pips (6-6) below it. A level
/// is stored once it is done, over the 24th level below, which no later level reads.
const DEPTH: usize = 24;
/// Levels the chains are read from: one die moves at most 6 pips.
const CHAIN_DEPTH: usize = 6;

/// `chains[k][d - 1]`: the ring slot of the best position k + 1 steps of die d reach.
type Chains = [[u32; 6]; 3];

/// How a ring keeps chains.
trait ChainSlots: Copy + Default + Send + Sync {
    fn new(c: Chains) -> Self;
    fn get(&self, k: usize, d: usize) -> u32;
}

impl ChainSlots for Chains {
    #[inline(always)]
    fn new(c: Chains) -> Self {
        c
    }
    #[inline(always)]
    fn get(&self, k: usize, d: usize) -> u32 {
        self[k][d]
    }
}

/// Chains in 21 bits a slot, three to a word, for rings under 2^21 slots: 48 bytes a
/// position instead of 72, 13 MB less in the 15x10 build.
#[derive(Clone, Copy, Default)]
struct Packed([u64; 6]);

impl Packed {
    const BITS: u32 = 21;
    const MASK: u64 = (1 << Self::BITS) - 1;
}

impl ChainSlots for Packed {
    #[inline(always)]
    fn new(c: Chains) -> Self {
        Packed(std::array::from_fn(|d| {
            (0..3).fold(0, |w, k| {
                w | u64::from(c[k][d]) << (Packed::BITS * k as u32)
            })
        }))
    }
    #[inline(always)]
    fn get(&self, k: usize, d: usize) -> u32 {
        ((self.0[d] >> (Packed::BITS * k as u32)) & Packed::MASK) as u32
    }
}

/// Where a position's stored distribution lies: `pools[pool][chunk]` from `offset`, `len`
/// entries, the first of them P(`first` rolls).
#[derive(Clone, Copy, Debug, Default)]
struct Stored {
    offset: u32,
    first: u8,
    len: u8,
    pool: u8,
}

/// Passes one sweep solves side by side: bearing off, and the first checker off. They share
/// the positions' moves and ring slots; only their values differ.
pub const MAX_PASSES: usize = 2;

/// What a task of a level computes for one pass, for a run of its positions.
#[derive(Default)]
pub struct Chunk<P> {
    means: Vec<f64>,
    succ: Vec<u32>,
    stored: Vec<Stored>,
    probs: Vec<P>,
}

/// One solved level of one pass: its positions, ascending, and what the sweep found for each.
pub struct Level<'a, P> {
    pub positions: &'a [u32],
    /// The pass's rings, from the level's first slot.
    value: &'a [f64],
    stored: &'a [Stored],
    pools: &'a [Vec<P>],
    succ: &'a [u32],
}

impl<P: Prob> Level<'_, P> {
    /// Position `j`'s expected rolls.
    pub fn mean(&self, j: usize) -> f64 {
        self.value[j]
    }

    /// Position `j`'s distribution: P(`first` + k rolls) for each k of the slice, zero
    /// elsewhere (and unknown past the sweep's `rolls`).
    pub fn distribution(&self, j: usize) -> (usize, &[P]) {
        let s = self.stored[j];
        let at = s.offset as usize;
        let pool = &self.pools[usize::from(s.pool)];
        (usize::from(s.first), &pool[at..at + usize::from(s.len)])
    }

    /// The positions position `j`'s best play of each roll of [`Roll::ALL_21`] reaches (for
    /// a pass that keeps its plays).
    pub fn plays(&self, j: usize) -> &[u32] {
        &self.succ[21 * j..21 * j + 21]
    }
}

/// Slots of a ring that keeps `depth` levels of these sizes (see [`levels::ring_capacity`]).
fn ring_capacity(sizes: &[u64], n: usize, depth: usize) -> u64 {
    levels::ring_capacity(sizes, depth).min(n as u64)
}

/// Whether chains fit [`Packed`] in a ring of `capacity` slots.
fn packs(capacity: u64) -> bool {
    capacity <= 1 << Packed::BITS
}

/// The memory of a sweep of `passes` passes side by side, in bytes, before it allocates: the
/// ring slots of every position, and for the positions of 24 levels their index and, per pass,
/// value and distribution (`width` stored entries each, on average), and for 6 levels their
/// chains.
pub fn sweep_bytes(space: Space, passes: u64, prob_bytes: u64, width: u64) -> u64 {
    let sizes = space.level_sizes();
    let n = space.len() as u64;
    let ring = ring_capacity(&sizes, space.len(), DEPTH);
    let chains = ring_capacity(&sizes, space.len(), CHAIN_DEPTH);
    let widest = sizes.iter().copied().max().unwrap_or(0);
    let chain = if packs(ring) {
        std::mem::size_of::<Packed>()
    } else {
        std::mem::size_of::<Chains>()
    } as u64;
    4 * n
        + ring * 4
        + widest * (8 + 4)
        + passes
            * (ring * (8 + std::mem::size_of::<Stored>() as u64 + width * prob_bytes)
                + chains * chain
                + widest * (24 + 8 + chain + width * prob_bytes))
}

/// What takes a sweep's levels, one [`Level`] a pass.
pub type LevelSink<'s, P, E> = dyn FnMut(&[Level<P>]) -> Result<(), E> + Send + 's;

/// Solves, for each pass, `V(s) = 1 + Σ_r p(r) min_play V(s')` with `V = 0` on positions with
/// fewer than `terminal_below` checkers (1: all off; 15: the first checker off), and the
/// distribution of the number of rolls under those plays, level by level in pip count. A
/// terminal position's successors are itself. `sink` gets each level in order, one
/// [`Level`] a pass, on the calling thread while the next level is solved; only the last 24
/// levels are kept, so memory is about a third of the table's positions for 15x6 and half for
/// 15x10 (`sweep_bytes`). Entries for `rolls` or more
/// rolls are not computed: they never change fewer rolls' (gnubg keeps 32).
///
/// Plays are found through chains: per position and die d, the best position k = 1, 2, 3
/// steps of d reach. A roll's best play is then one die's step followed by the best single
/// step of the other die, in either order, or for a double one step followed by the best
/// three-step chain: per position a few dozen lookups instead of enumerating every play of
/// every roll. Ties go to the lower index, so every implementation picks the same plays.
///
/// A distribution is `1/36 Σ_r w_r · shift(dist(t_r))` over the 21 rolls r in table order,
/// t_r the successor of r's play and w_r its weight in 36ths, added only over the successors'
/// supports.
///
/// Two passes side by side (at most [`MAX_PASSES`]) find each position's moves once and share
/// each level's tasks, with no second thread pool: the 15x6 gnubg build on one thread takes 808
/// M instructions so, 845 M as two sweeps (callgrind); wall time was within this machine's
/// noise (15x6 0.079 against 0.080 s, 15x8 0.835 against 0.830 s, medians of 21 and 9
/// alternating runs).
pub fn sweep<P: Prob, E: Send>(
    space: &Space,
    passes: &[Pass],
    progress: &dyn Progress,
    sink: &mut LevelSink<'_, P, E>,
) -> Result<(), E> {
    assert!((1..=MAX_PASSES).contains(&passes.len()));
    let sizes = space.level_sizes();
    if packs(ring_capacity(&sizes, space.len(), DEPTH)) {
        sweep_with::<P, E, Packed>(space, &sizes, passes, progress, sink)
    } else {
        sweep_with::<P, E, Chains>(space, &sizes, passes, progress, sink)
    }
}

fn sweep_with<P: Prob, E: Send, C: ChainSlots>(
    space: &Space,
    sizes: &[u64],
    passes: &[Pass],
    progress: &dyn Progress,
    sink: &mut LevelSink<'_, P, E>,
) -> Result<(), E> {
    let n = space.len();
    let ring_of = |depth| {
        let capacity = ring_capacity(sizes, n, depth);
        (capacity as usize, ring_slots(sizes, capacity))
    };
    let (capacity, first_slot) = ring_of(DEPTH);
    let best = |p: &Pass| matches!(p.plays, Plays::Best);
    let any_best = passes.iter().any(best);
    let (chain_capacity, chain_slot) = ring_of(if any_best { CHAIN_DEPTH } else { 0 });
    let ring = RwLock::new(Ring::<P, C> {
        slot: huge_filled(n, 0u32),
        index: huge_filled(capacity, 0u32),
        passes: passes
            .iter()
            .map(|p| PassRing {
                value: huge_filled(capacity, 0f64),
                stored: huge_filled(capacity, Stored::default()),
                pools: vec![Vec::new(); DEPTH],
                chains: huge_filled(if best(p) { chain_capacity } else { 0 }, C::default()),
                plays: Default::default(),
            })
            .collect(),
        first_slot,
        chain_slot,
    });
    let state = RwLock::new(LevelState::<P, C>::default());
    // `upcoming[x % 2]`: level x, listed two levels ahead.
    let upcoming = [Mutex::new(Vec::new()), Mutex::new(Vec::new())];
    let claimed = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let sink = Mutex::new((sink, None));
    let last = sizes.len() - 1;
    // Level l's positions, their ring slots, and how its tasks split it.
    let prepare = |l: usize, st: &mut LevelState<P, C>, ring: &mut Ring<P, C>, members: usize| {
        let first = ring.first_slot[l];
        for (k, &(i, _)) in st.level.iter().enumerate() {
            ring.slot[i as usize] = (first + k) as u32;
        }
        st.bounds.clear();
        st.bounds.push(0);
        let len = st.level.len();
        let mut at = 0;
        while at < len {
            let size = (len - at).div_ceil(GUIDE * members).max(LAST_TASK);
            at = len.min(at + size);
            st.bounds.push(at);
        }
        // The tasks' buffers are kept from level to level: allocating them per level left
        // 30 MB of freed, fragmented heap in the peak RSS of 15x10.
        if st.slots.len() < st.count() {
            st.slots.resize_with(st.count(), Default::default);
        }
        claimed.store(0, Ordering::Relaxed);
    };
    // Level l, from the rings, to the sink.
    let sink_level = |l: usize, ring: &Ring<P, C>| {
        let (first, len) = (ring.first_slot[l], sizes[l] as usize);
        let levels: Vec<Level<P>> = ring
            .passes
            .iter()
            .map(|r| Level {
                positions: &ring.index[first..first + len],
                value: &r.value[first..first + len],
                stored: &r.stored[first..first + len],
                pools: &r.pools,
                succ: &r.plays[l % 2],
            })
            .collect();
        let mut sink = lock(&sink);
        let (sink, error) = &mut *sink;
        match sink(&levels) {
            Ok(()) => progress.inc((passes.len() * len) as u64),
            Err(e) => {
                *error = Some(e);
                failed.store(true, Ordering::Relaxed);
            }
        }
    };
    // The levels in lock step on a team of threads that spin between phases: a 15x6 level is
    // about 0.4 ms of work, and a rayon loop and join per level parked and woke a worker for
    // most of them. Each level's serial work runs beside other work: the leader sinks the
    // level below (from the rings, where it is kept) before it takes tasks, and while the last
    // member (the keeper) takes the level into the rings, the leader lists the level two above
    // (it waited there before; 15x6 0.0581 -> 0.0548 s, `results/bearoff/one-sided-listing-ahead.txt`).
    lockstep::run(rayon::current_num_threads(), |team| {
        let keeper = team.index() + 1 == team.size();
        if team.leads() {
            let mut st = write(&state);
            space.level(0, &mut st.level);
            prepare(0, &mut st, &mut write(&ring), team.size());
            if last >= 1 {
                space.level(1, &mut lock(&upcoming[1]));
            }
        }
        team.sync();
        for l in 0..=last {
            {
                let (st, ring) = (read(&state), read(&ring));
                if team.leads() && l > 0 {
                    sink_level(l - 1, &ring);
                }
                let task = Task {
                    space,
                    ring: &ring,
                    level: l,
                    passes,
                    any_best,
                    chain_shift: std::array::from_fn(|p| match l.checked_sub(p) {
                        Some(below) if any_best && p > 0 => {
                            ring.chain_slot[below].wrapping_sub(ring.first_slot[below])
                        }
                        _ => 0,
                    }),
                };
                loop {
                    let k = claimed.fetch_add(1, Ordering::Relaxed);
                    if k >= st.count() {
                        break;
                    }
                    let range = st.bounds[k]..st.bounds[k + 1];
                    task.run(&st.level[range], &mut write(&st.slots[k]));
                }
            }
            team.sync();
            if failed.load(Ordering::Relaxed) {
                return;
            }
            if team.leads() && l + 2 <= last {
                space.level(l as u32 + 2, &mut lock(&upcoming[l % 2]));
            }
            if keeper {
                let mut st = write(&state);
                let st = &mut *st;
                let mut ring = write(&ring);
                let slots: Vec<_> = st.slots[..st.count()].iter().map(read).collect();
                ring.keep(l, &st.level, &slots);
                drop(slots);
                if l < last {
                    std::mem::swap(&mut st.level, &mut *lock(&upcoming[(l + 1) % 2]));
                    prepare(l + 1, st, &mut ring, team.size());
                }
            }
            team.sync();
        }
        if team.leads() {
            sink_level(last, &read(&ring));
        }
    });
    match sink.into_inner().unwrap_or_else(PoisonError::into_inner) {
        (_, Some(e)) => Err(e),
        (_, None) => Ok(()),
    }
}

fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

fn lock<T>(l: &Mutex<T>) -> MutexGuard<'_, T> {
    l.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The level being solved, as the team shares it: its positions, how its tasks split it, and
/// each task's results. Each phase's locks are taken without contention: the phases are
/// separated by the team's barriers.
struct LevelState<P, C> {
    level: Vec<(u32, Counts)>,
    /// Task k's positions are `level[bounds[k]..bounds[k + 1]]`.
    bounds: Vec<usize>,
    slots: Vec<RwLock<Slot<P, C>>>,
}

impl<P, C> LevelState<P, C> {
    /// How many tasks the level has.
    fn count(&self) -> usize {
        self.bounds.len() - 1
    }
}

impl<P, C> Default for LevelState<P, C> {
    fn default() -> Self {
        LevelState {
            level: Vec::new(),
            bounds: vec![0],
            slots: Vec::new(),
        }
    }
}

/// What one task of a level computes: per pass, its positions' results and chains.
#[derive(Default)]
struct Slot<P, C> {
    out: [Chunk<P>; MAX_PASSES],
    chains: [Vec<C>; MAX_PASSES],
}

/// The sweep's state for the levels below the current one, by ring slot (see
/// [`ring_slots`]).
struct Ring<P, C> {
    /// Every position's ring slot (valid while its level is among the last 24).
    slot: Vec<u32>,
    /// Per ring slot: the position's index.
    index: Vec<u32>,
    passes: Vec<PassRing<P, C>>,
    /// Each level's first slot in the rings.
    first_slot: Vec<usize>,
    chain_slot: Vec<usize>,
}

/// One pass's part of the rings.
struct PassRing<P, C> {
    /// Per ring slot: the position's expected rolls and where its distribution is.
    value: Vec<f64>,
    stored: Vec<Stored>,
    /// Level l's distributions at `l % 24`.
    pools: Vec<Vec<P>>,
    /// The chains of the last 6 levels, in a ring of their own.
    chains: Vec<C>,
    /// For a pass that keeps its plays, those of the last two levels (the one being sunk and
    /// the one being solved), at `l % 2`.
    plays: [Vec<u32>; 2],
}

impl<P: Prob, C: ChainSlots> Ring<P, C> {
    /// Takes in level `l`'s values, where level l - 24's were, which no later level reads.
    fn keep(
        &mut self,
        l: usize,
        level: &[(u32, Counts)],
        slots: &[impl std::ops::Deref<Target = Slot<P, C>>],
    ) {
        let first = self.first_slot[l];
        for (x, &(i, _)) in self.index[first..first + level.len()].iter_mut().zip(level) {
            *x = i;
        }
        let chain_first = self.chain_slot.get(l).copied().unwrap_or(0);
        for (p, ring) in self.passes.iter_mut().enumerate() {
            let mut k = first;
            let pool = &mut ring.pools[l % DEPTH];
            pool.clear();
            let mut at = chain_first;
            let plays = &mut ring.plays[l % 2];
            plays.clear();
            for slot in slots {
                let c = &slot.out[p];
                for (&v, &s) in c.means.iter().zip(&c.stored) {
                    ring.value[k] = v;
                    ring.stored[k] = Stored {
                        offset: s.offset + pool.len() as u32,
                        ..s
                    };
                    k += 1;
                }
                pool.extend_from_slice(&c.probs);
                plays.extend_from_slice(&c.succ);
                // A pass of given plays keeps no chains.
                let chains = &slot.chains[p];
                if !chains.is_empty() {
                    ring.chains[at..at + chains.len()].copy_from_slice(chains);
                    at += chains.len();
                }
            }
        }
    }
}

/// Solving one level's positions.
struct Task<'a, P, C> {
    space: &'a Space,
    ring: &'a Ring<P, C>,
    level: usize,
    passes: &'a [Pass<'a>],
    any_best: bool,
    /// `chain_shift[p]`: a ring slot of the level `p` pips below this one, less its chain slot
    /// (wrapping): the two slot tables looked up per move before (with the hoisted prefetches,
    /// 15x6 on one thread 721 -> 688 M instructions).
    chain_shift: [usize; 7],
}

/// One position's single-die moves, found two positions ahead of their use and located one
/// ahead, so that the loads of neighbouring positions overlap: the sweep is bound by the
/// latency of its lookups (by index into the slot map, then by slot into the rings), and
/// overlapping them took the whole 15x8 gnubg build from 1.04 to 0.94 s (medians of 7
/// alternating runs).
#[derive(Clone, Copy, Default)]
struct Moves {
    /// Per die: each move's position index, then (once located) its ring slot.
    to: [[u32; 18]; 6],
    /// Per die: each move's pips, then (once located) its chain slot.
    at: [[u32; 18]; 6],
    len: [u8; 6],
}

impl<P: Prob, C: ChainSlots> Task<'_, P, C> {
    fn run(&self, positions: &[(u32, Counts)], slot: &mut Slot<P, C>) {
        let (out, chains) = (&mut slot.out, &mut slot.chains);
        let passes = self.passes;
        for (c, chains) in out.iter_mut().zip(chains.iter_mut()) {
            c.means.clear();
            c.succ.clear();
            c.stored.clear();
            c.probs.clear();
            chains.clear();
        }
        let checkers = |j: usize| positions[j].1.iter().map(|&x| u32::from(x)).sum::<u32>();
        // The lowest `terminal_below` of the passes that find their plays: a position with
        // fewer checkers needs no moves.
        let moves_from = passes
            .iter()
            .filter(|p| matches!(p.plays, Plays::Best))
            .map(|p| p.terminal_below)
            .min()
            .unwrap_or(u32::MAX);
        // A pipeline over the positions: position j's moves are found at j - 2 and located at
        // j - 1; its plays (as the ring slots each roll reaches) are made at j, its successors'
        // distributions located at j + 1 and summed at j + 2, each step prefetching for the
        // next. Only three positions' plays are held, not a level's (15x10: 11 MB less).
        let mut ahead = [Moves::default(); 3];
        let mut plays = [[[u32::MAX; 21]; 3]; MAX_PASSES];
        let needs_moves = |j: usize| j < positions.len() && checkers(j) >= moves_from;
        let find = |j: usize, m: &mut Moves| {
            if needs_moves(j) {
                let (i, counts) = positions[j];
                self.find_moves(&Unranked::from_counts(self.space, i, counts), m);
            }
        };
        let locate = |j: usize, m: &mut Moves| {
            if needs_moves(j) {
                self.locate(m);
            }
        };
        if self.any_best {
            find(0, &mut ahead[0]);
            find(1, &mut ahead[1]);
            locate(0, &mut ahead[0]);
        }
        let mut acc = Vec::new();
        for j in 0..positions.len() + 2 {
            if j < positions.len() {
                if self.any_best {
                    find(j + 2, &mut ahead[(j + 2) % 3]);
                    locate(j + 1, &mut ahead[(j + 1) % 3]);
                }
                self.plays(
                    j,
                    (positions[j].0, checkers(j)),
                    &ahead[j % 3],
                    out,
                    chains,
                    &mut plays,
                );
            }
            for (p, c) in out.iter_mut().enumerate().take(passes.len()) {
                let ring = &self.ring.passes[p];
                // A terminal position's plays are all u32::MAX, any other's none.
                if j >= 1 && j <= positions.len() {
                    let next = &plays[p][(j - 1) % 3];
                    if next[0] != u32::MAX {
                        for &s in next {
                            let st = ring.stored[s as usize];
                            prefetch_at(&ring.pools[usize::from(st.pool)], st.offset as usize);
                        }
                    }
                }
                if j >= 2 {
                    let slots = &plays[p][(j - 2) % 3];
                    let stored = if slots[0] == u32::MAX {
                        let stored = Stored {
                            offset: c.probs.len() as u32,
                            first: 0,
                            len: 1,
                            pool: (self.level % DEPTH) as u8,
                        };
                        c.probs.push(P::store(1.0));
                        stored
                    } else {
                        self.distribution(p, slots, &mut acc, &mut c.probs)
                    };
                    c.stored.push(stored);
                }
            }
        }
    }

    /// Position `j` (index `i`, `on` checkers, located moves `m`)'s plays in every pass, into
    /// `plays[p][j % 3]`, prefetching where their distributions are stored; its expected rolls,
    /// chains and (where kept) successors into the pass's chunk.
    #[inline(always)]
    fn plays(
        &self,
        j: usize,
        (i, on): (u32, u32),
        m: &Moves,
        out: &mut [Chunk<P>; MAX_PASSES],
        chains: &mut [Vec<C>; MAX_PASSES],
        plays: &mut [[[u32; 21]; 3]; MAX_PASSES],
    ) {
        for (p, pass) in self.passes.iter().enumerate() {
            let slots = &mut plays[p][j % 3];
            let mean = if on < pass.terminal_below {
                // Done: no rolls to go, and every chain ends where it starts.
                if let Plays::Best = pass.plays {
                    chains[p].push(C::new([[self.ring.slot[i as usize]; 6]; 3]));
                }
                *slots = [u32::MAX; 21];
                0.0
            } else {
                let mean = match pass.plays {
                    Plays::Best => {
                        let (mean, c_) = self.best_plays(p, m, slots);
                        chains[p].push(C::new(c_));
                        mean
                    }
                    Plays::Given(policy) => {
                        let succ = &policy.succ[21 * i as usize..][..21];
                        for (s, &t) in slots.iter_mut().zip(succ) {
                            *s = self.ring.slot[t as usize];
                        }
                        policy.value[i as usize]
                    }
                };
                for &s in slots.iter() {
                    prefetch_at(&self.ring.passes[p].stored, s as usize);
                }
                mean
            };
            let c = &mut out[p];
            c.means.push(mean);
            if pass.keep_plays {
                let succ = slots.map(|s| match s {
                    u32::MAX => i,
                    s => self.ring.index[s as usize],
                });
                c.succ.extend_from_slice(&succ);
            }
        }
    }

    /// Makes the play to ring slot `to` the best if it is better: lower value, then lower
    /// index. Which of two values is lower is unpredictable, so it is a select, not a branch.
    /// Values are compared as their bits, which order non-negative floats as their values do
    /// (one integer compare instead of a float compare and its NaN test).
    #[inline(always)]
    fn consider(&self, values: &[f64], to: u32, best: &mut (u64, u32)) {
        debug_assert!((to as usize) < values.len());
        // SAFETY: every slot a play reaches is a ring slot of a level below, under the ring's
        // capacity, which `values` has (checked in debug builds).
        let v = unsafe { values.get_unchecked(to as usize) }.to_bits();
        debug_assert_eq!(v >> 63, 0, "a negative value");
        if v == best.0 {
            if self.ring.index[to as usize] < self.ring.index[best.1 as usize] {
                best.1 = to;
            }
        } else {
            *best = std::hint::select_unpredictable(v < best.0, (v, to), *best);
        }
    }

    /// Position `u`'s single-die moves into `m`, as indices and levels, prefetching where
    /// their slots lie.
    #[inline(always)]
    fn find_moves(&self, u: &Unranked, m: &mut Moves) {
        for d in 0..6 {
            let mut n = 0;
            u.each_die_move(d as u32 + 1, |to, pips| {
                prefetch_at(&self.ring.slot, to as usize);
                m.to[d][n] = to;
                m.at[d][n] = pips;
                n += 1;
            });
            m.len[d] = n as u8;
        }
    }

    /// Turns the moves' indices into ring slots and their levels into chain slots,
    /// prefetching their values and chains.
    #[inline(always)]
    fn locate(&self, m: &mut Moves) {
        let ring = self.ring;
        let (first, second) = (&ring.passes[0], ring.passes.get(1));
        for d in 0..6 {
            for n in 0..usize::from(m.len[d]) {
                let s = ring.slot[m.to[d][n] as usize];
                let at = self.chain_shift[m.at[d][n] as usize].wrapping_add(s as usize);
                prefetch_at(&first.value, s as usize);
                prefetch_at(&first.chains, at);
                if let Some(r) = second {
                    prefetch_at(&r.value, s as usize);
                    prefetch_at(&r.chains, at);
                }
                m.to[d][n] = s;
                m.at[d][n] = at as u32;
            }
        }
    }

    /// Pass `p`'s best play of each roll from located moves `m` (into `slots`, as ring slots),
    /// the expected rolls and the chains.
    fn best_plays(&self, p: usize, m: &Moves, slots: &mut [u32; 21]) -> (f64, Chains) {
        let ring = &self.ring.passes[p];
        let values = &ring.value[..];
        const NONE: (u64, u32) = (f64::INFINITY.to_bits(), u32::MAX);
        let mut best = [[NONE; 6]; 3];
        let mut roll_best = [NONE; 21];
        // The die indexes five tables at once: a range reads plainer than five zips.
        #[allow(clippy::needless_range_loop)]
        for a in 0..6 {
            let len = usize::from(m.len[a]);
            for (&s, &at) in m.to[a][..len].iter().zip(&m.at[a][..len]) {
                let c = &ring.chains[at as usize];
                // k + 1 steps of die a: one step to s, then k steps from s.
                for (k, to) in [s, c.get(0, a), c.get(1, a)].into_iter().enumerate() {
                    self.consider(values, to, &mut best[k][a]);
                }
                // Rolls containing die a: a first, then the best single step of the other die.
                for (b, &r) in Roll::INDEX[a].iter().enumerate() {
                    let to = if a == b { c.get(2, a) } else { c.get(0, b) };
                    self.consider(values, to, &mut roll_best[r]);
                }
            }
        }
        let mut sum = 0.0;
        for (r, roll) in Roll::ALL_21.iter().enumerate() {
            let w = roll.weight();
            sum += f64::from(w) * f64::from_bits(roll_best[r].0);
            slots[r] = roll_best[r].1;
        }
        (1.0 + sum / 36.0, best.map(|k| k.map(|(_, to)| to)))
    }

    /// Pass `p`'s distribution under the plays `slots` (ring slots), appended to `probs`.
    fn distribution(
        &self,
        p: usize,
        slots: &[u32; 21],
        acc: &mut Vec<P::Sum>,
        probs: &mut Vec<P>,
    ) -> Stored {
        let ring = &self.ring.passes[p];
        // Each roll's successor taken on its own, not merged with other rolls reaching the same
        // position: a 15x6 position's 21 rolls reach 17.6 positions on average, and finding the
        // repeats cost more than adding them (15x6 on one thread: 808 -> 739 M instructions,
        // callgrind; whole process 0.0873 -> 0.0764 s, 15x8 1.057 -> 0.899 s, medians of 21
        // and 7 alternating runs).
        debug_assert!(slots.iter().all(|&s| (s as usize) < ring.stored.len()));
        // SAFETY: as in `consider`, every slot a play reaches is under the ring's capacity.
        let stored = slots.map(|s| *unsafe { ring.stored.get_unchecked(s as usize) });
        // This position takes one roll more than its successors.
        let (mut lo, mut hi) = (usize::MAX, 0);
        for st in stored.iter().filter(|st| st.len > 0) {
            lo = lo.min(usize::from(st.first) + 1);
            hi = hi.max(usize::from(st.first) + usize::from(st.len));
        }
        let hi = hi.min(self.passes[p].rolls.saturating_sub(1));
        let offset = probs.len() as u32;
        let pool = (self.level % DEPTH) as u8;
        if lo > hi {
            return Stored {
                offset,
                first: 0,
                len: 0,
                pool,
            };
        }
        let width = hi - lo + 1;
        acc.clear();
        acc.resize(width, P::Sum::default());
        for (st, &w) in stored.iter().zip(&Roll::WEIGHTS) {
            if st.len == 0 {
                continue;
            }
            let at = usize::from(st.first) + 1 - lo;
            // Entries past the rolls kept are cut.
            let n = usize::from(st.len).min(width.saturating_sub(at));
            let from = &ring.pools[usize::from(st.pool)][st.offset as usize..][..n];
            let to = &mut acc[at..at + n];
            // Four at a time, which the compiler turns into vector multiply-adds.
            let mut quads = to.chunks_exact_mut(4);
            let mut from_quads = from.chunks_exact(4);
            for (x, f) in (&mut quads).zip(&mut from_quads) {
                for k in 0..4 {
                    P::add_weighted(&mut x[k], w, f[k]);
                }
            }
            for (x, &f) in quads
                .into_remainder()
                .iter_mut()
                .zip(from_quads.remainder())
            {
                P::add_weighted(x, w, f);
            }
        }
        // Stored, without the entries that round to zero at either end.
        let nonzero = |&x: &P::Sum| !P::of_36ths(x).is_zero();
        let a = acc.iter().position(nonzero).unwrap_or(width);
        let b = acc.iter().rposition(nonzero).map_or(a, |b| b + 1);
        probs.extend(acc[a..b].iter().map(|&x| P::of_36ths(x)));
        Stored {
            offset,
            first: (lo + a) as u8,
            len: (b - a) as u8,
            pool,
        }
    }
}

/// A whole pass of the sweep in exact `f64`, by index.
struct Collected {
    mean: Vec<f64>,
    /// Per index: the first roll count stored, and where in `probs` its entries lie.
    first: Vec<u8>,
    span: Vec<(u64, u8)>,
    probs: Vec<f64>,
    /// With `plays`: per index, the position each roll's best play reaches.
    succ: Vec<u32>,
}

impl Collected {
    /// The passes' sweep side by side, each pass collected.
    fn sweep(space: &Space, passes: &[Pass], progress: &dyn Progress) -> Vec<Collected> {
        let n = space.len();
        let mut out: Vec<Collected> = passes
            .iter()
            .map(|p| Collected {
                mean: huge_filled(n, 0.0),
                first: huge_filled(n, 0),
                span: huge_filled(n, (0, 0)),
                probs: Vec::new(),
                succ: if p.keep_plays {
                    huge_filled(21 * n, 0)
                } else {
                    Vec::new()
                },
            })
            .collect();
        let done: Result<(), std::convert::Infallible> =
            sweep::<f64, _>(space, passes, progress, &mut |levels| {
                for (c, level) in out.iter_mut().zip(levels) {
                    c.take(level);
                }
                Ok(())
            });
        let Ok(()) = done;
        out
    }

    fn take(&mut self, level: &Level<f64>) {
        let keep_plays = !self.succ.is_empty();
        for (j, &i) in level.positions.iter().enumerate() {
            let i = i as usize;
            let (first, d) = level.distribution(j);
            self.mean[i] = level.mean(j);
            self.first[i] = first as u8;
            self.span[i] = (self.probs.len() as u64, d.len() as u8);
            self.probs.extend_from_slice(d);
            if keep_plays {
                self.succ[21 * i..21 * i + 21].copy_from_slice(level.plays(j));
            }
        }
    }

    /// Every distribution as `len` entries, `len` one more than the most rolls of any.
    fn dense(&self) -> (usize, Vec<f64>) {
        let len = self
            .first
            .iter()
            .zip(&self.span)
            .map(|(&f, &(_, l))| usize::from(f) + usize::from(l))
            .max()
            .unwrap_or(1);
        let mut dist = huge_filled(len * self.mean.len(), 0f64);
        dist.par_chunks_mut(len).enumerate().for_each(|(i, d)| {
            let (at, l) = self.span[i];
            let f = usize::from(self.first[i]);
            d[f..f + usize::from(l)]
                .copy_from_slice(&self.probs[at as usize..at as usize + usize::from(l)]);
        });
        (len, dist)
    }
}

/// A pass of every distribution entry.
fn exact_pass(terminal_below: u32, plays: Plays, keep_plays: bool) -> Pass {
    Pass {
        terminal_below,
        rolls: usize::MAX,
        plays,
        keep_plays,
    }
}

/// The best plays of a pass on CPU threads, and the expected rolls under them: what the GPU's
/// sweep is checked against.
pub fn policy(space: &Space, terminal_below: u32) -> Policy {
    let pass = exact_pass(terminal_below, Plays::Best, true);
    let c = Collected::sweep(space, &[pass], &|_| {}).remove(0);
    Policy {
        value: c.mean,
        succ: c.succ,
    }
}

/// Where a one-sided pass finds its best plays: the seam between the table and the device.
/// [`CpuPlays`] here; `gpu::GpuPlays` beside the f64 kernel.
pub trait PlaySolver: Send {
    /// The best plays of the pass whose positions with fewer than `terminal_below` checkers
    /// are done, and the expected rolls under them.
    fn policy(
        &mut self,
        space: &Space,
        levels: &Levels,
        terminal_below: u32,
    ) -> anyhow::Result<Policy>;
}

/// The plays on CPU threads: [`policy`].
pub struct CpuPlays;

impl PlaySolver for CpuPlays {
    fn policy(&mut self, space: &Space, _: &Levels, terminal_below: u32) -> anyhow::Result<Policy> {
        Ok(policy(space, terminal_below))
    }
}

/// A solved one-sided table.
pub struct OneSided {
    pub space: Space,
    /// Expected rolls to bear off, from the Bellman equation.
    pub mean: Vec<f64>,
    /// Entries per distribution.
    pub len: usize,
    /// `dist[len * i + k]`: P(bearing off in exactly k rolls).
    pub dist: Vec<f64>,
    /// With 15 checkers: expected rolls and distribution of rolls until the first checker is
    /// off, for positions with all 15 on the board (others: 0 rolls).
    pub gammon: Option<(Vec<f64>, usize, Vec<f64>)>,
}

/// Statistics of one distribution.
pub fn mean_sd(dist: &[f64]) -> (f64, f64) {
    let mean: f64 = dist.iter().enumerate().map(|(k, p)| k as f64 * p).sum();
    let sq: f64 = dist
        .iter()
        .enumerate()
        .map(|(k, p)| (k * k) as f64 * p)
        .sum();
    (mean, (sq - mean * mean).max(0.0).sqrt())
}

/// Average pips per roll: 49/6. Effective pip count = expected rolls x 49/6.
pub const PIPS_PER_ROLL: f64 = 49.0 / 6.0;

/// Whether a table gets the distributions of rolls until the first checker is off: when asked
/// for, and only with 15 checkers (gnubg's gammon distributions).
pub fn has_first_off(space: &Space, gammon: bool) -> bool {
    gammon && space.checkers == 15
}

impl OneSided {
    /// Solves the table on CPU threads.
    pub fn build(space: Space, gammon: bool) -> OneSided {
        OneSided::build_cpu(space, gammon, &|_| {})
    }

    /// Solves the table on CPU threads, calling `progress` with the positions done by each
    /// level of each pass. With gammons the two passes are one sweep.
    pub fn build_cpu(space: Space, gammon: bool, progress: &dyn Progress) -> OneSided {
        let mut passes = vec![exact_pass(1, Plays::Best, false)];
        if has_first_off(&space, gammon) {
            passes.push(exact_pass(space.checkers, Plays::Best, false));
        }
        let mut done = Collected::sweep(&space, &passes, progress).into_iter();
        let off = done.next().expect("a pass per pass");
        OneSided::from_passes(space, off, done.next())
    }

    /// Solves the table with `solver` for the plays ([`CpuPlays`], or the GPU's), one pass
    /// after the other, and CPU threads for the distributions, calling `progress` with the
    /// positions done by each level of the distribution passes. The same table as
    /// [`OneSided::build_cpu`], which finds the plays inside its distribution sweeps instead.
    pub fn build_with(
        space: Space,
        gammon: bool,
        progress: &dyn Progress,
        solver: &mut dyn PlaySolver,
    ) -> anyhow::Result<OneSided> {
        let levels = Levels::new(&space);
        let mut pass = |below| -> anyhow::Result<Collected> {
            let policy = solver.policy(&space, &levels, below)?;
            let pass = exact_pass(below, Plays::Given(&policy), false);
            Ok(Collected::sweep(&space, &[pass], progress).remove(0))
        };
        let off = pass(1)?;
        let first_off = if has_first_off(&space, gammon) {
            Some(pass(space.checkers)?)
        } else {
            None
        };
        Ok(OneSided::from_passes(space, off, first_off))
    }

    /// The table from its passes: bearing off all checkers and, with 15, the first one.
    fn from_passes(space: Space, off: Collected, first_off: Option<Collected>) -> OneSided {
        let (len, dist) = off.dense();
        OneSided {
            space,
            mean: off.mean,
            len,
            dist,
            gammon: first_off.map(|g| {
                let (len, dist) = g.dense();
                (g.mean, len, dist)
            }),
        }
    }

    pub fn distribution(&self, i: u32) -> &[f64] {
        &self.dist[self.len * i as usize..self.len * (i as usize + 1)]
    }

    pub fn gammon_distribution(&self, i: u32) -> Option<&[f64]> {
        self.gammon
            .as_ref()
            .map(|(_, len, d)| &d[len * i as usize..len * (i as usize + 1)])
    }
}

/// P(the side on roll, with distribution `me`, bears off first against `opp`):
/// `Σ_i P_me(i) Σ_{j >= i} P_opp(j)`; the one-sided estimate of a race.
pub fn race_win_probability(me: &[f64], opp: &[f64]) -> f64 {
    let mut tail = vec![0f64; opp.len() + 1];
    for j in (0..opp.len()).rev() {
        tail[j] = tail[j + 1] + opp[j];
    }
    me.iter()
        .enumerate()
        .map(|(i, p)| p * tail.get(i).copied().unwrap_or(0.0))
        .sum()
}

#[cfg(feature = "gpu")]
pub mod gpu;

#[cfg(test)]
mod tests {
    use super::*;

    fn table(points: u32, checkers: u32) -> OneSided {
        OneSided::build(Space::new(points, checkers).unwrap(), true)
    }

    fn at<'a>(t: &'a OneSided, counts: &[u8]) -> (f64, &'a [f64]) {
        let i = t.space.index(counts);
        (t.mean[i as usize], t.distribution(i))
    }

    #[test]
    fn one_checker_exact_fractions() {
        let t = table(6, 2);
        for (p, want) in [
            (1, 1.0),
            (2, 1.0),
            (3, 1.0),
            (4, 19.0 / 18.0),
            (5, 41.0 / 36.0),
            (6, 5.0 / 4.0),
        ] {
            let mut c = [0u8; 6];
            c[p - 1] = 1;
            let (mean, dist) = at(&t, &c);
            assert!((mean - want).abs() < 1e-15, "point {p}: {mean} vs {want}");
            assert!((mean_sd(dist).0 - want).abs() < 1e-12);
        }
    }

    #[test]
    fn two_checkers_on_the_six_point() {
        let t = table(6, 2);
        let (mean, dist) = at(&t, &[0, 0, 0, 0, 0, 2]);
        assert!((mean - 2.109611).abs() < 1e-6, "{mean}");
        let (m, sd) = mean_sd(dist);
        assert!((m - mean).abs() < 1e-12);
        assert!((sd - 0.571).abs() < 1e-3, "{sd}");
        for (k, p) in [(1, 0.111111), (2, 0.671296), (3, 0.214463), (4, 0.003129)] {
            assert!((dist[k] - p).abs() < 1e-6, "P({k}) = {}", dist[k]);
        }
    }

    #[test]
    fn published_fifteen_checker_figures() {
        let t = table(6, 15);
        assert_eq!(t.mean.len(), 54_264);
        let (mean, dist) = at(&t, &[15, 0, 0, 0, 0, 0]);
        assert!((mean - 6.979592).abs() < 1e-6, "{mean}");
        assert!((mean_sd(dist).1 - 0.808).abs() < 1e-3);
        for (k, p) in [
            (4, 0.000772),
            (5, 0.034722),
            (6, 0.227731),
            (7, 0.457694),
            (8, 0.279082),
        ] {
            assert!((dist[k] - p).abs() < 1e-6, "P({k}) = {}", dist[k]);
        }
        let (mean, dist) = at(&t, &[0, 0, 0, 0, 0, 15]);
        assert!((mean - 12.266187).abs() < 1e-6, "{mean}");
        assert!((mean_sd(dist).1 - 1.513).abs() < 1e-3);
        assert!((mean * PIPS_PER_ROLL - 100.17).abs() < 0.01);
        let (mean, _) = at(&t, &[1, 1, 1, 1, 1, 1]);
        assert!((mean - 3.463648).abs() < 1e-6, "{mean}");
        let (mean, dist) = at(&t, &[7, 0, 0, 0, 0, 0]);
        assert!((mean - 3.5509259).abs() < 1e-7);
        assert!((dist[2] - 1.0 / 36.0).abs() < 1e-15);
        assert!((dist[4] - 125.0 / 216.0).abs() < 1e-15);
        // First checker off from fifteen on the six point.
        let i = t.space.index(&[0, 0, 0, 0, 0, 15]);
        let (gmean, _, _) = t.gammon.as_ref().unwrap();
        let g = t.gammon_distribution(i).unwrap();
        assert!((g[1] - 17.0 / 36.0).abs() < 1e-15, "{}", g[1]);
        assert!(
            (gmean[i as usize] - 1.616).abs() < 1e-3,
            "{}",
            gmean[i as usize]
        );
        // Positions with a checker off need no roll for the first one.
        let j = t.space.index(&[0, 0, 0, 0, 0, 14]);
        assert_eq!(t.gammon_distribution(j).unwrap()[0], 1.0);
    }

    #[test]
    fn two_checkers_borne_off_in_one_roll() {
        // Out of 36 rolls, how many bear off both checkers at once.
        let t = table(6, 2);
        for (a, b, want) in [
            (6, 6, 4),
            (6, 5, 6),
            (6, 4, 8),
            (6, 3, 10),
            (6, 2, 13),
            (6, 1, 15),
            (5, 5, 6),
            (4, 4, 11),
            (3, 3, 17),
            (2, 2, 26),
            (2, 1, 36),
        ] {
            let mut c = [0u8; 6];
            c[a - 1] += 1;
            c[b - 1] += 1;
            let (_, dist) = at(&t, &c);
            assert!(
                (dist[1] * 36.0 - f64::from(want)).abs() < 1e-9,
                "{a}-{b}: {}",
                dist[1] * 36.0
            );
        }
    }

    #[test]
    fn distributions_sum_to_one_and_match_the_means() {
        let t = table(5, 8);
        for i in 0..t.mean.len() as u32 {
            let d = t.distribution(i);
            assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!((mean_sd(d).0 - t.mean[i as usize]).abs() < 1e-9);
        }
    }

    #[test]
    fn sweep_equals_brute_force_over_every_play() {
        use crate::equivalence::brute_mean;
        let t = OneSided::build(Space::new(5, 5).unwrap(), false);
        let mut memo = std::collections::HashMap::new();
        let mut counts = [0u8; 5];
        for i in 0..t.mean.len() as u32 {
            t.space.position(i, &mut counts);
            let brute = brute_mean(&counts, &mut memo);
            assert!(
                (t.mean[i as usize] - brute).abs() < 1e-12,
                "{counts:?}: {} vs {brute}",
                t.mean[i as usize]
            );
        }
    }

    /// Every level of a sweep: positions, means, distributions.
    fn levels_of<C: ChainSlots>(space: &Space, below: u32) -> Vec<(u32, u64, usize, Vec<u64>)> {
        let mut out = Vec::new();
        let pass = exact_pass(below, Plays::Best, false);
        let sizes = space.level_sizes();
        let done: Result<(), ()> =
            sweep_with::<f64, (), C>(space, &sizes, &[pass], &|_| {}, &mut |levels| {
                let level = &levels[0];
                for (j, &i) in level.positions.iter().enumerate() {
                    let (first, d) = level.distribution(j);
                    let d = d.iter().map(|p| p.to_bits()).collect();
                    out.push((i, level.mean(j).to_bits(), first, d));
                }
                Ok(())
            });
        done.unwrap();
        out
    }

    #[test]
    fn chains_packed_or_wide_give_the_same_sweep() {
        for (space, below) in [
            (Space::new(6, 15).unwrap(), 1),
            (Space::new(5, 15).unwrap(), 15),
        ] {
            assert!(levels_of::<Packed>(&space, below) == levels_of::<Chains>(&space, below));
        }
        let c = [
            [1, 2, 3, 4, 5, 6],
            [7, 8, 9, 10, 11, 12],
            [(1 << 21) - 1, 0, 5, 0, 1, 2],
        ];
        let p = Packed::new(c);
        for (k, row) in c.iter().enumerate() {
            for (d, &slot) in row.iter().enumerate() {
                assert_eq!(p.get(k, d), slot);
            }
        }
    }

    #[test]
    fn race_estimate() {
        // Certain one-roll bearoff for the side on roll: it wins.
        assert_eq!(race_win_probability(&[0.0, 1.0], &[0.0, 0.5, 0.5]), 1.0);
        assert_eq!(race_win_probability(&[0.0, 0.0, 1.0], &[0.0, 1.0]), 0.0);
        assert!((race_win_probability(&[0.0, 0.5, 0.5], &[0.0, 0.5, 0.5]) - 0.75).abs() < 1e-15);
    }
}
