//! The GPU one-sided bearoff sweep: host side of `shaders/bearoff/one_sided.wgsl`. (The
//! two-sided sweep by columns is `crate::columns::gpu`.)
//!
//! A whole sweep is one submission: the items in level order and every level's parameters (at
//! dynamic uniform offsets) are uploaded once, then one compute pass per level, lowest pip count
//! first; wgpu orders the passes, so each level sees the ones below it. Only the results come
//! back; the chains stay on the GPU.

use bytemuck::{Pod, Zeroable};

use crate::Space;
use crate::levels::Levels;
use crate::one_sided::Policy;
use crate::position::binomial;
use rollsim_gpu::{Gpu, GpuError, Kernel, ParamSlots, grid, layout_entry, whole};

/// The 21 dice rolls in WGSL: twin of [`crate::moves::Roll::ALL_21`].
pub const ROLLS: &str = rollsim_shaders::shared::BEAROFF_ROLLS;
/// Bearoff positions, unranking and single-die moves in WGSL: twin of [`crate::position`] and
/// [`crate::moves`].
pub const POSITION: &str = rollsim_shaders::shared::BEAROFF_POSITION;

/// One level of the one-sided bearoff sweep (f64): `shaders/bearoff/one_sided.wgsl`, twin of
/// [`crate::one_sided`].
pub const KERNEL: Kernel = Kernel {
    constants: &[],
    name: "one_sided",
    parts: &[ROLLS, POSITION, rollsim_shaders::bearoff::ONE_SIDED],
};

/// A buffer the sweep binds: its binding, its contents or size, and whether it is read back.
struct Binding<'a> {
    label: &'a str,
    binding: u32,
    data: Data<'a>,
    read_back: bool,
}

enum Data<'a> {
    /// Uploaded, read-only.
    Init(&'a [u8]),
    /// Written by the kernel: this many bytes.
    Zeroed(u64),
}

/// Runs `kernel` once per level (`counts[l]` invocations), all levels in one submission, with
/// `params(l, groups_x)` bound at `params_binding` at a dynamic offset, and returns the
/// read-back buffers' contents in binding order.
fn sweep<P: Pod>(
    gpu: &Gpu,
    kernel: &Kernel,
    counts: &[u32],
    params_binding: u32,
    params: impl Fn(usize, u32) -> P,
    bindings: &[Binding],
) -> Result<Vec<Vec<u32>>, GpuError> {
    if !gpu.f64 {
        return Err(GpuError::Unsupported(format!(
            "{} has no f64 shader arithmetic (SHADER_F64), which the exact bearoff sweep needs",
            gpu.adapter.name
        )));
    }
    let limit = gpu
        .limits
        .max_storage_buffer_binding_size
        .min(gpu.limits.max_buffer_size);
    for b in bindings {
        let size = match b.data {
            Data::Init(d) => d.len() as u64,
            Data::Zeroed(s) => s,
        };
        if size > limit {
            return Err(GpuError::Unsupported(format!(
                "{} needs a {size}-byte storage buffer; {} allows {limit} (use --backend cpu)",
                b.label, gpu.adapter.name
            )));
        }
    }
    use wgpu::BufferBindingType as B;
    use wgpu::BufferUsages as U;
    let mut entries = vec![ParamSlots::<P>::layout(params_binding)];
    entries.extend(bindings.iter().map(|b| {
        let read_only = matches!(b.data, Data::Init(_));
        layout_entry(b.binding, B::Storage { read_only }, false)
    }));
    let (layout, pipeline_layout) = gpu.compute_layout(kernel.name, &entries);
    let pipeline = gpu.pipeline(kernel, Some(&pipeline_layout))?;

    let max_dim = gpu.limits.max_compute_workgroups_per_dimension;
    let shapes: Vec<(u32, u32)> = counts
        .iter()
        .map(|&count| grid(count.div_ceil(64), max_dim))
        .collect();
    let level_params: Vec<P> = (0..)
        .zip(&shapes)
        .map(|(l, &(x, _))| params(l, x))
        .collect();
    let params_buf = ParamSlots::with(gpu, "level params", &level_params)?;
    let mut buffers = Vec::with_capacity(bindings.len());
    for b in bindings {
        buffers.push(match b.data {
            Data::Init(d) => gpu.buffer_with(b.label, d, U::STORAGE)?,
            Data::Zeroed(size) => gpu.buffer(b.label, size, U::STORAGE | U::COPY_SRC)?,
        });
    }
    let mut group = vec![params_buf.entry(params_binding)];
    group.extend(
        bindings
            .iter()
            .zip(&buffers)
            .map(|(b, buf)| whole(b.binding, buf)),
    );
    let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(kernel.name),
        layout: &layout,
        entries: &group,
    });
    let mut reads = Vec::new();
    for (b, buf) in bindings.iter().zip(&buffers) {
        if b.read_back {
            let size = buf.size();
            let read = gpu.buffer(b.label, size, U::MAP_READ | U::COPY_DST)?;
            reads.push((buf, read, size));
        }
    }
    let mut enc = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some(kernel.name),
        });
    for (l, &(x, y)) in (0..).zip(&shapes) {
        // One pass per level: wgpu orders passes, so a level sees every level below it.
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(kernel.name),
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[params_buf.offset(l)]);
        pass.dispatch_workgroups(x, y, 1);
    }
    for (buf, read, size) in &reads {
        enc.copy_buffer_to_buffer(buf, 0, read, 0, *size);
    }
    gpu.submit_and_wait(enc, "sweeping the bearoff levels")?;
    let views: Vec<(&wgpu::Buffer, u64)> = reads.iter().map(|(_, r, s)| (r, *s)).collect();
    gpu.read::<u32>(&views)
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct OneSidedParams {
    points: u32,
    max_checkers: u32,
    terminal_below: u32,
    first: u32,
    count: u32,
    groups_x: u32,
    pad: [u32; 2],
}

/// The plays of one-sided passes on the GPU.
pub struct GpuPlays<'a>(pub &'a Gpu);

impl crate::one_sided::PlaySolver for GpuPlays<'_> {
    fn policy(
        &mut self,
        space: &Space,
        levels: &Levels,
        terminal_below: u32,
    ) -> anyhow::Result<Policy> {
        Ok(solve_one_sided(self.0, space, levels, terminal_below)?)
    }
}

/// Solves the one-sided Bellman equation on the GPU: the same policy as
/// [`crate::one_sided::policy`] with the same `terminal_below`.
pub fn solve_one_sided(
    gpu: &Gpu,
    space: &Space,
    levels: &Levels,
    terminal_below: u32,
) -> Result<Policy, GpuError> {
    let n = space.len() as u64;
    let binomials: Vec<u32> = (0..34 * 34)
        .map(|x| binomial(x / 34, x % 34).min(u64::from(u32::MAX)) as u32)
        .collect();
    let counts: Vec<u32> = levels.by_pips.iter().map(|l| l.len() as u32).collect();
    let bind = |label, binding, data, read_back| Binding {
        label,
        binding,
        data,
        read_back,
    };
    let mut out = sweep(
        gpu,
        &KERNEL,
        &counts,
        1,
        |l, groups_x| OneSidedParams {
            points: space.points,
            max_checkers: space.checkers,
            terminal_below,
            first: levels.starts[l] as u32,
            count: counts[l],
            groups_x,
            pad: [0; 2],
        },
        &[
            bind(
                "binomials",
                0,
                Data::Init(bytemuck::cast_slice(&binomials)),
                false,
            ),
            bind(
                "levels",
                2,
                Data::Init(bytemuck::cast_slice(&levels.order)),
                false,
            ),
            bind("values", 3, Data::Zeroed(8 * n), true),
            bind("chains", 4, Data::Zeroed(8 * 18 * n), false),
            bind("chain ends", 5, Data::Zeroed(4 * 18 * n), false),
            bind("successors", 6, Data::Zeroed(4 * 21 * n), true),
        ],
    )?;
    let succ = out.pop().expect("successors read back");
    let value = bytemuck::pod_collect_to_vec(&out.pop().expect("values read back"));
    Ok(Policy { value, succ })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel parses and validates with naga: no GPU needed.
    #[test]
    fn one_sided_kernel_validates_with_naga() {
        let module = KERNEL.validate().unwrap_or_else(|e| panic!("{e}"));
        rollsim_gpu::check_params!(
            module,
            1,
            OneSidedParams {
                points,
                max_checkers,
                terminal_below,
                first,
                count,
                groups_x,
                pad
            }
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}
