//! The two-sided sweep of a build's pass on CPU threads.

use super::seam::{ColumnPass, ColumnSweeper};
use super::{Cubeful, Cubeless, MAX_ROLL_PIPS, Recurrence, sweep};
use crate::numeric::{Cell, CellKind, Fixed};
use rollsim_core::memory::huge_filled;

/// The sweep on CPU threads, in any cell type.
pub struct CpuColumns;

impl ColumnSweeper for CpuColumns {
    fn sweep(&self, pass: &dyn ColumnPass, cell: CellKind) -> anyhow::Result<()> {
        match (pass.cubeful(), cell) {
            (false, CellKind::F32) => run::<1, Cubeless, f32>(pass),
            (false, CellKind::F64) => run::<1, Cubeless, f64>(pass),
            (false, CellKind::U16) => run::<1, Cubeless, u16>(pass),
            (false, CellKind::Fixed32) => run::<1, Cubeless, Fixed>(pass),
            (true, CellKind::F32) => run::<3, Cubeful, f32>(pass),
            (true, CellKind::F64) => run::<3, Cubeful, f64>(pass),
            (true, CellKind::U16) => run::<3, Cubeful, u16>(pass),
            (true, CellKind::Fixed32) => run::<3, Cubeful, Fixed>(pass),
        }
    }
}

fn run<const K: usize, R: Recurrence<K>, C: Cell>(pass: &dyn ColumnPass) -> anyhow::Result<()> {
    if pass.skip() {
        return Ok(());
    }
    let (moves, first) = (pass.moves(), pass.first_level());
    let record = K * moves.n;
    let mut window = huge_filled(moves.window.capacity * record, C::zeroed());
    // Resuming: the columns the next levels read come back from the build's file.
    for level in first.saturating_sub(MAX_ROLL_PIPS)..first {
        for &x in &moves.levels[level] {
            let slot = moves.window.slot[x as usize] as usize;
            let column = &mut window[slot * record..][..record];
            pass.read_column(x, bytemuck::cast_slice_mut(column))?;
        }
    }
    sweep::<K, R, C>(
        moves,
        first,
        &mut window,
        &|x, column| pass.write_column(x, bytemuck::cast_slice(column)),
        &mut |level| pass.level_done(level),
    )?;
    Ok(())
}
