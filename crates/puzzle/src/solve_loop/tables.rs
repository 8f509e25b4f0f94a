//! The stage tables: per stage, every state of its tiles and the blank, the cheapest way to
//! carry it out (found by breadth-first search), and what that does to a board.

use super::*;

/// The cells of state `idx` of a stage table over the free cells `cells`: the stage's `k` tiles'
/// cells, then the blank's.
pub(super) fn state_cells(idx: usize, cells: &[u8], k: usize) -> Vec<u8> {
    pdb::unrank(idx, cells.len(), k + 1)
        .iter()
        .map(|&l| cells[usize::from(l)])
        .collect()
}

/// A distance table over (cells of the stage's tiles, cell of the blank) within the stage's free
/// cells. Some states are *finishing* states, each with a cost: the moves that finish the stage
/// from there (turning a loop; 0 for the stage's goal). A state's value is the fewest moves to
/// some finishing state plus that state's cost, by a breadth-first search seeded with the costs.
pub(super) struct StageTable {
    pub(super) tiles: Vec<u8>,
    pub(super) free: u16,
    /// Board cell to index among the free cells (255: not free).
    pub(super) local: [u8; 16],
    pub(super) m: usize,
    pub(super) value: Vec<u8>,
    pub(super) finish: Vec<u8>,
}

impl StageTable {
    pub(super) fn new(
        spec: &StageSpec,
        finish_cost: impl Fn(&[u8], u8) -> Option<u8>,
    ) -> StageTable {
        let free = !spec.locked;
        let cells: Vec<u8> = (0..16u8).filter(|&c| free & (1 << c) != 0).collect();
        let m = cells.len();
        let mut local = [u8::MAX; 16];
        for (i, &c) in cells.iter().enumerate() {
            local[usize::from(c)] = i as u8;
        }
        let k = spec.tiles.len();
        let size = (0..=k).map(|i| m - i).product::<usize>();
        let mut value = vec![u8::MAX; size];
        let mut finish = vec![u8::MAX; size];
        let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); 256];
        let state = |idx: usize| state_cells(idx, &cells, k);
        for idx in 0..size {
            let st = state(idx);
            if let Some(c) = finish_cost(&st[..k], st[k]) {
                finish[idx] = c;
                value[idx] = c;
                buckets[usize::from(c)].push(idx);
            }
        }
        for v in 0..255usize {
            let mut i = 0;
            while i < buckets[v].len() {
                let idx = buckets[v][i];
                i += 1;
                if usize::from(value[idx]) != v {
                    continue;
                }
                let st = state(idx);
                let blank = usize::from(st[k]);
                for d in Dir::ALL {
                    let Some(to) = d.step(blank, W) else { continue };
                    if free & (1 << to) == 0 {
                        continue;
                    }
                    // Moves are reversible: the neighbour state is one move away either way.
                    let mut nb = st.clone();
                    if let Some(t) = nb[..k].iter().position(|&c| usize::from(c) == to) {
                        nb[t] = blank as u8;
                    }
                    nb[k] = to as u8;
                    let loc: Vec<u8> = nb.iter().map(|&c| local[usize::from(c)]).collect();
                    let j = rank(&loc, m);
                    if usize::from(value[j]) > v + 1 {
                        value[j] = (v + 1) as u8;
                        buckets[v + 1].push(j);
                    }
                }
            }
        }
        StageTable {
            tiles: spec.tiles.to_vec(),
            free,
            local,
            m,
            value,
            finish,
        }
    }

    pub(super) fn index(&self, board: &Board) -> usize {
        self.index_by(|t| board.find(t))
    }

    /// The index of the state in which tile `t` (0: the blank) is in cell `cell_of(t)`.
    #[inline]
    pub(super) fn index_by<C: Into<usize>>(&self, cell_of: impl Fn(u8) -> C) -> usize {
        let mut loc = [0u8; 8];
        let k = self.tiles.len();
        for (l, &t) in loc.iter_mut().zip(&self.tiles) {
            *l = self.local[cell_of(t).into() & 15];
        }
        loc[k] = self.local[cell_of(0).into() & 15];
        rank(&loc[..=k], self.m)
    }

    /// Follows the table from `board` to the best finishing state, appending the moves; returns
    /// that state's finishing cost.
    pub(super) fn follow(&self, board: &mut Board, moves: &mut Vec<Dir>) -> u8 {
        let mut idx = self.index(board);
        assert!(self.value[idx] != u8::MAX, "stage reachable from {board:?}");
        while self.finish[idx] != self.value[idx] {
            let v = self.value[idx];
            let step = Dir::ALL.into_iter().find_map(|dir| {
                let to = dir.step(board.blank(), W)?;
                if self.free & (1 << to) == 0 {
                    return None;
                }
                let nb = board.moved(dir)?;
                let j = self.index(&nb);
                (self.value[j] == v - 1).then_some((dir, nb, j))
            });
            let (dir, nb, j) = step.expect("a table step downhill");
            *board = nb;
            moves.push(dir);
            idx = j;
        }
        self.finish[idx]
    }
}

/// Tile `t`'s cell for every `t` (index 0: the blank's cell): a board seen from the tiles.
pub(super) type Places = [u8; 16];

pub(super) fn places(board: &Board) -> Places {
    let mut p = [0u8; 16];
    for (c, &t) in board.cells().iter().enumerate() {
        p[usize::from(t)] = c as u8;
    }
    p
}

/// A board with the stage's locked cells home, its tiles at `cells`, the blank at `blank` and
/// the other tiles in order in the cells left. A stage's moves depend on nothing else (the other
/// tiles just ride along), so this board stands for every board in that stage state. Its
/// solvability is not checked: no stage looks at it.
pub(super) fn stage_board(spec: &StageSpec, cells: &[u8], blank: u8) -> Board {
    let mut out = [u8::MAX; 16];
    for c in 0..16u8 {
        if spec.locked & (1 << c) != 0 {
            out[usize::from(c)] = c + 1;
        }
    }
    for (&t, &c) in spec.tiles.iter().zip(cells) {
        out[usize::from(c)] = t;
    }
    out[usize::from(blank)] = 0;
    let placed = out;
    let mut rest = (1..16u8).filter(|t| !placed.contains(t));
    for c in out.iter_mut().filter(|c| **c == u8::MAX) {
        *c = rest.next().expect("a tile for every cell");
    }
    Board::from_cells(&out).expect("a permutation")
}

/// What carrying out a stage from one of its states does: its moves, and the cell each cell's
/// content ends in. The moves depend only on the cells of the stage's tiles and the blank, so
/// the effect on every board in that state is the same permutation of the cells.
#[derive(Clone, Copy, Debug)]
pub(super) struct Effect {
    pub(super) moves: u8,
    pub(super) to: [u8; 16],
}

impl Effect {
    pub(super) fn between(before: &Board, after: &Board, moves: usize) -> Effect {
        let now = places(after);
        let mut to = [0u8; 16];
        for (c, &t) in before.cells().iter().enumerate() {
            to[c] = now[usize::from(t)];
        }
        Effect {
            moves: u8::try_from(moves).expect("a stage takes under 256 moves"),
            to,
        }
    }

    #[inline]
    pub(super) fn apply(&self, places: &Places) -> Places {
        // Cells are below 16: the mask lets the compiler drop the bounds checks.
        places.map(|c| self.to[usize::from(c & 15)])
    }
}
