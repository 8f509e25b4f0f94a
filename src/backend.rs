//! Where `--backend` becomes the engines a command computes with: the one place that opens the
//! GPU for the Monte Carlo player and experiments.

use rollsim_2048::rollout::gpu::GpuRolloutEngine;
use rollsim_2048::{CpuEngine, RolloutEngine};
use rollsim_gpu::{Backend, Gpu, GpuError};

/// The rollout engine for `backend`: the GPU kernel when the backend resolves to an adapter,
/// the CPU engine otherwise.
pub fn rollout_engine(backend: Backend) -> Result<Box<dyn RolloutEngine>, GpuError> {
    Ok(match Gpu::for_backend(backend)? {
        Some(gpu) => Box::new(GpuRolloutEngine::new(gpu)?),
        None => Box::new(CpuEngine),
    })
}
