//! The 15-puzzle (and the 8-puzzle, for small tests): boards, an independent checker, random
//! solvable boards, the solve-loop heuristic, an optimal IDA* solver over additive pattern
//! databases, and an A* baseline with a node limit. Everything runs on CPU threads.

pub mod astar;
pub mod board;
pub mod check;
pub mod generate;
pub mod ida;
pub mod pdb;
pub mod solve_loop;
pub mod solver;
#[cfg(test)]
mod testing;

pub use board::{Board, BoardError, Dir, moves_to_string, parse_moves};
pub use check::{CheckError, verify};
pub use generate::random_board;
pub use ida::{IdaSolution, PdbHeuristic};
pub use pdb::{Partition, PatternDb};
pub use solve_loop::{LoopSolution, LoopSolver, Plan, STAGES};
pub use solver::{Astar, Optimal, Solution, Solver};
