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

mod rings;
mod single;
mod tables;

use rings::*;
use single::*;
use tables::*;

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

impl Plan {
    /// Its name, as the command line and reports write it.
    pub fn name(self) -> &'static str {
        match self {
            Plan::Lookahead => "lookahead",
            Plan::Greedy => "greedy",
            Plan::Shortest => "shortest",
        }
    }
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
