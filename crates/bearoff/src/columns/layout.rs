//! How a GPU sweep of columns lays out its buffers within an adapter's limits: pure arithmetic,
//! compiled without the `gpu` feature too, so that a plan needs no device.

use super::Moves;
use crate::numeric::CellKind;

/// Window words per plane of a column of n cells.
pub fn plane_words(n: u64, cell: CellKind) -> u64 {
    n.div_ceil(4 / cell.bytes() as u64)
}

/// Bytes of one column of K planes of n cells in the window.
pub fn column_bytes(n: u64, k: u64, cell: CellKind) -> u64 {
    4 * k * plane_words(n, cell)
}

/// How a sweep's buffers fit the adapter's limits.
#[derive(Clone, Copy, Debug)]
pub struct DeviceLayout {
    /// Columns per window binding, and bindings.
    pub slots_per_binding: u64,
    pub bindings: u64,
    /// Whether the window lives on the host, the device holding only what each chunk reads
    /// (see `columns::gpu::sweep`).
    pub streamed: bool,
    /// Columns on the device: the whole window, or (streamed) what one chunk reads and writes.
    pub slots: u64,
    /// Positions per chunk at most (their rows fit one binding).
    pub chunk: u64,
    /// Bytes on the device: window (or the chunk's columns), rows, move tables.
    pub device_bytes: u64,
    /// Bytes on the host: the read-back of one chunk; streamed, the window and the staging of
    /// one chunk's uploads.
    pub host_bytes: u64,
}

/// Fewest device slots a streamed sweep plans for (a quarter of the window for small tables):
/// one position's successors and itself (at most 322 on 15x6, see
/// `a_streamed_window_holds_any_positions_successors`), with room for a chunk's positions to
/// share successors.
pub const MIN_STREAMED_SLOTS: u64 = 1024;

/// Bytes per storage binding: the adapter's, and what the window's and the rows' bindings may
/// take (less in tests, to split small tables); and how many bindings the window may take.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub binding: u64,
    pub window: u64,
    pub rows: u64,
    pub window_bindings: u64,
}

/// The buffers a sweep of K values in `cell` cells over `moves` needs within `limits`, or why it
/// does not fit.
pub fn device_layout(
    n: u64,
    capacity: u64,
    widest: u64,
    moves_words: u64,
    k: u64,
    cell: CellKind,
    limits: Limits,
) -> Result<DeviceLayout, String> {
    let limit = limits.window.min(limits.binding);
    let record = column_bytes(n, k, cell);
    // A row is K planes of i32 work values, whatever the cell.
    let row = 4 * k * n;
    let slots_per_binding = (limit / record).min(capacity);
    if slots_per_binding == 0 {
        return Err(format!(
            "one column of {record} bytes is larger than a storage binding ({limit} bytes)"
        ));
    }
    if 4 * moves_words > limits.binding {
        return Err(format!(
            "the move tables ({} bytes) are larger than a storage binding ({} bytes)",
            4 * moves_words,
            limits.binding
        ));
    }
    let chunk = (limits.rows.min(limits.binding) / row).min(widest).max(1);
    let bindings = capacity.div_ceil(slots_per_binding);
    if bindings <= limits.window_bindings {
        return Ok(DeviceLayout {
            slots_per_binding,
            bindings,
            streamed: false,
            slots: capacity,
            chunk,
            device_bytes: capacity * record + chunk * row + 4 * moves_words,
            host_bytes: chunk * record,
        });
    }
    // Streamed: the window on the host, every binding the kernel takes on the device.
    let slots = slots_per_binding * limits.window_bindings;
    let need = MIN_STREAMED_SLOTS.min(capacity / 4);
    if slots < need {
        return Err(format!(
            "the window of {capacity} columns ({} bytes) needs {bindings} storage bindings of \
             {limit} bytes, and streamed from the host {need} columns on the device; the \
             kernel takes {} bindings, {slots} columns",
            capacity * record,
            limits.window_bindings
        ));
    }
    Ok(DeviceLayout {
        slots_per_binding,
        bindings: limits.window_bindings,
        streamed: true,
        slots,
        chunk,
        device_bytes: slots * record + chunk * row + 4 * moves_words,
        // The window, a chunk's read-back, and the staging of a chunk's uploads (wgpu copies
        // each write into host memory until the submission).
        host_bytes: capacity * record + chunk * record + slots * record,
    })
}

/// Words of the move tables the GPU's kernel reads in one buffer (play-list starts, plays,
/// window slots, positions in level order), without building it.
pub fn moves_words(moves: &Moves) -> u64 {
    let (starts, plays) = moves.play_lists();
    (starts.len() + plays.len() + 2 * moves.n) as u64
}
