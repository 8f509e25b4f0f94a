//! Backgammon bearoff databases: exact one-sided and two-sided tables, and gnubg's file formats.

pub mod build;
pub mod columns;
pub mod format;
pub mod moves;
pub mod one_sided;
pub mod plan;
pub mod position;
pub mod table;
pub mod two_sided;

pub use one_sided::OneSided;

/// The GPU handle the sweeps take. With the `gpu` feature off there is none: the type is
/// uninhabited, so an `Option<&Gpu>` is always `None` and every sweep runs on CPU threads.
#[cfg(feature = "gpu")]
pub use rollsim_gpu::Gpu;
#[cfg(not(feature = "gpu"))]
pub enum Gpu {}
pub use position::{Position, PositionError, Space};
