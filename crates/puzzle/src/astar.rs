//! The baseline: A* with the Manhattan distance and a limit on the nodes it may expand.
//!
//! Manhattan distance is consistent, so each board is expanded at most once and a solution found
//! within the limit is a shortest one. Ties in `f = g + h` go to the deeper node. Boards are
//! keys of four bits per cell; each key remembers its depth and the move that reached it, and
//! the path is read back from the goal by undoing those moves.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::board::{Board, Dir, MAX_CELLS};

/// What one A* run found.
#[derive(Clone, Debug)]
pub struct AstarResult {
    /// A shortest solution, or `None` when the limit was reached first.
    pub moves: Option<Vec<Dir>>,
    /// Nodes expanded (taken off the open list and their children generated).
    pub expanded: u64,
}

/// Manhattan distance of every tile from its goal cell.
pub fn manhattan(board: &Board) -> u32 {
    let w = board.width();
    board
        .cells()
        .iter()
        .enumerate()
        .filter(|&(_, &t)| t != 0)
        .map(|(c, &t)| {
            let g = usize::from(t) - 1;
            ((c / w).abs_diff(g / w) + (c % w).abs_diff(g % w)) as u32
        })
        .sum()
}

fn key(cells: &[u8]) -> u64 {
    cells
        .iter()
        .enumerate()
        .fold(0u64, |k, (i, &t)| k | u64::from(t) << (4 * i))
}

fn unkey(key: u64, n: usize) -> [u8; MAX_CELLS] {
    let mut cells = [0u8; MAX_CELLS];
    for (i, c) in cells.iter_mut().enumerate().take(n) {
        *c = (key >> (4 * i) & 15) as u8;
    }
    cells
}

/// Board keys are packed nibbles: Fx hashing, not SipHash, in the search's hottest map.
type KeyMap<V> = rustc_hash::FxHashMap<u64, V>;

const START: u8 = 4;

/// Runs A* from `board` (which must be solvable), expanding at most `node_limit` nodes.
pub fn solve(board: &Board, node_limit: u64) -> AstarResult {
    assert!(board.is_solvable(), "A* needs a solvable board");
    let w = board.width();
    let n = board.len();
    let goal_key = key(Board::goal(w).cells());
    // Per key: depth g and the move that reached it (START for the start board).
    let mut seen: KeyMap<(u8, u8)> = KeyMap::default();
    let mut open: BinaryHeap<Reverse<(u8, u8, u64)>> = BinaryHeap::new();
    let start = key(board.cells());
    let h0 = manhattan(board) as u8;
    seen.insert(start, (0, START));
    // Ordered by f, then by larger g (255 - g smaller), then by key for determinism.
    open.push(Reverse((h0, u8::MAX, start)));
    let mut expanded = 0u64;
    while let Some(Reverse((f, inv_g, k))) = open.pop() {
        let g = u8::MAX - inv_g;
        if seen[&k].0 < g {
            continue; // a stale entry: reached more cheaply since
        }
        if k == goal_key {
            return AstarResult {
                moves: Some(path(&seen, k, n, w)),
                expanded,
            };
        }
        if expanded >= node_limit {
            return AstarResult {
                moves: None,
                expanded,
            };
        }
        expanded += 1;
        let cells = unkey(k, n);
        let blank = cells.iter().take(n).position(|&t| t == 0).expect("blank");
        let h = f - g;
        let came = seen[&k].1;
        for (di, d) in Dir::ALL.into_iter().enumerate() {
            if came != START && Dir::ALL[usize::from(came)] == d.opposite() {
                continue;
            }
            let Some(to) = d.step(blank, w) else { continue };
            let t = cells[to];
            let goal = usize::from(t) - 1;
            let (gr, gc) = (goal / w, goal % w);
            // The tile moves from `to` to `blank`.
            let before = (to / w).abs_diff(gr) + (to % w).abs_diff(gc);
            let after = (blank / w).abs_diff(gr) + (blank % w).abs_diff(gc);
            let nh = if after < before { h - 1 } else { h + 1 };
            let nk = k & !(0xF << (4 * to)) & !(0xF << (4 * blank)) | u64::from(t) << (4 * blank);
            let ng = g + 1;
            let better = match seen.get(&nk) {
                Some(&(old, _)) => ng < old,
                None => true,
            };
            if better {
                seen.insert(nk, (ng, di as u8));
                open.push(Reverse((ng + nh, u8::MAX - ng, nk)));
            }
        }
    }
    unreachable!("a solvable board reaches the goal")
}

fn path(seen: &KeyMap<(u8, u8)>, goal: u64, n: usize, w: usize) -> Vec<Dir> {
    let mut moves = Vec::new();
    let mut k = goal;
    loop {
        let (_, came) = seen[&k];
        if came == START {
            break;
        }
        let d = Dir::ALL[usize::from(came)];
        moves.push(d);
        // Undo: the blank goes back the opposite way.
        let cells = unkey(k, n);
        let blank = cells.iter().take(n).position(|&t| t == 0).expect("blank");
        let back = d.opposite().step(blank, w).expect("a legal undo");
        let t = cells[back];
        k = k & !(0xF << (4 * back)) & !(0xF << (4 * blank)) | u64::from(t) << (4 * blank);
    }
    moves.reverse();
    moves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::verify;
    use crate::testing::{bfs_distances, scramble};

    #[test]
    fn optimal_on_8_puzzle_boards() {
        let dist = bfs_distances(3);
        for (i, (board, &d)) in dist.iter().enumerate() {
            if i % 97 != 0 {
                continue;
            }
            let r = solve(board, u64::MAX);
            let moves = r.moves.expect("no limit");
            assert_eq!(moves.len(), usize::from(d), "{board:?}");
            verify(board, &moves).unwrap();
            assert!(manhattan(board) <= u32::from(d));
        }
    }

    #[test]
    fn limit_and_15_puzzle() {
        let goal = Board::goal(4);
        let r = solve(&goal, 0);
        assert_eq!(r.moves, Some(vec![]));
        let b = scramble(&goal, 20, 3);
        let r = solve(&b, 1_000_000);
        let m = r.moves.expect("an easy board");
        verify(&b, &m).unwrap();
        assert!(m.len() <= 20);
        let hard: Board = "15 14 1 6 / 9 11 4 12 / 0 10 7 3 / 13 8 5 2"
            .parse()
            .unwrap();
        let r = solve(&hard, 1000);
        assert!(r.moves.is_none());
        assert_eq!(r.expanded, 1000);
    }
}
