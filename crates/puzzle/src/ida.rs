//! The optimal solver: IDA* with additive disjoint pattern databases and the reflected lookup.
//!
//! The heuristic of a board is the sum of its patterns' database values (admissible because the
//! patterns share no tile and each database counts only its own tiles' moves), and the same sum
//! for the board reflected in the main diagonal; the larger of the two is taken. Reflection
//! maps the goal to itself (the tile whose goal is cell `(r, c)` becomes the tile whose goal is
//! `(c, r)`; the blank's goal corner is on the diagonal), so the reflected board is exactly as
//! far from the goal and its lookup is a second admissible estimate for free.
//!
//! IDA*: depth-first searches bounded by `f = g + h`, each bound the smallest `f` that exceeded
//! the previous one; moves that undo the previous move are skipped. With an admissible
//! heuristic the first solution found is a shortest one, so the length is proven optimal by the
//! search. The heuristic is updated incrementally: a move changes one tile, so one pattern's
//! index for the board and one for its reflection.

use std::time::Instant;

use super::board::{Board, Dir, MAX_CELLS};
use super::pdb::{PatternDb, rank};

/// Pattern databases forming a disjoint partition of the tiles of one board size.
pub struct PdbHeuristic {
    width: usize,
    dbs: Vec<PatternDb>,
    /// For each tile: its database.
    group: [u8; MAX_CELLS],
    /// The reflection of each cell, and of each tile.
    reflect_cell: [u8; MAX_CELLS],
    reflect_tile: [u8; MAX_CELLS],
}

impl PdbHeuristic {
    /// The heuristic of these databases, which must cover every tile of the board exactly once.
    pub fn new(dbs: Vec<PatternDb>) -> PdbHeuristic {
        assert!(!dbs.is_empty());
        let width = dbs[0].width();
        let n = width * width;
        let mut group = [u8::MAX; MAX_CELLS];
        for (g, db) in dbs.iter().enumerate() {
            assert_eq!(db.width(), width, "databases of one board size");
            for &t in db.tiles() {
                assert_eq!(group[usize::from(t)], u8::MAX, "tile {t} in two patterns");
                group[usize::from(t)] = g as u8;
            }
        }
        assert!(
            (1..n).all(|t| group[t] != u8::MAX),
            "the patterns must cover every tile"
        );
        let mut reflect_cell = [0u8; MAX_CELLS];
        let mut reflect_tile = [0u8; MAX_CELLS];
        for (c, r) in reflect_cell.iter_mut().enumerate().take(n) {
            *r = ((c % width) * width + c / width) as u8;
        }
        for t in 1..n {
            reflect_tile[t] = reflect_cell[t - 1] + 1;
        }
        PdbHeuristic {
            width,
            dbs,
            group,
            reflect_cell,
            reflect_tile,
        }
    }

    /// Board width.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The databases.
    pub fn databases(&self) -> &[PatternDb] {
        &self.dbs
    }

    #[inline(always)]
    fn lookup(&self, g: usize, pos: &[u8; MAX_CELLS]) -> u8 {
        let db = &self.dbs[g];
        let mut cells = [0u8; MAX_CELLS];
        let tiles = db.tiles();
        for (c, &t) in cells.iter_mut().zip(tiles) {
            *c = pos[usize::from(t)];
        }
        db.entries()[rank(&cells[..tiles.len()], self.width * self.width)]
    }

    /// The heuristic value of a board.
    pub fn estimate(&self, board: &Board) -> u32 {
        let s = State::new(self, board);
        s.h()
    }
}

/// Search state: the tile in each cell, the cell of each tile on the board and on its
/// reflection, and each pattern's value for both.
#[derive(Clone)]
struct State {
    cells: [u8; MAX_CELLS],
    pos: [u8; MAX_CELLS],
    rpos: [u8; MAX_CELLS],
    blank: usize,
    h: [u8; 8],
    rh: [u8; 8],
    groups: usize,
}

impl State {
    fn new(heur: &PdbHeuristic, board: &Board) -> State {
        assert_eq!(board.width(), heur.width, "board and databases of one size");
        let mut cells = [0u8; MAX_CELLS];
        let mut pos = [0u8; MAX_CELLS];
        let mut rpos = [0u8; MAX_CELLS];
        for (c, &t) in board.cells().iter().enumerate() {
            cells[c] = t;
            pos[usize::from(t)] = c as u8;
            rpos[usize::from(heur.reflect_tile[usize::from(t)])] = heur.reflect_cell[c];
        }
        let groups = heur.dbs.len();
        assert!(groups <= 8);
        let mut s = State {
            cells,
            pos,
            rpos,
            blank: board.blank(),
            h: [0; 8],
            rh: [0; 8],
            groups,
        };
        for g in 0..groups {
            s.h[g] = heur.lookup(g, &s.pos);
            s.rh[g] = heur.lookup(g, &s.rpos);
        }
        s
    }

    #[inline(always)]
    fn h(&self) -> u32 {
        let a: u32 = self.h[..self.groups].iter().map(|&v| u32::from(v)).sum();
        let b: u32 = self.rh[..self.groups].iter().map(|&v| u32::from(v)).sum();
        a.max(b)
    }
}

/// An optimal solution and what finding it took.
#[derive(Clone, Debug)]
pub struct IdaSolution {
    pub moves: Vec<Dir>,
    /// Nodes generated over all iterations.
    pub nodes: u64,
    /// Iterations (bounds searched).
    pub iterations: u32,
    /// The heuristic of the start board.
    pub initial_h: u32,
    pub seconds: f64,
}

/// Finds a shortest solution of `board` (which must be solvable).
pub fn solve(heur: &PdbHeuristic, board: &Board) -> IdaSolution {
    let t0 = Instant::now();
    assert!(board.is_solvable(), "IDA* needs a solvable board");
    let mut s = State::new(heur, board);
    let initial_h = s.h();
    let mut search = Search {
        heur,
        width: heur.width,
        nodes: 0,
        path: Vec::with_capacity(128),
        next_bound: u32::MAX,
    };
    let mut bound = initial_h;
    let mut iterations = 0;
    loop {
        iterations += 1;
        search.next_bound = u32::MAX;
        if search.dfs(&mut s, 0, bound, None) {
            return IdaSolution {
                moves: search.path,
                nodes: search.nodes,
                iterations,
                initial_h,
                seconds: t0.elapsed().as_secs_f64(),
            };
        }
        assert!(
            search.next_bound != u32::MAX,
            "a solvable board has a solution"
        );
        bound = search.next_bound;
    }
}

struct Search<'a> {
    heur: &'a PdbHeuristic,
    width: usize,
    nodes: u64,
    path: Vec<Dir>,
    next_bound: u32,
}

impl Search<'_> {
    fn dfs(&mut self, s: &mut State, g: u32, bound: u32, prev: Option<Dir>) -> bool {
        let h = s.h();
        let f = g + h;
        if f > bound {
            self.next_bound = self.next_bound.min(f);
            return false;
        }
        if h == 0 {
            // h = 0 only at the goal: every pattern tile is home, hence the blank too.
            return true;
        }
        for d in Dir::ALL {
            if prev == Some(d.opposite()) {
                continue;
            }
            let Some(to) = d.step(s.blank, self.width) else {
                continue;
            };
            self.nodes += 1;
            let undo = self.make(s, to);
            self.path.push(d);
            if self.dfs(s, g + 1, bound, Some(d)) {
                return true;
            }
            self.path.pop();
            self.unmake(s, undo);
        }
        false
    }

    /// Moves the blank to `to`; returns what undoing needs.
    #[inline(always)]
    fn make(&self, s: &mut State, to: usize) -> Undo {
        let heur = self.heur;
        let from = s.blank;
        let t = s.cells[to];
        let ti = usize::from(t);
        let rt = usize::from(heur.reflect_tile[ti]);
        let g = usize::from(heur.group[ti]);
        let rg = usize::from(heur.group[rt]);
        let undo = Undo {
            from,
            to,
            h: s.h[g],
            rh: s.rh[rg],
        };
        s.cells[from] = t;
        s.cells[to] = 0;
        s.blank = to;
        s.pos[ti] = from as u8;
        s.rpos[rt] = heur.reflect_cell[from];
        s.h[g] = heur.lookup(g, &s.pos);
        s.rh[rg] = heur.lookup(rg, &s.rpos);
        undo
    }

    #[inline(always)]
    fn unmake(&self, s: &mut State, u: Undo) {
        let heur = self.heur;
        let t = s.cells[u.from];
        let ti = usize::from(t);
        let rt = usize::from(heur.reflect_tile[ti]);
        s.cells[u.to] = t;
        s.cells[u.from] = 0;
        s.blank = u.from;
        s.pos[ti] = u.to as u8;
        s.rpos[rt] = heur.reflect_cell[u.to];
        s.h[usize::from(heur.group[ti])] = u.h;
        s.rh[usize::from(heur.group[rt])] = u.rh;
    }
}

#[derive(Clone, Copy)]
struct Undo {
    from: usize,
    to: usize,
    h: u8,
    rh: u8,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::verify;
    use crate::pdb::Partition;
    use crate::testing::{bfs_distances, heuristic, scramble};

    /// The 8-puzzle, every solvable board: IDA*'s length equals the breadth-first distance.
    #[test]
    fn optimal_on_every_8_puzzle_board() {
        let heur = heuristic(Partition::P44);
        let dist = bfs_distances(3);
        assert_eq!(dist.len(), 181_440);
        let mut total = 0u64;
        let mut hist = [0u32; 32];
        for (board, &d) in dist {
            let sol = solve(heur, board);
            assert_eq!(sol.moves.len(), usize::from(d), "{board:?}");
            assert!(heur.estimate(board) <= u32::from(d), "admissible");
            verify(board, &sol.moves).unwrap();
            total += u64::from(d);
            hist[usize::from(d)] += 1;
        }
        // The 8-puzzle's known figures: diameter 31, two boards that far, mean 21.97.
        assert_eq!(hist[31], 2);
        assert!(hist[32..].iter().all(|&c| c == 0));
        let mean = total as f64 / 181_440.0;
        assert!((mean - 21.97).abs() < 0.01, "{mean}");
    }

    /// 15-puzzle boards with known optimal lengths, with the small 5-5-5 databases.
    #[test]
    fn optimal_on_15_puzzle_boards_with_known_lengths() {
        let heur = heuristic(Partition::P555);
        let goal = Board::goal(4);
        assert!(solve(heur, &goal).moves.is_empty());
        // Random walks, their optimal lengths from a breadth-first search to depth 16.
        let near = bfs_distances_limited(16);
        let mut lengths = [0u32; 17];
        for (steps, seed) in (0..60u64).map(|s| (if s < 40 { 16 } else { 10 }, s)) {
            let b = scramble(&goal, steps, seed);
            let d = near[&b];
            let sol = solve(heur, &b);
            assert_eq!(sol.moves.len(), usize::from(d), "{b:?}");
            verify(&b, &sol.moves).unwrap();
            lengths[usize::from(d)] += 1;
        }
        // The walks reach a spread of depths, not just the easy ones.
        assert!(lengths[14..].iter().sum::<u32>() >= 10, "{lengths:?}");
        let t = Instant::now();
        // Rosetta Code's "15 puzzle solver" board: 52 moves is optimal (published).
        let b: Board = "15 14 1 6 / 9 11 4 12 / 0 10 7 3 / 13 8 5 2"
            .parse()
            .unwrap();
        let sol = solve(heur, &b);
        assert_eq!(sol.moves.len(), 52);
        verify(&b, &sol.moves).unwrap();
        eprintln!("52-move board: {} nodes, {:?}", sol.nodes, t.elapsed());
    }

    /// Every 15-puzzle board within `depth` moves of the goal, with its distance.
    fn bfs_distances_limited(depth: u8) -> std::collections::HashMap<Board, u8> {
        let mut dist = std::collections::HashMap::new();
        let goal = Board::goal(4);
        dist.insert(goal, 0u8);
        let mut level = vec![goal];
        for d in 1..=depth {
            let mut next = Vec::new();
            for b in &level {
                for dir in Dir::ALL {
                    if let Some(nb) = b.moved(dir)
                        && let std::collections::hash_map::Entry::Vacant(e) = dist.entry(nb)
                    {
                        e.insert(d);
                        next.push(nb);
                    }
                }
            }
            level = next;
        }
        dist
    }
}
