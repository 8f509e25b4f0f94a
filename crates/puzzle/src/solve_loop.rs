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
//!    `1 + (d - 1)(L - 1)` turning moves. Which loop (any cycle of the free cells, 213 on the
//!    whole board) is the plan's choice, below.
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
//! Every stage's moves depend only on the cells of its tiles and of the blank, so each stage
//! from each of its states has a fixed *effect*: its moves and the permutation of the cells they
//! make. The tables hold the effects, and the rest of a solution can be costed from them,
//! without moving a tile, in about 70 ns.
//!
//! The plans, all with the stages above:
//! - [`Plan::Lookahead`] (the default) chooses the loops for tiles 1 and 2 together: of all the
//!   pairs of loops (about 72 for tile 1 times 43 for tile 2 on a random board), the one whose
//!   whole solution is shortest, each pair costed through to the end by the effects. Both tiles
//!   still turn one loop each, in the shorter direction, locked.
//! - [`Plan::Greedy`] takes for each of tiles 1 and 2 the loop with the fewest moves for that
//!   tile alone. Tile 1 is then at its cheapest, but the loops it takes leave the other tiles
//!   badly placed: 103.6 moves a board against looking ahead's 84.8 (100,000 boards, seed 1).
//! - [`Plan::Shortest`] does each stage by its shortest move sequence (the same tables, with the
//!   stage's goal as the only finishing state): each stage as short as it can be from where the
//!   previous one left off, for comparison. It differs from the loop plans only in tiles 1 and
//!   2: in the other stages the goal is itself an ordered arrangement that needs no turning, so
//!   the cheapest ordering-plus-turning is never longer than the shortest sequence.

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
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Plan {
    /// Each stage by turning loops; the loops for tiles 1 and 2 chosen together, for the
    /// shortest whole solution (the solve loop, planned ahead)
    Lookahead,
    /// Each stage by turning loops; each loop the cheapest for its own stage alone
    Greedy,
    /// Each stage by its shortest move sequence (a per-stage lower bound, for comparison)
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

impl StageSpec {
    /// Whether the stage's tiles are home on `board`.
    fn done(&self, board: &Board) -> bool {
        self.tiles
            .iter()
            .zip(self.goals)
            .all(|(&t, &g)| board.tile(usize::from(g)) == t)
    }
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

/// The cells of state `idx` of a stage table over the free cells `cells`: the stage's `k` tiles'
/// cells, then the blank's.
fn state_cells(idx: usize, cells: &[u8], k: usize) -> Vec<u8> {
    pdb::unrank(idx, cells.len(), k + 1)
        .iter()
        .map(|&l| cells[usize::from(l)])
        .collect()
}

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

    fn index(&self, board: &Board) -> usize {
        self.index_by(|t| board.find(t))
    }

    /// The index of the state in which tile `t` (0: the blank) is in cell `cell_of(t)`.
    #[inline]
    fn index_by<C: Into<usize>>(&self, cell_of: impl Fn(u8) -> C) -> usize {
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

/// Tile `t`'s cell for every `t` (index 0: the blank's cell): a board seen from the tiles.
type Places = [u8; 16];

fn places(board: &Board) -> Places {
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
fn stage_board(spec: &StageSpec, cells: &[u8], blank: u8) -> Board {
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
struct Effect {
    moves: u8,
    to: [u8; 16],
}

impl Effect {
    fn between(before: &Board, after: &Board, moves: usize) -> Effect {
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
    fn apply(&self, places: &Places) -> Places {
        // Cells are below 16: the mask lets the compiler drop the bounds checks.
        places.map(|c| self.to[usize::from(c & 15)])
    }
}

/// A way to carry out stage 1 or 2: a loop, and what turning it does.
#[derive(Clone, Copy, Debug)]
struct SingleOption {
    turn: SingleLoop,
    effect: Effect,
}

/// Stage 1 or 2: by (tile's cell, blank's cell), every loop the stage may turn, fewest moves
/// first (a tile already home has one option: no moves).
struct SingleTable {
    options: Vec<Vec<SingleOption>>,
}

impl SingleTable {
    fn new(spec: &StageSpec) -> SingleTable {
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

    fn at(&self, tile: u8, blank: u8) -> &[SingleOption] {
        &self.options[usize::from(tile) * 16 + usize::from(blank)]
    }
}

/// The solve loop's tables, built once (about 30 milliseconds).
pub struct LoopSolver {
    plan: Plan,
    /// Per stage: its table (None for single tiles when they turn loops).
    tables: Vec<Option<StageTable>>,
    /// Stages 1 and 2 when they turn loops: their options.
    singles: Vec<SingleTable>,
    /// Stages 3 to 5 when they turn loops: the effect of each state, by table index.
    effects: Vec<Vec<Effect>>,
}

impl LoopSolver {
    /// The solver for `plan`, shared.
    pub fn get(plan: Plan) -> &'static LoopSolver {
        static LOOKAHEAD: OnceLock<LoopSolver> = OnceLock::new();
        static GREEDY: OnceLock<LoopSolver> = OnceLock::new();
        static SHORTEST: OnceLock<LoopSolver> = OnceLock::new();
        let cell = match plan {
            Plan::Lookahead => &LOOKAHEAD,
            Plan::Greedy => &GREEDY,
            Plan::Shortest => &SHORTEST,
        };
        cell.get_or_init(|| LoopSolver::new(plan))
    }

    fn new(plan: Plan) -> LoopSolver {
        let loops = plan != Plan::Shortest;
        let tables: Vec<Option<StageTable>> = SPECS
            .iter()
            .enumerate()
            .map(|(s, spec)| match (loops, s) {
                (false, _) => Some(StageTable::new(spec, |cells, _| {
                    (cells == spec.goals).then_some(0)
                })),
                (true, 0 | 1) => None,
                (true, _) => {
                    let ring = stage_ring(s);
                    Some(StageTable::new(spec, |cells, blank| {
                        ring_turn_cost(&ring, cells, blank, spec.goals)
                    }))
                }
            })
            .collect();
        let mut solver = LoopSolver {
            plan,
            tables,
            singles: Vec::new(),
            effects: Vec::new(),
        };
        if loops {
            solver.singles = SPECS[..2].iter().map(SingleTable::new).collect();
        }
        if plan == Plan::Lookahead {
            solver.effects = (2..5).map(|s| solver.stage_effects(s)).collect();
        }
        solver
    }

    /// The effect of stage `s` (a table stage) from each of its states.
    fn stage_effects(&self, s: usize) -> Vec<Effect> {
        let table = self.tables[s].as_ref().expect("a table stage");
        let k = table.tiles.len();
        let cells: Vec<u8> = (0..16u8).filter(|&c| table.free & (1 << c) != 0).collect();
        (0..table.value.len())
            .map(|idx| {
                let st = state_cells(idx, &cells, k);
                let before = stage_board(&SPECS[s], &st[..k], st[k]);
                let (mut after, mut moves) = (before, Vec::new());
                self.finish_stage(s, &mut after, &mut moves);
                Effect::between(&before, &after, moves.len())
            })
            .collect()
    }

    /// Carries out table stage `s` from `board`: along the table, then turning the stage's loop
    /// (under [`Plan::Shortest`] the table alone reaches the goal).
    fn finish_stage(&self, s: usize, board: &mut Board, moves: &mut Vec<Dir>) {
        let table = self.tables[s].as_ref().expect("a table stage");
        let cost = table.follow(board, moves);
        if cost > 0 {
            let before_turn = moves.len();
            turn_shorter(board, &stage_ring(s), |b| SPECS[s].done(b), moves);
            debug_assert_eq!(moves.len() - before_turn, usize::from(cost));
        }
    }

    /// The moves stages 3 to 6 take from `places`, or some number at least `bound` if that many
    /// or more.
    fn rest_moves(&self, mut places: Places, bound: u32) -> u32 {
        let mut total = 0;
        for (s, effects) in (2..5).zip(&self.effects) {
            let table = self.tables[s].as_ref().expect("a table stage");
            let e = &effects[table.index_by(|t| places[usize::from(t)])];
            total += u32::from(e.moves);
            if total >= bound {
                return total;
            }
            places = e.apply(&places);
        }
        let last = self.tables[5].as_ref().expect("a table stage");
        total + u32::from(last.value[last.index_by(|t| places[usize::from(t)])])
    }

    /// Which loops stages 1 and 2 turn: indices into their option lists. Greedily, each stage's
    /// cheapest; looking ahead, the pair whose whole solution is shortest (the first such in
    /// the option lists' order). Every pair of loops is tried, cheapest first, and a pair is
    /// dropped as soon as its moves reach the best whole solution found: of the 3,070 pairs a
    /// random board has on average, 2,440 are costed (115 us a board, measured on 5,000).
    fn choose_loops(&self, board: &Board) -> (usize, usize) {
        if self.plan == Plan::Greedy {
            return (0, 0);
        }
        let p0 = places(board);
        let mut best = (u32::MAX, 0, 0);
        for (i, a) in self.singles[0].at(p0[1], p0[0]).iter().enumerate() {
            let head = u32::from(a.effect.moves);
            if head >= best.0 {
                break; // the options come cheapest first
            }
            let p1 = a.effect.apply(&p0);
            for (j, b) in self.singles[1].at(p1[2], p1[0]).iter().enumerate() {
                let head = head + u32::from(b.effect.moves);
                if head >= best.0 {
                    break;
                }
                let total = head + self.rest_moves(b.effect.apply(&p1), best.0 - head);
                if total < best.0 {
                    best = (total, i, j);
                }
            }
        }
        (best.1, best.2)
    }

    /// Solves a solvable 4x4 board.
    pub fn solve(&self, board: &Board) -> LoopSolution {
        assert_eq!(board.width(), W, "the solve loop is for 4x4 boards");
        assert!(board.is_solvable(), "the solve loop needs a solvable board");
        let mut b = *board;
        let mut moves = Vec::with_capacity(128);
        let mut stages = [0u32; 6];
        let chosen = (!self.singles.is_empty()).then(|| self.choose_loops(board));
        for (s, spec) in SPECS.iter().enumerate() {
            let before = moves.len();
            match (chosen, s) {
                (Some((i, j)), 0 | 1) => {
                    let p = places(&b);
                    let tile = usize::from(spec.tiles[0]);
                    let option = &self.singles[s].at(p[tile], p[0])[if s == 0 { i } else { j }];
                    let start = b;
                    turn_single(&mut b, spec, &option.turn, &mut moves);
                    debug_assert_eq!(option.effect.apply(&places(&start)), places(&b));
                }
                _ => self.finish_stage(s, &mut b, &mut moves),
            }
            debug_assert!(spec.done(&b), "stage {} left {b:?}", STAGES[s]);
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

/// One way to carry out stage 1 or 2 by turning a loop: a loop through the tile and its goal
/// cell, and the direction the tile travels along it.
#[derive(Clone, Copy, Debug)]
struct SingleLoop {
    /// The stage's moves: the blank's way to the front of the tile, then the turning.
    cost: u32,
    cycle: &'static [u8],
    forward: bool,
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
fn single_loops(board: &Board, spec: &StageSpec, out: &mut Vec<SingleLoop>) {
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
fn blank_paths(board: &Board, free: u16, tile_cell: u8) -> ([u8; 16], [u8; 16]) {
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
fn turn_single(board: &mut Board, spec: &StageSpec, choice: &SingleLoop, moves: &mut Vec<Dir>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::verify;
    use crate::generate::random_board;

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
        let t = LoopSolver::get(Plan::Greedy).tables[5].as_ref().unwrap();
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

    /// Every placement of the stage's tiles and the blank, for the five first stages, with every
    /// plan and every loop stages 1 and 2 may turn: the stage finishes, leaves the placed tiles
    /// alone, the moves replay, and the effect the tables record is what the moves do.
    #[test]
    fn every_stage_finishes_from_every_placement() {
        for plan in [Plan::Lookahead, Plan::Greedy, Plan::Shortest] {
            let solver = LoopSolver::get(plan);
            for (s, spec) in SPECS.iter().enumerate().take(5) {
                let free: Vec<u8> = (0..16u8).filter(|&c| spec.locked & (1 << c) == 0).collect();
                let k = spec.tiles.len();
                let mut count = 0;
                for idx in 0..pdb::placements(free.len(), k + 1) as usize {
                    let st = state_cells(idx, &free, k);
                    let start = stage_board(spec, &st[..k], st[k]);
                    let mut ways: Vec<(Board, Vec<Dir>, Option<Effect>)> = Vec::new();
                    if solver.tables[s].is_none() {
                        let options = solver.singles[s].at(st[0], st[k]);
                        assert!(!options.is_empty());
                        assert!(options.windows(2).all(|w| w[0].turn.cost <= w[1].turn.cost));
                        for o in options {
                            let (mut b, mut moves) = (start, Vec::new());
                            turn_single(&mut b, spec, &o.turn, &mut moves);
                            assert_eq!(moves.len(), o.turn.cost as usize);
                            ways.push((b, moves, Some(o.effect)));
                        }
                    } else {
                        let (mut b, mut moves) = (start, Vec::new());
                        solver.finish_stage(s, &mut b, &mut moves);
                        let effect = (plan == Plan::Lookahead && s >= 2).then(|| {
                            let t = solver.tables[s].as_ref().unwrap();
                            solver.effects[s - 2][t.index(&start)]
                        });
                        ways.push((b, moves, effect));
                    }
                    for (board, moves, effect) in ways {
                        for (&t, &g) in spec.tiles.iter().zip(spec.goals) {
                            assert_eq!(board.tile(usize::from(g)), t, "stage {s} from {start:?}");
                        }
                        for c in 0..16 {
                            if spec.locked & (1 << c) != 0 {
                                assert_eq!(board.tile(c), c as u8 + 1);
                            }
                        }
                        let replayed = crate::check::replay(&start, &moves).unwrap();
                        assert_eq!(replayed, board.cells());
                        if let Some(e) = effect {
                            assert_eq!(usize::from(e.moves), moves.len());
                            assert_eq!(e.apply(&places(&start)), places(&board));
                        }
                        count += 1;
                    }
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
            LoopSolver::get(Plan::Greedy),
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

    /// Every plan solves every board, the checker agrees, and the plans compare as they must:
    /// looking ahead never loses to the greedy choice of loops (its pair is one of those tried,
    /// and the later stages are the same), and both turn one loop for each of tiles 1 and 2.
    #[test]
    fn solves_every_board_and_the_plans_compare() {
        let [lookahead, greedy, shortest] =
            [Plan::Lookahead, Plan::Greedy, Plan::Shortest].map(LoopSolver::get);
        let n = 2000;
        let mut totals = [0usize; 3];
        for i in 0..n {
            let b = random_board(11, i, 4);
            let sols = [lookahead, greedy, shortest].map(|solver| solver.solve(&b));
            for (total, sol) in totals.iter_mut().zip(&sols) {
                verify(&b, &sol.moves).unwrap();
                assert_eq!(sol.stages.iter().sum::<u32>() as usize, sol.moves.len());
                *total += sol.moves.len();
            }
            let [l, g, s] = &sols;
            assert!(l.moves.len() <= g.moves.len(), "{b:?}");
            // Stage 1 starts from the same board: no loop beats its shortest sequence.
            assert!(s.stages[0] <= l.stages[0] && s.stages[0] <= g.stages[0]);
            // Greedy tile 1 is the cheapest loop, so never more than looking ahead's.
            assert!(g.stages[0] <= l.stages[0]);
        }
        // Looking ahead gains on average (by about 19 moves a board, measured).
        assert!(totals[0] + 10 * n as usize <= totals[1], "{totals:?}");
        assert!(totals[2] < totals[1]);
        let g = Board::goal(4);
        for solver in [lookahead, greedy, shortest] {
            assert_eq!(solver.solve(&g).moves, vec![]);
            assert_eq!(solver.solve(&g).stages, [0; 6]);
            // The states one move from the goal.
            for d in [Dir::Up, Dir::Left] {
                let b = g.moved(d).unwrap();
                let sol = solver.solve(&b);
                verify(&b, &sol.moves).unwrap();
                assert_eq!(sol.moves, vec![d.opposite()]);
            }
        }
    }

    /// The greedy plan turns, for tile 1, the cheapest loop there is, found here from scratch.
    #[test]
    fn greedy_matches_a_direct_loop_choice() {
        let greedy = LoopSolver::get(Plan::Greedy);
        for i in 0..500 {
            let b = random_board(3, i, 4);
            let sol = greedy.solve(&b);
            // Tile 1 by the cheapest loop, recomputed from scratch.
            let mut loops = Vec::new();
            single_loops(&b, &SPECS[0], &mut loops);
            let cheapest = loops.iter().map(|l| l.cost).min().unwrap_or(0);
            assert_eq!(sol.stages[0], cheapest, "{b:?}");
        }
    }
}
