//! Files as every rollsim format writes them: atomically, under a lock, never through a link or
//! onto a file that is not ours; with a CRC-32 of their contents; and the input files a user
//! names, checked before they are read.
//!
//! The rules every writer follows, here once:
//! - an output that exists must be a regular file, or a symlink to one, whose target is then
//!   written (the link stays); a FIFO, a device, a directory, standard output or a link to any
//!   of them is refused before any work ([`output_target`]);
//! - the files rollsim makes beside an output (locks, partials, temporaries) are opened with
//!   `O_NOFOLLOW`, created with `O_EXCL`, and must be regular files with one link
//!   ([`open_owned`]): a symlink or hard link planted there is refused, never written through;
//! - names beside an output are built from its bytes, not its lossy text ([`sibling`]).

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// An input file the user named that cannot be used: missing, unreadable, not a regular file,
/// too large, or not text; or an output that cannot be written where it is named. The command
/// line reports every such file as bad input (exit 2).
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

/// What a file system entry is, in the words messages use.
pub fn kind_of(t: fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    }
}

/// Whether `path` names this process's standard output: `-`, `/dev/stdout` or a descriptor's
/// path, `/dev/fd/1`, `/proc/self/fd/1`.
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
        || ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]
            .iter()
            .any(|p| path == Path::new(p))
}

/// Whether following the symlink `path` passes through a file descriptor's magic link
/// (`/proc/…/fd/N`, `/dev/fd/N`): what it reaches is whatever that descriptor is now.
fn links_to_descriptor(path: &Path) -> bool {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        let Ok(next) = fs::read_link(&at) else {
            return false;
        };
        let next = parent_dir(&at).join(next);
        let s = next.to_string_lossy();
        if s.starts_with("/dev/fd/") || (s.starts_with("/proc/") && s.contains("/fd/")) {
            return true;
        }
        at = next;
    }
    false
}

/// Where a write of the output `path` goes: `path` itself when it is missing or a regular
/// file; the target of a symlink to a regular file (so the link stays a link). Anything else
/// that exists there is refused, naming what it is.
pub fn output_target(path: &Path) -> Result<PathBuf, InputFileError> {
    let refuse = |what: &str| {
        Err(InputFileError::new(
            path,
            format!(
                "{what}, not a regular file; rollsim replaces only regular files, so give a file name"
            ),
        ))
    };
    if is_stdout(path) {
        return Err(InputFileError::new(
            path,
            "standard output; this file is written under a temporary name and renamed into \
             place, so give a file name",
        ));
    }
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        // Below a file: `check_output` names that file.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(path.to_path_buf());
        }
        Err(e) => return Err(InputFileError::new(path, e)),
    };
    let t = meta.file_type();
    if t.is_file() {
        return Ok(path.to_path_buf());
    }
    if t.is_dir() {
        return Err(InputFileError::new(path, "a directory; give a file name"));
    }
    if !t.is_symlink() {
        return refuse(kind_of(t));
    }
    if links_to_descriptor(path) {
        return refuse("a symlink to a file descriptor (such as standard output)");
    }
    match fs::metadata(path) {
        Ok(m) if m.is_file() => fs::canonicalize(path).map_err(|e| InputFileError::new(path, e)),
        Ok(m) => refuse(&format!("a symlink to {}", kind_of(m.file_type()))),
        Err(_) => refuse(&format!(
            "a symlink to nothing ({})",
            fs::read_link(path).unwrap_or_default().display()
        )),
    }
}

/// Opens an input file: a regular file (not a directory, nor a device or pipe that may never
/// end, such as `/dev/zero`) of at most `max` bytes, checked before anything is read. Returns
/// it and its size. The one way rollsim opens a file the user named for reading.
pub fn open_input(path: &Path, max: u64) -> Result<(File, u64), InputFileError> {
    let err = |e: io::Error| InputFileError::new(path, e);
    let meta = fs::metadata(path).map_err(err)?;
    if meta.is_dir() {
        return Err(InputFileError::new(path, "a directory, not a file"));
    }
    if !meta.is_file() {
        return Err(InputFileError::new(
            path,
            format!("{}, not a regular file", kind_of(meta.file_type())),
        ));
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
    let mut options = fs::OpenOptions::new();
    options.read(true);
    // Non-blocking: a FIFO swapped in after the check above does not wait for a writer (a
    // regular file's reads ignore the flag).
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(err)?;
    let meta = file.metadata().map_err(err)?;
    if !meta.is_file() {
        return Err(InputFileError::new(
            path,
            format!("{}, not a regular file", kind_of(meta.file_type())),
        ));
    }
    Ok((file, meta.len()))
}

/// Reads a whole input file (see [`open_input`]).
pub fn read_input(path: &Path, max: u64) -> Result<Vec<u8>, InputFileError> {
    let (file, size) = open_input(path, max)?;
    let mut bytes = Vec::with_capacity(size.min(max) as usize);
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

/// Whether two paths name one file (its device and inode, through any links); false when
/// either does not exist.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (fs::metadata(a), fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
    }
}

/// Refuses an output that is one of the command's inputs, under whatever name: writing it
/// would destroy what is being read.
pub fn check_not_an_input(out: &Path, inputs: &[&Path]) -> Result<(), InputFileError> {
    match inputs.iter().find(|i| same_file(out, i)) {
        Some(i) => Err(InputFileError::new(
            out,
            format!(
                "is also an input ({}); give another output file",
                i.display()
            ),
        )),
        None => Ok(()),
    }
}

/// How [`open_owned`] may find the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Create {
    /// It must not exist yet (`O_EXCL`).
    New,
    /// It must exist.
    Existing,
    /// Either.
    IfMissing,
}

/// Opens a file rollsim keeps beside an output (a lock, a partial table, a checkpoint) for
/// reading and writing, without following a symlink (`O_NOFOLLOW`), and checks that it is a
/// regular file with one link: anything planted there is refused, naming what it is.
pub fn open_owned(path: &Path, create: Create) -> Result<File, InputFileError> {
    let mut options = fs::OpenOptions::new();
    options.read(true).write(true);
    match create {
        Create::New => options.create_new(true),
        Create::Existing => &mut options,
        Create::IfMissing => options.create(true),
    };
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let planted = |what: &str| {
        InputFileError::new(
            path,
            format!(
                "{what} where rollsim keeps its own file; it was not made by rollsim and is \
                 not written through: remove it, or give another output"
            ),
        )
    };
    let file = options.open(path).map_err(|e| {
        match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => return planted("a symlink"),
            Ok(m) if !m.is_file() => return planted(kind_of(m.file_type())),
            _ => {}
        }
        InputFileError::new(path, e)
    })?;
    let meta = file.metadata().map_err(|e| InputFileError::new(path, e))?;
    if !meta.is_file() {
        return Err(planted(kind_of(meta.file_type())));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() != 1 {
            return Err(planted(&format!("a file with {} hard links", meta.nlink())));
        }
    }
    Ok(file)
}

/// The path of a file beside `path`: its name between `prefix` and `suffix`, built from the
/// name's bytes, so that two outputs whose names are not UTF-8 never share one.
pub fn sibling(path: &Path, prefix: &str, suffix: &str) -> io::Result<PathBuf> {
    let (name, _) = name_and_dir(path)?;
    let mut s = OsString::from(prefix);
    s.push(name);
    s.push(suffix);
    Ok(path.with_file_name(s))
}

/// An exclusive claim on writing a file, held until dropped, so that two processes (a retried
/// job whose first try still runs, say) never write one file: a lock on `.NAME.lock` beside
/// the file the output resolves to ([`output_target`]), so that a symlink's two names take one
/// lock, and on the file itself while it exists, so that two hard links do too. The lock file
/// is left in place: removing it would let a third process lock a new one while a second still
/// holds the old. Nothing is written into it.
pub struct WriteLock {
    files: Vec<File>,
    target: PathBuf,
}

/// A file's device and inode, where the system has them.
fn file_id(file: &File) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        file.metadata().ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        None
    }
}

impl WriteLock {
    /// Where the output is written: the file a symlink named as the output points to.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Also holds `file` (the output itself, opened after it was created) locked, unless it
    /// is a file already held.
    pub fn hold(&mut self, path: &Path, file: &File) -> Result<(), InputFileError> {
        let id = |f: &File| file_id(f);
        if id(file).is_some() && self.files.iter().any(|h| id(h) == id(file)) {
            return Ok(());
        }
        let file = file.try_clone().map_err(|e| InputFileError::new(path, e))?;
        try_lock(path, &file)?;
        self.files.push(file);
        Ok(())
    }
}

/// Claims `path` for writing (see [`WriteLock`]), or says which process holds it.
pub fn lock_for_writing(path: &Path) -> Result<WriteLock, InputFileError> {
    let target = output_target(path)?;
    let (_, dir) = name_and_dir(&target).map_err(|e| InputFileError::new(path, e))?;
    fs::create_dir_all(dir).map_err(|e| InputFileError::new(dir, e))?;
    let lock = sibling(&target, ".", ".lock").map_err(|e| InputFileError::new(path, e))?;
    let file = open_owned(&lock, Create::IfMissing)?;
    try_lock(path, &file)?;
    let mut held = WriteLock {
        files: vec![file],
        target,
    };
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    if let Ok(f) = options.open(&held.target)
        && f.metadata().is_ok_and(|m| m.is_file())
    {
        held.hold(path, &f)?;
    }
    Ok(held)
}

/// Takes `file`'s lock for `path`, or says who holds it.
fn try_lock(path: &Path, file: &File) -> Result<(), InputFileError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(fs::TryLockError::WouldBlock) => Err(InputFileError::new(
            path,
            format!(
                "is being written by another process{}; wait for it to end, or give another \
                 file",
                lock_holder(file).map_or(String::new(), |(pid, name)| format!(
                    " (pid {pid}{})",
                    name.map_or(String::new(), |n| format!(", {n}"))
                ))
            ),
        )),
        Err(fs::TryLockError::Error(e)) => Err(InputFileError::new(path, e)),
    }
}

/// The process holding a lock on `file`, as the kernel lists it in `/proc/locks`, with its
/// command name: what is known, not what a lock file may once have said.
fn lock_holder(file: &File) -> Option<(u32, Option<String>)> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = file.metadata().ok()?;
        let locks = fs::read_to_string("/proc/locks").ok()?;
        let pid = holder_in(
            &locks,
            libc::major(meta.dev()),
            libc::minor(meta.dev()),
            meta.ino(),
        )?;
        let name = fs::read_to_string(format!("/proc/{pid}/comm"))
            .ok()
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty());
        Some((pid, name))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// The pid holding a lock on inode `ino` of device `major:minor` in `/proc/locks` text
/// (`1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF`; waiters, marked `->`, are skipped).
fn holder_in(locks: &str, major: u32, minor: u32, ino: u64) -> Option<u32> {
    let id = format!("{major:02x}:{minor:02x}:{ino}");
    locks.lines().filter(|l| !l.contains("->")).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let at = f.iter().position(|&x| x == id)?;
        f.get(at.checked_sub(1)?)?.parse().ok()
    })
}

/// Checks, before any work, that an output file can go where it is named: not over anything
/// but a regular file ([`output_target`]), not below a file, and in a directory that takes
/// new files (a probe file is created there and removed). A missing directory is created when
/// the file is written. Returns where the output will be written.
pub fn check_output(path: &Path) -> Result<PathBuf, InputFileError> {
    let target = output_target(path)?;
    let mut dir = parent_dir(&target).to_path_buf();
    loop {
        match fs::metadata(&dir) {
            Ok(m) if m.is_dir() => {
                let probe = dir.join(format!(".rollsim-probe-{}", std::process::id()));
                let made = fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&probe);
                let _ = fs::remove_file(&probe);
                return made.map(|_| target).map_err(|e| {
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
                Some(up) => dir = up.to_path_buf(),
                None => return Ok(target),
            },
        }
    }
}

/// Refuses to replace `path`, a file rollsim writes beside another output (a CSV, a chart),
/// when something is there that rollsim did not write: a file that does not start with
/// `signature`, the first bytes rollsim writes there, or anything not a regular file.
pub fn check_side_file(path: &Path, signature: &[u8]) -> Result<(), InputFileError> {
    let target = output_target(path)?;
    let mut head = vec![0; signature.len()];
    let found = match fs::File::open(&target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(InputFileError::new(path, e)),
        Ok(f) => f.take(signature.len() as u64).read_exact(&mut head).is_ok(),
    };
    match found && head == signature {
        true => Ok(()),
        false => Err(InputFileError::new(
            path,
            "exists and was not written by rollsim; rollsim writes this file beside its \
             output and will not replace it: move it away, or give another output name",
        )),
    }
}

/// The files to remove if the process is interrupted: temporaries of atomic writes, partial
/// outputs that no checkpoint makes worth keeping.
static TEMPORARIES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// On Ctrl-C (SIGINT) or SIGTERM, removes the [`Temporary`] files under way, then ends the
/// process as the signal would (exit 130 or 143). Call once, at the start of `main`.
/// Checkpointed builds keep their `.partial` files, which are not temporaries.
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

/// A file that exists only while it is written: removed when dropped (an error, a panic) and
/// when the process is interrupted, unless [`Temporary::keep`] says it became the output.
pub struct Temporary {
    path: PathBuf,
    keep: bool,
}

impl Temporary {
    /// Registers `path`, which the caller is about to create.
    pub fn new(path: PathBuf) -> Temporary {
        TEMPORARIES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(path.clone());
        Temporary { path, keep: false }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file is kept (renamed into place, or left for a resume): not removed any more.
    pub fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        let mut list = TEMPORARIES.lock().unwrap_or_else(|p| p.into_inner());
        if !self.keep {
            let _ = fs::remove_file(&self.path);
        }
        list.retain(|t| *t != self.path);
    }
}

/// Removes the temporaries `.NAME.PID-K.tmp` of earlier writes of `target` whose process is
/// gone (killed with SIGKILL, or before this version cleaned up on signals).
fn remove_stale_temporaries(target: &Path) {
    let (Ok((name, dir)), Ok(entries)) = (name_and_dir(target), fs::read_dir(parent_dir(target)))
    else {
        return;
    };
    let _ = dir;
    let mut prefix = b".".to_vec();
    prefix.extend(name.as_encoded_bytes());
    prefix.push(b'.');
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(rest) = file
            .as_encoded_bytes()
            .strip_prefix(&prefix[..])
            .and_then(|f| f.strip_suffix(b".tmp"))
        else {
            continue;
        };
        let Some(pid) = std::str::from_utf8(rest)
            .ok()
            .and_then(|r| r.split_once('-'))
            .and_then(|(p, k)| p.parse::<u32>().ok().filter(|_| k.parse::<u32>().is_ok()))
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
/// `path` (and, on Unix, the directory synced). A symlink to a regular file has its target
/// written; anything else but a regular file there is refused ([`output_target`]). On error
/// the temporary file is removed and `path` is untouched.
pub fn write_atomically<E: From<io::Error>>(
    path: &Path,
    write: impl FnOnce(&mut io::BufWriter<Writeback>) -> Result<(), E>,
) -> Result<(), E> {
    let target = output_target(path).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    replace_atomically(&target, write)
}

/// Writes `path`, a file rollsim keeps beside an output (a build's checkpoint), as
/// [`write_atomically`] writes an output, but at `path` itself: whatever is there, a planted
/// symlink included, is replaced by the rename, never followed.
pub fn write_beside<E: From<io::Error>>(
    path: &Path,
    write: impl FnOnce(&mut io::BufWriter<Writeback>) -> Result<(), E>,
) -> Result<(), E> {
    replace_atomically(path, write)
}

/// Writes `target` through a new temporary beside it, then renames it over `target`.
fn replace_atomically<E: From<io::Error>>(
    target: &Path,
    write: impl FnOnce(&mut io::BufWriter<Writeback>) -> Result<(), E>,
) -> Result<(), E> {
    static SERIAL: AtomicU32 = AtomicU32::new(0);
    let (_, dir) = name_and_dir(target)?;
    fs::create_dir_all(dir)?;
    let tmp = sibling(
        target,
        ".",
        &format!(
            ".{}-{}.tmp",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        ),
    )?;
    remove_stale_temporaries(target);
    let tmp = Temporary::new(tmp);
    write_and_rename(tmp.path(), target, write)?;
    tmp.keep();
    if cfg!(unix) {
        // Best effort: make the rename itself durable.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
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
    let file = open_owned(tmp, Create::New).map_err(io::Error::other)?;
    let mut w = io::BufWriter::new(Writeback::new(file));
    write(&mut w)?;
    let file = w.into_inner().map_err(io::IntoInnerError::into_error)?.file;
    file.sync_all()?;
    drop(file);
    fs::rename(tmp, path)?;
    Ok(())
}

/// A file being written that has the system start writing its pages to disk every 256 KiB
/// written, so that the sync before the rename waits only for the last of them.
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

    /// A FIFO at `path` (made with mkfifo(3)).
    #[cfg(unix)]
    fn fifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a plain system call on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[cfg(unix)]
    #[test]
    fn outputs_that_are_not_regular_files_are_refused_and_links_are_written_through() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let (pipe, real, link, dangling) = (d.join("p"), d.join("r"), d.join("l"), d.join("x"));
        fifo(&pipe);
        fs::write(&real, b"old").unwrap();
        symlink(&real, &link).unwrap();
        symlink(d.join("missing"), &dangling).unwrap();
        symlink(&pipe, d.join("lp")).unwrap();
        symlink("/proc/self/fd/1", d.join("fd")).unwrap();
        let why = |p: &Path| output_target(p).unwrap_err().reason;
        assert!(
            why(&pipe).starts_with("a FIFO, not a regular file"),
            "{}",
            why(&pipe)
        );
        assert!(why(Path::new("/dev/null")).starts_with("a character device"));
        assert!(why(&d.join("lp")).starts_with("a symlink to a FIFO"));
        assert!(why(&dangling).starts_with("a symlink to nothing"));
        assert!(why(&d.join("fd")).starts_with("a symlink to a file descriptor"));
        assert!(why(Path::new("-")).starts_with("standard output"));
        assert!(why(Path::new("/dev/stdout")).starts_with("standard output"));
        assert!(why(d).starts_with("a directory"));
        assert!(
            check_output(&pipe).is_err()
                && write_atomically(&pipe, |_| io::Result::Ok(())).is_err()
        );
        assert_eq!(
            output_target(&link).unwrap(),
            fs::canonicalize(&real).unwrap()
        );
        write_atomically(&link, |w| w.write_all(b"new")).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link stays"
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
        let still = fs::symlink_metadata(&pipe).unwrap().file_type();
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(&still));
    }

    #[cfg(unix)]
    #[test]
    fn files_beside_an_output_are_never_written_through_links() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let victim = d.join("victim");
        fs::write(&victim, b"precious").unwrap();
        std::os::unix::fs::symlink(&victim, d.join(".out.lock")).unwrap();
        let e = lock_for_writing(&d.join("out")).err().unwrap();
        assert!(e.reason.starts_with("a symlink where rollsim keeps"), "{e}");
        fs::hard_link(&victim, d.join("hard")).unwrap();
        let e = open_owned(&d.join("hard"), Create::IfMissing).unwrap_err();
        assert!(e.reason.starts_with("a file with 2 hard links"), "{e}");
        let e = open_owned(&victim, Create::New).unwrap_err();
        assert!(e.to_string().contains("exists"), "{e}");
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
    }

    #[test]
    fn one_file_under_two_names_takes_one_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let real = d.join("real.jsonl");
        fs::write(&real, b"{}\n").unwrap();
        let held = lock_for_writing(&real).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&real, d.join("soft.jsonl")).unwrap();
            let e = lock_for_writing(&d.join("soft.jsonl")).err().unwrap();
            assert!(e.reason.contains("being written by another process"), "{e}");
        }
        fs::hard_link(&real, d.join("hard.jsonl")).unwrap();
        let e = lock_for_writing(&d.join("hard.jsonl")).err().unwrap();
        assert!(e.reason.contains("being written by another process"), "{e}");
        #[cfg(target_os = "linux")]
        assert!(
            e.reason.contains(&format!("(pid {}", std::process::id())),
            "the holder named from the kernel's list: {e}"
        );
        drop(held);
        assert!(lock_for_writing(&d.join("hard.jsonl")).is_ok());
    }

    #[test]
    fn lock_holders_are_read_from_the_kernels_list() {
        let locks = "1: FLOCK  ADVISORY  WRITE 4242 fd:01:123456 0 EOF\n\
                     1: -> FLOCK  ADVISORY  WRITE 77 fd:01:123456 0 EOF\n\
                     2: POSIX  ADVISORY  READ 99 00:2f:77 0 EOF\n";
        assert_eq!(holder_in(locks, 0xfd, 1, 123456), Some(4242));
        assert_eq!(holder_in(locks, 0, 0x2f, 77), Some(99));
        assert_eq!(holder_in(locks, 0xfd, 1, 12345), None);
    }

    #[cfg(unix)]
    #[test]
    fn names_beside_outputs_keep_their_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let a = Path::new(std::ffi::OsStr::from_bytes(b"d/t\xff.rsb"));
        let b = Path::new(std::ffi::OsStr::from_bytes(b"d/t\xfe.rsb"));
        assert_ne!(
            sibling(a, ".", ".lock").unwrap(),
            sibling(b, ".", ".lock").unwrap()
        );
        assert_eq!(
            sibling(a, "", ".partial").unwrap().as_os_str().as_bytes(),
            b"d/t\xff.rsb.partial"
        );
    }

    #[test]
    fn outputs_that_are_inputs_and_side_files_of_others_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let (a, b, csv) = (d.join("a"), d.join("b"), d.join("a.csv"));
        fs::write(&a, b"x").unwrap();
        fs::hard_link(&a, &b).unwrap();
        assert!(check_not_an_input(&b, &[&a]).is_err());
        assert!(check_not_an_input(&d.join("c"), &[&a]).is_ok());
        assert!(
            check_side_file(&csv, b"rollouts,").is_ok(),
            "missing: free to write"
        );
        fs::write(&csv, b"rollouts,games\n").unwrap();
        assert!(check_side_file(&csv, b"rollouts,").is_ok(), "ours");
        fs::write(&csv, b"my notes").unwrap();
        assert!(check_side_file(&csv, b"rollouts,").is_err(), "not ours");
    }

    #[test]
    fn temporaries_are_removed_unless_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let (gone, kept) = (tmp.path().join("gone"), tmp.path().join("kept"));
        for p in [&gone, &kept] {
            fs::write(p, b"x").unwrap();
        }
        drop(Temporary::new(gone.clone()));
        Temporary::new(kept.clone()).keep();
        assert!(!gone.exists() && kept.exists());
        assert!(TEMPORARIES.lock().unwrap().iter().all(|t| *t != kept));
    }

    #[cfg(unix)]
    #[test]
    fn inputs_that_would_block_are_refused_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("fifo");
        fifo(&p);
        let e = open_input(&p, 10).err().unwrap();
        assert!(e.reason.starts_with("a FIFO"), "{e}");
    }

    #[test]
    fn crc_of_what_was_written() {
        let mut w = CrcWriter::new(Vec::new());
        w.write_all(b"123456789").unwrap();
        assert_eq!(w.crc(), 0xCBF4_3926, "the CRC-32 check value");
        assert_eq!(w.inner, b"123456789");
    }
}
