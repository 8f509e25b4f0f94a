//! The GPU bearoff sweep: host side of `shaders/bearoff_one_sided.wgsl`.
//!
//! The whole sweep is one submission: the positions in level order and every level's
//! parameters (at dynamic uniform offsets) are uploaded once, then one compute pass per level,
//! lowest pip count first; wgpu orders the passes, so each level sees the ones below it. Only
//! the values and the chosen successors come back; the chains stay on the GPU.

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use super::{Gpu, GpuError, dynamic, grid, layout_entry, shaders, whole};
use crate::bearoff::Space;
use crate::bearoff::one_sided::{Levels, Policy};
use crate::bearoff::position::binomial;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    points: u32,
    max_checkers: u32,
    terminal_below: u32,
    first: u32,
    count: u32,
    groups_x: u32,
    pad: [u32; 2],
}

/// Solves the one-sided Bellman equation on the GPU: the same policy as
/// [`crate::bearoff::one_sided::solve`] with `terminal = checkers < terminal_below`.
pub fn solve_one_sided(
    gpu: &Gpu,
    space: &Space,
    levels: &Levels,
    terminal_below: u32,
) -> Result<Policy, GpuError> {
    if !gpu.f64 {
        return Err(GpuError::Unsupported(format!(
            "{} has no f64 shader arithmetic (SHADER_F64), which the exact bearoff sweep needs",
            gpu.adapter.name
        )));
    }
    let n = space.len();
    let need = (18 * n * 8) as u64;
    let limit = gpu
        .limits
        .max_storage_buffer_binding_size
        .min(gpu.limits.max_buffer_size);
    if need > limit {
        return Err(GpuError::Unsupported(format!(
            "the {}x{} table needs a {need}-byte storage buffer; {} allows {limit}",
            space.checkers, space.points, gpu.adapter.name
        )));
    }
    use wgpu::BufferBindingType as B;
    use wgpu::BufferUsages as U;
    let storage = |read_only| B::Storage { read_only };
    let layout = gpu
        .device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("bearoff_one_sided"),
            entries: &[
                layout_entry(0, storage(true), false),
                layout_entry(1, B::Uniform, true),
                layout_entry(2, storage(true), false),
                layout_entry(3, storage(false), false),
                layout_entry(4, storage(false), false),
                layout_entry(5, storage(false), false),
                layout_entry(6, storage(false), false),
            ],
        });
    let pipeline_layout = gpu
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("bearoff_one_sided"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
    let pipeline = gpu.pipeline(&shaders::BEAROFF_ONE_SIDED, Some(&pipeline_layout))?;

    let binomials: Vec<u32> = (0..34 * 34)
        .map(|x| binomial(x / 34, x % 34).min(u64::from(u32::MAX)) as u32)
        .collect();
    let order: Vec<u32> = levels.by_pips.iter().flatten().copied().collect();
    let stride = gpu.limits.min_uniform_buffer_offset_alignment.max(32) as usize;
    let max_dim = gpu.limits.max_compute_workgroups_per_dimension;
    let mut params = vec![0u8; stride * levels.by_pips.len()];
    let mut shapes = Vec::new();
    let mut first = 0u32;
    for (l, level) in levels.by_pips.iter().enumerate() {
        let count = level.len() as u32;
        let (x, y) = grid(count.div_ceil(64), max_dim);
        let p = Params {
            points: space.points,
            max_checkers: space.checkers,
            terminal_below,
            first,
            count,
            groups_x: x,
            pad: [0; 2],
        };
        params[l * stride..l * stride + size_of::<Params>()]
            .copy_from_slice(bytemuck::bytes_of(&p));
        shapes.push((x, y));
        first += count;
    }
    let init = |label: &str, contents: &[u8], usage: U| {
        gpu.scoped(&format!("allocating {label}"), || {
            gpu.device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents,
                    usage,
                })
        })
    };
    let binom_buf = init("binomials", bytemuck::cast_slice(&binomials), U::STORAGE)?;
    let params_buf = init("level params", &params, U::UNIFORM)?;
    let order_buf = init("levels", bytemuck::cast_slice(&order), U::STORAGE)?;
    let value = gpu.buffer("values", 8 * n as u64, U::STORAGE | U::COPY_SRC)?;
    let best = gpu.buffer("chains", 8 * 18 * n as u64, U::STORAGE)?;
    let best_to = gpu.buffer("chain ends", 4 * 18 * n as u64, U::STORAGE)?;
    let succ = gpu.buffer("successors", 4 * 21 * n as u64, U::STORAGE | U::COPY_SRC)?;
    let value_read = gpu.buffer("values readback", 8 * n as u64, U::MAP_READ | U::COPY_DST)?;
    let succ_read = gpu.buffer(
        "successors readback",
        4 * 21 * n as u64,
        U::MAP_READ | U::COPY_DST,
    )?;
    let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("bearoff_one_sided"),
        layout: &layout,
        entries: &[
            whole(0, &binom_buf),
            dynamic(1, &params_buf, size_of::<Params>() as u64),
            whole(2, &order_buf),
            whole(3, &value),
            whole(4, &best),
            whole(5, &best_to),
            whole(6, &succ),
        ],
    });
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("bearoff sweep"),
        });
    for (l, &(x, y)) in shapes.iter().enumerate() {
        // One pass per level: wgpu orders passes, so a level sees every level below it.
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("bearoff level"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[(l * stride) as u32]);
        pass.dispatch_workgroups(x, y, 1);
    }
    enc.copy_buffer_to_buffer(&value, 0, &value_read, 0, 8 * n as u64);
    enc.copy_buffer_to_buffer(&succ, 0, &succ_read, 0, 4 * 21 * n as u64);
    gpu.submit_and_wait(enc.finish(), "sweeping the bearoff levels")?;
    let mut words =
        gpu.read_words(&[(&value_read, 8 * n as u64), (&succ_read, 4 * 21 * n as u64)])?;
    let succ = words.pop().expect("two buffers read");
    let value = words
        .pop()
        .expect("two buffers read")
        .chunks_exact(2)
        .map(|w| f64::from_bits(u64::from(w[0]) | u64::from(w[1]) << 32))
        .collect();
    Ok(Policy { value, succ })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bearoff::one_sided::solve;

    #[test]
    fn gpu_sweep_equals_cpu_sweep() {
        let Some(gpu) = crate::gpu::test_gpu("gpu_sweep_equals_cpu_sweep") else {
            return;
        };
        if !gpu.f64 {
            eprintln!(
                "gpu_sweep_equals_cpu_sweep: skipped, {} has no f64",
                gpu.adapter.name
            );
            return;
        }
        for (points, checkers, below) in [(6, 15, 1), (4, 15, 15), (4, 5, 1), (9, 3, 1)] {
            let space = Space::new(points, checkers).unwrap();
            let levels = Levels::new(&space);
            let cpu = solve(&space, &levels, below, &|_| {});
            let g = solve_one_sided(gpu, &space, &levels, below).unwrap();
            // Same operations in the same order on IEEE f64: equal to the last bit here, and
            // the same chosen plays; 1e-12 is the tolerance promised for any driver.
            assert_eq!(g.succ, cpu.succ, "{checkers}x{points} below {below}");
            let same_bits = g
                .value
                .iter()
                .zip(&cpu.value)
                .filter(|(a, b)| a.to_bits() == b.to_bits())
                .count();
            eprintln!(
                "{checkers}x{points}: {same_bits} of {} values bit-identical",
                g.value.len()
            );
            for (a, b) in g.value.iter().zip(&cpu.value) {
                assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
            }
        }
    }
}
