//! A two-sided table built by columns into rollsim's file, pass by pass (cubeless, then
//! cubeful), with checkpoints from which a killed build resumes to the same bytes.

use std::path::Path;
use std::time::{Duration, Instant};

use super::columns::{Cell, CellKind, Cubeful, Cubeless, Fixed, Moves, Recurrence, sweep};
use super::plan::Plan;
use super::table::{Partial, Progress, Section};
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

/// Builds the planned table into `out` (written as `OUT.partial`, then renamed).
pub fn build_two_sided(out: &Path, plan: &Plan, opts: Options) -> anyhow::Result<()> {
    let layout = plan.layout();
    let (partial, resumed) = Partial::open(out, layout, opts.fresh)?;
    let moves = Moves::new(layout.space);
    if let Some(p) = resumed {
        let pairs = (moves.n * moves.n) as u64;
        let sections = plan.passes().iter().filter(|s| s.0 < p.section).count() as u64;
        let levels: u64 = moves.levels[..p.levels_done.min(moves.levels.len())]
            .iter()
            .map(|l| (l.len() * moves.n) as u64)
            .sum();
        (opts.resumed)(p, sections * pairs + levels);
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
        match (section, cell) {
            (Section::Cubeless, CellKind::F32) => pass.run::<1, Cubeless, f32>(),
            (Section::Cubeless, CellKind::F64) => pass.run::<1, Cubeless, f64>(),
            (Section::Cubeless, CellKind::U16) => pass.run::<1, Cubeless, u16>(),
            (Section::Cubeless, CellKind::Fixed32) => pass.run::<1, Cubeless, Fixed>(),
            (Section::Cubeful, CellKind::F32) => pass.run::<3, Cubeful, f32>(),
            (Section::Cubeful, CellKind::F64) => pass.run::<3, Cubeful, f64>(),
            (Section::Cubeful, CellKind::U16) => pass.run::<3, Cubeful, u16>(),
            (Section::Cubeful, CellKind::Fixed32) => pass.run::<3, Cubeful, Fixed>(),
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
    fn run<const K: usize, R: Recurrence<K>, C: Cell>(&mut self) -> anyhow::Result<()> {
        let (moves, partial, section) = (self.moves, self.partial, self.section);
        let n = moves.n;
        let record = K * n;
        let levels = moves.levels.len();
        if self.first >= levels {
            (self.progress)((n * n) as u64);
            return Ok(());
        }
        let mut window = huge_filled(moves.window.capacity * record, C::zeroed());
        // Resuming: the columns the next levels read come back from the partial file.
        let reload = self.first.saturating_sub(super::columns::MAX_ROLL_PIPS)..self.first;
        for level in reload {
            for &x in &moves.levels[level] {
                let slot = moves.window.slot[x as usize] as usize;
                partial.read_column(section, x, &mut window[slot * record..][..record])?;
            }
        }
        let done: u64 = moves.levels[..self.first]
            .iter()
            .map(|l| (l.len() * n) as u64)
            .sum();
        if done > 0 {
            (self.progress)(done);
        }
        let mut level_done = |level: usize| -> std::io::Result<()> {
            (self.progress)((moves.levels[level].len() * n) as u64);
            if self.last.elapsed() >= self.every {
                partial.checkpoint(Progress {
                    section,
                    levels_done: level + 1,
                })?;
                self.last = Instant::now();
                *self.checkpoints += 1;
                if self.kill_after == Some(*self.checkpoints) {
                    kill_self();
                }
            }
            Ok(())
        };
        sweep::<K, R, C>(
            moves,
            self.first,
            &mut window,
            &|x, column| partial.write_column(section, x, column),
            &mut level_done,
        )?;
        Ok(())
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

/// Writes a table solved in memory (the GPU's, f64) into rollsim's file.
pub fn write_two_sided(t: &super::two_sided::TwoSided, out: &Path) -> anyhow::Result<()> {
    let layout = super::table::Layout {
        space: t.space,
        cubeless: CellKind::F64,
        cubeful: t.cubeful.as_ref().map(|_| CellKind::F64),
    };
    let (partial, _) = Partial::open(out, layout, true)?;
    let n = t.space.len();
    let mut column = vec![0f64; 3 * n];
    for them in 0..n {
        for (us, c) in column[..n].iter_mut().enumerate() {
            *c = t.win[us * n + them];
        }
        partial.write_column(Section::Cubeless, them as u32, &column[..n])?;
        if let Some(cube) = &t.cubeful {
            for us in 0..n {
                for j in 0..3 {
                    column[j * n + us] = cube[us * n + them][j];
                }
            }
            partial.write_column(Section::Cubeful, them as u32, &column)?;
        }
    }
    partial.finish(true)?;
    Ok(())
}
