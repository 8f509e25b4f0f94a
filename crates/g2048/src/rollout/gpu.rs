//! The GPU rollout engine: host side of `shaders/g2048/rollout.wgsl`.
//!
//! One evaluate call uploads the roots, clears the sums, encodes one dispatch per million
//! rollouts (each with its parameters at a dynamic uniform offset, so every dispatch of a batch
//! goes in one submission), and reads back 64 bytes per root. Roots beyond what one storage
//! binding holds go in further batches. Each invocation sums its run of rollouts in registers
//! and adds them into the global sums once per root: at 8 rollouts an invocation, 8 times fewer
//! global atomics than one add per rollout. On a GPU with subgroups the invocations' last sums
//! are first added across the subgroup ([`KERNEL_SUBGROUP`]): a subgroup's width fewer again.

use bytemuck::{Pod, Zeroable};

use crate::board::OVERFLOW_FLAG;
use crate::board::tables;
use crate::rollout::DIRECTION_ORDERS;
use crate::rollout::{Pending, RolloutEngine, RolloutSums, Root};
use rollsim_gpu::kernel::Constant;
use rollsim_gpu::{Gpu, GpuError, Kernel, ParamSlots, grid, layout_entry, whole};

/// The 2048 board, moves and spawns in WGSL: twin of [`crate::board`] and
/// [`crate::rollout::random_legal_move`].
pub const BOARD: &str = rollsim_shaders::shared::BOARD_2048;

const CONSTANTS: &[(&str, Constant)] = &[
    ("OVERFLOW_FLAG", Constant::U32(OVERFLOW_FLAG)),
    ("DIRECTION_ORDERS", Constant::Bytes(&DIRECTION_ORDERS)),
    ("WORDS_PER_ROOT", Constant::U32(WORDS_PER_ROOT as u32)),
];
const ROLLOUT: &str = rollsim_shaders::g2048::ROLLOUT;

/// Random 2048 rollouts with exact per-root sums: `shaders/g2048/rollout.wgsl`, twin of
/// [`crate::rollout`], each invocation adding its sums into the global ones.
pub const KERNEL: Kernel = Kernel {
    name: "rollout",
    constants: CONSTANTS,
    parts: &[
        rollsim_gpu::kernel::PHILOX,
        BOARD,
        rollsim_shaders::g2048::ROLLOUT_FLUSH,
        ROLLOUT,
    ],
};

/// The same kernel with each subgroup's sums of its last root added across the subgroup first
/// (`shaders/g2048/rollout/flush_subgroup.wgsl`), for adapters with subgroups: the same sums, with
/// about a subgroup's width fewer global atomics.
pub const KERNEL_SUBGROUP: Kernel = Kernel {
    name: "rollout_subgroup",
    constants: CONSTANTS,
    parts: &[
        rollsim_gpu::kernel::PHILOX,
        BOARD,
        rollsim_shaders::g2048::ROLLOUT_FLUSH_SUBGROUP,
        ROLLOUT,
    ],
};

/// Rollouts per dispatch. A rollout from a mid-game root is a few hundred moves, so a million
/// of them is tens of milliseconds on a desktop GPU: short enough for display watchdogs, long
/// enough that launch overhead (about 10 us) is noise.
pub const ROLLOUTS_PER_DISPATCH: u32 = 1 << 20;
/// Rollouts one invocation plays back to back (see the kernel), on a hardware GPU: 8 keeps a
/// million-rollout dispatch at 131,072 invocations, enough to fill a large GPU.
pub const ROLLOUTS_PER_INVOCATION: u32 = 8;
/// The same on a software adapter, which has only a few SIMD lanes to keep busy, but where
/// llvmpipe ends a SIMD group after 65,535 loop iterations (about as many moves): 16 rollouts of
/// a few hundred moves stay far inside that.
pub const ROLLOUTS_PER_INVOCATION_SOFTWARE: u32 = 16;
/// Dispatches per submission: 4096 timestamp queries, wgpu's largest query set.
const DISPATCHES_PER_BATCH: u32 = 2048;
const WORKGROUP: u32 = 64;
const WORDS_PER_ROOT: usize = 16;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    key: [u32; 2],
    rollouts: u32,
    first_rollout: u32,
    first_item: u32,
    items: u32,
    groups_x: u32,
    count: u32,
    per_invocation: u32,
    /// The struct's 8-byte alignment (its `key`) rounds it to 40 bytes.
    pad: u32,
}

/// Buffers sized for a batch; replaced by larger ones when a batch needs more.
struct Buffers {
    roots_cap: u64,
    slots: u32,
    roots: wgpu::Buffer,
    sums: wgpu::Buffer,
    sums_read: wgpu::Buffer,
    params: ParamSlots<Params>,
    queries: Option<(wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer)>,
    bind_group: wgpu::BindGroup,
}

/// A batch submitted, not yet read back.
struct Submitted {
    index: wgpu::SubmissionIndex,
    roots: usize,
    n: u32,
    dispatches: u32,
}

/// Rollouts on the GPU; the same sums as [`crate::rollout::CpuEngine`], bit for bit.
pub struct GpuRolloutEngine {
    gpu: &'static Gpu,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    row_moves: wgpu::Buffer,
    row_reward: wgpu::Buffer,
    /// Two sets, so that two batches can be in flight.
    buffers: [Option<Buffers>; 2],
    in_flight: [Option<Submitted>; 2],
    /// Whether callers may keep two batches in flight (see [`RolloutEngine::overlaps`]).
    overlap: bool,
    rollouts_per_dispatch: u32,
    rollouts_per_invocation: u32,
    roots_per_batch: usize,
    /// GPU time of all dispatches so far, from timestamp queries, when the adapter has them.
    pub gpu_seconds: Option<f64>,
    /// Dispatches so far.
    pub dispatches: u64,
}

impl GpuRolloutEngine {
    /// The engine with the subgroup reduction on a hardware GPU with subgroups. Not on a
    /// software adapter: lavapipe runs the kernel on a few CPU threads, where atomics do not
    /// contend, and there the reduction cost 2% at 256 x 256 rollouts and 10% at 16 x 10,000
    /// (results/2048/mc-kernel-lavapipe-subgroup.md).
    pub fn new(gpu: &'static Gpu) -> Result<Self, GpuError> {
        Self::with_reduction(gpu, gpu.subgroups && gpu.adapter.real_gpu)
    }

    /// The engine with ([`KERNEL_SUBGROUP`], which needs an adapter with subgroups) or without
    /// ([`KERNEL`]) the subgroup reduction.
    pub fn with_reduction(gpu: &'static Gpu, subgroups: bool) -> Result<Self, GpuError> {
        assert!(
            !subgroups || gpu.subgroups,
            "the subgroup reduction on an adapter without subgroups"
        );
        use wgpu::BufferBindingType as B;
        let (lr, reward) = tables().gpu_row_tables();
        let row_moves = gpu.buffer_with(
            "row_moves",
            bytemuck::cast_slice(&lr),
            wgpu::BufferUsages::STORAGE,
        )?;
        let row_reward = gpu.buffer_with(
            "row_reward",
            bytemuck::cast_slice(&reward),
            wgpu::BufferUsages::STORAGE,
        )?;
        let (layout, pipeline_layout) = gpu.compute_layout(
            "rollout2048",
            &[
                layout_entry(0, B::Storage { read_only: true }, false),
                layout_entry(1, B::Storage { read_only: true }, false),
                layout_entry(2, B::Storage { read_only: true }, false),
                layout_entry(3, B::Storage { read_only: false }, false),
                ParamSlots::<Params>::layout(4),
            ],
        );
        let kernel = if subgroups { &KERNEL_SUBGROUP } else { &KERNEL };
        let pipeline = gpu.pipeline(kernel, Some(&pipeline_layout))?;
        Ok(GpuRolloutEngine {
            gpu,
            pipeline,
            layout,
            row_moves,
            row_reward,
            buffers: [None, None],
            in_flight: [None, None],
            // A software adapter's device is the host's own cores, and the halves' batches are
            // half as wide: on lavapipe, 32 games at 10 rollouts a move ran 90,267 rollouts/s
            // with each step waited for and 71,773 overlapped (results/2048/mc-kernel-lavapipe.md).
            overlap: gpu.adapter.real_gpu,
            rollouts_per_dispatch: ROLLOUTS_PER_DISPATCH,
            rollouts_per_invocation: if gpu.adapter.real_gpu {
                ROLLOUTS_PER_INVOCATION
            } else {
                ROLLOUTS_PER_INVOCATION_SOFTWARE
            },
            roots_per_batch: usize::MAX,
            gpu_seconds: gpu.timestamps.then_some(0.0),
            dispatches: 0,
        })
    }

    /// Smaller dispatches and batches than the defaults, so that tests exercise the splitting
    /// of large jobs with small ones. `rollouts_per_dispatch` is rounded up to a workgroup.
    pub fn with_split(mut self, rollouts_per_dispatch: u32, roots_per_batch: usize) -> Self {
        self.rollouts_per_dispatch = rollouts_per_dispatch.next_multiple_of(WORKGROUP);
        self.roots_per_batch = roots_per_batch.max(1);
        self
    }

    /// Whether callers may overlap their work with the GPU's, keeping two batches in flight (the
    /// default on a hardware GPU), or must wait for each (on a software adapter).
    pub fn with_overlap(mut self, overlap: bool) -> Self {
        self.overlap = overlap;
        self
    }

    /// Rollouts each invocation plays back to back (at least 1).
    pub fn with_rollouts_per_invocation(mut self, k: u32) -> Self {
        self.rollouts_per_invocation = k.max(1);
        self
    }

    /// One small untimed call, so that a timed run measures steady state.
    pub fn evaluate_warm(&mut self, roots: &[Root], n: u32) -> anyhow::Result<()> {
        self.evaluate(0, &roots[..roots.len().min(16)], n.min(16))?;
        Ok(())
    }

    /// The most roots one batch takes: the sums must fit one storage binding and one buffer,
    /// and the batch's items must be countable in `u32` with room for every dispatch slot.
    fn max_roots(&self, n: u32) -> usize {
        let l = &self.gpu.limits;
        let bytes = l.max_storage_buffer_binding_size.min(l.max_buffer_size);
        let by_memory = bytes / (WORDS_PER_ROOT as u64 * 4);
        // Items are counted in u32 in the kernel.
        let items = (u64::from(DISPATCHES_PER_BATCH) * u64::from(self.rollouts_per_dispatch))
            .min(u64::from(u32::MAX));
        let by_items = items / u64::from(n);
        (by_memory.min(by_items).max(1) as usize).min(self.roots_per_batch)
    }

    fn ensure_buffers(&mut self, set: usize, roots: u64, slots: u32) -> Result<(), GpuError> {
        if let Some(b) = &self.buffers[set]
            && b.roots_cap >= roots
            && b.slots >= slots
        {
            return Ok(());
        }
        let roots_cap = roots.next_power_of_two().max(64);
        let slots = slots.max(1);
        let g = self.gpu;
        use wgpu::BufferUsages as U;
        let sums_bytes = roots_cap * WORDS_PER_ROOT as u64 * 4;
        let roots_buf = g.buffer("roots", roots_cap * 16, U::STORAGE | U::COPY_DST)?;
        let sums = g.buffer("sums", sums_bytes, U::STORAGE | U::COPY_SRC | U::COPY_DST)?;
        let sums_read = g.buffer("sums readback", sums_bytes, U::MAP_READ | U::COPY_DST)?;
        let params = ParamSlots::new(g, "params", slots)?;
        let queries = if g.timestamps {
            let count = 2 * slots;
            let set = g.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("rollout timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count,
            });
            let bytes = u64::from(count) * 8;
            let resolve = g.buffer("timestamps", bytes, U::QUERY_RESOLVE | U::COPY_SRC)?;
            let read = g.buffer("timestamps readback", bytes, U::MAP_READ | U::COPY_DST)?;
            Some((set, resolve, read))
        } else {
            None
        };
        let bind_group = g.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("rollout2048"),
            layout: &self.layout,
            entries: &[
                whole(0, &self.row_moves),
                whole(1, &self.row_reward),
                whole(2, &roots_buf),
                whole(3, &sums),
                params.entry(4),
            ],
        });
        self.buffers[set] = Some(Buffers {
            roots_cap,
            slots,
            roots: roots_buf,
            sums,
            sums_read,
            params,
            queries,
            bind_group,
        });
        Ok(())
    }

    /// Encodes and submits one batch into buffer set `set`, returning at once.
    fn submit_batch(
        &mut self,
        set: usize,
        seed: u64,
        roots: &[Root],
        range: std::ops::Range<u32>,
    ) -> Result<Submitted, GpuError> {
        let n = range.len() as u32;
        let items = roots.len() as u64 * u64::from(n);
        let per_dispatch = u64::from(self.rollouts_per_dispatch);
        let dispatches = items.div_ceil(per_dispatch) as u32;
        self.ensure_buffers(set, roots.len() as u64, dispatches)?;
        let g = self.gpu;
        let b = self.buffers[set].as_ref().expect("buffers just ensured");
        let max_dim = g.limits.max_compute_workgroups_per_dimension;

        g.queue
            .write_buffer(&b.roots, 0, bytemuck::cast_slice(roots));
        let mut params = Vec::with_capacity(dispatches as usize);
        let mut shapes = Vec::with_capacity(dispatches as usize);
        for d in 0..dispatches {
            let first = u64::from(d) * per_dispatch;
            let count = (items - first).min(per_dispatch) as u32;
            let per_invocation = self.rollouts_per_invocation;
            let (x, y) = grid(count.div_ceil(WORKGROUP * per_invocation), max_dim);
            let p = Params {
                key: [seed as u32, (seed >> 32) as u32],
                rollouts: n,
                first_rollout: range.start,
                first_item: first as u32,
                items: items as u32,
                groups_x: x,
                count,
                per_invocation,
                pad: 0,
            };
            params.push(p);
            shapes.push((x, y));
        }
        b.params.write(g, &params);

        let sums_bytes = roots.len() as u64 * WORDS_PER_ROOT as u64 * 4;
        let mut enc = g
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("rollouts"),
            });
        enc.clear_buffer(&b.sums, 0, Some(sums_bytes));
        for (d, &(x, y)) in shapes.iter().enumerate() {
            let d = d as u32;
            let timestamp_writes =
                b.queries
                    .as_ref()
                    .map(|(set, _, _)| wgpu::ComputePassTimestampWrites {
                        query_set: set,
                        beginning_of_pass_write_index: Some(2 * d),
                        end_of_pass_write_index: Some(2 * d + 1),
                    });
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rollout2048"),
                timestamp_writes,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &b.bind_group, &[b.params.offset(d)]);
            pass.dispatch_workgroups(x, y, 1);
        }
        enc.copy_buffer_to_buffer(&b.sums, 0, &b.sums_read, 0, sums_bytes);
        let query_bytes = u64::from(2 * dispatches) * 8;
        if let Some((set, resolve, read)) = &b.queries {
            enc.resolve_query_set(set, 0..2 * dispatches, resolve, 0);
            enc.copy_buffer_to_buffer(resolve, 0, read, 0, query_bytes);
        }
        Ok(Submitted {
            index: g.submit(enc, "running rollouts")?,
            roots: roots.len(),
            n,
            dispatches,
        })
    }

    /// Waits for the batch submitted into buffer set `set` and reads its sums back.
    fn collect_batch(&mut self, set: usize, s: Submitted) -> Result<Vec<RolloutSums>, GpuError> {
        let g = self.gpu;
        let b = self.buffers[set]
            .as_ref()
            .expect("a submitted batch has buffers");
        let sums_bytes = s.roots as u64 * WORDS_PER_ROOT as u64 * 4;
        let query_bytes = u64::from(2 * s.dispatches) * 8;
        let mut reads = vec![(&b.sums_read, sums_bytes)];
        if let Some((_, _, read)) = &b.queries {
            reads.push((read, query_bytes));
        }
        let words = g.read_after::<u32>(Some(s.index), &reads)?;
        if let (Some(total), Some(ts)) = (&mut self.gpu_seconds, words.get(1)) {
            let period = f64::from(g.queue.get_timestamp_period()) * 1e-9;
            for pair in ts.chunks_exact(4) {
                let begin = u64::from(pair[0]) | u64::from(pair[1]) << 32;
                let end = u64::from(pair[2]) | u64::from(pair[3]) << 32;
                *total += end.saturating_sub(begin) as f64 * period;
            }
        }
        self.dispatches += u64::from(s.dispatches);
        all_sums(&words[0], s.n)
    }
}

/// Every root's sums from the kernel's output, after checking that each recorded all `n`
/// rollouts.
fn all_sums(words: &[u32], n: u32) -> Result<Vec<RolloutSums>, GpuError> {
    let roots = words.chunks_exact(WORDS_PER_ROOT);
    if let Some((i, w)) = roots.clone().enumerate().find(|(_, w)| w[13] != n) {
        return Err(GpuError::Incomplete(format!(
            "root {i} recorded {} of {n} rollouts; the driver cut the kernel short \
             (lavapipe stops a shader after 65,535 loop iterations)",
            w[13]
        )));
    }
    Ok(roots.map(|w| sums_from_words(w, n)).collect())
}

/// A root's sums from the kernel's 16 words.
fn sums_from_words(w: &[u32], n: u32) -> RolloutSums {
    let u64_at = |i: usize| u64::from(w[i]) | u64::from(w[i + 1]) << 32;
    let u96_at = |i: usize| u128::from(u64_at(i)) | u128::from(w[i + 2]) << 64;
    RolloutSums {
        rollouts: n,
        score: u64_at(0),
        score_sq: u96_at(2),
        tile_sum: u64_at(5),
        tile_sum_sq: u96_at(7),
        moves: u64_at(10),
        overflows: w[12],
    }
}

impl RolloutEngine for GpuRolloutEngine {
    fn backend(&self) -> rollsim_core::Device {
        rollsim_core::Device::Gpu
    }

    fn adapter(&self) -> Option<String> {
        Some(self.gpu.adapter.name.clone())
    }

    fn evaluate_range(
        &mut self,
        seed: u64,
        roots: &[Root],
        range: std::ops::Range<u32>,
    ) -> anyhow::Result<Vec<RolloutSums>> {
        let n = range.len() as u32;
        anyhow::ensure!(n > 0, "the number of rollouts must be at least 1");
        anyhow::ensure!(
            self.in_flight.iter().all(Option::is_none),
            "rollouts evaluated while a started batch is in flight"
        );
        let mut out = Vec::with_capacity(roots.len());
        for batch in roots.chunks(self.max_roots(n)) {
            let s = self.submit_batch(0, seed, batch, range.clone())?;
            out.extend(self.collect_batch(0, s)?);
        }
        Ok(out)
    }

    fn start(&mut self, seed: u64, roots: &[Root], n: u32) -> anyhow::Result<Pending> {
        anyhow::ensure!(n > 0, "the number of rollouts must be at least 1");
        let Some(set) = self.in_flight.iter().position(Option::is_none) else {
            anyhow::bail!("two batches of rollouts are in flight already");
        };
        if roots.is_empty() {
            return Ok(Pending::Ready(Vec::new()));
        }
        if roots.len() > self.max_roots(n) {
            // More than one batch: evaluated here (refused while another is in flight).
            return Ok(Pending::Ready(self.evaluate(seed, roots, n)?));
        }
        self.in_flight[set] = Some(self.submit_batch(set, seed, roots, 0..n)?);
        Ok(Pending::InFlight(set))
    }

    fn finish(&mut self, pending: Pending) -> anyhow::Result<Vec<RolloutSums>> {
        match pending {
            Pending::Ready(sums) => Ok(sums),
            Pending::InFlight(set) => {
                let s = self.in_flight[set]
                    .take()
                    .ok_or_else(|| anyhow::anyhow!("no batch in flight in set {set}"))?;
                Ok(self.collect_batch(set, s)?)
            }
        }
    }

    fn overlaps(&self) -> bool {
        self.overlap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel parses and validates with naga, and its parameters are the host's: no GPU
    /// needed.
    #[test]
    fn rollout_kernel_validates_with_naga() {
        for kernel in [KERNEL, KERNEL_SUBGROUP] {
            check_kernel(kernel);
        }
    }

    fn check_kernel(kernel: Kernel) {
        let module = kernel.validate().unwrap_or_else(|e| panic!("{e}"));
        rollsim_gpu::check_params!(
            module,
            4,
            Params {
                key,
                rollouts,
                first_rollout,
                first_item,
                items,
                groups_x,
                count,
                per_invocation,
                pad
            }
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    use crate::rollout::evaluate_cpu;

    /// The reductions the adapter runs: without subgroups always, with them where it has them.
    /// Where tests' needs are required (CI), lavapipe must have them, so that both are tested.
    fn reductions(gpu: &Gpu) -> Vec<bool> {
        if rollsim_core::testing::required() {
            assert!(gpu.subgroups, "{} has no subgroups", gpu.adapter.name);
        }
        if gpu.subgroups {
            vec![false, true]
        } else {
            vec![false]
        }
    }

    #[test]
    fn sums_from_words_reads_every_field() {
        let mut w = [0u32; 16];
        w[0] = 5;
        w[1] = 1;
        w[2] = 7;
        w[4] = 2;
        w[5] = 9;
        w[9] = 3;
        w[10] = 11;
        w[12] = 4;
        let s = sums_from_words(&w, 10);
        assert_eq!(s.score, 5 + (1 << 32));
        assert_eq!(s.score_sq, 7 + (2u128 << 64));
        assert_eq!(s.tile_sum, 9);
        assert_eq!(s.tile_sum_sq, 3u128 << 64);
        assert_eq!(s.moves, 11);
        assert_eq!(s.overflows, 4);
        assert_eq!(s.rollouts, 10);
    }

    #[test]
    fn missing_rollouts_are_an_error() {
        let mut w = [0u32; 32];
        w[13] = 10;
        w[16 + 13] = 10;
        assert_eq!(all_sums(&w, 10).unwrap().len(), 2);
        w[16 + 13] = 9;
        let e = all_sums(&w, 10).unwrap_err().to_string();
        assert!(e.contains("root 1 recorded 9 of 10"), "{e}");
    }

    /// The invocations' sums, added into the global ones once per root they played, are the
    /// per-rollout sums: runs of 16 that cross many roots (one rollout a root), one rollout an
    /// invocation around a workgroup's 64, runs that cross root boundaries, and 10,000 rollouts
    /// a root (carries through every word), in dispatches that cut roots apart.
    #[test]
    fn reduced_sums_are_the_per_rollout_sums() {
        let Some(gpu) = rollsim_gpu::test_gpu("reduced_sums_are_the_per_rollout_sums") else {
            return;
        };
        let roots = crate::rollout::sample_roots(5);
        for subgroups in reductions(gpu) {
            for (n, k) in [
                (1, 16),
                (63, 1),
                (64, 1),
                (65, 1),
                (63, 16),
                (65, 16),
                (10_000, 16),
                (10_000, 1),
            ] {
                let mut engine = GpuRolloutEngine::with_reduction(gpu, subgroups)
                    .unwrap()
                    .with_split(4096, usize::MAX)
                    .with_rollouts_per_invocation(k);
                let want = evaluate_cpu(9, &roots, n);
                assert_eq!(
                    engine.evaluate(9, &roots, n).unwrap(),
                    want,
                    "{n} rollouts, {k} an invocation, subgroups {subgroups}"
                );
            }
        }
        let high = evaluate_cpu(9, &roots, 10_000)[0];
        assert!(
            high.score_sq > 1 << 32,
            "the squares carry: {}",
            high.score_sq
        );
    }

    #[test]
    fn split_jobs_give_the_same_sums() {
        let Some(gpu) = rollsim_gpu::test_gpu("split_jobs_give_the_same_sums") else {
            return;
        };
        let roots = crate::rollout::sample_roots(23);
        let whole = evaluate_cpu(5, &roots, 50);
        // 23 roots x 50 rollouts in dispatches of 128 rollouts (a root's rollouts straddle
        // dispatches) and batches of 5 roots (the last one short).
        for subgroups in reductions(gpu) {
            for k in [1, 3, 64] {
                let mut engine = GpuRolloutEngine::with_reduction(gpu, subgroups)
                    .unwrap()
                    .with_split(100, 5)
                    .with_rollouts_per_invocation(k);
                let got = engine.evaluate(5, &roots, 50).unwrap();
                assert_eq!(got, whole, "k {k}, subgroups {subgroups}");
                assert!(engine.dispatches >= 10, "{} dispatches", engine.dispatches);
            }
        }
        // A later, larger call grows the buffers and still agrees.
        let more = crate::rollout::sample_roots(40);
        let mut engine = GpuRolloutEngine::new(gpu).unwrap();
        assert_eq!(engine.evaluate(5, &roots[..3], 50).unwrap(), whole[..3]);
        assert_eq!(
            engine.evaluate(6, &more, 20).unwrap(),
            evaluate_cpu(6, &more, 20)
        );
    }
}
