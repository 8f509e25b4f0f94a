//! The solve loop: place the tiles in six stages by turning loops of cells.
//!
//! A *loop* is a cycle of cells, each adjacent to the next. When the blank walks around a loop,
//! every tile on it moves one cell the other way each time the blank passes it, and the tiles'
//! cyclic order on the loop never changes. The stages, for the goal
//! `1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15 _`, each leaving the tiles already placed alone:
//!
//! 1. **tile 1**, 2. **tile 2**: put the blank on the cell just ahead of the tile on a loop through
//!    the tile and its goal cell (the shortest blank path that does not disturb the tile), then
//!    turn the loop, in the direction in which the tile is fewer cells from its goal, locked once
//!    chosen, until the tile is home. A tile `d` cells from its goal on a loop of `L` cells costs
//!    `1 + (d - 1)(L - 1)` turning moves; the loop (any cycle of the free cells, 213 on the whole
//!    board) is the one with the fewest moves in all.
//! 3. **tiles 3-4**, 4. **5-6**, 5. **7-8**: the two tiles and the blank are brought onto the 2x2
//!    loop made of the two goal cells and the two below them, in the right order (going round
//!    the loop from the first goal cell to the second, the second tile comes right after the
//!    first, the blank not counted), then that loop is turned, in the shorter direction, until
//!    both are home. Getting them into order is a shortest path in the small space of (cell of
//!    each tile, cell of the blank) within the free cells, from a table built once; of the
//!    ordered arrangements it picks the one with the fewest moves to reach plus turning moves.
//!    When the pair starts reversed, no turn of the 2x2 loop fixes the order: the path takes one
//!    tile off that loop through the loop below and brings it back behind the other (the swap).
//! 6. **tiles 9-15**: ordered around the 2x4 loop of the last two rows, clockwise 9, 10, 11, 12,
//!    15, 14, 13, then the loop is turned, in the shorter direction, to finish. Turning alone
//!    never changes the cyclic order, so ordering needs the smaller loops inside the two rows:
//!    the sub-procedure is the shortest sequence of moves inside the two rows to one of the 56
//!    ordered arrangements (8 blank cells times 7 rotations), chosen, as for the pairs, for the
//!    fewest moves to reach plus turning moves, from a table over the 20,160 reachable
//!    arrangements of the two rows.
//!
//! [`Plan::Shortest`] keeps the stages but does each by its shortest move sequence (the same
//! tables, with the stage's goal as the only finishing state): each stage as short as it can be
//! from where the previous one left off, for comparison. The two plans differ only in tiles 1
//! and 2: in the other stages the goal is itself an ordered arrangement that needs no turning,
//! so the cheapest ordering-plus-turning is never longer than the shortest sequence.

use std::sync::OnceLock;

use super::board::{Board, Dir};
use super::pdb::{self, rank};

/// The stages' names, as reported.
pub const STAGES: [&str; 6] = [
    "tile1",
    "tile2",
    "tiles3-4",
    "tiles5-6",
    "tiles7-8",
    "tiles9-15",
];

/// How each stage is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Plan {
    /// Each stage by turning loops (the solve loop proper).
    Loops,
    /// Each stage by its shortest move sequence (a per-stage lower bound, for comparison).
    Shortest,
}

/// A solution and the moves each stage used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopSolution {
    pub moves: Vec<Dir>,
    /// Moves per stage, in the order of [`STAGES`].
    pub stages: [u32; 6],
}

const W: usize = 4;
const RING_2X4: [u8; 8] = [8, 9, 10, 11, 15, 14, 13, 12];
const LAST_TILES: [u8; 7] = [9, 10, 11, 12, 13, 14, 15];

struct StageSpec {
    tiles: &'static [u8],
    goals: &'static [u8],
    /// Cells locked before the stage starts.
    locked: u16,
}

const SPECS: [StageSpec; 6] = [
    StageSpec {
        tiles: &[1],
        goals: &[0],
        locked: 0,
    },
    StageSpec {
        tiles: &[2],
        goals: &[1],
        locked: 0b1,
    },
    StageSpec {
        tiles: &[3, 4],
        goals: &[2, 3],
        locked: 0b11,
    },
    StageSpec {
        tiles: &[5, 6],
        goals: &[4, 5],
        locked: 0b1111,
    },
    StageSpec {
        tiles: &[7, 8],
        goals: &[6, 7],
        locked: 0b11_1111,
    },
    StageSpec {
        tiles: &LAST_TILES,
        goals: &[8, 9, 10, 11, 12, 13, 14],
        locked: 0xFF,
    },
];

/// A distance table over (cells of the stage's tiles, cell of the blank) within the stage's free
/// cells. Some states are *finishing* states, each with a cost: the moves that finish the stage
/// from there (turning a loop; 0 for the stage's goal). A state's value is the fewest moves to
/// some finishing state plus that state's cost, by a breadth-first search seeded with the costs.
struct StageTable {
    tiles: Vec<u8>,
    free: u16,
    /// Board cell to index among the free cells (255: not free).
    local: [u8; 16],
    m: usize,
    value: Vec<u8>,
    finish: Vec<u8>,
}

impl StageTable {
    fn new(spec: &StageSpec, finish_cost: impl Fn(&[u8], u8) -> Option<u8>) -> StageTable {
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
        let state = |idx: usize| -> Vec<u8> {
            pdb::unrank(idx, m, k + 1)
                .iter()
                .map(|&l| cells[usize::from(l)])
                .collect()
        };
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

    fn index(&self, board: &Board) -> usize {
        let mut loc = [0u8; 8];
        let k = self.tiles.len();
        for (l, &t) in loc.iter_mut().zip(&self.tiles) {
            *l = self.local[board.find(t)];
        }
        loc[k] = self.local[board.blank()];
        rank(&loc[..=k], self.m)
    }

    /// Follows the table from `board` to the best finishing state, appending the moves; returns
    /// that state's finishing cost.
    fn follow(&self, board: &mut Board, moves: &mut Vec<Dir>) -> u8 {
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

/// The moves that turning `ring` takes to bring the tiles at `cells` to `goals`, with the blank
/// at `blank`, in the shorter direction; None if turning never does (0 if they are home).
fn ring_turn_cost(ring: &[u8], cells: &[u8], blank: u8, goals: &[u8]) -> Option<u8> {
    if cells == goals {
        return Some(0);
    }
    let l = ring.len();
    let start = ring.iter().position(|&c| c == blank)?;
    let mut best: Option<u8> = None;
    for forward in [true, false] {
        let mut pos = cells.to_vec();
        let mut at = start;
        for moves in 1..=2 * l * l {
            let next = if forward {
                (at + 1) % l
            } else {
                (at + l - 1) % l
            };
            if let Some(t) = pos.iter().position(|&c| c == ring[next]) {
                pos[t] = ring[at];
            }
            at = next;
            if pos == goals {
                best = Some(best.map_or(moves as u8, |b| b.min(moves as u8)));
                break;
            }
        }
    }
    best
}

/// Every simple cycle of the 4x4 grid's cells (213 of them), each as its cells in order.
fn cycles() -> &'static [Vec<u8>] {
    static CYCLES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CYCLES.get_or_init(|| {
        fn extend(start: usize, path: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
            let last = usize::from(*path.last().unwrap());
            for d in Dir::ALL {
                let Some(next) = d.step(last, W) else {
                    continue;
                };
                if next == start && path.len() >= 4 && path[1] < path[path.len() - 1] {
                    out.push(path.clone());
                } else if next > start && !path.contains(&(next as u8)) {
                    path.push(next as u8);
                    extend(start, path, out);
                    path.pop();
                }
            }
        }
        let mut out = Vec::new();
        for start in 0..16 {
            extend(start, &mut vec![start as u8], &mut out);
        }
        out
    })
}

/// Walks the blank (which must be on `ring`) around it, `forward` along the ring's order or
/// backward, until `done`; the moves, or None if that never happens within two full turns of
/// every tile.
fn turn(
    board: &Board,
    ring: &[u8],
    forward: bool,
    done: impl Fn(&Board) -> bool,
) -> Option<(Board, Vec<Dir>)> {
    let l = ring.len();
    let mut b = *board;
    let mut moves = Vec::new();
    let mut at = ring.iter().position(|&c| usize::from(c) == b.blank())?;
    for _ in 0..2 * l * l {
        if done(&b) {
            return Some((b, moves));
        }
        let next = if forward {
            (at + 1) % l
        } else {
            (at + l - 1) % l
        };
        let dir = Dir::between(b.blank(), usize::from(ring[next]), W).expect("ring cells adjacent");
        b = b.moved(dir).expect("on the board");
        moves.push(dir);
        at = next;
    }
    done(&b).then_some((b, moves))
}

/// Turns `ring` in whichever direction finishes sooner.
fn turn_shorter(
    board: &mut Board,
    ring: &[u8],
    done: impl Fn(&Board) -> bool,
    moves: &mut Vec<Dir>,
) {
    let a = turn(board, ring, true, &done);
    let b = turn(board, ring, false, &done);
    let (nb, m) = match (a, b) {
        (Some(a), Some(b)) => {
            if b.1.len() < a.1.len() {
                b
            } else {
                a
            }
        }
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => panic!("turning {ring:?} never finishes from {board:?}"),
    };
    *board = nb;
    moves.extend(m);
}

/// The loop a stage from 3 on turns: for the pairs, the 2x2 loop of the two goal cells and the
/// two below them; for the last stage the 2x4 loop of the last two rows.
fn stage_ring(stage: usize) -> Vec<u8> {
    if stage == 5 {
        return RING_2X4.to_vec();
    }
    let (ga, gb) = (SPECS[stage].goals[0], SPECS[stage].goals[1]);
    vec![ga, gb, gb + W as u8, ga + W as u8]
}

/// The solve loop's tables, built once (a few milliseconds).
pub struct LoopSolver {
    plan: Plan,
    /// Per stage: its table (None for single tiles under [`Plan::Loops`]).
    tables: Vec<Option<StageTable>>,
}

impl LoopSolver {
    /// The solver for `plan`, shared.
    pub fn get(plan: Plan) -> &'static LoopSolver {
        static LOOPS: OnceLock<LoopSolver> = OnceLock::new();
        static SHORTEST: OnceLock<LoopSolver> = OnceLock::new();
        match plan {
            Plan::Loops => LOOPS.get_or_init(|| LoopSolver::new(Plan::Loops)),
            Plan::Shortest => SHORTEST.get_or_init(|| LoopSolver::new(Plan::Shortest)),
        }
    }

    fn new(plan: Plan) -> LoopSolver {
        let tables = SPECS
            .iter()
            .enumerate()
            .map(|(s, spec)| match (plan, s) {
                (Plan::Shortest, _) => Some(StageTable::new(spec, |cells, _| {
                    (cells == spec.goals).then_some(0)
                })),
                (Plan::Loops, 0 | 1) => None,
                (Plan::Loops, _) => {
                    let ring = stage_ring(s);
                    Some(StageTable::new(spec, |cells, blank| {
                        ring_turn_cost(&ring, cells, blank, spec.goals)
                    }))
                }
            })
            .collect();
        LoopSolver { plan, tables }
    }

    /// The plan.
    pub fn plan(&self) -> Plan {
        self.plan
    }

    /// Solves a solvable 4x4 board.
    pub fn solve(&self, board: &Board) -> LoopSolution {
        assert_eq!(board.width(), W, "the solve loop is for 4x4 boards");
        assert!(board.is_solvable(), "the solve loop needs a solvable board");
        let mut b = *board;
        let mut moves = Vec::with_capacity(128);
        let mut stages = [0u32; 6];
        for (s, spec) in SPECS.iter().enumerate() {
            let before = moves.len();
            let home = |b: &Board| {
                spec.tiles
                    .iter()
                    .zip(spec.goals)
                    .all(|(&t, &g)| b.tile(usize::from(g)) == t)
            };
            match (&self.tables[s], s) {
                (None, _) => place_single(&mut b, spec, &mut moves),
                (Some(table), _) => {
                    let cost = table.follow(&mut b, &mut moves);
                    if cost > 0 {
                        let before_turn = moves.len();
                        turn_shorter(&mut b, &stage_ring(s), home, &mut moves);
                        debug_assert_eq!(moves.len() - before_turn, usize::from(cost));
                    }
                }
            }
            debug_assert!(home(&b), "stage {} left {b:?}", STAGES[s]);
            debug_assert!(
                (0..16)
                    .filter(|&c| spec.locked & (1 << c) != 0)
                    .all(|c| b.tile(c) == c as u8 + 1),
                "stage {} disturbed a placed tile",
                STAGES[s]
            );
            stages[s] = (moves.len() - before) as u32;
        }
        debug_assert!(b.is_goal());
        LoopSolution { moves, stages }
    }
}

/// Stage 1 or 2 under [`Plan::Loops`]: one loop through the tile and its goal cell.
fn place_single(board: &mut Board, spec: &StageSpec, moves: &mut Vec<Dir>) {
    let tile = spec.tiles[0];
    let goal = spec.goals[0];
    let p = board.find(tile) as u8;
    if p == goal {
        return;
    }
    let free = !spec.locked;
    // Blank distances and parents, avoiding the tile and the locked cells.
    let mut dist = [u8::MAX; 16];
    let mut parent = [u8::MAX; 16];
    let mut queue = vec![board.blank() as u8];
    dist[board.blank()] = 0;
    let mut head = 0;
    while head < queue.len() {
        let c = usize::from(queue[head]);
        head += 1;
        for d in Dir::ALL {
            let Some(n) = d.step(c, W) else { continue };
            if free & (1 << n) == 0 || n == usize::from(p) || dist[n] != u8::MAX {
                continue;
            }
            dist[n] = dist[c] + 1;
            parent[n] = c as u8;
            queue.push(n as u8);
        }
    }
    // (cost, cycle, direction of the tile's travel along the cycle: +1 or -1)
    let mut best: Option<(u32, &[u8], bool)> = None;
    for cyc in cycles() {
        if cyc.iter().any(|&c| free & (1 << c) == 0) {
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
            let cost = u32::from(approach) + 1 + (d as u32 - 1) * (l as u32 - 1);
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, cyc.as_slice(), forward));
            }
        }
    }
    let (_, cyc, forward) = best.expect("a loop through the tile and its goal");
    let l = cyc.len();
    let i = cyc.iter().position(|&c| c == p).unwrap();
    let front = if forward {
        cyc[(i + 1) % l]
    } else {
        cyc[(i + l - 1) % l]
    };
    // The blank's path to the front cell.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::check::verify;
    use crate::puzzle::generate::random_board;

    #[test]
    fn there_are_213_cycles() {
        let c = cycles();
        assert_eq!(c.len(), 213);
        for cyc in c {
            for i in 0..cyc.len() {
                let (a, b) = (cyc[i], cyc[(i + 1) % cyc.len()]);
                assert!(Dir::between(usize::from(a), usize::from(b), W).is_some());
            }
        }
    }

    /// The finishing states: the last stage's are the 56 arrangements in the goal's cyclic
    /// order (8 blank cells, 7 rotations), and turning from them costs at most half a turn of
    /// every tile plus the blank's way round.
    #[test]
    fn finishing_states() {
        let t = LoopSolver::get(Plan::Loops).tables[5].as_ref().unwrap();
        let finishing: Vec<u8> = t.finish.iter().copied().filter(|&c| c != u8::MAX).collect();
        assert_eq!(finishing.len(), 56);
        assert_eq!(finishing.iter().filter(|&&c| c == 0).count(), 1);
        assert!(finishing.iter().all(|&c| c <= 4 * 8), "{finishing:?}");
        // Turning the 2x4 loop forward from the goal and back.
        let ring = stage_ring(5);
        let goals = SPECS[5].goals;
        let mut cells = goals.to_vec();
        // One step forward: the blank (cell 15) takes tile 15's cell 14, tile 15 moves to 15.
        cells[6] = 15;
        assert_eq!(ring_turn_cost(&ring, &cells, 14, goals), Some(1));
        // 3 and 4 reversed on the 2x2 loop: no turning finishes.
        let ring = stage_ring(2);
        assert_eq!(ring_turn_cost(&ring, &[3, 2], 6, &[2, 3]), None);
        assert_eq!(ring_turn_cost(&ring, &[3, 7], 2, &[2, 3]), Some(2));
        assert_eq!(ring_turn_cost(&ring, &[2, 3], 9, &[2, 3]), Some(0));
        assert_eq!(ring_turn_cost(&ring, &[3, 7], 9, &[2, 3]), None);
    }

    /// Every placement of the stage's tiles and the blank, for the five first stages, with both
    /// plans: the stage finishes, leaves the placed tiles alone, and the moves replay.
    #[test]
    fn every_stage_finishes_from_every_placement() {
        for plan in [Plan::Loops, Plan::Shortest] {
            let solver = LoopSolver::get(plan);
            for (s, spec) in SPECS.iter().enumerate().take(5) {
                let free: Vec<u8> = (0..16u8).filter(|&c| spec.locked & (1 << c) == 0).collect();
                let k = spec.tiles.len();
                let mut count = 0;
                for idx in 0..pdb::placements(free.len(), k + 1) as usize {
                    let st = pdb::unrank(idx, free.len(), k + 1);
                    // The tiles and blank where the state says; the other tiles in order.
                    let mut cells = [u8::MAX; 16];
                    for c in 0..16u8 {
                        if spec.locked & (1 << c) != 0 {
                            cells[usize::from(c)] = c + 1;
                        }
                    }
                    for (i, &l) in st.iter().enumerate() {
                        cells[usize::from(free[usize::from(l)])] =
                            if i < k { spec.tiles[i] } else { 0 };
                    }
                    let missing: Vec<u8> = (1..16u8).filter(|t| !cells.contains(t)).collect();
                    let mut rest = missing.into_iter();
                    for c in cells.iter_mut() {
                        if *c == u8::MAX {
                            *c = rest.next().unwrap();
                        }
                    }
                    let mut board = Board::from_cells(&cells).unwrap();
                    if !board.is_solvable() {
                        // Swap two tiles no stage so far cares about.
                        let others: Vec<usize> = (0..16)
                            .filter(|&c| {
                                let t = board.tile(c);
                                t != 0 && spec.locked & (1 << c) == 0 && !spec.tiles.contains(&t)
                            })
                            .collect();
                        let mut v = board.cells().to_vec();
                        v.swap(others[0], others[1]);
                        board = Board::from_cells(&v).unwrap();
                    }
                    let start = board;
                    let mut moves = Vec::new();
                    match &solver.tables[s] {
                        None => place_single(&mut board, spec, &mut moves),
                        Some(t) => {
                            if t.follow(&mut board, &mut moves) > 0 {
                                let home = |b: &Board| {
                                    spec.tiles
                                        .iter()
                                        .zip(spec.goals)
                                        .all(|(&t, &g)| b.tile(usize::from(g)) == t)
                                };
                                turn_shorter(&mut board, &stage_ring(s), home, &mut moves);
                            }
                        }
                    }
                    for (&t, &g) in spec.tiles.iter().zip(spec.goals) {
                        assert_eq!(board.tile(usize::from(g)), t, "stage {s} from {start:?}");
                    }
                    for c in 0..16 {
                        if spec.locked & (1 << c) != 0 {
                            assert_eq!(board.tile(c), c as u8 + 1);
                        }
                    }
                    let replayed = crate::puzzle::check::replay(&start, &moves).unwrap();
                    assert_eq!(replayed, board.cells());
                    count += 1;
                }
                assert!(count > 0);
            }
        }
    }

    /// From 3-4 on, ordering then turning costs exactly the stage's shortest sequence, state by
    /// state: the plans differ in tiles 1 and 2 only.
    #[test]
    fn ordering_and_turning_is_as_short_as_the_shortest_sequence() {
        let (l, s) = (
            LoopSolver::get(Plan::Loops),
            LoopSolver::get(Plan::Shortest),
        );
        for (stage, name) in STAGES.iter().enumerate().skip(2) {
            let (a, b) = (
                l.tables[stage].as_ref().unwrap(),
                s.tables[stage].as_ref().unwrap(),
            );
            assert_eq!(a.value, b.value, "stage {name}");
            // The two rows' arrangements of the wrong parity cannot be reached.
            let reachable = a.value.iter().filter(|&&v| v != u8::MAX).count();
            let expected = if stage == 5 { 20_160 } else { a.value.len() };
            assert_eq!(reachable, expected, "stage {name}");
        }
    }

    #[test]
    fn solves_every_board_and_the_plans_compare() {
        let loops = LoopSolver::get(Plan::Loops);
        let shortest = LoopSolver::get(Plan::Shortest);
        let n = 3000;
        let (mut total_l, mut total_s) = (0usize, 0usize);
        for i in 0..n {
            let b = random_board(11, i, 4);
            let l = loops.solve(&b);
            verify(&b, &l.moves).unwrap();
            assert_eq!(l.stages.iter().sum::<u32>() as usize, l.moves.len());
            let s = shortest.solve(&b);
            verify(&b, &s.moves).unwrap();
            // Stage 1 starts from the same board: the shortest plan cannot lose it.
            assert!(s.stages[0] <= l.stages[0]);
            total_l += l.moves.len();
            total_s += s.moves.len();
        }
        assert!(total_s < total_l);
        let g = Board::goal(4);
        assert_eq!(loops.solve(&g).moves, vec![]);
        // Every stage on the goal is empty.
        assert_eq!(loops.solve(&g).stages, [0; 6]);
        // The three states one move from the goal.
        for d in [Dir::Up, Dir::Left] {
            let b = g.moved(d).unwrap();
            let sol = loops.solve(&b);
            verify(&b, &sol.moves).unwrap();
            assert_eq!(sol.moves, vec![d.opposite()]);
        }
    }
}
