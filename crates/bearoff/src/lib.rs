//! Backgammon bearoff databases: exact one-sided and two-sided tables, and gnubg's file formats.

pub mod build;
pub mod columns;
pub mod cube;
pub mod database;
pub mod engines;
#[cfg(test)]
mod equivalence;
pub mod format;
pub mod levels;
pub mod moves;
pub mod numeric;
pub mod one_sided;
pub mod plan;
pub mod position;
pub mod table;
pub mod two_sided;

pub use one_sided::OneSided;

pub use position::{PositionError, Space};
