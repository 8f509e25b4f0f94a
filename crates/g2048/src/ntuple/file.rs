//! The network file (`RSNTUPLE`; the layout is [`Network::save`]'s), written with its CRC
//! and read with its size and checksum checked before any weight is trusted.

use serde::{Deserialize, Serialize};

use super::*;

/// The file format: magic `RSNTUPLE`, version 2 (with the recipe); version 1 files (one
/// stage, no recipe) still load.
pub const FORMAT: Container = Container::new(b"RSNTUPLE", 2).reading_from(1);

/// The most bytes of recipe a file may hold.
pub const MAX_RECIPE_BYTES: usize = 1 << 16;

/// The JSON block of a version-2 file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta {
    recipe: Recipe,
    /// Whether the TC state follows the weights.
    coherence_state: bool,
}

/// Bytes before the tuple records.
pub(super) const HEADER: usize = 32;

/// Bytes per tuple record: cell count, then up to 7 cells, zero padded.
pub(super) const TUPLE_RECORD: usize = 8;

impl From<FrameError> for NetworkError {
    fn from(e: FrameError) -> NetworkError {
        match e {
            FrameError::BadMagic => NetworkError::BadMagic,
            FrameError::Truncated { expected, found } => {
                NetworkError::Truncated { expected, found }
            }
            FrameError::Version(v) => NetworkError::Version(v),
            FrameError::Checksum { stored, computed } => {
                NetworkError::Checksum { stored, computed }
            }
        }
    }
}

/// Reads `n` weights of `size` bytes each, decoded by `decode`, in blocks of 65,536; a short
/// read is a truncated file of `expected` bytes.
pub(super) fn read_weights<R: Read, T>(
    src: &mut Source<R>,
    n: usize,
    size: usize,
    expected: u64,
    decode: impl Fn(&[u8]) -> T,
) -> Result<Box<[T]>, NetworkError> {
    let mut buf = vec![0u8; (1 << 16) * size];
    let mut w = huge_vec(n);
    while w.len() < n {
        let want = (n - w.len()).min(1 << 16) * size;
        if src.fill(&mut buf[..want])? < want {
            return Err(NetworkError::Truncated {
                expected,
                found: src.pos,
            });
        }
        w.extend(buf[..want].chunks_exact(size).map(&decode));
    }
    Ok(w.into_boxed_slice())
}

/// A reader that counts and checksums what it reads.
pub(super) struct Source<R: Read> {
    pub(super) r: R,
    pub(super) pos: u64,
    pub(super) crc: crc32fast::Hasher,
}

impl<R: Read> Source<R> {
    /// Reads until `buf` is full or the input ends; returns the bytes read.
    pub(super) fn fill(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match self.r.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.crc.update(&buf[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Network {
    /// The JSON block this network's file holds.
    pub(super) fn meta_json(&self) -> Vec<u8> {
        let meta = Meta {
            recipe: self.recipe.clone(),
            coherence_state: self.coherence.is_some(),
        };
        serde_json::to_vec(&meta).expect("a recipe serializes")
    }

    /// The size in bytes of this network's file with `element` weights.
    pub fn file_size(&self, element: Element) -> u64 {
        let state = if self.coherence.is_some() { 8 } else { 0 };
        (HEADER
            + TUPLE_RECORD * self.tuples.len()
            + self.meta_json().len()
            + (element.size() + state) * self.len()
            + 4) as u64
    }

    /// Writes the network in the file format (see [`Network::save`]) with `element` weights.
    /// Fails, writing nothing past the header, on a weight that is not finite.
    pub fn write_to(&self, w: &mut impl Write, element: Element) -> Result<(), NetworkError> {
        let mut w = CrcWriter::new(w);
        if let Some(index) = (0..self.len()).find(|&i| !self.weight(i).is_finite()) {
            return Err(NetworkError::NotFinite {
                index,
                value: self.weight(index),
            });
        }
        let meta = self.meta_json();
        let mut head = Vec::with_capacity(HEADER + TUPLE_RECORD * self.tuples.len());
        head.extend_from_slice(&FORMAT.head());
        head.extend_from_slice(&element.code().to_le_bytes());
        head.extend_from_slice(&self.games.to_le_bytes());
        head.extend_from_slice(&(self.tuples.len() as u32).to_le_bytes());
        head.extend_from_slice(&(meta.len() as u32).to_le_bytes());
        for cells in &self.tuples {
            let mut rec = [0u8; TUPLE_RECORD];
            rec[0] = cells.len() as u8;
            rec[1..=cells.len()].copy_from_slice(cells);
            head.extend_from_slice(&rec);
        }
        head.extend_from_slice(&meta);
        w.write_all(&head)?;
        let mut buf = Vec::with_capacity(element.size() << 14);
        let n = self.len();
        let mut start = 0;
        while start < n {
            let end = n.min(start + (1 << 14));
            buf.clear();
            match (&self.weights, element) {
                (Weights::F32(v), Element::F32) => {
                    for x in &v[start..end] {
                        buf.extend_from_slice(&x.load(Relaxed).to_le_bytes());
                    }
                }
                (Weights::F32(v), Element::F16) => {
                    for x in &v[start..end] {
                        let h = to_f16(f32::from_bits(x.load(Relaxed)));
                        buf.extend_from_slice(&h.to_bits().to_le_bytes());
                    }
                }
                (Weights::F16(v), Element::F32) => {
                    for x in &v[start..end] {
                        buf.extend_from_slice(&x.to_f32().to_le_bytes());
                    }
                }
                (Weights::F16(v), Element::F16) => {
                    for x in &v[start..end] {
                        buf.extend_from_slice(&x.to_bits().to_le_bytes());
                    }
                }
            }
            w.write_all(&buf)?;
            start = end;
        }
        if let Some(c) = &self.coherence {
            for part in c.chunks(1 << 14) {
                buf.clear();
                for x in part {
                    buf.extend_from_slice(&x.load(Relaxed).to_le_bytes());
                }
                w.write_all(&buf)?;
            }
        }
        let crc = w.crc();
        w.inner.write_all(&crc.to_le_bytes())?;
        Ok(())
    }

    /// Writes the network to `path` atomically (a temporary file beside it, renamed over it).
    ///
    /// The format, all little-endian:
    ///
    /// | offset | bytes | field |
    /// |---|---|---|
    /// | 0 | 8 | magic `RSNTUPLE` |
    /// | 8 | 4 | version, 2 |
    /// | 12 | 4 | element type: 1 = f32, 2 = f16 |
    /// | 16 | 8 | training games so far |
    /// | 24 | 4 | number of tuples T |
    /// | 28 | 4 | bytes J of the JSON block (at most [`MAX_RECIPE_BYTES`]) |
    /// | 32 | 8 T | per tuple: cell count k, then its k cells, zero padded to 8 bytes |
    /// | 32 + 8 T | J | JSON: `{"recipe": Recipe, "coherence_state": bool}` |
    /// | 32 + 8 T + J | W x 4 or 2 | the weights, stage by stage, each stage tuple by tuple in feature index order |
    /// | then | W x 8, when `coherence_state` | TC state per weight: accumulated error, then absolute error, f32 each |
    /// | end - 4 | 4 | CRC-32 (IEEE) of every byte before it |
    ///
    /// Version 1 is the same with word 28 zero and no JSON block: one stage, no recipe.
    pub fn save(&self, path: &Path, element: Element) -> Result<(), NetworkError> {
        rollsim_core::files::write_atomically(path, |w| self.write_to(w, element))
    }

    /// Reads a network file (see [`Network::save`]), checking its size before allocating.
    pub fn load(path: &Path) -> Result<Network, NetworkError> {
        let (file, size) = rollsim_core::files::open_input(path, u64::MAX)?;
        Network::read_checked(io::BufReader::with_capacity(1 << 16, file), Some(size))
    }

    /// Reads a network in the file format from `r`.
    pub fn read_from(r: impl Read) -> Result<Network, NetworkError> {
        Network::read_checked(r, None)
    }

    pub(super) fn read_checked(r: impl Read, size: Option<u64>) -> Result<Network, NetworkError> {
        let mut src = Source {
            r,
            pos: 0,
            crc: crc32fast::Hasher::new(),
        };
        let mut head = [0u8; HEADER];
        let got = src.fill(&mut head)?;
        let version = FORMAT.check_head(&head[..got], HEADER as u64)?;
        if got < HEADER {
            return Err(NetworkError::Truncated {
                expected: HEADER as u64,
                found: got as u64,
            });
        }
        let u32_at = |i: usize| u32::from_le_bytes(head[i..i + 4].try_into().unwrap());
        let element = match u32_at(12) {
            1 => Element::F32,
            2 => Element::F16,
            other => return Err(NetworkError::Element(other)),
        };
        let games = u64::from_le_bytes(head[16..24].try_into().unwrap());
        let count = u32_at(24) as usize;
        if count == 0 || count > MAX_TUPLES {
            return Err(NetworkError::Tuples(format!(
                "{count} tuples (1 to {MAX_TUPLES} allowed)"
            )));
        }
        let meta_len = u32_at(28) as usize;
        if version == 1 && meta_len != 0 {
            return Err(NetworkError::Tuples("reserved header word is not 0".into()));
        }
        if meta_len > MAX_RECIPE_BYTES {
            return Err(NetworkError::Recipe(format!(
                "{meta_len} bytes of recipe (at most {MAX_RECIPE_BYTES})"
            )));
        }
        let mut recs = vec![0u8; TUPLE_RECORD * count];
        let got = src.fill(&mut recs)?;
        if got < recs.len() {
            return Err(NetworkError::Truncated {
                expected: (HEADER + recs.len()) as u64,
                found: src.pos,
            });
        }
        let tuples: Vec<Vec<u8>> = recs
            .chunks_exact(TUPLE_RECORD)
            .map(|rec| {
                let k = usize::from(rec[0]).min(TUPLE_RECORD - 1);
                rec[1..=k].to_vec()
            })
            .collect();
        for (t, rec) in recs.chunks_exact(TUPLE_RECORD).enumerate() {
            if usize::from(rec[0]) > MAX_CELLS
                || rec[1 + usize::from(rec[0])..].iter().any(|&b| b != 0)
            {
                return Err(NetworkError::Tuples(format!(
                    "tuple record {t} is malformed: {rec:?}"
                )));
            }
        }
        let meta = if version == 1 {
            Meta {
                recipe: Recipe::default(),
                coherence_state: false,
            }
        } else {
            let mut json = vec![0u8; meta_len];
            if src.fill(&mut json)? < meta_len {
                return Err(NetworkError::Truncated {
                    expected: (HEADER + recs.len() + meta_len) as u64,
                    found: src.pos,
                });
            }
            serde_json::from_slice::<Meta>(&json)
                .map_err(|e| NetworkError::Recipe(format!("unreadable JSON block: {e}")))?
        };
        let n = weights_needed(&tuples, &meta.recipe)?;
        let state = if meta.coherence_state { 8 } else { 0 };
        let expected = (HEADER + recs.len() + meta_len + n * (element.size() + state) + 4) as u64;
        match size {
            Some(s) if s < expected => {
                return Err(NetworkError::Truncated { expected, found: s });
            }
            Some(s) if s > expected => return Err(NetworkError::Oversized { expected }),
            _ => {}
        }
        let weights = match element {
            Element::F32 => Weights::F32(read_weights(&mut src, n, 4, expected, |b| {
                AtomicU32::new(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            })?),
            Element::F16 => Weights::F16(read_weights(&mut src, n, 2, expected, |b| {
                f16::from_bits(u16::from_le_bytes([b[0], b[1]]))
            })?),
        };
        let coherence = if meta.coherence_state {
            Some(read_weights(&mut src, n, 8, expected, |b| {
                AtomicU64::new(u64::from_le_bytes(b.try_into().expect("8 bytes")))
            })?)
        } else {
            None
        };
        let computed = src.crc.clone().finalize();
        let mut tail = [0u8; 5];
        let got = src.fill(&mut tail)?;
        if got < 4 {
            return Err(NetworkError::Truncated {
                expected,
                found: src.pos,
            });
        }
        if got > 4 {
            return Err(NetworkError::Oversized { expected });
        }
        check_checksum(u32::from_le_bytes(tail[..4].try_into().unwrap()), computed)?;
        let mut net = Network::assemble(tuples, weights, games, meta.recipe);
        net.coherence = coherence;
        if let Some(index) = (0..net.len()).find(|&i| !net.weight(i).is_finite()) {
            return Err(NetworkError::NotFinite {
                index,
                value: net.weight(index),
            });
        }
        Ok(net)
    }
}
