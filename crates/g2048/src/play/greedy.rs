//! The greedy network player: the move with the best reward plus the network's value of its
//! afterstate, one game at a time or every game's afterstates in one batch per step.

use super::*;

/// The greedy one-ply choice of a network: the legal move with the largest
/// `reward + V(afterstate)`, with that value; ties go to the first in [`Dir::ALL`] order. A move
/// that would merge two 32768 tiles counts as `-inf` (it ends the game), so it is chosen only
/// when no other move is legal. `None` when no move is legal. Afterstates are valued as
/// [`Board::leaf`] with `downgrade` says.
#[inline]
pub fn greedy_move(
    net: &Network,
    board: Board,
    downgrade: Option<u8>,
) -> Option<(Dir, Moved, f32)> {
    let a = Afterstates::of(board);
    let mut values = [0f32; 4];
    net.values4(&a.leaves(downgrade)[..a.len], &mut values);
    a.pick(&values[..a.len])
}

/// A board's legal moves as a greedy network player sees them: the afterstates to evaluate, in
/// [`Dir::ALL`] order, and the first move that would merge two 32768 tiles, if any.
pub struct Afterstates {
    pub moves: [(Dir, Moved); 4],
    pub boards: [Board; 4],
    pub len: usize,
    pub overflow: Option<(Dir, Moved)>,
}

impl Afterstates {
    #[inline]
    pub fn of(board: Board) -> Afterstates {
        let t = tables();
        let none = Moved {
            board,
            score: 0,
            overflow: false,
        };
        let mut a = Afterstates {
            moves: [(Dir::Up, none); 4],
            boards: [Board::EMPTY; 4],
            len: 0,
            overflow: None,
        };
        for d in Dir::ALL {
            let m = board.slide_with(t, d);
            if m.board == board {
                continue;
            }
            if m.overflow {
                a.overflow = a.overflow.or(Some((d, m)));
                continue;
            }
            a.moves[a.len] = (d, m);
            a.boards[a.len] = m.board;
            a.len += 1;
        }
        a
    }

    /// The boards to value for the afterstates: each one's [`Board::leaf`].
    #[inline]
    pub fn leaves(&self, downgrade: Option<u8>) -> [Board; 4] {
        match downgrade {
            None => self.boards,
            Some(_) => self.boards.map(|b| b.leaf(downgrade)),
        }
    }

    /// The greedy choice given the afterstates' `values` (see [`greedy_move`]).
    #[inline]
    pub fn pick(&self, values: &[f32]) -> Option<(Dir, Moved, f32)> {
        match self.best(values) {
            Some((k, v)) => Some((self.moves[k].0, self.moves[k].1, v)),
            None => self.overflow.map(|(d, m)| (d, m, f32::NEG_INFINITY)),
        }
    }

    /// Which afterstate the greedy choice takes, and its `reward + V`: the first of the largest;
    /// None if no move short of a 32768 merge is legal.
    #[inline]
    pub fn best(&self, values: &[f32]) -> Option<(usize, f32)> {
        let mut best: Option<(usize, f32)> = None;
        for (k, (&(_, m), &value)) in self.moves[..self.len].iter().zip(values).enumerate() {
            let v = m.score as f32 + value;
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((k, v));
            }
        }
        best
    }
}

/// The greedy network player with every running game's afterstates valued in one call to
/// `values` per step (the GPU lookup kernel): the same moves as [`greedy_move`] whenever
/// `values` returns [`Network::value`]'s values.
pub fn play_greedy_lockstep(
    config: &PlayConfig,
    values: &mut dyn BatchValues,
    progress: &dyn Progress,
) -> anyhow::Result<Played> {
    let mut choose = |live: &[&Game]| {
        let after: Vec<Afterstates> = live.iter().map(|g| Afterstates::of(g.board)).collect();
        let boards: Vec<Board> = after
            .iter()
            .flat_map(|a| a.leaves(config.downgrade)[..a.len].to_vec())
            .collect();
        let v = values.values(&boards)?;
        let mut at = 0;
        Ok(after
            .iter()
            .map(|a| {
                let choice = a.pick(&v[at..at + a.len]).map(|(_, m, _)| m);
                at += a.len;
                choice
            })
            .collect())
    };
    play_lockstep(config, &mut choose, progress)
}
