//! The engines 2048's jobs compute with, one set per device: [`Cpu`] threads, or a [`Gpu`]
//! (behind the `gpu` feature). A caller picks the set once; what a job needs of an adapter
//! (subgroups, optional for rollouts) is asked here, not by the caller.

use crate::ntuple::{BatchValues, CpuValues, Network};
use crate::{CpuEngine, RolloutEngine};
use rollsim_core::Device;

/// Where 2048's jobs run: Monte Carlo rollouts and the n-tuple values of many boards at once.
pub trait Engines {
    /// Where the jobs run, as reports name it.
    fn device(&self) -> Device;
    /// The GPU adapter's name, on a GPU.
    fn adapter(&self) -> Option<String>;
    /// An engine for Monte Carlo rollouts.
    fn rollouts(&self) -> anyhow::Result<Box<dyn RolloutEngine>>;
    /// The values of boards under `net`.
    fn values<'a>(&self, net: &'a Network) -> anyhow::Result<Box<dyn BatchValues + 'a>>;
}

/// CPU threads: rayon's current pool.
pub struct Cpu;

impl Engines for Cpu {
    fn device(&self) -> Device {
        Device::Cpu
    }
    fn adapter(&self) -> Option<String> {
        None
    }
    fn rollouts(&self) -> anyhow::Result<Box<dyn RolloutEngine>> {
        Ok(Box::new(CpuEngine))
    }
    fn values<'a>(&self, net: &'a Network) -> anyhow::Result<Box<dyn BatchValues + 'a>> {
        Ok(Box::new(CpuValues(net)))
    }
}

/// The kernels on a GPU adapter. Any adapter runs them: the rollouts take the subgroup
/// reduction where the adapter has subgroups ([`GpuRolloutEngine::new`]).
///
/// [`GpuRolloutEngine::new`]: crate::rollout::gpu::GpuRolloutEngine::new
#[cfg(feature = "gpu")]
pub struct Gpu {
    /// The adapter, for callers that tune a kernel's engine themselves (the benchmarks).
    pub gpu: &'static rollsim_gpu::Gpu,
    /// Whether rollout engines keep two batches in flight; `None`: the engine's default.
    overlap: Option<bool>,
}

#[cfg(feature = "gpu")]
impl Gpu {
    pub fn new(gpu: &'static rollsim_gpu::Gpu) -> Gpu {
        Gpu { gpu, overlap: None }
    }

    /// Rollout engines that overlap (or not) whatever the adapter, as tests of the halves need.
    pub fn with_overlap(self, overlap: bool) -> Gpu {
        Gpu {
            overlap: Some(overlap),
            ..self
        }
    }
}

#[cfg(feature = "gpu")]
impl Engines for Gpu {
    fn device(&self) -> Device {
        Device::Gpu
    }
    fn adapter(&self) -> Option<String> {
        Some(self.gpu.adapter.name.clone())
    }
    fn rollouts(&self) -> anyhow::Result<Box<dyn RolloutEngine>> {
        let engine = crate::rollout::gpu::GpuRolloutEngine::new(self.gpu)?;
        Ok(Box::new(match self.overlap {
            Some(o) => engine.with_overlap(o),
            None => engine,
        }))
    }
    fn values<'a>(&self, net: &'a Network) -> anyhow::Result<Box<dyn BatchValues + 'a>> {
        Ok(Box::new(crate::ntuple::gpu::GpuNetwork::new(
            self.gpu, net,
        )?))
    }
}
