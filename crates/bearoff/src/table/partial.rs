//! A two-sided table being written: `OUT.partial` with its checkpoint.

use super::io::{named, read_at, write_at};
use super::layout::{HEADER, Layout, Section};
use rollsim_core::files::{Create, InputFileError, Temporary, open_owned, sibling};
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::format::u32_at;

const CHECKPOINT_MAGIC: &[u8; 8] = b"RSBOCKPT";

/// Where a build stands: sections before `section` are complete, and in `section` every level
/// below `levels_done`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reached {
    pub section: Section,
    pub levels_done: usize,
}

/// A table being written: `OUT.partial`, its columns written in place as they are finished,
/// and a checkpoint `OUT.partial.ckpt` that says which are durable.
pub struct Partial {
    pub(super) layout: Layout,
    out: PathBuf,
    path: PathBuf,
    checkpoint: PathBuf,
    file: File,
    crcs: Vec<AtomicU32>,
    /// A partial file that no checkpoint keeps (an extract's): removed on an error or a signal.
    temporary: Option<Temporary>,
}

/// Why a checkpoint cannot be resumed.
#[derive(Debug, PartialEq)]
enum Unusable {
    /// It is of another table: made with other flags.
    Other(Layout),
    /// It is damaged; the table it is of, where its header is whole.
    Damaged(String, Option<Layout>),
}

/// A checkpoint's contents for a build of `layout`: where the build stands and the CRC of
/// every column section (0 for those not written yet).
fn decode_checkpoint(
    bytes: &[u8],
    layout: Layout,
) -> std::result::Result<(Reached, Vec<u32>), Unusable> {
    // The header carries its own CRC: whole, it tells the table even if the rest is damaged.
    let stored = bytes
        .get(8..8 + HEADER)
        .and_then(|h| Layout::parse(h).ok())
        .map(|(l, _)| l);
    let damaged = |why: String| Err(Unusable::Damaged(why, stored));
    if !bytes.starts_with(CHECKPOINT_MAGIC) {
        return damaged("it does not start as a checkpoint does".into());
    }
    match stored {
        Some(s) if s != layout => return Err(Unusable::Other(s)),
        Some(_) => {}
        None => return damaged("its table header is damaged".into()),
    }
    let entries = layout.crc_entries() as usize;
    let want = 8 + HEADER + 8 + 4 * entries + 4;
    if bytes.len() != want {
        return damaged(format!("{} bytes, not {want}", bytes.len()));
    }
    let (body, crc) = bytes.split_at(want - 4);
    let (stored_crc, computed) = (u32_at(crc, 0), crc32fast::hash(body));
    if stored_crc != computed {
        return damaged(format!(
            "checksum mismatch: stored {stored_crc:08x}, computed {computed:08x}"
        ));
    }
    let at = 8 + HEADER;
    let section = match u32_at(body, at) {
        0 => Section::Cubeless,
        1 if layout.cubeful.is_some() => Section::Cubeful,
        s => return damaged(format!("it names pass {s}")),
    };
    let reached = Reached {
        section,
        levels_done: u32_at(body, at + 4) as usize,
    };
    let crcs = (0..entries).map(|i| u32_at(body, at + 8 + 4 * i)).collect();
    Ok((reached, crcs))
}

impl Partial {
    /// Opens the build of `layout` into `out` (where the output is written: see
    /// [`rollsim_core::files::WriteLock::target`]): resumes `OUT.partial` from its checkpoint,
    /// or starts anew where there is none or with `fresh`. A checkpoint of another table, a
    /// damaged checkpoint, or a partial file that does not match it is refused (bad input)
    /// naming what it is and `--fresh`, and nothing is deleted: hours of work may be at stake.
    /// Anything but a regular file of rollsim's at either name is refused, never written
    /// through. The caller holds [`rollsim_core::files::lock_for_writing`] on `out`, so two
    /// builds never write one table.
    pub fn open(
        out: &Path,
        layout: Layout,
        fresh: bool,
    ) -> anyhow::Result<(Partial, Option<Reached>)> {
        let (path, checkpoint) = partial_paths(out)?;
        let stored = match fresh {
            true => None,
            false => read_owned(
                &checkpoint,
                (8 + HEADER + 12) as u64 + 4 * layout.crc_entries(),
            )?,
        };
        let Some(bytes) = stored else {
            let partial = Partial::create(out, layout, path, checkpoint, false)?;
            return Ok((partial, None));
        };
        let keep = "; nothing was deleted";
        let (reached, crcs) = decode_checkpoint(&bytes, layout).map_err(|u| {
            let why = match u {
                Unusable::Other(made) => format!(
                    "the checkpoint of a build of another table ({}; made with {}), not of this \
                     one ({}){keep}: run the build with those flags to resume it, or give \
                     --fresh to start this one over",
                    made.describe(),
                    made.flags(),
                    layout.describe()
                ),
                Unusable::Damaged(why, made) => format!(
                    "a damaged checkpoint ({why}){}{keep}: give --fresh to start the build over",
                    made.map_or(String::new(), |m| format!(
                        " of a build of {} (made with {})",
                        m.describe(),
                        m.flags()
                    ))
                ),
            };
            InputFileError::new(&checkpoint, why)
        })?;
        if fs::symlink_metadata(&path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
            return Err(InputFileError::new(
                &path,
                format!(
                    "missing, though the checkpoint {} is of it{keep}: give --fresh to start \
                     the build over",
                    checkpoint.display()
                ),
            )
            .into());
        }
        let file = open_owned(&path, Create::Existing)?;
        let len = file.metadata().map_err(|e| named(&path, e))?.len();
        if len != layout.file_bytes() {
            return Err(InputFileError::new(
                &path,
                format!(
                    "{len} bytes, not the {} of the table its checkpoint {} is of: damaged{keep}; \
                     give --fresh to start the build over",
                    layout.file_bytes(),
                    checkpoint.display()
                ),
            )
            .into());
        }
        let partial = Partial {
            layout,
            out: out.to_path_buf(),
            path,
            checkpoint,
            file,
            crcs: crcs.into_iter().map(AtomicU32::new).collect(),
            temporary: None,
        };
        Ok((partial, Some(reached)))
    }

    /// Starts writing `layout` into `out` with no checkpoint to keep it (an extract): the
    /// partial file is removed on an error, when dropped unfinished, and on SIGINT or SIGTERM.
    /// The checkpoint of an unfinished build of `out` is refused, not deleted.
    pub fn temporary(out: &Path, layout: Layout) -> anyhow::Result<Partial> {
        let (path, checkpoint) = partial_paths(out)?;
        if fs::symlink_metadata(&checkpoint).is_ok() {
            return Err(InputFileError::new(
                &checkpoint,
                format!(
                    "the checkpoint of an unfinished build of {}; finish that build (run it \
                     again), remove {} and its checkpoint, or give another output",
                    out.display(),
                    path.display()
                ),
            )
            .into());
        }
        Partial::create(out, layout, path, checkpoint, true)
    }

    /// A new, empty partial file of the table's size, in place of any earlier one of rollsim's.
    fn create(
        out: &Path,
        layout: Layout,
        path: PathBuf,
        checkpoint: PathBuf,
        temporary: bool,
    ) -> anyhow::Result<Partial> {
        let dir = rollsim_core::files::parent_dir(out);
        fs::create_dir_all(dir).map_err(|e| named(dir, e))?;
        remove_owned(&checkpoint)?;
        remove_owned(&path)?;
        let temporary = temporary.then(|| Temporary::new(path.clone()));
        let file = open_owned(&path, Create::New)?;
        file.set_len(layout.file_bytes())
            .map_err(|e| named(&path, e))?;
        let entries = layout.crc_entries() as usize;
        Ok(Partial {
            layout,
            out: out.to_path_buf(),
            path,
            checkpoint,
            file,
            crcs: (0..entries).map(|_| AtomicU32::new(0)).collect(),
            temporary,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks `columns`, written before the checkpoint this build resumed from, against the
    /// CRCs it recorded: the build reads some again and copies all into the table, so damage
    /// must be found before anything is built on it. Refuses (bad input) naming the damaged
    /// ones and `--fresh`.
    pub fn check_written(&self, columns: &[(Section, u32)]) -> anyhow::Result<()> {
        use rayon::prelude::*;
        let bad: Vec<(Section, u32)> = columns
            .par_iter()
            .map_init(Vec::new, |buf, &(section, them)| -> io::Result<_> {
                buf.resize(self.layout.section_bytes(section) as usize, 0);
                let at = self.layout.column_offset(section, u64::from(them));
                read_at(&self.file, buf, at).map_err(|e| named(&self.path, e))?;
                let stored = self.crcs[self.entry(section, them)].load(Ordering::Relaxed);
                Ok((crc32fast::hash(buf) != stored).then_some((section, them)))
            })
            .collect::<io::Result<Vec<_>>>()?
            .into_iter()
            .flatten()
            .collect();
        if bad.is_empty() {
            return Ok(());
        }
        let shown: Vec<String> = bad
            .iter()
            .take(5)
            .map(|(s, t)| format!("{s:?} column {t}"))
            .collect();
        Err(InputFileError::new(
            &self.path,
            format!(
                "damaged since its checkpoint {}: {} of the {} column sections written before \
                 it do not match it ({}{}); nothing was deleted: give --fresh to start the build \
                 over",
                self.checkpoint.display(),
                bad.len(),
                columns.len(),
                shown.join(", "),
                if bad.len() > shown.len() { ", …" } else { "" }
            ),
        )
        .into())
    }

    /// Writes a column's section (from the worker that finished it).
    pub fn write_column<C: bytemuck::Pod>(
        &self,
        section: Section,
        them: u32,
        cells: &[C],
    ) -> io::Result<()> {
        self.write_column_bytes(section, them, bytemuck::cast_slice(cells))
    }

    pub(super) fn write_column_bytes(
        &self,
        section: Section,
        them: u32,
        bytes: &[u8],
    ) -> io::Result<()> {
        assert_eq!(bytes.len() as u64, self.layout.section_bytes(section));
        write_at(
            &self.file,
            bytes,
            self.layout.column_offset(section, u64::from(them)),
        )
        .map_err(|e| named(&self.path, e))?;
        self.crcs[self.entry(section, them)].store(crc32fast::hash(bytes), Ordering::Relaxed);
        Ok(())
    }

    /// Reads back a column's section written before a checkpoint, checked against its CRC.
    pub fn read_column<C: bytemuck::Pod>(
        &self,
        section: Section,
        them: u32,
        cells: &mut [C],
    ) -> io::Result<()> {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(cells);
        read_at(
            &self.file,
            bytes,
            self.layout.column_offset(section, u64::from(them)),
        )
        .map_err(|e| named(&self.path, e))?;
        let stored = self.crcs[self.entry(section, them)].load(Ordering::Relaxed);
        if crc32fast::hash(bytes) != stored {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: {section:?} column {them} does not match its checkpoint {}; give \
                     --fresh to start the build over",
                    self.path.display(),
                    self.checkpoint.display()
                ),
            ));
        }
        Ok(())
    }

    fn entry(&self, section: Section, them: u32) -> usize {
        (section as u64 * self.layout.n() + u64::from(them)) as usize
    }

    /// Starts writing the columns written so far to disk and lets the system drop the pages
    /// already on disk from its cache.
    pub fn release_written(&self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a plain system call on an open descriptor; (0, 0) is the whole file.
            // DONTNEED queues dirty pages for write-back and drops the clean ones; a failure
            // only leaves them cached.
            unsafe {
                libc::posix_fadvise(self.file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }

    /// Makes every column written so far durable, then records `reached` (written atomically),
    /// so that a build killed after this resumes from here.
    pub fn checkpoint(&self, reached: Reached) -> io::Result<()> {
        self.file.sync_data().map_err(|e| named(&self.path, e))?;
        let mut body = Vec::with_capacity(8 + HEADER + 8 + 4 * self.crcs.len() + 4);
        body.extend(CHECKPOINT_MAGIC);
        body.extend(self.layout.header(0));
        body.extend((reached.section as u32).to_le_bytes());
        body.extend((reached.levels_done as u32).to_le_bytes());
        for c in &self.crcs {
            body.extend(c.load(Ordering::Relaxed).to_le_bytes());
        }
        let crc = crc32fast::hash(&body);
        body.extend(crc.to_le_bytes());
        rollsim_core::files::write_beside(&self.checkpoint, |w| io::Write::write_all(w, &body))
            .map_err(|e| named(&self.checkpoint, e))
    }

    /// Writes the checksum table and the header, makes the file durable (if `durable`) and
    /// renames it into place; removes the checkpoint.
    pub fn finish(mut self, durable: bool) -> io::Result<()> {
        let table: Vec<u8> = self
            .crcs
            .iter()
            .flat_map(|c| c.load(Ordering::Relaxed).to_le_bytes())
            .collect();
        let named = |e| named(&self.path, e);
        write_at(&self.file, &table, self.layout.crc_offset()).map_err(named)?;
        write_at(&self.file, &self.layout.header(crc32fast::hash(&table)), 0).map_err(named)?;
        if durable {
            self.file.sync_all().map_err(named)?;
        }
        fs::rename(&self.path, &self.out).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "renaming {} to {}: {e}",
                    self.path.display(),
                    self.out.display()
                ),
            )
        })?;
        if let Some(t) = self.temporary.take() {
            t.keep();
        }
        let _ = fs::remove_file(&self.checkpoint);
        if !durable {
            return Ok(());
        }
        if let Ok(d) = File::open(rollsim_core::files::parent_dir(&self.out)) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Gives up the build: removes the partial file and its checkpoint.
    pub fn discard(self) {
        let _ = fs::remove_file(&self.path);
        let _ = fs::remove_file(&self.checkpoint);
    }
}

/// The contents of `path`, a file of rollsim's own (at most `max` bytes are read), or `None`
/// if there is none; anything planted there is refused.
fn read_owned(path: &Path, max: u64) -> anyhow::Result<Option<Vec<u8>>> {
    if fs::symlink_metadata(path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
        return Ok(None);
    }
    let file = open_owned(path, Create::Existing)?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| named(path, e))?;
    Ok(Some(bytes))
}

/// Removes `path`, a file of rollsim's own, if it is there; anything planted there is refused,
/// not removed.
fn remove_owned(path: &Path) -> anyhow::Result<()> {
    if fs::symlink_metadata(path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
        return Ok(());
    }
    drop(open_owned(path, Create::Existing)?);
    fs::remove_file(path).map_err(|e| named(path, e))?;
    Ok(())
}

/// Where the build of `out` is written until it is finished: `OUT.partial` beside it.
pub fn partial_path(out: &Path) -> io::Result<PathBuf> {
    sibling(out, "", ".partial")
}

/// `OUT.partial` and its checkpoint `OUT.partial.ckpt`.
fn partial_paths(out: &Path) -> io::Result<(PathBuf, PathBuf)> {
    let path = partial_path(out)?;
    let checkpoint = sibling(&path, "", ".ckpt")?;
    Ok((path, checkpoint))
}

#[cfg(test)]
mod tests {
    use super::{Partial, Reached, partial_paths};
    use crate::numeric::CellKind;
    use crate::table::fixtures::{layout, names, plausible, write_columns, write_table};
    use crate::table::layout::{Layout, Section};
    use rollsim_core::files::InputFileError;
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::Ordering;

    #[test]
    fn a_checkpoint_resumes_with_what_it_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.rsb");
        let l = layout(3, CellKind::F32, Some(CellKind::F64));
        let (partial, _) = Partial::open(&out, l, false).unwrap();
        write_columns(&partial, 0..5, &plausible);
        let reached = Reached {
            section: Section::Cubeful,
            levels_done: 2,
        };
        partial.checkpoint(reached).unwrap();
        let crcs: Vec<u32> = partial
            .crcs
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        drop(partial);
        let (partial, resumed) = Partial::open(&out, l, false).unwrap();
        assert_eq!(resumed, Some(reached));
        let again: Vec<u32> = partial
            .crcs
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        assert_eq!(again, crcs);
        let written: Vec<(Section, u32)> = (0..5).map(|x| (Section::Cubeful, x)).collect();
        partial.check_written(&written).unwrap();
        // Finished from there, it is the table written in one go.
        write_columns(&partial, 5..l.n(), &plausible);
        partial.finish(false).unwrap();
        assert_eq!(names(dir.path()), ["t.rsb"]);
        let once = dir.path().join("once.rsb");
        write_table(&once, l, plausible);
        assert!(fs::read(&out).unwrap() == fs::read(&once).unwrap());
        // Without a checkpoint, or with `fresh`, a build starts over.
        let (_, resumed) = Partial::open(&dir.path().join("new.rsb"), l, false).unwrap();
        assert_eq!(resumed, None);
    }

    /// A killed build of `l` into `dir/t.rsb`: its partial file and a checkpoint.
    fn killed(dir: &Path, l: Layout) -> (PathBuf, PathBuf, PathBuf) {
        let out = dir.join("t.rsb");
        let (partial, _) = Partial::open(&out, l, false).unwrap();
        write_columns(&partial, 0..l.n(), &plausible);
        partial
            .checkpoint(Reached {
                section: Section::Cubeless,
                levels_done: 1,
            })
            .unwrap();
        let (path, ckpt) = partial_paths(&out).unwrap();
        (out, path, ckpt)
    }

    fn refusal(out: &Path, l: Layout, fresh: bool) -> String {
        let e = Partial::open(out, l, fresh).err().expect("refused");
        assert!(
            e.downcast_ref::<InputFileError>().is_some(),
            "bad input: {e:#}"
        );
        format!("{e:#}")
    }

    #[test]
    fn a_damaged_checkpoint_or_one_of_another_table_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let l = layout(3, CellKind::F32, Some(CellKind::F32));
        let (out, path, ckpt) = killed(dir.path(), l);
        let (partial_bytes, ckpt_bytes) = (fs::read(&path).unwrap(), fs::read(&ckpt).unwrap());
        let kept = || {
            assert!(fs::read(&path).unwrap() == partial_bytes);
            assert!(fs::read(&ckpt).unwrap() == ckpt_bytes);
        };
        // Other flags: the checkpoint names the ones it was made with.
        for other in [
            layout(3, CellKind::F32, None),
            layout(3, CellKind::F64, Some(CellKind::F64)),
            layout(3, CellKind::F32, Some(CellKind::U16)),
            layout(4, CellKind::F32, Some(CellKind::F32)),
        ] {
            let e = refusal(&out, other, false);
            assert!(e.contains("another table"), "{e}");
            assert!(
                e.contains("--points 3 --checkers 3 --cubeful --precision f32"),
                "{e}"
            );
            assert!(
                e.contains("--fresh") && e.contains("nothing was deleted"),
                "{e}"
            );
            kept();
        }
        // Damaged after its header: refused, naming the table it is of.
        let mut bad = ckpt_bytes.clone();
        let at = bad.len() - 9;
        bad[at] ^= 0x20;
        fs::write(&ckpt, &bad).unwrap();
        let e = refusal(&out, l, false);
        assert!(e.contains("damaged checkpoint (checksum mismatch"), "{e}");
        assert!(
            e.contains("3 checkers on 3 points, cubeless f32, cubeful f32"),
            "{e}"
        );
        assert!(e.contains("--fresh"), "{e}");
        assert!(fs::read(&path).unwrap() == partial_bytes);
        // Damaged in its header, or cut short.
        let mut bad = ckpt_bytes.clone();
        bad[20] ^= 1;
        fs::write(&ckpt, &bad).unwrap();
        let e = refusal(&out, l, false);
        assert!(e.contains("its table header is damaged"), "{e}");
        fs::write(&ckpt, &ckpt_bytes[..ckpt_bytes.len() - 1]).unwrap();
        let e = refusal(&out, l, false);
        assert!(e.contains("damaged checkpoint"), "{e}");
        // The partial file gone, or of the wrong size.
        fs::write(&ckpt, &ckpt_bytes).unwrap();
        fs::write(&path, &partial_bytes[..100]).unwrap();
        let e = refusal(&out, l, false);
        assert!(e.contains("100 bytes"), "{e}");
        fs::remove_file(&path).unwrap();
        let e = refusal(&out, l, false);
        assert!(e.contains("missing"), "{e}");
        assert!(ckpt.exists());
        // --fresh starts over.
        let (_, resumed) = Partial::open(&out, l, true).unwrap();
        assert_eq!(resumed, None);
        assert!(!ckpt.exists());
    }

    #[test]
    fn a_damaged_partial_is_found_before_the_build_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let l = layout(3, CellKind::F64, None);
        let (out, path, _) = killed(dir.path(), l);
        let mut bytes = fs::read(&path).unwrap();
        let at = l.column_offset(Section::Cubeless, 7) as usize + 5;
        bytes[at] ^= 0x40;
        fs::write(&path, &bytes).unwrap();
        let (partial, resumed) = Partial::open(&out, l, false).unwrap();
        assert!(resumed.is_some());
        let written: Vec<_> = (0..l.n() as u32).map(|x| (Section::Cubeless, x)).collect();
        let e = partial.check_written(&written).unwrap_err();
        assert!(e.downcast_ref::<InputFileError>().is_some(), "{e:#}");
        let e = format!("{e:#}");
        assert!(e.contains("1 of the 20 column sections"), "{e}");
        assert!(
            e.contains("Cubeless column 7") && e.contains("--fresh"),
            "{e}"
        );
        let mut cells = vec![0f64; l.n() as usize];
        assert!(
            partial
                .read_column(Section::Cubeless, 7, &mut cells)
                .is_err()
        );
        partial
            .read_column(Section::Cubeless, 6, &mut cells)
            .unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_as_a_partial_or_checkpoint_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let l = layout(2, CellKind::F32, None);
        let out = dir.path().join("e.rsb");
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let (path, ckpt) = partial_paths(&out).unwrap();
        for planted in [&path, &ckpt] {
            std::os::unix::fs::symlink(&victim, planted).unwrap();
            for fresh in [false, true] {
                let e = refusal(&out, l, fresh);
                assert!(e.contains("a symlink"), "{e}");
            }
            let e = format!("{:#}", Partial::temporary(&out, l).err().unwrap());
            assert!(e.contains("symlink") || e.contains("checkpoint"), "{e}");
            assert!(planted.is_symlink());
            fs::remove_file(planted).unwrap();
        }
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    }
}
