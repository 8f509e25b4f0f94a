//! 2048: the bitboard engine, random streams for its spawns and moves, and the players.

pub mod board;
pub mod engines;
#[cfg(test)]
mod equivalence;
pub mod experiment;
pub mod ntuple;
pub mod play;
pub mod reach;
pub mod replay;
pub mod rollout;
pub mod text;
pub mod train;

pub use board::{Board, Dir, Moved};
pub use ntuple::{Element, Network, NetworkError};
pub use play::{Game, GameState, Objective, PlayConfig, Player, PlayerKind, Report};
pub use rollout::{CpuEngine, RolloutEngine, RolloutSums, Root};
