//! The seam between a two-sided build and the device that sweeps its columns: a build hands
//! each pass to a [`ColumnSweeper`] ([`CpuColumns`](super::cpu::CpuColumns) on CPU threads,
//! `columns::gpu::GpuColumns` beside the kernel) as a [`ColumnPass`], which is all a sweep needs
//! of the build's file, checkpoints and progress.

use super::Moves;
use crate::numeric::CellKind;

/// Where a two-sided pass sweeps its columns.
pub trait ColumnSweeper {
    /// Sweeps `pass`, storing `cell`s, from the level it resumes at.
    fn sweep(&self, pass: &dyn ColumnPass, cell: CellKind) -> anyhow::Result<()>;
}

/// One pass of a build under way, as a sweep sees it. Columns are K planes of n cells, as
/// bytes in the cells' order in memory (K = 3 for the cubeful pass, 1 for the cubeless).
pub trait ColumnPass: Sync {
    /// Whether the pass computes the cubeful equities, not the winning chances.
    fn cubeful(&self) -> bool;
    fn moves(&self) -> &Moves;
    /// The first level to sweep: 0, or where a resumed build stopped.
    fn first_level(&self) -> usize;
    /// Whether the pass is already complete; reports the pairs done before the first level.
    fn skip(&self) -> bool;
    /// Column `x`, written before the pass resumed, checked against its checksum.
    fn read_column(&self, x: u32, bytes: &mut [u8]) -> std::io::Result<()>;
    /// Stores the finished column `x`; called from several threads at once.
    fn write_column(&self, x: u32, bytes: &[u8]) -> std::io::Result<()>;
    /// After each level, once all its columns are written: progress, and a checkpoint when
    /// one is due.
    fn level_done(&self, level: usize) -> std::io::Result<()>;
}
