//! A two-sided table built by columns into rollsim's file, pass by pass (cubeless, then
//! cubeful), with checkpoints from which a killed build resumes to the same bytes.

use std::path::Path;
use std::time::{Duration, Instant};

use super::columns::{Cell, CellKind, Cubeful, Cubeless, Fixed, Moves, Recurrence, sweep};
use super::columns_gpu;
use super::plan::Plan;
use super::table::{Partial, Progress, Section};
use crate::gpu::Gpu;
use crate::memory::huge_filled;

/// How a build reports and checkpoints.
pub struct Options<'a> {
    /// Checkpoint at the first level boundary after this long (zero: after every level).
    pub checkpoint_every: Duration,
    /// Ignore a checkpoint left by an earlier build.
    pub fresh: bool,
    /// Sync the finished file to disk (not for a table that is only converted and removed).
    pub durable: bool,
    /// Pairs done, as they are done (all done before `first` on resuming, in one call).
    pub progress: &'a (dyn Fn(u64) + Sync),
    /// Called once when the build resumes from a checkpoint, with the pairs already done.
    pub resumed: &'a mut dyn FnMut(Progress, u64),
}

/// For tests of resuming: the process kills itself right after this many checkpoints.
const KILL_AFTER_CHECKPOINTS: &str = "ROLLSIM_TEST_KILL_AFTER_CHECKPOINTS";

/// Builds the planned table into `out` (written as `OUT.partial`, then renamed), on the GPU
/// when one is given (the plan's cells are then fixed32), else on CPU threads.
pub fn build_two_sided(
    out: &Path,
    plan: &Plan,
    gpu: Option<&Gpu>,
    opts: Options,
) -> anyhow::Result<()> {
    let layout = plan.layout();
    let (partial, resumed) = Partial::open(out, layout, opts.fresh)?;
    let moves = Moves::new(layout.space);
    if let Some(p) = resumed {
        let pairs = (moves.n * moves.n) as u64;
        let sections = plan.passes().iter().filter(|s| s.0 < p.section).count() as u64;
        (opts.resumed)(p, sections * pairs + moves.pairs_below(p.levels_done));
    }
    let kill_after: Option<u32> = std::env::var(KILL_AFTER_CHECKPOINTS)
        .ok()
        .and_then(|v| v.parse().ok());
    let mut checkpoints = 0;
    for (section, cell) in plan.passes() {
        let first = match resumed {
            Some(p) if p.section > section => {
                (opts.progress)(moves.n as u64 * moves.n as u64);
                continue;
            }
            Some(p) if p.section == section => p.levels_done,
            _ => 0,
        };
        let mut pass = Pass {
            moves: &moves,
            partial: &partial,
            section,
            first,
            progress: opts.progress,
            every: opts.checkpoint_every,
            last: Instant::now(),
            checkpoints: &mut checkpoints,
            kill_after,
        };
        match (gpu, section, cell) {
            (Some(g), Section::Cubeless, CellKind::Fixed32) => pass.run_gpu::<1, Cubeless>(g),
            (Some(g), Section::Cubeful, CellKind::Fixed32) => pass.run_gpu::<3, Cubeful>(g),
            (Some(_), _, cell) => {
                anyhow::bail!("the GPU sweep stores fixed32 values, not {}", cell.name())
            }
            (None, Section::Cubeless, CellKind::F32) => pass.run::<1, Cubeless, f32>(),
            (None, Section::Cubeless, CellKind::F64) => pass.run::<1, Cubeless, f64>(),
            (None, Section::Cubeless, CellKind::U16) => pass.run::<1, Cubeless, u16>(),
            (None, Section::Cubeless, CellKind::Fixed32) => pass.run::<1, Cubeless, Fixed>(),
            (None, Section::Cubeful, CellKind::F32) => pass.run::<3, Cubeful, f32>(),
            (None, Section::Cubeful, CellKind::F64) => pass.run::<3, Cubeful, f64>(),
            (None, Section::Cubeful, CellKind::U16) => pass.run::<3, Cubeful, u16>(),
            (None, Section::Cubeful, CellKind::Fixed32) => pass.run::<3, Cubeful, Fixed>(),
        }?;
    }
    partial.finish(opts.durable)?;
    Ok(())
}

struct Pass<'a> {
    moves: &'a Moves,
    partial: &'a Partial,
    section: Section,
    first: usize,
    progress: &'a (dyn Fn(u64) + Sync),
    every: Duration,
    last: Instant,
    checkpoints: &'a mut u32,
    kill_after: Option<u32>,
}

impl Pass<'_> {
    /// After each level: its progress, and a checkpoint when one is due.
    fn level_done(&mut self, level: usize) -> std::io::Result<()> {
        let n = self.moves.n;
        (self.progress)((self.moves.levels[level].len() * n) as u64);
        if self.last.elapsed() >= self.every {
            self.partial.checkpoint(Progress {
                section: self.section,
                levels_done: level + 1,
            })?;
            self.last = Instant::now();
            *self.checkpoints += 1;
            if self.kill_after == Some(*self.checkpoints) {
                kill_self();
            }
        }
        Ok(())
    }

    /// Whether the pass is already complete; reports the pairs done before `first`.
    fn skip(&self) -> bool {
        let n = self.moves.n;
        if self.first >= self.moves.levels.len() {
            (self.progress)((n * n) as u64);
            return true;
        }
        let done = self.moves.pairs_below(self.first);
        if done > 0 {
            (self.progress)(done);
        }
        false
    }

    /// The levels whose columns a pass resumed at `first` reads again.
    fn reload_levels(&self) -> std::ops::Range<usize> {
        self.first.saturating_sub(super::columns::MAX_ROLL_PIPS)..self.first
    }

    fn run<const K: usize, R: Recurrence<K>, C: Cell>(&mut self) -> anyhow::Result<()> {
        if self.skip() {
            return Ok(());
        }
        let (moves, partial, section) = (self.moves, self.partial, self.section);
        let record = K * moves.n;
        let mut window = huge_filled(moves.window.capacity * record, C::zeroed());
        // Resuming: the columns the next levels read come back from the partial file.
        for level in self.reload_levels() {
            for &x in &moves.levels[level] {
                let slot = moves.window.slot[x as usize] as usize;
                partial.read_column(section, x, &mut window[slot * record..][..record])?;
            }
        }
        let first = self.first;
        sweep::<K, R, C>(
            moves,
            first,
            &mut window,
            &|x, column| partial.write_column(section, x, column),
            &mut |level| self.level_done(level),
        )?;
        Ok(())
    }

    fn run_gpu<const K: usize, R: Recurrence<K>>(&mut self, gpu: &Gpu) -> anyhow::Result<()> {
        if self.skip() {
            return Ok(());
        }
        let (moves, partial, section) = (self.moves, self.partial, self.section);
        let first = self.first;
        columns_gpu::sweep::<K, R>(
            gpu,
            moves,
            first,
            &|x, cells: &mut [Fixed]| partial.read_column(section, x, cells),
            &|x, column| partial.write_column(section, x, column),
            &mut |level| self.level_done(level),
        )
    }
}

/// Dies as a killed process does, with no unwinding and no cleanup.
fn kill_self() -> ! {
    #[cfg(unix)]
    // SAFETY: sends SIGKILL to this process.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    std::process::abort()
}
