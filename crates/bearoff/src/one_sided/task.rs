//! One task of a level: its positions' moves, chains and distributions.

use super::sweep::{ChainSlots, Chains, Chunk, DEPTH, MAX_PASSES, Ring, Slot, Stored};
use super::{Pass, Plays};

use crate::moves::{Roll, Unranked};
use crate::numeric::Prob;
use crate::position::{Counts, Space};
use rollsim_core::memory::prefetch_at;

/// Solving one level's positions.
pub(super) struct Task<'a, P, C> {
    pub(super) space: &'a Space,
    pub(super) ring: &'a Ring<P, C>,
    pub(super) level: usize,
    pub(super) passes: &'a [Pass<'a>],
    pub(super) any_best: bool,
    /// `chain_shift[p]`: a ring slot of the level `p` pips below this one, less its chain slot
    /// (wrapping): one lookup per move instead of two slot tables.
    pub(super) chain_shift: [usize; 7],
}

/// One position's single-die moves, found two positions ahead of their use and located one
/// ahead, so that the loads of neighbouring positions overlap: the sweep is bound by the
/// latency of its lookups (by index into the slot map, then by slot into the rings), and
/// overlapping them took a tenth off the 15x8 gnubg build.
#[derive(Clone, Copy, Default)]
struct Moves {
    /// Per die: each move's position index, then (once located) its ring slot.
    to: [[u32; 18]; 6],
    /// Per die: each move's pips, then (once located) its chain slot.
    at: [[u32; 18]; 6],
    len: [u8; 6],
}

impl<P: Prob, C: ChainSlots> Task<'_, P, C> {
    pub(super) fn run(&self, positions: &[(u32, Counts)], slot: &mut Slot<P, C>) {
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
        // repeats cost more than adding them.
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
