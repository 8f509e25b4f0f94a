//! The sweep level by level on a team of threads in lock step, and the rings that keep the
//! last levels.

use super::task::Task;
use super::{Pass, Plays};
use rollsim_core::lockstep;
use rollsim_core::progress::Progress;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::levels::{self, ring_slots};
use crate::numeric::Prob;
use crate::position::{Counts, Space};
use rollsim_core::memory::huge_filled;

/// A level's tasks shrink towards its end: each takes `1 / (GUIDE * members)` of the positions
/// left, and at least `LAST_TASK`, so that the members finish a level close together. A 15x6
/// position takes about a microsecond (`results/bearoff/one-sided-guided-tasks.txt`).
const GUIDE: usize = 4;
const LAST_TASK: usize = 16;

/// Levels the rings keep: a position's successors lie at most 24 pips (6-6) below it. A level
/// is stored once it is done, over the 24th level below, which no later level reads.
pub(super) const DEPTH: usize = 24;
/// Levels the chains are read from: one die moves at most 6 pips.
const CHAIN_DEPTH: usize = 6;

/// `chains[k][d - 1]`: the ring slot of the best position k + 1 steps of die d reach.
pub(super) type Chains = [[u32; 6]; 3];

/// How a ring keeps chains.
pub(super) trait ChainSlots: Copy + Default + Send + Sync {
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
pub(super) struct Packed([u64; 6]);

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
pub(super) struct Stored {
    pub(super) offset: u32,
    pub(super) first: u8,
    pub(super) len: u8,
    pub(super) pool: u8,
}

/// Passes one sweep solves side by side: bearing off, and the first checker off. They share
/// the positions' moves and ring slots; only their values differ.
pub const MAX_PASSES: usize = 2;

/// What a task of a level computes for one pass, for a run of its positions.
#[derive(Default)]
pub struct Chunk<P> {
    pub(super) means: Vec<f64>,
    pub(super) succ: Vec<u32>,
    pub(super) stored: Vec<Stored>,
    pub(super) probs: Vec<P>,
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
/// each level's tasks, with no second thread pool.
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

pub(super) fn sweep_with<P: Prob, E: Send, C: ChainSlots>(
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
    // (it waited there before: `results/bearoff/one-sided-listing-ahead.txt`).
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
pub(super) struct Slot<P, C> {
    pub(super) out: [Chunk<P>; MAX_PASSES],
    pub(super) chains: [Vec<C>; MAX_PASSES],
}

/// The sweep's state for the levels below the current one, by ring slot (see
/// [`ring_slots`]).
pub(super) struct Ring<P, C> {
    /// Every position's ring slot (valid while its level is among the last 24).
    pub(super) slot: Vec<u32>,
    /// Per ring slot: the position's index.
    pub(super) index: Vec<u32>,
    pub(super) passes: Vec<PassRing<P, C>>,
    /// Each level's first slot in the rings.
    first_slot: Vec<usize>,
    chain_slot: Vec<usize>,
}

/// One pass's part of the rings.
pub(super) struct PassRing<P, C> {
    /// Per ring slot: the position's expected rolls and where its distribution is.
    pub(super) value: Vec<f64>,
    pub(super) stored: Vec<Stored>,
    /// Level l's distributions at `l % 24`.
    pub(super) pools: Vec<Vec<P>>,
    /// The chains of the last 6 levels, in a ring of their own.
    pub(super) chains: Vec<C>,
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

#[cfg(test)]
mod tests {
    use super::{ChainSlots, Chains, Packed, sweep_with};
    use crate::one_sided::{Plays, exact_pass};
    use crate::position::Space;

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
}
