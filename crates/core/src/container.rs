//! The framing rollsim's binary files share (n-tuple networks `RSNTUPLE`, bearoff tables
//! `RSBEAROF`, pattern databases `RSPUZPDB`): an 8-byte magic, a little-endian `u32` format
//! version, the format's own header and data, and (except where a format checks its parts on
//! their own) a CRC-32 (IEEE) of every byte before it. Written and checked here, once; each
//! format keeps its own header fields and its own error type, into which [`FrameError`]s
//! convert.

/// What is wrong with a file's framing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("not this kind of file: its first bytes are not the format's magic")]
    BadMagic,
    #[error("truncated: at least {expected} bytes expected, {found} found")]
    Truncated { expected: u64, found: u64 },
    #[error("format version {0}, which this rollsim does not read")]
    Version(u32),
    #[error("checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    Checksum { stored: u32, computed: u32 },
}

/// A file format: its magic, the version this build writes, and the oldest it still reads.
#[derive(Clone, Copy, Debug)]
pub struct Container {
    pub magic: [u8; 8],
    pub version: u32,
    pub oldest: u32,
}

/// Bytes of the magic and version every file starts with.
pub const HEAD: usize = 12;

impl Container {
    /// A format that reads only the version it writes.
    pub const fn new(magic: &[u8; 8], version: u32) -> Container {
        Container {
            magic: *magic,
            version,
            oldest: version,
        }
    }

    /// The same format, still reading versions from `oldest` on.
    pub const fn reading_from(self, oldest: u32) -> Container {
        Container { oldest, ..self }
    }

    /// The first [`HEAD`] bytes of a file of this format.
    pub fn head(&self) -> [u8; HEAD] {
        let mut h = [0u8; HEAD];
        h[..8].copy_from_slice(&self.magic);
        h[8..].copy_from_slice(&self.version.to_le_bytes());
        h
    }

    /// Whether `bytes`, a file or its start, could be of this format: they begin with its
    /// magic, or are a beginning of it.
    pub fn is_start(&self, bytes: &[u8]) -> bool {
        bytes.starts_with(&self.magic) || self.magic.starts_with(bytes)
    }

    /// Checks the magic and version at the start of `bytes` (a whole file, or at least its
    /// first [`HEAD`] bytes) and returns the version, one this build reads. A file that stops
    /// inside them but matches so far is truncated: it should have had at least `minimum`
    /// bytes.
    pub fn check_head(&self, bytes: &[u8], minimum: u64) -> Result<u32, FrameError> {
        if !self.is_start(bytes) {
            return Err(FrameError::BadMagic);
        }
        if bytes.len() < HEAD {
            return Err(FrameError::Truncated {
                expected: minimum.max(HEAD as u64),
                found: bytes.len() as u64,
            });
        }
        match u32::from_le_bytes(bytes[8..HEAD].try_into().expect("4 bytes")) {
            v if (self.oldest..=self.version).contains(&v) => Ok(v),
            v => Err(FrameError::Version(v)),
        }
    }
}

/// Checks a whole file's trailing CRC-32 and returns the bytes it covers.
pub fn check_crc(bytes: &[u8]) -> Result<&[u8], FrameError> {
    if bytes.len() < 4 {
        return Err(FrameError::Truncated {
            expected: 4,
            found: bytes.len() as u64,
        });
    }
    let (body, trailer) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_le_bytes(trailer.try_into().expect("4 bytes"));
    check_checksum(stored, crc32fast::hash(body))?;
    Ok(body)
}

/// Compares a CRC-32 stored in a file with the one computed over what was read.
pub fn check_checksum(stored: u32, computed: u32) -> Result<(), FrameError> {
    match stored == computed {
        true => Ok(()),
        false => Err(FrameError::Checksum { stored, computed }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: Container = Container::new(b"RSTESTFM", 3);

    #[test]
    fn heads_are_checked_for_magic_truncation_and_version() {
        let mut file = C.head().to_vec();
        file.extend([1, 2, 3]);
        assert_eq!(C.check_head(&file, 20), Ok(3));
        assert_eq!(
            C.check_head(b"RSTE", 20),
            Err(FrameError::Truncated {
                expected: 20,
                found: 4
            })
        );
        assert_eq!(
            C.check_head(b"", 20),
            Err(FrameError::Truncated {
                expected: 20,
                found: 0
            })
        );
        assert_eq!(C.check_head(b"RSNOTOUR....", 20), Err(FrameError::BadMagic));
        assert_eq!(C.check_head(b"PK\x03\x04", 20), Err(FrameError::BadMagic));
        let other = Container::new(b"RSTESTFM", 4).head();
        assert_eq!(C.check_head(&other, 20), Err(FrameError::Version(4)));
        let old = Container::new(b"RSTESTFM", 2).head();
        assert_eq!(C.check_head(&old, 20), Err(FrameError::Version(2)));
        assert_eq!(C.reading_from(2).check_head(&old, 20), Ok(2));
        let older = Container::new(b"RSTESTFM", 1).head();
        assert_eq!(
            C.reading_from(2).check_head(&older, 20),
            Err(FrameError::Version(1))
        );
    }

    #[test]
    fn checksums_cover_every_byte_before_them() {
        let mut file = b"RSTESTFM body".to_vec();
        file.extend(crc32fast::hash(&file).to_le_bytes());
        assert_eq!(check_crc(&file), Ok(&b"RSTESTFM body"[..]));
        file[3] ^= 1;
        assert!(matches!(check_crc(&file), Err(FrameError::Checksum { .. })));
        assert!(matches!(
            check_crc(b"ab"),
            Err(FrameError::Truncated { .. })
        ));
    }
}
