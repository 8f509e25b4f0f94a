//! The engines the bearoff builds compute with, one set per device: [`Cpu`] threads, or a
//! [`Gpu`] (behind the `gpu` feature). A caller picks the set once; what a sweep needs of an
//! adapter (f64 for the one-sided kernel, nothing special for the two-sided one) is asked
//! here, not by the caller.

use std::path::Path;

use crate::Space;
use crate::columns::cpu::CpuColumns;
use crate::columns::seam::ColumnSweeper;
use crate::numeric::CellKind;
use crate::one_sided::{CpuPlays, PlaySolver};
use crate::plan::{Plan, Precision};
use rollsim_core::Device;

/// Where the bearoff sweeps run: the one-sided table's best plays and the two-sided columns.
pub trait Engines {
    /// Where the sweeps run, as reports name it.
    fn device(&self) -> Device;
    /// The GPU the sweeps run on, if any.
    #[cfg(feature = "gpu")]
    fn gpu(&self) -> Option<&'static rollsim_gpu::Gpu> {
        None
    }
    /// The one-sided sweep's plays, or an error saying why this device cannot find them.
    fn plays(&self) -> anyhow::Result<Box<dyn PlaySolver + '_>>;
    /// The cells the two-sided sweep can store.
    fn cells(&self) -> &'static [CellKind];
    /// Whether the two-sided sweep stores `precision` (`Auto` chooses among [`Engines::cells`]).
    fn stores(&self, precision: Precision) -> bool {
        match precision {
            Precision::Auto => true,
            Precision::Cell(c) => self.cells().contains(&c),
        }
    }
    /// The two-sided sweep.
    fn columns(&self) -> Box<dyn ColumnSweeper + '_>;
    /// The memory and disk plan of a two-sided build here, its table written in `dir`
    /// (`gnubg_bytes`: the size of gnubg's file converted from it).
    fn plan(
        &self,
        space: Space,
        cubeful: bool,
        precision: Precision,
        dir: &Path,
        gnubg_bytes: Option<u64>,
    ) -> Plan;
}

/// CPU threads: rayon's current pool.
pub struct Cpu;

impl Engines for Cpu {
    fn device(&self) -> Device {
        Device::Cpu
    }
    fn plays(&self) -> anyhow::Result<Box<dyn PlaySolver + '_>> {
        Ok(Box::new(CpuPlays))
    }
    fn cells(&self) -> &'static [CellKind] {
        &[
            CellKind::U16,
            CellKind::F32,
            CellKind::Fixed32,
            CellKind::F64,
        ]
    }
    fn columns(&self) -> Box<dyn ColumnSweeper + '_> {
        Box::new(CpuColumns)
    }
    fn plan(
        &self,
        space: Space,
        cubeful: bool,
        precision: Precision,
        dir: &Path,
        gnubg_bytes: Option<u64>,
    ) -> Plan {
        let threads = rayon::current_num_threads();
        Plan::new(space, cubeful, precision, threads, dir, gnubg_bytes)
    }
}

/// The kernels on a GPU adapter. The two-sided sweep runs on any adapter (its cells are
/// fixed32 or u16); the one-sided one needs f64 shader arithmetic.
#[cfg(feature = "gpu")]
pub struct Gpu(pub &'static rollsim_gpu::Gpu);

#[cfg(feature = "gpu")]
impl Engines for Gpu {
    fn device(&self) -> Device {
        Device::Gpu
    }
    fn gpu(&self) -> Option<&'static rollsim_gpu::Gpu> {
        Some(self.0)
    }
    fn plays(&self) -> anyhow::Result<Box<dyn PlaySolver + '_>> {
        if !self.0.f64 {
            return Err(rollsim_gpu::GpuError::Unsupported(format!(
                "{} has no f64 shader arithmetic (SHADER_F64), which the exact bearoff sweep needs",
                self.0.adapter.name
            ))
            .into());
        }
        Ok(Box::new(crate::one_sided::gpu::GpuPlays(self.0)))
    }
    fn cells(&self) -> &'static [CellKind] {
        &[CellKind::U16, CellKind::Fixed32]
    }
    fn columns(&self) -> Box<dyn ColumnSweeper + '_> {
        Box::new(crate::columns::gpu::GpuColumns(self.0))
    }
    fn plan(
        &self,
        space: Space,
        cubeful: bool,
        precision: Precision,
        dir: &Path,
        gnubg_bytes: Option<u64>,
    ) -> Plan {
        let limits = crate::columns::layout::Limits::of(self.0);
        let adapter = &self.0.adapter.name;
        Plan::for_gpu(space, cubeful, precision, adapter, limits, dir, gnubg_bytes)
    }
}
