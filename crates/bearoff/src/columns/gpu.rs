//! The sweep by columns on the GPU: host side of `shaders/bearoff/columns.wgsl`, twin of
//! [`crate::columns::sweep`] with [`Fixed`] or u16 cells, whose exact integer arithmetic gives
//! the CPU's values to the last bit.
//!
//! The window of columns lives on the device, split across up to eight storage bindings of at
//! most the adapter's binding size, a whole number of columns each; u16 cells go two to a word,
//! each plane of a column padded to a whole word, and take half the memory of fixed32 (15x15
//! cubeful: 12 GB of window instead of 24). A level goes in chunks of
//! positions whose rows fit one binding: for each chunk one pass computes the rows, one the
//! columns (into their window slots), and the chunk's columns are copied back and handed to the
//! sink, the same as the CPU's (the output file, checkpoints and resuming are shared).

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use crate::columns::layout::Limits;
use crate::columns::layout::{DeviceLayout, column_bytes, device_layout, plane_words};
use crate::columns::seam::{ColumnPass, ColumnSweeper};
use crate::columns::{Cubeful, Cubeless, MAX_ROLL_PIPS, Moves, Recurrence};
use crate::numeric::{Cell, CellKind, Fixed, Q16, Real};
use rollsim_gpu::{Gpu, GpuError, ParamSlots, grid, layout_entry, whole};

const SHADER: &str = rollsim_shaders::bearoff::COLUMNS;
/// Most storage bindings the window takes (`w0` .. `w7` in the shader): 15x15 cubeful is 24 GB
/// of fixed32 window, six bindings of 4 GiB.
const MAX_WINDOW_BINDINGS: u64 = 8;
/// The other storage bindings: the move tables and the rows.
const OTHER_BINDINGS: u64 = 2;

/// A cell the GPU's sweep stores: its part of the kernel. Cells lie in the window's u32 words
/// as they lie in memory on the host, little-endian, `4 / size` to a word.
pub trait DeviceCell: Cell {
    /// The cell's part of the kernel (`shaders/bearoff/columns/*.wgsl`) for a recurrence.
    fn wgsl<const K: usize, R: Recurrence<K>>() -> String;
}

impl DeviceCell for Fixed {
    fn wgsl<const K: usize, R: Recurrence<K>>() -> String {
        rollsim_shaders::bearoff::COLUMNS_FIXED32
            .replace("{{OFFSET}}", &Fixed::from_f64(R::OFFSET).0.to_string())
            .replace("{{LOST}}", &Fixed::from_f64(R::LOST[0]).0.to_string())
    }
}

impl DeviceCell for u16 {
    fn wgsl<const K: usize, R: Recurrence<K>>() -> String {
        let (lo, hi) = R::RANGE;
        let steps = f64::from(Q16::STEPS);
        let span = hi - lo;
        let value = |v: f64| u16::store(v, R::RANGE).load(R::RANGE).steps().to_string();
        rollsim_shaders::bearoff::COLUMNS_U16
            .replace("{{LO}}", &((lo * steps) as i32).to_string())
            .replace("{{SPAN}}", &(span as i32).to_string())
            .replace("{{WON}}", &value(R::WON[0]))
            .replace("{{LOST}}", &value(R::LOST[0]))
            .replace(
                "{{BIAS}}",
                &((36.0 * (R::OFFSET - lo) * steps + 18.0 * span) as i32).to_string(),
            )
            .replace("{{DEN}}", &((36.0 * span) as i32).to_string())
    }
}

/// The kernel's WGSL for K values per pair under `R` in `C` cells, its window in `bindings`
/// bindings.
pub fn source<const K: usize, R: Recurrence<K>, C: DeviceCell>(bindings: u64) -> String {
    let (mut window, mut load, mut store) = (String::new(), String::new(), String::new());
    for b in 0..bindings {
        window += &format!(
            "@group(0) @binding({}) var<storage, read_write> w{b}: array<u32>;\n",
            3 + b
        );
        let case = if b + 1 == bindings {
            "default".to_string()
        } else {
            format!("case {b}u")
        };
        load += &format!("        {case}: {{ return w{b}[at]; }}\n");
        store += &format!("        {case}: {{ w{b}[at] = v; }}\n");
    }
    SHADER
        .replace("{{WINDOW}}", &window)
        .replace("{{LOAD}}", load.trim_end())
        .replace("{{STORE}}", store.trim_end())
        .replace("{{K}}", &K.to_string())
        .replace("{{AFTER}}", R::WGSL_AFTER)
        + &C::wgsl::<K, R>()
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    n: u32,
    first: u32,
    count: u32,
    groups_x: u32,
    plays_start_at: u32,
    plays_at: u32,
    slot_at: u32,
    order_at: u32,
    slots_per_binding: u32,
    plane_words: u32,
    pad1: u32,
    pad2: u32,
}

impl Limits {
    pub fn of(gpu: &Gpu) -> Limits {
        let binding = gpu
            .limits
            .max_storage_buffer_binding_size
            .min(gpu.limits.max_buffer_size);
        let stage = u64::from(gpu.limits.max_storage_buffers_per_shader_stage);
        Limits {
            binding,
            window: binding,
            rows: binding,
            window_bindings: stage
                .saturating_sub(OTHER_BINDINGS)
                .clamp(1, MAX_WINDOW_BINDINGS),
        }
    }
}

/// The u32 words of the tables the kernel reads, in one buffer: play-list starts, plays,
/// window slots, positions in level order; and where each starts.
fn pack(moves: &Moves) -> (Vec<u32>, [u32; 4]) {
    let (starts, plays) = moves.play_lists();
    let order: Vec<u32> = moves.levels.iter().flatten().copied().collect();
    let mut words = Vec::with_capacity(starts.len() + plays.len() + 2 * moves.n);
    let mut at = [0u32; 4];
    for (i, part) in [starts, plays, &moves.window.slot, &order]
        .iter()
        .enumerate()
    {
        at[i] = words.len() as u32;
        words.extend_from_slice(part);
    }
    (words, at)
}

/// Two-sided passes on the GPU, in fixed32 or u16 cells.
pub struct GpuColumns<'a>(pub &'a Gpu);

impl ColumnSweeper for GpuColumns<'_> {
    fn sweep(&self, pass: &dyn ColumnPass, cell: CellKind) -> anyhow::Result<()> {
        match (pass.cubeful(), cell) {
            (false, CellKind::Fixed32) => self.run::<1, Cubeless, Fixed>(pass),
            (false, CellKind::U16) => self.run::<1, Cubeless, u16>(pass),
            (true, CellKind::Fixed32) => self.run::<3, Cubeful, Fixed>(pass),
            (true, CellKind::U16) => self.run::<3, Cubeful, u16>(pass),
            (_, cell) => {
                anyhow::bail!(
                    "the GPU sweep stores fixed32 or u16 values, not {}",
                    cell.name()
                )
            }
        }
    }
}

impl GpuColumns<'_> {
    fn run<const K: usize, R: Recurrence<K>, C: DeviceCell>(
        &self,
        pass: &dyn ColumnPass,
    ) -> anyhow::Result<()> {
        if pass.skip() {
            return Ok(());
        }
        let reload = |x, cells: &mut [C]| pass.read_column(x, bytemuck::cast_slice_mut(cells));
        let sink = |x, column: &[C]| pass.write_column(x, bytemuck::cast_slice(column));
        let level_done = &mut |level| pass.level_done(level);
        sweep::<K, R, C>(
            self.0,
            pass.moves(),
            pass.first_level(),
            &reload,
            &sink,
            level_done,
        )
    }
}

/// Runs the sweep on the GPU from level `first`, as [`crate::columns::sweep`] does on CPU
/// threads: on resuming, `reload(x, cells)` gives back each column of the 24 levels below
/// `first`; each finished column goes to `sink`, and `level_done(l)` runs once level l is in it.
pub fn sweep<const K: usize, R: Recurrence<K>, C: DeviceCell>(
    gpu: &Gpu,
    moves: &Moves,
    first: usize,
    reload: &dyn Fn(u32, &mut [C]) -> std::io::Result<()>,
    sink: &(dyn Fn(u32, &[C]) -> std::io::Result<()> + Sync),
    level_done: &mut dyn FnMut(usize) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    sweep_within::<K, R, C>(gpu, Limits::of(gpu), moves, first, reload, sink, level_done)
}

/// [`sweep`] within `limits`: the device's buffers made once, the columns of a resumed build
/// put back, then level by level chunks of positions, each run on the device and its columns
/// read back into the sink.
fn sweep_within<const K: usize, R: Recurrence<K>, C: DeviceCell>(
    gpu: &Gpu,
    limits: Limits,
    moves: &Moves,
    first: usize,
    reload: &dyn Fn(u32, &mut [C]) -> std::io::Result<()>,
    sink: &(dyn Fn(u32, &[C]) -> std::io::Result<()> + Sync),
    level_done: &mut dyn FnMut(usize) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let n = moves.n as u64;
    let record = K * moves.n;
    let plane = plane_words(n, C::KIND);
    let record_bytes = column_bytes(n, K as u64, C::KIND);
    let capacity = moves.window.capacity as u64;
    let widest = moves.levels.iter().map(Vec::len).max().unwrap_or(1) as u64;
    let (words, at) = pack(moves);
    let layout = device_layout(
        n,
        capacity,
        widest,
        words.len() as u64,
        K as u64,
        C::KIND,
        limits,
    )
    .map_err(|why| GpuError::Unsupported(format!("{}: {why}", gpu.adapter.name)))?;
    // A column to and from its words on the device: plane j at word j * plane.
    let to_words = |column: &[C], words: &mut [u32]| {
        for (j, w) in words.chunks_mut(plane as usize).enumerate() {
            let cells: &mut [C] = bytemuck::cast_slice_mut(w);
            cells[..moves.n].copy_from_slice(&column[j * moves.n..][..moves.n]);
        }
    };
    let from_words = |words: &[u32], column: &mut [C]| {
        for (j, w) in words.chunks(plane as usize).enumerate() {
            let cells: &[C] = bytemuck::cast_slice(w);
            column[j * moves.n..][..moves.n].copy_from_slice(&cells[..moves.n]);
        }
    };
    let device =
        DeviceSweep::new::<K, R, C>(gpu, &layout, &words, record_bytes, 4 * record as u64)?;
    let record_words = (record_bytes / 4) as usize;
    // Streamed: the window in the device's word layout on the host, by window slot.
    let mut host = if layout.streamed {
        vec![0u32; capacity as usize * record_words]
    } else {
        Vec::new()
    };

    // Resuming: the columns the next levels read go back up (or into the host's window).
    let mut cells = vec![C::zeroed(); record];
    let mut up = vec![0u32; record_words];
    for level in first.saturating_sub(MAX_ROLL_PIPS)..first {
        for &x in &moves.levels[level] {
            reload(x, &mut cells)?;
            let slot = moves.window.slot[x as usize] as usize;
            if layout.streamed {
                to_words(&cells, &mut host[slot * record_words..][..record_words]);
            } else {
                to_words(&cells, &mut up);
                device.upload(gpu, slot as u64, &up);
            }
        }
    }

    let level_start: Vec<u32> = moves
        .levels
        .iter()
        .scan(0u32, |s, l| {
            let start = *s;
            *s += l.len() as u32;
            Some(start)
        })
        .collect();
    let max_dim = gpu.limits.max_compute_workgroups_per_dimension;
    // Streamed: per chunk, the device slot of each position it reads or writes (its
    // successors first, then its own), in the slot table's place in `moves_buf`.
    let mut device_slot = vec![u32::MAX; if layout.streamed { moves.n } else { 0 }];
    let mut reads: Vec<u32> = Vec::new();
    for (level, (positions, &start)) in moves
        .levels
        .iter()
        .zip(&level_start)
        .enumerate()
        .skip(first)
    {
        let mut done = 0;
        while done < positions.len() {
            let chunk = if layout.streamed {
                let chunk = streamed_chunk(
                    moves,
                    &positions[done..],
                    layout.chunk as usize,
                    layout.slots,
                    &mut device_slot,
                    &mut reads,
                );
                let Some(chunk) = chunk else {
                    anyhow::bail!(
                        "{}: position {} reads more columns than the {} the device holds",
                        gpu.adapter.name,
                        positions[done],
                        layout.slots
                    );
                };
                gpu.queue.write_buffer(
                    &device.moves_buf,
                    4 * u64::from(at[2]),
                    bytemuck::cast_slice(&device_slot),
                );
                for (k, &p) in reads[..reads.len() - chunk.len()].iter().enumerate() {
                    let slot = moves.window.slot[p as usize] as usize;
                    device.upload(gpu, k as u64, &host[slot * record_words..][..record_words]);
                }
                chunk
            } else {
                &positions[done..(done + layout.chunk as usize).min(positions.len())]
            };
            let count = chunk.len() as u32;
            // Threads: rows one a pair, columns one a window word; one width for both.
            let (gx, gy) = grid((u64::from(count) * n).div_ceil(64) as u32, max_dim);
            let column_groups = (u64::from(count) * plane).div_ceil(64);
            let gy_columns = column_groups.div_ceil(u64::from(gx)) as u32;
            let p = Params {
                n: n as u32,
                first: start + done as u32,
                count,
                groups_x: gx,
                plays_start_at: at[0],
                plays_at: at[1],
                slot_at: at[2],
                order_at: at[3],
                slots_per_binding: layout.slots_per_binding as u32,
                plane_words: plane as u32,
                pad1: 0,
                pad2: 0,
            };
            // The chunk's slots are contiguous (a level's are, and a streamed chunk's own),
            // possibly across bindings.
            let first_slot = if layout.streamed {
                device_slot[chunk[0] as usize]
            } else {
                moves.window.slot[chunk[0] as usize]
            };
            let back = device.run_chunk(gpu, &p, (gx, gy, gy_columns), first_slot, count)?;
            if layout.streamed {
                for (&x, words) in chunk.iter().zip(back.chunks(record_words)) {
                    let slot = moves.window.slot[x as usize] as usize;
                    host[slot * record_words..][..record_words].copy_from_slice(words);
                }
            }
            chunk
                .par_iter()
                .zip(back.par_chunks(record_words))
                .try_for_each_init(
                    || vec![C::zeroed(); record],
                    |column, (&x, words)| {
                        from_words(words, column);
                        sink(x, column)
                    },
                )?;
            done += chunk.len();
        }
        level_done(level)?;
    }
    Ok(())
}

/// Streamed: the next chunk of `positions`, at most `most` of them, as many as the device's
/// `slots` hold with their successors. `reads` becomes the columns the chunk reads, then its
/// own, and `device_slot` their device slots (the previous chunk's cleared). `None` when the
/// first position alone needs more slots.
fn streamed_chunk<'p>(
    moves: &Moves,
    positions: &'p [u32],
    most: usize,
    slots: u64,
    device_slot: &mut [u32],
    reads: &mut Vec<u32>,
) -> Option<&'p [u32]> {
    for &p in reads.iter() {
        device_slot[p as usize] = u32::MAX;
    }
    reads.clear();
    let mut count = 0;
    for &x in positions.iter().take(most) {
        let fresh: Vec<u32> = moves
            .successors(x)
            .into_iter()
            .filter(|&p| device_slot[p as usize] == u32::MAX)
            .collect();
        if (reads.len() + fresh.len() + count + 1) as u64 > slots {
            break;
        }
        for p in fresh {
            device_slot[p as usize] = reads.len() as u32;
            reads.push(p);
        }
        count += 1;
    }
    if count == 0 {
        return None;
    }
    let chunk = &positions[..count];
    for (k, &x) in chunk.iter().enumerate() {
        device_slot[x as usize] = (reads.len() + k) as u32;
    }
    reads.extend_from_slice(chunk);
    Some(chunk)
}

/// A sweep's pipelines and buffers on the device, bound once: the move tables, a chunk's
/// rows, the window's bindings, a chunk's read-back and its parameters.
struct DeviceSweep {
    rows_pipeline: wgpu::ComputePipeline,
    columns_pipeline: wgpu::ComputePipeline,
    moves_buf: wgpu::Buffer,
    /// Bound in `bind_group` only.
    _rows: wgpu::Buffer,
    window: Vec<wgpu::Buffer>,
    read: wgpu::Buffer,
    params: ParamSlots<Params>,
    bind_group: wgpu::BindGroup,
    slots_per_binding: u64,
    record_bytes: u64,
}

impl DeviceSweep {
    fn new<const K: usize, R: Recurrence<K>, C: DeviceCell>(
        gpu: &Gpu,
        layout: &DeviceLayout,
        words: &[u32],
        record_bytes: u64,
        row_bytes: u64,
    ) -> anyhow::Result<DeviceSweep> {
        use wgpu::BufferBindingType as B;
        use wgpu::BufferUsages as U;
        let source = source::<K, R, C>(layout.bindings);
        let mut entries = vec![
            ParamSlots::<Params>::layout(0),
            layout_entry(1, B::Storage { read_only: true }, false),
        ];
        entries.extend(
            (2..3 + layout.bindings as u32)
                .map(|b| layout_entry(b, B::Storage { read_only: false }, false)),
        );
        let (bind_layout, pipeline_layout) = gpu.compute_layout("bearoff columns", &entries);
        let rows_pipeline = gpu.pipeline_source(
            "bearoff columns (rows)",
            &source,
            "rows_main",
            Some(&pipeline_layout),
        )?;
        let columns_pipeline = gpu.pipeline_source(
            "bearoff columns (columns)",
            &source,
            "columns_main",
            Some(&pipeline_layout),
        )?;

        let moves_buf = gpu.buffer_with(
            "bearoff moves",
            bytemuck::cast_slice(words),
            U::STORAGE | U::COPY_DST,
        )?;
        let rows = gpu.buffer("bearoff rows", layout.chunk * row_bytes, U::STORAGE)?;
        let slots = layout.slots;
        let mut window = Vec::new();
        for b in 0..layout.bindings {
            let slots = slots
                .saturating_sub(b * layout.slots_per_binding)
                .min(layout.slots_per_binding);
            window.push(gpu.buffer(
                "bearoff window",
                slots * record_bytes,
                U::STORAGE | U::COPY_SRC | U::COPY_DST,
            )?);
        }
        let read = gpu.buffer(
            "bearoff columns read-back",
            layout.chunk * record_bytes,
            U::MAP_READ | U::COPY_DST,
        )?;
        // One chunk a submission, so one slot.
        let params = ParamSlots::new(gpu, "bearoff columns params", 1)?;
        let mut group = vec![params.entry(0), whole(1, &moves_buf), whole(2, &rows)];
        group.extend(
            window
                .iter()
                .enumerate()
                .map(|(b, w)| whole(3 + b as u32, w)),
        );
        let bind_group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("bearoff columns"),
            layout: &bind_layout,
            entries: &group,
        });
        Ok(DeviceSweep {
            rows_pipeline,
            columns_pipeline,
            moves_buf,
            _rows: rows,
            window,
            read,
            params,
            bind_group,
            slots_per_binding: layout.slots_per_binding,
            record_bytes,
        })
    }

    /// Where a device slot lives: its binding and byte offset.
    fn place(&self, slot: u64) -> (usize, u64) {
        (
            (slot / self.slots_per_binding) as usize,
            (slot % self.slots_per_binding) * self.record_bytes,
        )
    }

    /// Writes a column's words into device slot `slot`.
    fn upload(&self, gpu: &Gpu, slot: u64, words: &[u32]) {
        let (b, offset) = self.place(slot);
        gpu.queue
            .write_buffer(&self.window[b], offset, bytemuck::cast_slice(words));
    }

    /// Runs one chunk of `count` positions, whose columns are `count` device slots from
    /// `first_slot`: its rows, then its columns, with `groups` (x, rows' y, columns' y); its
    /// columns' words come back.
    fn run_chunk(
        &self,
        gpu: &Gpu,
        p: &Params,
        (gx, gy, gy_columns): (u32, u32, u32),
        first_slot: u32,
        count: u32,
    ) -> anyhow::Result<Vec<u32>> {
        self.params.write(gpu, std::slice::from_ref(p));
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("bearoff columns"),
            });
        // Two passes: wgpu orders them, so the columns see every row.
        for (pipeline, gy) in [
            (&self.rows_pipeline, gy),
            (&self.columns_pipeline, gy_columns),
        ] {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("bearoff columns"),
                timestamp_writes: None,
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &self.bind_group, &[self.params.offset(0)]);
            pass.dispatch_workgroups(gx, gy, 1);
        }
        for k in 0..u64::from(count) {
            let (b, offset) = self.place(u64::from(first_slot) + k);
            enc.copy_buffer_to_buffer(
                &self.window[b],
                offset,
                &self.read,
                k * self.record_bytes,
                self.record_bytes,
            );
        }
        gpu.submit_and_wait(enc, "sweeping a bearoff level")?;
        let back = gpu.read::<u32>(&[(&self.read, u64::from(count) * self.record_bytes)])?;
        Ok(back.into_iter().next().unwrap_or_default())
    }
}

/// The whole table in memory, as [`crate::columns::solve_in_memory`], on the GPU.
pub fn solve_in_memory<const K: usize, R: Recurrence<K>, C: DeviceCell>(
    gpu: &Gpu,
    space: crate::Space,
) -> anyhow::Result<Vec<C>> {
    solve_in_memory_within::<K, R, C>(gpu, Limits::of(gpu), space)
}

fn solve_in_memory_within<const K: usize, R: Recurrence<K>, C: DeviceCell>(
    gpu: &Gpu,
    limits: Limits,
    space: crate::Space,
) -> anyhow::Result<Vec<C>> {
    let moves = Moves::new(space);
    let n = moves.n;
    let out = std::sync::Mutex::new(vec![C::zeroed(); n * K * n]);
    sweep_within::<K, R, C>(
        gpu,
        limits,
        &moves,
        0,
        &|_, _| Ok(()),
        &|x, col| {
            let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
            out[x as usize * K * n..][..K * n].copy_from_slice(col);
            Ok(())
        },
        &mut |_| Ok(()),
    )?;
    Ok(out.into_inner().unwrap_or_else(|e| e.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Space;
    use crate::columns::layout::{MIN_STREAMED_SLOTS, moves_words};
    use crate::columns::{Cubeful, Cubeless, Window, solve_in_memory as cpu};
    use rollsim_gpu::test_gpu;

    #[test]
    fn both_kernels_validate_with_naga() {
        for (name, src) in (1..=MAX_WINDOW_BINDINGS).flat_map(|b| {
            [
                (
                    format!("cubeless fixed32, {b}"),
                    source::<1, Cubeless, Fixed>(b),
                ),
                (
                    format!("cubeful fixed32, {b}"),
                    source::<3, Cubeful, Fixed>(b),
                ),
                (format!("cubeless u16, {b}"), source::<1, Cubeless, u16>(b)),
                (format!("cubeful u16, {b}"), source::<3, Cubeful, u16>(b)),
            ]
        }) {
            let module = rollsim_gpu::kernel::validate_wgsl(&name, &src, false)
                .unwrap_or_else(|e| panic!("{e}"));
            rollsim_gpu::check_params!(
                module,
                0,
                Params {
                    n,
                    first,
                    count,
                    groups_x,
                    plays_start_at,
                    plays_at,
                    slot_at,
                    order_at,
                    slots_per_binding,
                    plane_words,
                    pad1,
                    pad2
                }
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn a_streamed_window_holds_any_positions_successors() {
        // The most distinct successors of one position: 29 on 4x4, 321 on 15x6.
        let most = |space| {
            let moves = Moves::new(space);
            (0..moves.n as u32)
                .map(|x| moves.successors(x).len() as u64)
                .max()
                .unwrap()
        };
        assert!(most(Space::new(6, 15).unwrap()) + 1 < MIN_STREAMED_SLOTS);
        let small = Space::new(4, 4).unwrap();
        assert!(most(small) + 1 < Window::capacity_of(small) / 2);
    }

    #[test]
    fn u16_kernel_constants_are_the_cpu_cells() {
        // Cubeless: cells are steps from 0; cubeful: two steps a cell from -65535.
        let cubeless = <u16 as DeviceCell>::wgsl::<1, Cubeless>();
        for c in [
            "LO: i32 = 0;",
            "SPAN: i32 = 1;",
            "WON: i32 = 65535;",
            "LOST: i32 = 0;",
            "BIAS: i32 = 2359278;",
            "DEN: i32 = 36;",
        ] {
            assert!(cubeless.contains(c), "{c}");
        }
        let cubeful = <u16 as DeviceCell>::wgsl::<3, Cubeful>();
        for c in [
            "LO: i32 = -65535;",
            "SPAN: i32 = 2;",
            "WON: i32 = 65535;",
            "LOST: i32 = -65535;",
            "BIAS: i32 = 2359296;",
            "DEN: i32 = 72;",
        ] {
            assert!(cubeful.contains(c), "{c}");
        }
        assert_eq!(column_bytes(5, 3, CellKind::U16), 36);
        assert_eq!(column_bytes(5, 3, CellKind::Fixed32), 60);
    }

    #[test]
    fn a_window_split_across_bindings_and_levels_in_chunks() {
        // 4 checkers on 4 points: 70 positions, all in the window, levels of up to 8.
        let space = Space::new(4, 4).unwrap();
        let moves = Moves::new(space);
        let (n, cap, words) = (
            moves.n as u64,
            moves.window.capacity as u64,
            moves_words(&moves),
        );
        let widest = moves.levels.iter().map(Vec::len).max().unwrap() as u64;
        assert_eq!((cap, widest), (70, 8));
        let limits = |window, rows| Limits {
            binding: 1 << 27,
            window,
            rows,
            window_bindings: 4,
        };
        let fixed = CellKind::Fixed32;
        // Cubeful: 20 columns a binding, rows of 3 positions; cubeless: 18, one position.
        let cases = [
            (3, limits(20 * 12 * n, 3 * 12 * n)),
            (1, limits(18 * 4 * n, 1)),
        ];
        for (k, l) in cases {
            let d = device_layout(n, cap, widest, words, k, fixed, l).unwrap();
            assert_eq!(d.bindings, 4, "{k}");
            assert!(d.chunk < widest);
        }
        // u16 halves the window: the cubeful window in 2 bindings of the same size.
        let d = device_layout(n, cap, widest, words, 3, CellKind::U16, cases[0].1).unwrap();
        assert_eq!((d.bindings, d.chunk), (2, 3));
        let refuse = |k, l| device_layout(n, cap, widest, words, k, fixed, l).is_err();
        // 7 bindings of 10 columns: streamed through 4 bindings, 40 columns.
        let d = device_layout(n, cap, widest, words, 3, fixed, limits(10 * 12 * n, 1)).unwrap();
        assert!(d.streamed && d.bindings == 4);
        assert!(refuse(3, limits(4 * 12 * n, 1)), "16 columns on the device");
        assert!(refuse(1, limits(4 * n - 1, 1)), "no column fits");
        assert!(refuse(1, limits(1 << 27, 1 << 27)) == (4 * words > 1 << 27));
        let Some(gpu) = test_gpu("a_window_split_across_bindings_and_levels_in_chunks") else {
            return;
        };
        let g = solve_in_memory_within::<3, Cubeful, Fixed>(gpu, cases[0].1, space);
        assert!(g.unwrap() == cpu::<3, Cubeful, Fixed>(space));
        let g = solve_in_memory_within::<1, Cubeless, Fixed>(gpu, cases[1].1, space);
        assert!(g.unwrap() == cpu::<1, Cubeless, Fixed>(space));
        // u16 with the same splits: bindings of half the bytes hold as many columns.
        let u16_limits = |(_, l): (u64, Limits)| Limits {
            window: l.window / 2,
            ..l
        };
        let g = solve_in_memory_within::<3, Cubeful, u16>(gpu, u16_limits(cases[0]), space);
        assert!(g.unwrap() == cpu::<3, Cubeful, u16>(space));
        let g = solve_in_memory_within::<1, Cubeless, u16>(gpu, u16_limits(cases[1]), space);
        assert!(g.unwrap() == cpu::<1, Cubeless, u16>(space));
        // Eight bindings of 9 columns, where the adapter allows ten storage buffers a stage.
        let eight = Limits {
            window_bindings: 8,
            ..limits(9 * 12 * n, 12 * n)
        };
        assert_eq!(
            device_layout(n, cap, widest, words, 3, fixed, eight)
                .unwrap()
                .bindings,
            8
        );
        if Limits::of(gpu).window_bindings >= 8 {
            let g = solve_in_memory_within::<3, Cubeful, Fixed>(gpu, eight, space);
            assert!(g.unwrap() == cpu::<3, Cubeful, Fixed>(space));
        }
    }

    #[test]
    fn a_streamed_window_gives_the_same_cells() {
        // Windows of 70 and ~600 columns through 2 bindings of 20 and 150 columns: every chunk
        // uploads what it reads.
        let streamed = |space: Space, k: u64, cell: CellKind, columns: u64| {
            let moves = Moves::new(space);
            let (n, cap) = (moves.n as u64, moves.window.capacity as u64);
            let limits = Limits {
                binding: 1 << 27,
                window: columns * column_bytes(n, k, cell),
                rows: 1 << 27,
                window_bindings: 2,
            };
            let widest = moves.levels.iter().map(Vec::len).max().unwrap() as u64;
            let d = device_layout(n, cap, widest, moves_words(&moves), k, cell, limits).unwrap();
            assert!(d.streamed && d.bindings == 2, "{d:?}");
            limits
        };
        let (small, large) = (Space::new(4, 4).unwrap(), Space::new(6, 6).unwrap());
        let Some(gpu) = test_gpu("a_streamed_window_gives_the_same_cells") else {
            return;
        };
        let l = streamed(small, 3, CellKind::Fixed32, 20);
        let g = solve_in_memory_within::<3, Cubeful, Fixed>(gpu, l, small);
        assert!(g.unwrap() == cpu::<3, Cubeful, Fixed>(small));
        let l = streamed(small, 1, CellKind::U16, 20);
        let g = solve_in_memory_within::<1, Cubeless, u16>(gpu, l, small);
        assert!(g.unwrap() == cpu::<1, Cubeless, u16>(small));
        let l = streamed(large, 3, CellKind::U16, 150);
        let g = solve_in_memory_within::<3, Cubeful, u16>(gpu, l, large);
        assert!(g.unwrap() == cpu::<3, Cubeful, u16>(large));
        // Too few slots for one position and its successors: refused, not wrong.
        let l = Limits {
            window: 8 * column_bytes(70, 1, CellKind::Fixed32),
            ..streamed(small, 1, CellKind::Fixed32, 20)
        };
        let layout = device_layout(
            70,
            70,
            8,
            moves_words(&Moves::new(small)),
            1,
            CellKind::Fixed32,
            l,
        );
        assert!(layout.is_err(), "{layout:?}");
    }

    #[test]
    fn u16_cells_are_the_cpus() {
        let Some(gpu) = test_gpu("u16_cells_are_the_cpus") else {
            return;
        };
        // 3 checkers on 4 points: an odd count of positions (35), planes padded to a word.
        // 7x6 rather than 8x6: 16 s instead of 50 on lavapipe.
        for (points, checkers) in [(4, 3), (6, 6), (6, 7)] {
            let space = Space::new(points, checkers).unwrap();
            let g = solve_in_memory::<1, Cubeless, u16>(gpu, space).unwrap();
            assert!(
                g == cpu::<1, Cubeless, u16>(space),
                "{checkers}x{points} cubeless"
            );
            let g = solve_in_memory::<3, Cubeful, u16>(gpu, space).unwrap();
            assert!(
                g == cpu::<3, Cubeful, u16>(space),
                "{checkers}x{points} cubeful"
            );
        }
    }
}
