//! Feature extraction: each tuple compiled into runs of consecutive cells, so that a feature
//! index is one shift and mask per run, and scratch rows of a few boards' indexes.

use super::*;

/// One run of consecutive cells of a tuple: `(board >> src) & mask`, placed at bit `dst` of
/// the feature index.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Run {
    pub(super) src: u32,
    pub(super) mask: u64,
    pub(super) dst: u32,
}

/// A tuple compiled for fast extraction.
#[derive(Clone, Copy, Debug)]
pub(super) struct Compiled {
    pub(super) offset: usize,
    pub(super) runs: [Run; MAX_CELLS],
    pub(super) nruns: usize,
}

impl Compiled {
    pub(super) fn new(cells: &[u8], offset: usize) -> Compiled {
        let mut runs = [Run::default(); MAX_CELLS];
        let mut nruns = 0;
        let mut j = 0;
        while j < cells.len() {
            let mut len = 1;
            while j + len < cells.len() && cells[j + len] == cells[j] + len as u8 {
                len += 1;
            }
            runs[nruns] = Run {
                src: 4 * u32::from(cells[j]),
                mask: (1u64 << (4 * len)) - 1,
                dst: 4 * j as u32,
            };
            nruns += 1;
            j += len;
        }
        Compiled {
            offset,
            runs,
            nruns,
        }
    }

    /// The feature index on `board` from the first `R` runs (runs past `nruns` are zero-mask
    /// padding): with `R` a constant the loop unrolls into straight-line code.
    #[inline(always)]
    pub(super) fn index<const R: usize>(&self, board: u64) -> usize {
        let mut i = 0u64;
        for r in &self.runs[..R] {
            i |= (board >> r.src & r.mask) << r.dst;
        }
        self.offset + i as usize
    }
}

/// The weight indexes of a few boards' features, extracted once and then prefetched, summed and
/// updated from: scratch space kept from move to move. Row `k` is board `k`'s indexes in
/// [`Network::feature_indexes`]'s order (entry `8 t + s` is feature `(t, s)`); an index fits in
/// a `u32` (at most [`MAX_TUPLES`] x 16^[`MAX_CELLS`] weights).
pub struct Features {
    pub(super) per_board: usize,
    pub(super) idx: Vec<u32>,
}

impl Features {
    /// Room for `rows` boards of `net`'s features.
    pub fn new(net: &Network, rows: usize) -> Features {
        let mut f = Features {
            per_board: 0,
            idx: Vec::new(),
        };
        f.fit(net, rows);
        f
    }

    #[inline]
    pub(super) fn fit(&mut self, net: &Network, rows: usize) {
        self.per_board = 8 * net.compiled.len();
        if self.idx.len() < rows * self.per_board {
            self.idx.resize(rows * self.per_board, 0);
        }
    }

    /// Board `k`'s indexes.
    #[inline]
    pub fn row(&self, k: usize) -> &[u32] {
        &self.idx[k * self.per_board..(k + 1) * self.per_board]
    }

    #[inline]
    pub(super) fn row_mut(&mut self, k: usize) -> &mut [u32] {
        &mut self.idx[k * self.per_board..(k + 1) * self.per_board]
    }

    /// Copies row `from` over row `to`.
    #[inline]
    pub fn copy_row(&mut self, from: usize, to: usize) {
        let p = self.per_board;
        self.idx.copy_within(from * p..(from + 1) * p, to * p);
    }
}
