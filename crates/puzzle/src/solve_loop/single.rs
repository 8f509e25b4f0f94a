//! Stages 1 and 2, one tile each: every loop that brings the tile home, by the tile's and the
//! blank's cells, and the cheapest to turn from a board.

use super::*;

/// A way to carry out stage 1 or 2: a loop, and what turning it does.
#[derive(Clone, Copy, Debug)]
pub(super) struct SingleOption {
    pub(super) turn: SingleLoop,
    pub(super) effect: Effect,
}

/// Stage 1 or 2: by (tile's cell, blank's cell), every loop the stage may turn, fewest moves
/// first (a tile already home has one option: no moves).
pub(super) struct SingleTable {
    pub(super) options: Vec<Vec<SingleOption>>,
}

impl SingleTable {
    pub(super) fn new(spec: &StageSpec) -> SingleTable {
        let free: Vec<u8> = (0..16u8).filter(|&c| spec.locked & (1 << c) == 0).collect();
        let mut options = vec![Vec::new(); 256];
        let mut loops = Vec::new();
        for &p in &free {
            for &b in free.iter().filter(|&&b| b != p) {
                let board = stage_board(spec, &[p], b);
                single_loops(&board, spec, &mut loops);
                // A stable sort: among loops of equal cost the first cycle comes first (the
                // greedy plan's choice).
                loops.sort_by_key(|l| l.cost);
                let list: &mut Vec<SingleOption> =
                    &mut options[usize::from(p) * 16 + usize::from(b)];
                if p == spec.goals[0] {
                    list.push(SingleOption {
                        turn: SingleLoop::HOME,
                        effect: Effect::between(&board, &board, 0),
                    });
                }
                for turn in &loops {
                    let (mut after, mut moves) = (board, Vec::new());
                    turn_single(&mut after, spec, turn, &mut moves);
                    debug_assert_eq!(moves.len(), turn.cost as usize);
                    list.push(SingleOption {
                        turn: *turn,
                        effect: Effect::between(&board, &after, moves.len()),
                    });
                }
            }
        }
        SingleTable { options }
    }

    pub(super) fn at(&self, tile: u8, blank: u8) -> &[SingleOption] {
        &self.options[usize::from(tile) * 16 + usize::from(blank)]
    }
}

/// One way to carry out stage 1 or 2 by turning a loop: a loop through the tile and its goal
/// cell, and the direction the tile travels along it.
#[derive(Clone, Copy, Debug)]
pub(super) struct SingleLoop {
    /// The stage's moves: the blank's way to the front of the tile, then the turning.
    pub(super) cost: u32,
    pub(super) cycle: &'static [u8],
    pub(super) forward: bool,
}

impl SingleLoop {
    /// The tile is home already: no loop, no moves.
    const HOME: SingleLoop = SingleLoop {
        cost: 0,
        cycle: &[],
        forward: true,
    };
}

/// Every loop stage 1 or 2 may turn from `board`, each in the tile's shorter direction, with
/// its moves (none if the tile is home).
pub(super) fn single_loops(board: &Board, spec: &StageSpec, out: &mut Vec<SingleLoop>) {
    out.clear();
    let (tile, goal) = (spec.tiles[0], spec.goals[0]);
    let p = board.find(tile) as u8;
    if p == goal {
        return;
    }
    let dist = blank_paths(board, !spec.locked, p).0;
    for cyc in cycles() {
        if cyc.iter().any(|&c| spec.locked & (1 << c) != 0) {
            continue;
        }
        let (Some(i), Some(j)) = (
            cyc.iter().position(|&c| c == p),
            cyc.iter().position(|&c| c == goal),
        ) else {
            continue;
        };
        let l = cyc.len();
        let ahead = (j + l - i) % l; // cells from the tile to its goal going forward
        let behind = l - ahead;
        for forward in [true, false] {
            let d = if forward { ahead } else { behind };
            if d > ahead.min(behind) {
                continue; // the shorter direction only
            }
            let front = if forward {
                cyc[(i + 1) % l]
            } else {
                cyc[(i + l - 1) % l]
            };
            let approach = dist[usize::from(front)];
            if approach == u8::MAX {
                continue;
            }
            out.push(SingleLoop {
                cost: u32::from(approach) + 1 + (d as u32 - 1) * (l as u32 - 1),
                cycle: cyc,
                forward,
            });
        }
    }
}

/// The blank's distances and breadth-first parents to every free cell, avoiding `tile_cell`.
pub(super) fn blank_paths(board: &Board, free: u16, tile_cell: u8) -> ([u8; 16], [u8; 16]) {
    let mut dist = [u8::MAX; 16];
    let mut parent = [u8::MAX; 16];
    let mut queue = [0u8; 16];
    let (mut head, mut tail) = (0, 1);
    queue[0] = board.blank() as u8;
    dist[board.blank()] = 0;
    while head < tail {
        let c = usize::from(queue[head]);
        head += 1;
        for d in Dir::ALL {
            let Some(n) = d.step(c, W) else { continue };
            if free & (1 << n) == 0 || n == usize::from(tile_cell) || dist[n] != u8::MAX {
                continue;
            }
            dist[n] = dist[c] + 1;
            parent[n] = c as u8;
            queue[tail] = n as u8;
            tail += 1;
        }
    }
    (dist, parent)
}

/// Carries out stage 1 or 2 by turning `choice`: the blank by its shortest way to the cell just
/// ahead of the tile, then round the loop until the tile is home.
pub(super) fn turn_single(
    board: &mut Board,
    spec: &StageSpec,
    choice: &SingleLoop,
    moves: &mut Vec<Dir>,
) {
    if choice.cycle.is_empty() {
        return;
    }
    let (tile, goal) = (spec.tiles[0], spec.goals[0]);
    let p = board.find(tile) as u8;
    let parent = blank_paths(board, !spec.locked, p).1;
    let (cyc, forward) = (choice.cycle, choice.forward);
    let l = cyc.len();
    let i = cyc
        .iter()
        .position(|&c| c == p)
        .expect("the tile on its loop");
    let front = if forward {
        cyc[(i + 1) % l]
    } else {
        cyc[(i + l - 1) % l]
    };
    let mut path = Vec::new();
    let mut c = front;
    while usize::from(c) != board.blank() {
        path.push(c);
        c = parent[usize::from(c)];
    }
    for &c in path.iter().rev() {
        let d = Dir::between(board.blank(), usize::from(c), W).expect("adjacent");
        *board = board.moved(d).expect("on the board");
        moves.push(d);
    }
    // The tile travels `forward`, so the blank walks the other way.
    let (nb, m) = turn(board, cyc, !forward, |b| b.tile(usize::from(goal)) == tile)
        .expect("turning brings the tile home");
    *board = nb;
    moves.extend(m);
}
