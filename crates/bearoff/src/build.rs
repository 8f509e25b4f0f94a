//! Builds that write as they sweep: a two-sided table by columns into rollsim's file, pass by
//! pass (cubeless, then cubeful), with checkpoints from which a killed build resumes to the
//! same bytes; a one-sided table level by level straight into gnubg's format.

use rollsim_core::progress::Progress;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use super::columns::Moves;
// For `engines`, until it imports from `columns::cpu`.
use super::columns::seam::ColumnPass;
use super::columns::seam::ColumnSweeper;
use super::format::{GNUBG_ENTRIES, GnubgOneSidedWriter, gnubg_entries};
use super::numeric::{CellKind, Prob};
use super::one_sided::{Level, Pass as OneSidedPass, Plays, sweep as one_sided_sweep};
use super::plan::{Plan, one_sided_side_by_side};
use super::position::Space;
use super::table::{Partial, Reached, Section};

/// How a build reports and checkpoints.
pub struct Options<'a> {
    /// Checkpoint at the first level boundary after this long (zero: after every level).
    pub checkpoint_every: Duration,
    /// Ignore a checkpoint left by an earlier build.
    pub fresh: bool,
    /// Sync the finished file to disk (not for a table that is only converted and removed).
    pub durable: bool,
    /// Pairs done, as they are done (all done before `first` on resuming, in one call).
    pub progress: &'a dyn Progress,
    /// Called once when the build resumes from a checkpoint, with the pairs already done.
    pub resumed: &'a mut dyn FnMut(Reached, u64),
}

/// For tests of resuming: the process kills itself right after this many checkpoints. A name
/// no user sets by accident, since the release binary is the one the tests run.
const KILL_AFTER_CHECKPOINTS: &str = "__ROLLSIM_INTERNAL_TEST_HOOK_KILL_AFTER_CHECKPOINTS";

/// Builds the planned table into `out` (written as `OUT.partial`, then renamed) with
/// `sweeper` (the GPU's stores fixed32 or u16 cells, as its plan says).
pub fn build_two_sided(
    out: &Path,
    plan: &Plan,
    sweeper: &dyn ColumnSweeper,
    opts: Options,
) -> anyhow::Result<()> {
    let layout = plan.layout();
    let lock = rollsim_core::files::lock_for_writing(out)?;
    let (partial, resumed) = Partial::open(lock.target(), layout, opts.fresh)?;
    let moves = Moves::new(layout.space);
    if let Some(p) = resumed {
        let levels = moves.levels.len();
        anyhow::ensure!(
            p.levels_done <= levels,
            rollsim_core::files::InputFileError::new(
                partial.path(),
                format!(
                    "its checkpoint says {} levels are done, of {levels}: damaged; nothing was \
                     deleted: give --fresh to start the build over",
                    p.levels_done
                )
            )
        );
        let pairs = (moves.n * moves.n) as u64;
        let sections = plan.passes().iter().filter(|s| s.0 < p.section).count() as u64;
        (opts.resumed)(p, sections * pairs + moves.pairs_below(p.levels_done));
        partial.check_written(&written(&moves, &plan.passes(), p))?;
    }
    let kill_after: Option<u32> = std::env::var(KILL_AFTER_CHECKPOINTS)
        .ok()
        .and_then(|v| v.parse().ok());
    let checkpoints = AtomicU32::new(0);
    std::thread::scope(|scope| -> anyhow::Result<()> {
        // The written pages are released level by level on a thread of their own: the call
        // blocks while it queues them for write-back, and every sweeping thread would wait.
        let (release, requests) = mpsc::channel::<()>();
        let partial = &partial;
        let releaser = std::thread::Builder::new()
            .name("rollsim-release".into())
            .spawn_scoped(scope, move || {
                while requests.recv().is_ok() {
                    while requests.try_recv().is_ok() {}
                    partial.release_written();
                }
            });
        // Without the thread, `send` fails and the pass releases them itself.
        drop(releaser);
        for (section, cell) in plan.passes() {
            let first = match resumed {
                Some(p) if p.section > section => {
                    opts.progress.inc(moves.n as u64 * moves.n as u64);
                    continue;
                }
                Some(p) if p.section == section => p.levels_done,
                _ => 0,
            };
            let pass = Pass {
                moves: &moves,
                partial,
                section,
                first,
                progress: opts.progress,
                every: opts.checkpoint_every,
                last: Mutex::new(Instant::now()),
                checkpoints: &checkpoints,
                kill_after,
                release: &release,
            };
            sweeper.sweep(&pass, cell)?;
        }
        Ok(())
    })?;
    partial.finish(opts.durable)?;
    Ok(())
}

/// The column sections a build had written when it reached `p`: every column of the passes
/// before, and those of the levels done in its own.
fn written(moves: &Moves, passes: &[(Section, CellKind)], p: Reached) -> Vec<(Section, u32)> {
    let mut columns = Vec::new();
    for &(section, _) in passes {
        let levels = match section.cmp(&p.section) {
            std::cmp::Ordering::Less => moves.levels.len(),
            std::cmp::Ordering::Equal => p.levels_done,
            std::cmp::Ordering::Greater => 0,
        };
        for level in &moves.levels[..levels] {
            columns.extend(level.iter().map(|&x| (section, x)));
        }
    }
    columns
}

/// One pass of a build under way: what a [`ColumnSweeper`] sweeps.
struct Pass<'a> {
    moves: &'a Moves,
    partial: &'a Partial,
    section: Section,
    /// The first level to sweep: 0, or where a resumed build stopped.
    first: usize,
    progress: &'a dyn Progress,
    every: Duration,
    /// When the last checkpoint (or the pass) began.
    last: Mutex<Instant>,
    checkpoints: &'a AtomicU32,
    kill_after: Option<u32>,
    /// Asks for the pages written so far to be released (see [`Partial::release_written`]).
    release: &'a mpsc::Sender<()>,
}

impl ColumnPass for Pass<'_> {
    fn cubeful(&self) -> bool {
        self.section == Section::Cubeful
    }

    fn moves(&self) -> &Moves {
        self.moves
    }

    fn first_level(&self) -> usize {
        self.first
    }

    fn skip(&self) -> bool {
        let n = self.moves.n;
        if self.first >= self.moves.levels.len() {
            self.progress.inc((n * n) as u64);
            return true;
        }
        let done = self.moves.pairs_below(self.first);
        if done > 0 {
            self.progress.inc(done);
        }
        false
    }

    fn read_column(&self, x: u32, bytes: &mut [u8]) -> std::io::Result<()> {
        self.partial.read_column(self.section, x, bytes)
    }

    fn write_column(&self, x: u32, bytes: &[u8]) -> std::io::Result<()> {
        self.partial.write_column(self.section, x, bytes)
    }

    fn level_done(&self, level: usize) -> std::io::Result<()> {
        let n = self.moves.n;
        self.progress
            .inc((self.moves.levels[level].len() * n) as u64);
        if self.release.send(()).is_err() {
            self.partial.release_written();
        }
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if last.elapsed() >= self.every {
            self.partial.checkpoint(Reached {
                section: self.section,
                levels_done: level + 1,
            })?;
            *last = Instant::now();
            let checkpoints = self.checkpoints.fetch_add(1, Ordering::Relaxed) + 1;
            if self.kill_after == Some(checkpoints) {
                kill_self();
            }
        }
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

/// Builds a one-sided table straight into gnubg's format (compressed or plain, with the
/// distributions of rolls until the first checker is off when `first_off`), keeping only the
/// last 25 levels of the sweep (see [`one_sided_sweep`]) and, for the compressed layout, the
/// index (over 8 MiB, in a temporary file in `spill_dir`). Tables up to 2^20
/// positions sweep both passes at once; for larger ones the first-off pass goes first, to a
/// temporary file in `spill_dir` read back in the same order by the bearing-off pass, whose
/// records carry both runs.
pub fn build_one_sided_gnubg<P: Prob>(
    space: Space,
    first_off: bool,
    compressed: bool,
    out: &mut (impl Write + Seek + Send),
    spill_dir: &Path,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let side_by_side = one_sided_side_by_side(space);
    one_sided_gnubg::<P>(
        space,
        first_off,
        side_by_side,
        compressed,
        out,
        spill_dir,
        progress,
    )
}

/// A pass of the best plays, for gnubg's 32 entries.
fn gnubg_pass(terminal_below: u32) -> OneSidedPass<'static> {
    OneSidedPass {
        terminal_below,
        rolls: GNUBG_ENTRIES,
        plays: Plays::Best,
        keep_plays: false,
    }
}

/// One position's distribution of a level, in gnubg's entries.
fn entries<P: Prob>(level: &Level<P>, j: usize) -> [u16; GNUBG_ENTRIES] {
    let (first, probs) = level.distribution(j);
    gnubg_entries(first, probs.iter().copied())
}

/// With `first_off`, the two passes run `side_by_side` in one sweep, or the first-off pass
/// first into a temporary file that the bearoff pass reads.
fn one_sided_gnubg<P: Prob>(
    space: Space,
    first_off: bool,
    side_by_side: bool,
    compressed: bool,
    out: &mut (impl Write + Seek + Send),
    spill_dir: &Path,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let mut writer = GnubgOneSidedWriter::new(space, compressed, first_off, Some(spill_dir), out)?;
    if !first_off {
        bearoff_pass::<P, _>(space, progress, &mut writer, &mut || Ok(None))?;
    } else if side_by_side {
        let passes = [gnubg_pass(1), gnubg_pass(space.checkers)];
        one_sided_sweep::<P, anyhow::Error>(&space, &passes, progress, &mut |levels| {
            let [off, first] = levels else {
                unreachable!("a level a pass")
            };
            for (j, &i) in off.positions.iter().enumerate() {
                writer.push(i, &entries(off, j), Some(&entries(first, j)))?;
            }
            Ok(())
        })?;
    } else {
        let mut spill = BufWriter::new(tempfile::tempfile_in(spill_dir)?);
        first_off_pass::<P>(space, progress, &mut |handed| {
            spill.write_all(&(handed.len() as u32).to_le_bytes())?;
            for (i, q) in handed {
                spill.write_all(&i.to_le_bytes())?;
                spill.write_all(bytemuck::cast_slice(&q.map(u16::to_le)))?;
            }
            Ok(())
        })?;
        let mut spill = spill.into_inner().map_err(|e| e.into_error())?;
        spill.seek(SeekFrom::Start(0))?;
        let mut spill = BufReader::new(spill);
        let mut word = [0u8; 4];
        bearoff_pass::<P, _>(space, progress, &mut writer, &mut || {
            spill.read_exact(&mut word)?;
            let mut handed = vec![(0, [0; GNUBG_ENTRIES]); u32::from_le_bytes(word) as usize];
            for (i, q) in &mut handed {
                spill.read_exact(&mut word)?;
                *i = u32::from_le_bytes(word);
                spill.read_exact(bytemuck::cast_slice_mut(q))?;
                *q = q.map(u16::from_le);
            }
            Ok(Some(handed))
        })?;
    }
    Ok(writer.finish()?)
}

/// A position's first-off distribution, handed from its pass to the bearoff pass.
type FirstOff = (u32, [u16; GNUBG_ENTRIES]);

/// The first-off distribution of a position without all its checkers: none to go.
fn none_to_go() -> [u16; GNUBG_ENTRIES] {
    gnubg_entries(0, [1.0])
}

/// The pass of the rolls until the first checker is off, handing over each level's
/// distributions of the positions that still have every checker, in the sweep's order.
fn first_off_pass<P: Prob>(
    space: Space,
    progress: &dyn Progress,
    hand: &mut (dyn FnMut(Vec<FirstOff>) -> anyhow::Result<()> + Send),
) -> anyhow::Result<()> {
    let none = none_to_go();
    one_sided_sweep::<P, anyhow::Error>(
        &space,
        &[gnubg_pass(space.checkers)],
        progress,
        &mut |levels| {
            let level = &levels[0];
            hand(
                level
                    .positions
                    .iter()
                    .enumerate()
                    .map(|(j, &i)| (i, entries(level, j)))
                    .filter(|(_, q)| *q != none)
                    .collect(),
            )
        },
    )
}

/// The pass of the rolls until all checkers are off, writing every position, with its
/// first-off distribution (in a file with them) from `first_off`, a level a call.
fn bearoff_pass<P: Prob, W: Write + Seek + Send>(
    space: Space,
    progress: &dyn Progress,
    writer: &mut GnubgOneSidedWriter<'_, W>,
    first_off: &mut (dyn FnMut() -> anyhow::Result<Option<Vec<FirstOff>>> + Send),
) -> anyhow::Result<()> {
    let none = none_to_go();
    one_sided_sweep::<P, anyhow::Error>(&space, &[gnubg_pass(1)], progress, &mut |levels| {
        let level = &levels[0];
        let Some(handed) = first_off()? else {
            for (j, &i) in level.positions.iter().enumerate() {
                writer.push(i, &entries(level, j), None)?;
            }
            return Ok(());
        };
        let mut handed = handed.into_iter().peekable();
        for (j, &i) in level.positions.iter().enumerate() {
            // Both passes take the positions in the same order.
            let g = handed.next_if(|&(k, _)| k == i).map_or(none, |(_, q)| q);
            writer.push(i, &entries(level, j), Some(&g))?;
        }
        anyhow::ensure!(handed.next().is_none(), "first-off pass out of step");
        Ok(())
    })
}

#[cfg(test)]
mod one_sided_tests {
    use std::io::Cursor;

    use super::*;
    use crate::OneSided;
    use crate::format::{read_gnubg_one_sided, write_gnubg_one_sided};
    use crate::numeric::Fixed31;

    fn streamed<P: Prob>(space: Space, first_off: bool, compressed: bool) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let mut out = Cursor::new(Vec::new());
        build_one_sided_gnubg::<P>(space, first_off, compressed, &mut out, dir.path(), &|_| {})
            .unwrap();
        out.into_inner()
    }

    /// A compressed fixed32 table with first-off distributions, its passes `side_by_side` or not.
    fn both_passes(
        space: Space,
        side_by_side: bool,
        out: &mut (impl Write + Seek + Send),
        dir: &Path,
    ) -> anyhow::Result<()> {
        one_sided_gnubg::<Fixed31>(space, true, side_by_side, true, out, dir, &|_| {})
    }

    #[test]
    fn both_passes_side_by_side_or_one_after_the_other_write_the_same_file() {
        let space = Space::new(6, 15).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let built = |side_by_side| {
            let mut out = Cursor::new(Vec::new());
            both_passes(space, side_by_side, &mut out, dir.path()).unwrap();
            out.into_inner()
        };
        assert!(built(true) == built(false));
    }

    /// An output that fails once it has taken `room` bytes.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            match self.room.checked_sub(b.len()) {
                Some(left) => {
                    self.room = left;
                    Ok(b.len())
                }
                None => Err(std::io::Error::other("disk full")),
            }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Seek for Full {
        fn seek(&mut self, _: std::io::SeekFrom) -> std::io::Result<u64> {
            Ok(0)
        }
    }

    #[test]
    fn a_failing_output_stops_both_passes_with_its_error() {
        let dir = tempfile::tempdir().unwrap();
        let space = Space::new(6, 15).unwrap();
        for side_by_side in [true, false] {
            let mut out = Full { room: 200_000 };
            let e = both_passes(space, side_by_side, &mut out, dir.path()).unwrap_err();
            assert!(format!("{e:#}").contains("disk full"), "{e:#}");
        }
    }

    #[test]
    fn streamed_gnubg_tables_hold_the_exact_tables_values() {
        for (space, first_off) in [
            (Space::new(6, 15).unwrap(), true),
            (Space::new(7, 9).unwrap(), false),
        ] {
            let t = OneSided::build(space, first_off);
            for compressed in [true, false] {
                let mut want = Cursor::new(Vec::new());
                write_gnubg_one_sided(&t, compressed, first_off, &mut want).unwrap();
                let want = want.into_inner();
                let got = streamed::<f64>(space, first_off, compressed);
                // The plain layout puts each record in its place; the compressed one puts the
                // runs in the sweep's order, which only the index tells.
                assert_eq!(got.len(), want.len());
                if !compressed {
                    assert!(got == want, "{space:?}");
                }
                let (w, g) = (
                    read_gnubg_one_sided(&want).unwrap(),
                    read_gnubg_one_sided(&got).unwrap(),
                );
                assert_eq!(w, g, "{space:?} compressed {compressed}");
                // fixed32: at most one unit off, and rarely.
                let f = read_gnubg_one_sided(&streamed::<Fixed31>(space, first_off, compressed))
                    .unwrap();
                let (mut off, mut total) = (0, 0);
                let pairs = w.dist.iter().zip(&f.dist).chain(
                    w.gammon_dist
                        .iter()
                        .flatten()
                        .zip(f.gammon_dist.iter().flatten()),
                );
                for (a, b) in pairs {
                    for (x, y) in a.iter().zip(b) {
                        assert!(x.abs_diff(*y) <= 1, "{space:?}: {x} vs {y}");
                        off += usize::from(x != y);
                        total += 1;
                    }
                }
                assert!(off * 1000 < total, "{off} of {total} entries differ");
            }
        }
    }
}
