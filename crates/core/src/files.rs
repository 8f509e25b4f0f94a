//! Files as every rollsim format writes them: atomically, and with a CRC-32 of their contents;
//! and the input files a user names, checked before they are read.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// An input file the user named that cannot be used: missing, unreadable, not a regular file,
/// too large, or not text. The command line reports every such file as bad input (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", path.display())]
pub struct InputFileError {
    pub path: PathBuf,
    pub reason: String,
}

impl InputFileError {
    pub fn new(path: &Path, reason: impl std::fmt::Display) -> InputFileError {
        InputFileError {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}

/// Opens an input file: a regular file (not a directory, nor a device or pipe that may never
/// end, such as `/dev/zero`) of at most `max` bytes, checked before anything is read. Returns
/// it and its size.
pub fn open_input(path: &Path, max: u64) -> Result<(File, u64), InputFileError> {
    let err = |e: io::Error| InputFileError::new(path, e);
    let meta = fs::metadata(path).map_err(err)?;
    if meta.is_dir() {
        return Err(InputFileError::new(path, "a directory, not a file"));
    }
    if !meta.is_file() {
        return Err(InputFileError::new(path, "not a regular file"));
    }
    if meta.len() > max {
        return Err(InputFileError::new(
            path,
            format!(
                "{} bytes, more than the {max} this input can be",
                meta.len()
            ),
        ));
    }
    Ok((File::open(path).map_err(err)?, meta.len()))
}

/// Reads a whole input file (see [`open_input`]).
pub fn read_input(path: &Path, max: u64) -> Result<Vec<u8>, InputFileError> {
    let (file, size) = open_input(path, max)?;
    let mut bytes = Vec::with_capacity(size as usize);
    // `take`: a file that grows while it is read still stops at the limit.
    file.take(max)
        .read_to_end(&mut bytes)
        .map_err(|e| InputFileError::new(path, e))?;
    Ok(bytes)
}

/// Reads a whole input file as UTF-8 text.
pub fn read_input_text(path: &Path, max: u64) -> Result<String, InputFileError> {
    String::from_utf8(read_input(path, max)?).map_err(|e| {
        InputFileError::new(
            path,
            format!(
                "not text (invalid UTF-8 at byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// An exclusive claim on writing a file, held until dropped, so that two processes (a retried
/// job whose first try still runs, say) never write one file: a lock on `.NAME.lock` beside
/// it, which holds the owner's pid. The lock file is left in place: removing it would let a
/// third process lock a new one while a second still holds the old.
pub struct WriteLock {
    _file: File,
}

/// Claims `path` for writing (see [`WriteLock`]), or says which process holds it.
pub fn lock_for_writing(path: &Path) -> Result<WriteLock, InputFileError> {
    let (name, dir) = name_and_dir(path).map_err(|e| InputFileError::new(path, e))?;
    fs::create_dir_all(dir).map_err(|e| InputFileError::new(path, e))?;
    let lock = dir.join(format!(".{}.lock", name.to_string_lossy()));
    let mut file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock)
        .map_err(|e| InputFileError::new(&lock, e))?;
    match file.try_lock() {
        Ok(()) => {
            let pid = std::process::id().to_string();
            // The pid is for the message of a process that finds the file locked.
            let _ = file
                .set_len(0)
                .and_then(|()| file.write_all(pid.as_bytes()));
            Ok(WriteLock { _file: file })
        }
        Err(fs::TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let pid = pid.trim();
            Err(InputFileError::new(
                path,
                format!(
                    "is being written by another process{}; wait for it to end, or give \
                     another file",
                    if pid.is_empty() {
                        String::new()
                    } else {
                        format!(" (pid {pid})")
                    }
                ),
            ))
        }
        Err(fs::TryLockError::Error(e)) => Err(InputFileError::new(&lock, e)),
    }
}

/// Checks, before any work, that an output file can go where it is named: not over a
/// directory, not below a file, and in a directory that takes new files (a probe file is
/// created there and removed). A missing directory is created when the file is written.
pub fn check_output(path: &Path) -> Result<(), InputFileError> {
    if path.is_dir() {
        return Err(InputFileError::new(path, "a directory; give a file name"));
    }
    let mut dir = parent_dir(path);
    loop {
        match fs::metadata(dir) {
            Ok(m) if m.is_dir() => {
                let probe = dir.join(format!(".rollsim-probe-{}", std::process::id()));
                let made = fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&probe);
                let _ = fs::remove_file(&probe);
                return made.map(drop).map_err(|e| {
                    InputFileError::new(path, format!("cannot write in {}: {e}", dir.display()))
                });
            }
            Ok(_) => {
                return Err(InputFileError::new(
                    path,
                    format!("{} is not a directory", dir.display()),
                ));
            }
            Err(_) => match dir.parent().filter(|d| !d.as_os_str().is_empty()) {
                Some(up) => dir = up,
                None => return Ok(()),
            },
        }
    }
}

/// The temporary files of the atomic writes under way.
static TEMPORARIES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// On Ctrl-C (SIGINT) or SIGTERM, removes the temporary files of the atomic writes under way,
/// then ends the process as the signal would (exit 130 or 143). Call once, at the start of
/// `main`. Checkpointed builds keep their `.partial` files, which are not temporaries.
pub fn remove_temporaries_on_signal() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                for tmp in TEMPORARIES.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                    let _ = fs::remove_file(tmp);
                }
                std::process::exit(128 + signal);
            }
        });
    }
}

/// Removes the temporaries `.NAME.PID-K.tmp` of earlier writes of `name` in `dir` whose
/// process is gone (killed with SIGKILL, or before this version cleaned up on signals).
fn remove_stale_temporaries(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(rest) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|f| f.strip_suffix(".tmp"))
        else {
            continue;
        };
        let Some(pid) = rest
            .split_once('-')
            .and_then(|(p, _)| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Whether process `pid` still runs (on other systems: assumed so).
fn process_alive(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        Path::new("/proc").join(pid.to_string()).exists()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        true
    }
}

/// Writes `path` through `write` so that it is never seen half written: into a new temporary
/// file beside it (its directory created if missing), flushed and synced, then renamed over
/// `path` (and, on Unix, the directory synced). On error the temporary file is removed and
/// `path` is untouched.
pub fn write_atomically<E: From<io::Error>>(
    path: &Path,
    write: impl FnOnce(&mut io::BufWriter<Writeback>) -> Result<(), E>,
) -> Result<(), E> {
    static SERIAL: AtomicU32 = AtomicU32::new(0);
    let (name, dir) = name_and_dir(path)?;
    fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    remove_stale_temporaries(dir, &name.to_string_lossy());
    TEMPORARIES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(tmp.clone());
    let result = write_and_rename(&tmp, path, write);
    TEMPORARIES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|t| *t != tmp);
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    } else if cfg!(unix) {
        // Best effort: make the rename itself durable.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    result
}

/// A file's name and the directory it goes in (`.` for a bare name); an error for a path that
/// names no file.
pub fn name_and_dir(path: &Path) -> io::Result<(&std::ffi::OsStr, &Path)> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", path.display()),
        )
    })?;
    Ok((name, parent_dir(path)))
}

/// The directory a file goes in: its parent, or `.` for a bare name.
pub fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

fn write_and_rename<E: From<io::Error>>(
    tmp: &Path,
    path: &Path,
    write: impl FnOnce(&mut io::BufWriter<Writeback>) -> Result<(), E>,
) -> Result<(), E> {
    let mut w = io::BufWriter::new(Writeback::new(File::create_new(tmp)?));
    write(&mut w)?;
    let file = w.into_inner().map_err(io::IntoInnerError::into_error)?.file;
    file.sync_all()?;
    drop(file);
    fs::rename(tmp, path)?;
    Ok(())
}

/// A file being written that has the system start writing its pages to disk every 256 KiB
/// written, so that the sync before the rename waits only for the last of them. The 15x6
/// gnubg table (1.4 MB) on this project's virtual disk: that sync 1.5-5.4 ms before, 0.2-0.3
/// ms after (strace); the whole build 0.0651 -> 0.0634 s (medians of 301 alternating runs).
pub struct Writeback {
    file: File,
    since: u64,
}

impl Writeback {
    /// Bytes written between two starts of the write-back.
    const EVERY: u64 = 256 << 10;

    fn new(file: File) -> Writeback {
        Writeback { file, since: 0 }
    }

    fn start_writeback(&self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a plain system call on an open descriptor; (0, 0) is the whole file, and
            // only pages not yet under write-back are queued. A failure only loses the head
            // start: the sync before the rename still writes everything.
            unsafe {
                libc::sync_file_range(self.file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
            }
        }
    }
}

impl Write for Writeback {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.since += n as u64;
        if self.since >= Writeback::EVERY {
            self.start_writeback();
            self.since = 0;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Seek for Writeback {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}

/// Passes writes through, keeping the CRC-32 (IEEE, as `crc32fast`) of everything written.
pub struct CrcWriter<W> {
    pub inner: W,
    crc: crc32fast::Hasher,
}

impl<W: Write> CrcWriter<W> {
    pub fn new(inner: W) -> Self {
        CrcWriter {
            inner,
            crc: crc32fast::Hasher::new(),
        }
    }

    /// The CRC-32 of what was written so far.
    pub fn crc(&self) -> u32 {
        self.crc.clone().finalize()
    }
}

impl<W: Write> Write for CrcWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_writes_leave_the_target_and_no_temporary_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join("sub").join("f.bin");
        write_atomically(&path, |w| w.write_all(b"old")).unwrap();
        let failed: io::Result<()> = write_atomically(&path, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("interrupted"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.join("sub")).unwrap().count(), 1);
    }

    #[test]
    fn outputs_are_checked_before_any_work() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let file = dir.join("f");
        fs::write(&file, b"").unwrap();
        assert!(check_output(&dir.join("new/deeper/out.bin")).is_ok());
        let over_dir = check_output(dir).unwrap_err().to_string();
        assert!(over_dir.contains("a directory"), "{over_dir}");
        let below_file = check_output(&file.join("out.bin")).unwrap_err().to_string();
        assert!(below_file.contains("is not a directory"), "{below_file}");
        assert_eq!(
            fs::read_dir(dir).unwrap().count(),
            1,
            "the probe is removed"
        );
        // A directory that takes no new files (root ignores permission bits; /proc does not).
        if Path::new("/proc/self").is_dir() {
            let e = check_output(Path::new("/proc/rollsim-out"))
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("/proc/rollsim-out: cannot write in /proc"),
                "{e}"
            );
        }
    }

    #[test]
    fn writes_past_the_writeback_step_and_seeks_back() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("big.bin");
        let n = 3 * Writeback::EVERY as usize + 5;
        let body: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        write_atomically(&path, |w| -> io::Result<()> {
            w.write_all(&[0; 4])?;
            w.write_all(&body)?;
            w.seek(SeekFrom::Start(0))?;
            w.write_all(b"head")
        })
        .unwrap();
        let back = fs::read(&path).unwrap();
        assert_eq!(&back[..4], b"head");
        assert_eq!(&back[4..], &body[..]);
    }

    #[test]
    fn crc_of_what_was_written() {
        let mut w = CrcWriter::new(Vec::new());
        w.write_all(b"123456789").unwrap();
        assert_eq!(w.crc(), 0xCBF4_3926, "the CRC-32 check value");
        assert_eq!(w.inner, b"123456789");
    }
}
