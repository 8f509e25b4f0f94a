//! Where `--backend` becomes the engines a command computes with: the one place that opens the
//! GPU. What a job needs of the adapter (f64, subgroups) the engines ask themselves.

use rollsim_2048::engines as g2048;
use rollsim_bearoff::engines as bearoff;
use rollsim_gpu::{Backend, Gpu, GpuError};

/// The process's GPU for `backend`: `None` for `cpu`, and for `auto` without a real GPU.
fn gpu(backend: Backend) -> Result<Option<&'static Gpu>, GpuError> {
    Gpu::for_backend(backend)
}

/// 2048's engines for `backend`.
pub fn game2048(backend: Backend) -> Result<Box<dyn g2048::Engines>, GpuError> {
    Ok(match gpu(backend)? {
        Some(g) => Box::new(g2048::Gpu::new(g)),
        None => Box::new(g2048::Cpu),
    })
}

/// The bearoff sweeps' engines for `backend`.
pub fn bearoff(backend: Backend) -> Result<Box<dyn bearoff::Engines>, GpuError> {
    Ok(match gpu(backend)? {
        Some(g) => Box::new(bearoff::Gpu(g)),
        None => Box::new(bearoff::Cpu),
    })
}

/// Every game's GPU engines, on one adapter.
pub struct GpuEngines {
    pub g2048: g2048::Gpu,
    pub bearoff: bearoff::Gpu,
}

impl GpuEngines {
    /// The adapter they run on.
    pub fn gpu(&self) -> &'static Gpu {
        self.bearoff.0
    }
}

/// The GPU engines for `backend`, or `None` where it resolves to CPU threads.
pub fn gpu_engines(backend: Backend) -> Result<Option<GpuEngines>, GpuError> {
    Ok(gpu(backend)?.map(|g| GpuEngines {
        g2048: g2048::Gpu::new(g),
        bearoff: bearoff::Gpu(g),
    }))
}

/// The rollout engine for `backend`: the GPU kernel when the backend resolves to an adapter,
/// the CPU engine otherwise.
pub fn rollout_engine(backend: Backend) -> anyhow::Result<Box<dyn rollsim_2048::RolloutEngine>> {
    game2048(backend)?.rollouts()
}
