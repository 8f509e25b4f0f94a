//! The expectimax network player: a search over moves and spawns with the network at the
//! leaves, one game at a time or every game's leaves in one batch per step.

use super::*;

/// Expectimax search with an n-tuple network at the leaves.
///
/// A max node (a board to move on) takes the best `reward + chance(afterstate)` over its legal
/// moves, or 0 when none is legal (a lost game is worth nothing more, as in training). A chance
/// node (an afterstate) averages the max nodes of every spawn: each empty cell with probability
/// `1 / empty`, a 2 there with 0.9 and a 4 with 0.1. Depth counts moves: at depth 1 a chance
/// node is the network's value of the afterstate, so depth 1 is exactly the greedy player.
/// Chance-node values are kept in a transposition table keyed by (afterstate, depth), cleared
/// at every decision. All arithmetic is f32 in a fixed order: results depend only on the board.
/// With tile downgrading, each leaf is valued as its [`Board::leaf`]; rewards stay the real
/// ones.
pub struct Expectimax<L: Leaves> {
    leaves: L,
    downgrade: Option<u8>,
    table: FxHashMap<(u64, u32), f32>,
    /// Chance nodes evaluated (not found in the table) since the searcher was made.
    pub evaluated: u64,
}

/// Where expectimax gets the values of its leaves: the network itself, or (for batched
/// evaluation, as on a GPU) a recorder of the leaves a search needs and then a table of their
/// values. The search has no pruning, so which leaves it reads does not depend on their values,
/// and a recorded search followed by a looked-up one plays exactly as a direct one.
pub trait Leaves {
    /// The value of an afterstate.
    fn value(&mut self, after: Board) -> f32;
    /// The greedy choice of a board whose afterstates are leaves (see [`greedy_move`]).
    fn greedy(&mut self, board: Board, downgrade: Option<u8>) -> Option<(Dir, Moved, f32)>;
}

impl Leaves for &Network {
    fn value(&mut self, after: Board) -> f32 {
        Network::value(self, after)
    }

    fn greedy(&mut self, board: Board, downgrade: Option<u8>) -> Option<(Dir, Moved, f32)> {
        greedy_move(self, board, downgrade)
    }
}

/// Records the leaves a search reads (their values read as 0).
pub struct RecordLeaves<'s>(pub &'s mut FxHashSet<u64>);

impl Leaves for RecordLeaves<'_> {
    fn value(&mut self, after: Board) -> f32 {
        self.0.insert(after.raw);
        0.0
    }

    fn greedy(&mut self, board: Board, downgrade: Option<u8>) -> Option<(Dir, Moved, f32)> {
        let a = Afterstates::of(board);
        self.0
            .extend(a.leaves(downgrade)[..a.len].iter().map(|b| b.raw));
        a.pick(&[0.0; 4][..a.len])
    }
}

/// Reads leaf values from a table filled by a batched evaluation of recorded leaves.
pub struct LookupLeaves<'m>(pub &'m FxHashMap<u64, f32>);

impl Leaves for LookupLeaves<'_> {
    fn value(&mut self, after: Board) -> f32 {
        self.0[&after.raw]
    }

    fn greedy(&mut self, board: Board, downgrade: Option<u8>) -> Option<(Dir, Moved, f32)> {
        let a = Afterstates::of(board);
        let leaves = a.leaves(downgrade);
        let values: Vec<f32> = leaves[..a.len].iter().map(|b| self.0[&b.raw]).collect();
        a.pick(&values)
    }
}

impl<'a> Expectimax<&'a Network> {
    pub fn new(net: &'a Network) -> Self {
        Expectimax::with(net)
    }
}

impl<L: Leaves> Expectimax<L> {
    /// A searcher reading its leaves from `leaves`.
    pub fn with(leaves: L) -> Self {
        Expectimax {
            leaves,
            downgrade: None,
            table: FxHashMap::default(),
            evaluated: 0,
        }
    }

    /// The same searcher valuing each leaf as its [`Board::leaf`] with `downgrade`.
    pub fn downgrading(self, downgrade: Option<u8>) -> Self {
        Expectimax { downgrade, ..self }
    }

    /// The best move of `board` searched to `depth` moves (at least 1), with its value.
    pub fn best_move(&mut self, board: Board, depth: u32) -> Option<(Dir, Moved, f32)> {
        self.table.clear();
        let t = tables();
        let mut best: Option<(Dir, Moved, f32)> = None;
        for d in Dir::ALL {
            let m = board.slide_with(t, d);
            if m.board == board {
                continue;
            }
            let v = if m.overflow {
                f32::NEG_INFINITY
            } else {
                m.score as f32 + self.chance(m.board, depth.max(1))
            };
            if best.is_none_or(|(_, _, b)| v > b) {
                best = Some((d, m, v));
            }
        }
        best
    }

    fn chance(&mut self, after: Board, depth: u32) -> f32 {
        if depth <= 1 {
            return self.leaves.value(after.leaf(self.downgrade));
        }
        if let Some(&v) = self.table.get(&(after.raw, depth)) {
            return v;
        }
        self.evaluated += 1;
        let mut sum = 0f32;
        let mut empty = 0u32;
        for i in 0..16 {
            if after.get(i) != 0 {
                continue;
            }
            empty += 1;
            let two = Board::from_raw(after.raw | 1 << (4 * i));
            let four = Board::from_raw(after.raw | 2 << (4 * i));
            sum += 0.9 * self.max_node(two, depth - 1) + 0.1 * self.max_node(four, depth - 1);
        }
        let v = if empty == 0 { 0.0 } else { sum / empty as f32 };
        self.table.insert((after.raw, depth), v);
        v
    }

    fn max_node(&mut self, board: Board, depth: u32) -> f32 {
        if depth <= 1 {
            // The greedy choice, its afterstates looked up together (prefetched); a move
            // that would overflow is no move here.
            return match self.leaves.greedy(board, self.downgrade) {
                Some((_, m, v)) if !m.overflow => v,
                _ => 0.0,
            };
        }
        let t = tables();
        let mut best = 0f32;
        let mut any = false;
        for d in Dir::ALL {
            let m = board.slide_with(t, d);
            if m.board == board || m.overflow {
                continue;
            }
            let v = m.score as f32 + self.chance(m.board, depth);
            if !any || v > best {
                best = v;
                any = true;
            }
        }
        best
    }
}

/// The expectimax player with every running game's leaves valued in one call to `values` per
/// step (the GPU lookup kernel): each game's search runs twice, first recording the leaves it
/// reads, then reading their values; the same moves as [`Expectimax`] on the network whenever
/// `values` returns [`Network::value`]'s values.
pub fn play_expectimax_lockstep(
    config: &PlayConfig,
    values: &mut dyn BatchValues,
    progress: &dyn Progress,
) -> anyhow::Result<Played> {
    let depth = config.player.depth();
    let mut choose = |live: &[&Game]| {
        let leaves: Vec<u64> = {
            let mut set = FxHashSet::default();
            for g in live {
                Expectimax::with(RecordLeaves(&mut set))
                    .downgrading(config.downgrade)
                    .best_move(g.board, depth);
            }
            set.into_iter().collect()
        };
        let boards: Vec<Board> = leaves.iter().map(|&r| Board::from_raw(r)).collect();
        let v = values.values(&boards)?;
        let table: FxHashMap<u64, f32> = leaves.into_iter().zip(v).collect();
        Ok(live
            .par_iter()
            .map(|g| {
                Expectimax::with(LookupLeaves(&table))
                    .downgrading(config.downgrade)
                    .best_move(g.board, depth)
                    .map(|(_, m, _)| m)
            })
            .collect())
    };
    play_lockstep(config, &mut choose, progress)
}

/// Plays `g` to the end with the network: greedy at depth 1, expectimax deeper, leaves valued
/// as [`Board::leaf`] with `downgrade` says.
pub fn play_network_game(g: &mut Game, net: &Network, depth: u32, downgrade: Option<u8>) {
    let mut search = (depth > 1).then(|| Expectimax::new(net).downgrading(downgrade));
    while g.is_running() {
        let choice = match &mut search {
            Some(s) => s.best_move(g.board, depth),
            None => greedy_move(net, g.board, downgrade),
        };
        match choice {
            Some((_, m, _)) => g.play(m),
            None => g.state = GameState::Over,
        }
    }
}
