//! What a two-sided build needs, worked out before anything is allocated, against what the
//! machine has.

use std::path::Path;

use super::columns::{Moves, Window, sweep_bytes};
use super::format::{GNUBG_ENTRIES, spills_index};
use super::numeric::CellKind;
use super::one_sided::sweep_bytes as one_sided_sweep_bytes;
use super::position::Space;
use super::table::{Layout, Section};
use crate::columns::layout::{DeviceLayout, Limits, device_layout};
use rollsim_core::memory::memory_limit;

/// How values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// f32, and for cubeful equities u16 where f32 does not fit in memory.
    Auto,
    Cell(CellKind),
}

/// Memory and disk of a two-sided build by columns.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Plan {
    pub points: u32,
    pub checkers: u32,
    pub pairs: u64,
    pub cubeless_cell: CellKind,
    pub cubeful_cell: Option<CellKind>,
    pub threads: usize,
    /// Columns the window holds at once, of `positions`.
    pub window_columns: u64,
    pub positions: u64,
    /// Peak bytes of memory: the window of the largest pass, the move tables, per-thread
    /// scratch, and the process itself.
    pub memory_bytes: u64,
    pub window_bytes: u64,
    /// Bytes of the table file (the rollsim format).
    pub file_bytes: u64,
    /// Bytes of disk the build needs: the table, plus a gnubg file converted from it.
    pub disk_bytes: u64,
    /// What the machine has (None where it cannot tell).
    pub memory_available: Option<u64>,
    /// What bounds `memory_available`: the machine, a memory cgroup, or a ulimit.
    pub memory_bound: Option<String>,
    pub disk_available: Option<u64>,
    /// On the GPU: the adapter, the bytes the sweep takes on it and how its window is split,
    /// or why it does not fit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuPlan>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct GpuPlan {
    pub adapter: String,
    pub device_bytes: u64,
    pub window_bindings: u64,
    pub binding_bytes: u64,
    /// Whether the window lives on the host, streamed through the device (a pass's, at least).
    pub streamed: bool,
    /// Why the sweep does not fit the adapter, if it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// The process, its libraries and allocator slack: measured at 20-30 MB RSS for small builds.
const PROCESS_BYTES: u64 = 64 << 20;
/// Room left for the system: never plan to the last byte of available memory.
pub const HEADROOM_BYTES: u64 = 512 << 20;

impl Plan {
    /// The plan for a table over `space` (cubeful or not), built on `threads` threads into
    /// `dir`; with `gnubg_bytes` of gnubg output converted from it.
    pub fn new(
        space: Space,
        cubeful: bool,
        precision: Precision,
        threads: usize,
        dir: &Path,
        gnubg_bytes: Option<u64>,
    ) -> Plan {
        let limit = memory_limit();
        let available = limit.as_ref().map(|l| l.available);
        let memory = |cubeless, cubeful| cpu_memory(space, threads as u64, cubeless, cubeful);
        let cells = match precision {
            Precision::Cell(c) => (c, cubeful.then_some(c)),
            Precision::Auto => {
                let fits = |c| fits(memory(CellKind::F32, Some(c)), available);
                let c = if !cubeful || fits(CellKind::F32) {
                    CellKind::F32
                } else {
                    CellKind::U16
                };
                (CellKind::F32, cubeful.then_some(c))
            }
        };
        let mut plan = Plan::of_cells(space, cells, threads, dir, gnubg_bytes);
        plan.memory_available = available;
        plan.memory_bound = limit.map(|l| l.bound);
        plan.memory_bytes = memory(cells.0, cells.1);
        plan
    }

    /// The plan with these cells (cubeless, cubeful), its memory still to be worked out.
    fn of_cells(
        space: Space,
        (cubeless, cubeful_cell): (CellKind, Option<CellKind>),
        threads: usize,
        dir: &Path,
        gnubg_bytes: Option<u64>,
    ) -> Plan {
        let n = space.len() as u64;
        let window = Window::capacity_of(space);
        let layout = Layout {
            space,
            cubeless,
            cubeful: cubeful_cell,
        };
        let window_bytes = layout
            .sections()
            .iter()
            .map(|&s| window.saturating_mul(layout.section_bytes(s)))
            .max()
            .unwrap_or(0);
        let file_bytes = layout.file_bytes();
        Plan {
            points: space.points,
            checkers: space.checkers,
            pairs: n.saturating_mul(n),
            cubeless_cell: cubeless,
            cubeful_cell,
            threads,
            window_columns: window,
            positions: n,
            memory_bytes: 0,
            window_bytes,
            file_bytes,
            disk_bytes: file_bytes + gnubg_bytes.unwrap_or(0),
            memory_available: None,
            memory_bound: None,
            disk_available: disk_available(dir),
            gpu: None,
        }
    }

    /// The plan for the GPU's sweep on an adapter with `limits`: the window lives on the device,
    /// or, where it does not fit the adapter's bindings, on the host and streamed through the
    /// device chunk by chunk; the host holds the move tables, one chunk's read-back and a
    /// streamed window. Cells: fixed32 or u16 as asked; auto, for each pass the first of fixed32
    /// on the device, u16 on the device, fixed32 streamed (where the host holds its window) and
    /// u16 streamed.
    pub fn for_gpu(
        space: Space,
        cubeful: bool,
        precision: Precision,
        adapter: &str,
        limits: Limits,
        dir: &Path,
        gnubg_bytes: Option<u64>,
    ) -> Plan {
        let sizes = space.level_sizes();
        let widest = sizes.iter().copied().max().unwrap_or(1);
        let words = Moves::estimate_gpu_words(space);
        let n = space.len() as u64;
        let window = Window::capacity_of(space);
        let limit = memory_limit();
        let available = limit.as_ref().map(|l| l.available);
        let host = |l: &DeviceLayout| PROCESS_BYTES + Moves::estimate_bytes(space) + l.host_bytes;
        let layout_of = |k, cell| device_layout(n, window, widest, words, k, cell, limits);
        let cell_for = |k| match precision {
            Precision::Cell(c) => c,
            Precision::Auto => {
                let (fixed, u16) = (CellKind::Fixed32, CellKind::U16);
                let resident = |c| layout_of(k, c).is_ok_and(|l| !l.streamed);
                let streams = |c| layout_of(k, c).is_ok_and(|l| fits(host(&l), available));
                [fixed, u16, fixed]
                    .into_iter()
                    .zip([resident(fixed), resident(u16), streams(fixed)])
                    .find_map(|(c, ok)| ok.then_some(c))
                    .unwrap_or(u16)
            }
        };
        let cells = (cell_for(1), cubeful.then(|| cell_for(3)));
        let mut plan = Plan::of_cells(space, cells, 1, dir, gnubg_bytes);
        // Each pass's buffers are freed before the next: the larger of the two is the need.
        let layouts: Vec<_> = std::iter::once(layout_of(1, cells.0))
            .chain(cells.1.map(|c| layout_of(3, c)))
            .collect();
        let ok = || layouts.iter().flatten();
        let largest = ok().max_by_key(|l| l.device_bytes).copied();
        plan.memory_available = available;
        plan.memory_bound = limit.map(|l| l.bound);
        plan.memory_bytes = ok()
            .map(host)
            .max()
            .unwrap_or(PROCESS_BYTES + Moves::estimate_bytes(space));
        plan.gpu = Some(GpuPlan {
            adapter: adapter.to_string(),
            device_bytes: largest.map_or(0, |l| l.device_bytes),
            window_bindings: largest.map_or(0, |l| l.bindings),
            binding_bytes: limits.binding,
            streamed: ok().any(|l| l.streamed),
            refused: layouts.iter().find_map(|l| l.as_ref().err().cloned()),
        });
        plan
    }

    pub fn layout(&self) -> Layout {
        Layout {
            space: Space::new(self.points, self.checkers).expect("a planned space"),
            cubeless: self.cubeless_cell,
            cubeful: self.cubeful_cell,
        }
    }

    pub fn fits_memory(&self) -> bool {
        fits(self.memory_bytes, self.memory_available)
    }

    pub fn fits_disk(&self, already_written: u64) -> bool {
        self.disk_available
            .is_none_or(|a| self.disk_bytes.saturating_sub(already_written) <= a)
    }

    /// Which sections run, each with its values per pair and cell.
    pub fn passes(&self) -> Vec<(Section, CellKind)> {
        let mut p = vec![(Section::Cubeless, self.cubeless_cell)];
        if let Some(c) = self.cubeful_cell {
            p.push((Section::Cubeful, c));
        }
        p
    }
}

/// Peak bytes of the CPU's build with these cells: the larger pass's sweep, the move tables,
/// the process.
fn cpu_memory(space: Space, threads: u64, cubeless: CellKind, cubeful: Option<CellKind>) -> u64 {
    let n = space.len() as u64;
    let window = Window::capacity_of(space);
    let sweep = |k, cell| sweep_bytes(n, window, k, cell, threads);
    let passes = sweep(1, cubeless).max(cubeful.map_or(0, |c| sweep(3, c)));
    passes.saturating_add(Moves::estimate_bytes(space) + PROCESS_BYTES)
}

/// Whether `bytes` fit in `available` (unknown: yes) with the headroom left to the system.
fn fits(bytes: u64, available: Option<u64>) -> bool {
    available.is_none_or(|a| bytes.saturating_add(HEADROOM_BYTES) <= a)
}

/// Free bytes on the file system holding `dir` (or its nearest existing parent).
pub fn disk_available(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut d = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        while !d.exists() {
            d = d.parent().filter(|p| !p.as_os_str().is_empty())?;
        }
        let path = std::ffi::CString::new(d.as_os_str().as_bytes()).ok()?;
        // SAFETY: statvfs fills the struct we pass for a NUL-terminated path.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
            return None;
        }
        Some(st.f_bavail as u64 * st.f_frsize as u64)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// Tables up to this many positions run their two passes side by side, in one sweep: a
/// position's moves are found once, and the small levels' tasks of both passes keep two cores
/// busy. Larger tables' levels fill the cores alone, and there the second pass's rings only
/// cost memory (15x10: half as much again).
const SIDE_BY_SIDE_MAX: usize = 1 << 20;

/// Whether a one-sided gnubg build with first-off distributions sweeps its two passes side by
/// side: up to 2^20 positions, where one level is too small to keep the cores busy alone.
pub fn one_sided_side_by_side(space: Space) -> bool {
    space.len() <= SIDE_BY_SIDE_MAX
}

/// Estimated peak bytes of a one-sided build, before it allocates. Streamed into gnubg's
/// format: the sweep's rings (`one_sided::sweep_bytes`, both passes' where they run side by
/// side) and the plain layout's records, or afterwards the compressed layout's index.
/// Otherwise the whole table, both passes at once: per position its
/// mean, its distribution as the sweep collects it and then in full rows, besides the rings.
/// Stored entries per position are measured on 15 checkers (6, 8, 10 points: f64 12.8, 16.8,
/// 21.2; fixed32 10.2, 12.2, 14.4; first checker off 1.2 to 1.6, at most 11, 16, 21 rolls),
/// rounded up into rules of the points; fewer checkers take fewer. Checked against peak RSS
/// in `results/bearoff/bearoff-vs-makebearoff.*`.
pub fn one_sided_bytes(
    space: Space,
    gammon: bool,
    streamed: bool,
    exact: bool,
    compressed: bool,
) -> u64 {
    let n = space.len() as u64;
    let p = u64::from(space.points);
    let (width, bytes) = if exact {
        (22 * p / 10 + 1, 8)
    } else {
        (11 * p / 10 + 5, 4)
    };
    let passes = 1 + u64::from(gammon);
    let process = 16 << 20;
    if streamed {
        let side_by_side = gammon && one_sided_side_by_side(space);
        let sweep = one_sided_sweep_bytes(
            space,
            1 + u64::from(side_by_side),
            bytes,
            width.min(GNUBG_ENTRIES as u64),
        );
        if compressed {
            let index = n * (4 + 2 * passes);
            if spills_index(space, compressed, gammon) {
                return sweep.max(index) + process;
            }
            return sweep + index + process;
        }
        return sweep + n * 64 * passes + process;
    }
    let pass = |width: u64, len: u64| {
        one_sided_sweep_bytes(space, 1, 8, width) + n * (8 + 1 + 16 + 8 * width + 8 * len)
    };
    pass(width, 5 * p + 3) + if gammon { pass(2, 3 * p) } else { 0 } + process
}

#[cfg(test)]
mod tests {
    use super::*;
    use rollsim_core::memory::human;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(11_778_547_936), "11.8 GB");
        assert_eq!(human(1_543_202_309_900_000_000), "1.5 EB");
        assert_eq!(human(92_900_000_000_000), "92.9 TB");
        assert_eq!(human(217_220), "217 kB");
    }

    #[test]
    fn the_full_table_is_sized_without_allocating_it() {
        // 15 checkers on 6 points: 2.9 G pairs; cubeless f32 needs the window of 35,798+
        // columns of 54,264 values, about 7.8 GB.
        let space = Space::new(6, 15).unwrap();
        let p = Plan::new(
            space,
            true,
            Precision::Cell(CellKind::F32),
            2,
            Path::new("."),
            None,
        );
        assert_eq!(p.pairs, 2_944_581_696);
        assert!(p.window_columns >= 35_798);
        let cubeless_window = p.window_columns * 54_264 * 4;
        assert!(p.window_bytes == 3 * cubeless_window);
        assert!(p.memory_bytes > p.window_bytes && p.memory_bytes < p.window_bytes + (1 << 30));
        // Cubeless plus three equities, f32: 47 GB on disk, as Sconyers' table.
        assert_eq!(p.file_bytes, 4096 + 54_264 * 54_264 * 16 + 54_264 * 2 * 4);
        let small = Plan::new(
            space,
            true,
            Precision::Cell(CellKind::U16),
            2,
            Path::new("."),
            None,
        );
        assert_eq!(small.window_bytes, cubeless_window / 2 * 3);
    }
}
