//! Bulk n-tuple values on the GPU: host side of `shaders/g2048/ntuple.wgsl`.
//!
//! The weights are uploaded once and stay resident: f32 weights one per word, f16 weights two
//! per word, in bindings of 2^25 words (128 MiB, the storage binding limit every adapter
//! offers), so the standard 4x6-tuple network takes two bindings as f32 and one as f16. Each
//! call uploads the boards, runs one dispatch per batch and reads back one f32 per board.

use bytemuck::{Pod, Zeroable};

use crate::Board;
use crate::ntuple::{Element, Network};
use rollsim_gpu::{Gpu, GpuError, Kernel, ParamSlots, grid, layout_entry, whole};

/// Bulk n-tuple network values: `shaders/g2048/ntuple.wgsl`, twin of
/// [`crate::ntuple::Network::value`].
pub const KERNEL: Kernel = Kernel {
    name: "ntuple_value",
    constants: &[(
        "CHUNK_BITS",
        rollsim_gpu::kernel::Constant::U32(CHUNK_WORDS.trailing_zeros()),
    )],
    parts: &[rollsim_shaders::g2048::NTUPLE],
};

/// Words per weight binding: 128 MiB.
const CHUNK_WORDS: usize = 1 << 25;
/// Weight bindings in the kernel.
const CHUNKS: usize = 4;
/// Boards per dispatch: a million boards is a few milliseconds of lookups on a desktop GPU.
const BOARDS_PER_DISPATCH: usize = 1 << 20;
/// Dispatches per submission (each with its parameter slot).
const DISPATCHES_PER_BATCH: usize = 64;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    count: u32,
    tuples: u32,
    f16: u32,
    groups_x: u32,
    /// Weights per stage.
    stage_len: u32,
    /// The stage splits' exponents, one per byte from the lowest (0: none).
    splits: u32,
}

/// A bind group entry for a buffer from `offset` to its end.
fn window(binding: u32, buffer: &wgpu::Buffer, offset: u64) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset,
            size: None,
        }),
    }
}

/// A network resident on the GPU.
pub struct GpuNetwork {
    gpu: &'static Gpu,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    params: ParamSlots<Params>,
    features: wgpu::Buffer,
    weights: Vec<wgpu::Buffer>,
    tuples: u32,
    f16: bool,
    stage_len: u32,
    splits: u32,
    /// Board and value buffers, grown as needed: (capacity in boards, boards, values, readback).
    io: Option<(usize, wgpu::Buffer, wgpu::Buffer, wgpu::Buffer)>,
}

/// The network's weights as the kernel reads them: f32 bits, or f16 bits two to a word (the
/// even weight in the low half).
fn weight_words(net: &Network) -> Vec<u32> {
    match net.element() {
        Element::F32 => net.weights_f32().iter().map(|w| w.to_bits()).collect(),
        Element::F16 => net
            .weights_f16_bits()
            .chunks(2)
            .map(|p| u32::from(p[0]) | u32::from(p.get(1).copied().unwrap_or(0)) << 16)
            .collect(),
    }
}

impl GpuNetwork {
    pub fn new(gpu: &'static Gpu, net: &Network) -> Result<GpuNetwork, GpuError> {
        let words = weight_words(net);
        if words.len() > CHUNK_WORDS * CHUNKS {
            return Err(GpuError::Unsupported(format!(
                "a network of {} weights needs more than {CHUNKS} weight bindings",
                net.len()
            )));
        }
        let tuples = net.tuples().len();
        let mut features: Vec<u32> = net
            .tuples()
            .iter()
            .zip(net.offsets())
            .flat_map(|(t, o)| [t.len() as u32, o as u32])
            .collect();
        for t in 0..tuples {
            for s in 0..8 {
                let mut cells = net.feature_cells(t, s);
                cells.resize(6, 0);
                features.extend(cells.iter().map(|&c| u32::from(c)));
            }
        }
        use wgpu::BufferBindingType as B;
        use wgpu::BufferUsages as U;
        let features = gpu.buffer_with(
            "tuple features",
            bytemuck::cast_slice(&features),
            U::STORAGE,
        )?;
        let mut weights = Vec::with_capacity(CHUNKS);
        for c in 0..CHUNKS {
            let part = words.chunks(CHUNK_WORDS).nth(c).unwrap_or(&[0]);
            weights.push(gpu.buffer_with(
                "network weights",
                bytemuck::cast_slice(part),
                U::STORAGE,
            )?);
        }
        let read = B::Storage { read_only: true };
        let (layout, pipeline_layout) = gpu.compute_layout(
            "ntuple_value",
            &[
                ParamSlots::<Params>::layout(0),
                layout_entry(1, read, false),
                layout_entry(2, read, false),
                layout_entry(3, B::Storage { read_only: false }, false),
                layout_entry(4, read, false),
                layout_entry(5, read, false),
                layout_entry(6, read, false),
                layout_entry(7, read, false),
            ],
        );
        let pipeline = gpu.pipeline(&KERNEL, Some(&pipeline_layout))?;
        let params = ParamSlots::new(gpu, "ntuple params", DISPATCHES_PER_BATCH as u32)?;
        Ok(GpuNetwork {
            gpu,
            pipeline,
            layout,
            params,
            features,
            weights,
            tuples: tuples as u32,
            f16: net.element() == Element::F16,
            stage_len: net.stage_len() as u32,
            splits: (0..)
                .zip(net.split_exponents())
                .map(|(k, &e)| u32::from(e) << (8 * k))
                .sum(),
            io: None,
        })
    }

    /// The values of `boards`, as [`Network::value`] computes them.
    pub fn values(&mut self, boards: &[Board]) -> Result<Vec<f32>, GpuError> {
        let mut out = Vec::with_capacity(boards.len());
        for batch in boards.chunks(BOARDS_PER_DISPATCH * DISPATCHES_PER_BATCH) {
            out.extend(self.values_batch(batch)?);
        }
        Ok(out)
    }

    fn values_batch(&mut self, boards: &[Board]) -> Result<Vec<f32>, GpuError> {
        let g = self.gpu;
        use wgpu::BufferUsages as U;
        let n = boards.len().max(1);
        if self.io.as_ref().is_none_or(|io| io.0 < n) {
            let cap = n.next_power_of_two();
            self.io = Some((
                cap,
                g.buffer("boards", 8 * cap as u64, U::STORAGE | U::COPY_DST)?,
                g.buffer("values", 4 * cap as u64, U::STORAGE | U::COPY_SRC)?,
                g.buffer("values readback", 4 * cap as u64, U::MAP_READ | U::COPY_DST)?,
            ));
        }
        let (_, board_buf, value_buf, read) = self.io.as_ref().expect("just ensured");
        let raw: Vec<[u32; 2]> = boards
            .iter()
            .map(|b| [b.raw as u32, (b.raw >> 32) as u32])
            .collect();
        g.queue
            .write_buffer(board_buf, 0, bytemuck::cast_slice(&raw));
        let max_dim = g.limits.max_compute_workgroups_per_dimension;
        let mut params = Vec::new();
        let mut shapes = Vec::new();
        for start in (0..boards.len()).step_by(BOARDS_PER_DISPATCH) {
            let count = (boards.len() - start).min(BOARDS_PER_DISPATCH) as u32;
            let (x, y) = grid(count.div_ceil(64), max_dim);
            let p = Params {
                count,
                tuples: self.tuples,
                f16: u32::from(self.f16),
                groups_x: x,
                stage_len: self.stage_len,
                splits: self.splits,
            };
            params.push(p);
            shapes.push((start, x, y));
        }
        self.params.write(g, &params);
        let mut enc = g
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("ntuple values"),
            });
        for (d, &(start, x, y)) in (0..).zip(&shapes) {
            // Each dispatch sees its own window of boards and values.
            let mut entries = vec![
                self.params.entry(0),
                window(1, board_buf, 8 * start as u64),
                whole(2, &self.features),
                window(3, value_buf, 4 * start as u64),
            ];
            entries.extend(
                self.weights
                    .iter()
                    .enumerate()
                    .map(|(c, w)| whole(4 + c as u32, w)),
            );
            let bind_group = g.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("ntuple_value"),
                layout: &self.layout,
                entries: &entries,
            });
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("ntuple_value"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bind_group, &[self.params.offset(d)]);
            pass.dispatch_workgroups(x, y, 1);
        }
        let bytes = 4 * boards.len() as u64;
        enc.copy_buffer_to_buffer(value_buf, 0, read, 0, bytes.max(4));
        g.submit_and_wait(enc, "looking up network values")?;
        let mut values = g.read::<f32>(&[(read, bytes.max(4))])?.remove(0);
        values.truncate(boards.len());
        Ok(values)
    }
}

impl crate::ntuple::BatchValues for GpuNetwork {
    fn values(&mut self, boards: &[Board]) -> anyhow::Result<Vec<f32>> {
        Ok(GpuNetwork::values(self, boards)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel parses and validates with naga: no GPU needed.
    #[test]
    fn ntuple_kernel_validates_with_naga() {
        let module = KERNEL.validate().unwrap_or_else(|e| panic!("{e}"));
        rollsim_gpu::check_params!(
            module,
            0,
            Params {
                count,
                tuples,
                f16,
                groups_x,
                stage_len,
                splits
            }
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    use crate::equivalence::{assert_values, random_boards, random_network};
    use crate::ntuple::standard_tuples;

    #[test]
    fn standard_network_split_across_bindings() {
        let Some(gpu) = rollsim_gpu::test_gpu("standard_network_split_across_bindings") else {
            return;
        };
        // 2^26 f32 weights: two 128 MiB bindings, weights in both.
        let net = random_network(standard_tuples(), 3, 100_000);
        let boards = random_boards(2000, 4);
        let cpu: Vec<f32> = boards.iter().map(|&b| net.value(b)).collect();
        let mut g = GpuNetwork::new(gpu, &net).unwrap();
        assert_values(&g.values(&boards).unwrap(), &cpu);
    }
}
