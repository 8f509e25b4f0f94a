//! Positional reads and writes, and I/O errors that name their file.

use std::fs::File;
use std::io;
use std::path::Path;

/// `e` with the path it happened on, as every I/O error of a file is reported.
pub(super) fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(unix)]
pub(super) fn write_at(file: &File, bytes: &[u8], at: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, at)
}

#[cfg(unix)]
pub(super) fn read_at(file: &File, bytes: &mut [u8], at: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, bytes, at)
}

#[cfg(windows)]
pub(super) fn write_at(file: &File, mut bytes: &[u8], mut at: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        let k = std::os::windows::fs::FileExt::seek_write(file, bytes, at)?;
        (bytes, at) = (&bytes[k..], at + k as u64);
    }
    Ok(())
}

#[cfg(windows)]
pub(super) fn read_at(file: &File, mut bytes: &mut [u8], mut at: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, bytes, at)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            k => (bytes, at) = (&mut bytes[k..], at + k as u64),
        }
    }
    Ok(())
}
