//! One interface for every solver: a board in, a [`Solution`] out, checked by the independent
//! replayer on request. The solve loop, IDA* over pattern databases and A* all answer it.

use super::astar;
use super::board::{Board, Dir};
use super::check::{CheckError, verify};
use super::ida::{self, PdbHeuristic};
use super::solve_loop::{LoopSolver, STAGES};

/// What a solver found for a board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// The moves, or `None` where the solver gave up (A* at its node limit).
    pub moves: Option<Vec<Dir>>,
    /// The solve loop's moves per stage, in the order of [`STAGES`].
    pub stages: Option<[u32; 6]>,
    /// Search nodes: generated (IDA*) or expanded (A*).
    pub nodes: Option<u64>,
}

impl Solution {
    /// The moves per stage by stage name.
    pub fn stages_by_name(&self) -> Option<impl Iterator<Item = (&'static str, u32)>> {
        self.stages.map(|s| STAGES.iter().copied().zip(s))
    }

    /// Replays the moves on `board` with the independent checker (nothing to check without
    /// moves).
    pub fn check(&self, board: &Board) -> Result<(), CheckError> {
        match &self.moves {
            Some(m) => verify(board, m),
            None => Ok(()),
        }
    }
}

/// A way to solve boards.
pub trait Solver: Sync {
    fn solve(&self, board: &Board) -> Solution;
}

impl<S: Solver + ?Sized> Solver for &S {
    fn solve(&self, board: &Board) -> Solution {
        (**self).solve(board)
    }
}

impl Solver for LoopSolver {
    fn solve(&self, board: &Board) -> Solution {
        let s = LoopSolver::solve(self, board);
        Solution {
            moves: Some(s.moves),
            stages: Some(s.stages),
            nodes: None,
        }
    }
}

/// Shortest solutions by IDA*, with a pattern-database heuristic per board width.
pub struct Optimal {
    pub width3: Option<PdbHeuristic>,
    pub width4: Option<PdbHeuristic>,
}

impl Solver for Optimal {
    fn solve(&self, board: &Board) -> Solution {
        let heur = match board.width() {
            3 => self.width3.as_ref(),
            _ => self.width4.as_ref(),
        }
        .expect("a heuristic for every board width solved");
        let s = ida::solve(heur, board);
        Solution {
            moves: Some(s.moves),
            stages: None,
            nodes: Some(s.nodes),
        }
    }
}

/// Shortest solutions by A* with Manhattan distance, giving up after `node_limit` expansions.
pub struct Astar {
    pub node_limit: u64,
}

impl Solver for Astar {
    fn solve(&self, board: &Board) -> Solution {
        let r = astar::solve(board, self.node_limit);
        Solution {
            moves: r.moves,
            stages: None,
            nodes: Some(r.expanded),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::random_board;
    use crate::solve_loop::Plan;

    /// Every solver through the one interface: solutions that replay to the goal, the shortest
    /// ones of equal length, and the loop's stages adding up to its moves.
    #[test]
    fn every_solver_answers_the_same_interface() {
        let board = random_board(3, 0, 3);
        let p = crate::pdb::Partition::P44;
        let dbs = p.patterns();
        let dbs = dbs
            .iter()
            .map(|t| crate::pdb::PatternDb::build(3, t, &|_| {}));
        let optimal = Optimal {
            width3: Some(PdbHeuristic::new(dbs.collect())),
            width4: None,
        };
        let astar = Astar {
            node_limit: 1_000_000,
        };
        let solvers: [&dyn Solver; 2] = [&optimal, &astar];
        let lengths: Vec<usize> = solvers
            .iter()
            .map(|s| {
                let sol = s.solve(&board);
                sol.check(&board).unwrap();
                assert!(sol.nodes.is_some_and(|n| n > 0));
                sol.moves.unwrap().len()
            })
            .collect();
        assert_eq!(lengths[0], lengths[1]);
        let board = random_board(3, 0, 4);
        let sol = Solver::solve(LoopSolver::get(Plan::Lookahead), &board);
        sol.check(&board).unwrap();
        let stages: u32 = sol.stages_by_name().unwrap().map(|(_, n)| n).sum();
        assert_eq!(stages as usize, sol.moves.unwrap().len());
        let none = Astar { node_limit: 1 }.solve(&random_board(3, 1, 4));
        assert_eq!((none.check(&board), none.moves), (Ok(()), None));
    }
}
