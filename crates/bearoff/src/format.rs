//! Bearoff database files: rollsim's own exact format and GNU Backgammon's `.bd` formats.
//!
//! # rollsim's format (`RSBEAROF`, version 1)
//!
//! Little-endian throughout; every `f64` is stored bit for bit, so a table read back is
//! identical to the one written.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `RSBEAROF` |
//! | 8 | 4 | version, 1 |
//! | 12 | 4 | kind: 1 one-sided, 2 two-sided |
//! | 16 | 4 | points |
//! | 20 | 4 | checkers |
//! | 24 | 4 | flags: bit 0 = gammon distributions present (one-sided only), bit 1 = cubeful equities present (two-sided only) |
//! | 28 | 4 | `len`, entries per distribution (0 for two-sided) |
//! | 32 | 8 | count: positions, or pairs of positions for two-sided |
//! | 40 | 8 | `gammon_len`, entries per gammon distribution (0 without gammon data) |
//! | 48 | 64 | description, UTF-8 padded with spaces, e.g. `rollsim one-sided bearoff, 15 checkers on 6 points, gammon` |
//! | 112 | | data |
//! | end − 4 | 4 | CRC-32 (IEEE, as `crc32fast`) of every byte before it |
//!
//! Data, one-sided: per position its mean then its `len` probabilities; then, with gammon data,
//! per position its gammon mean then its `gammon_len` probabilities. Two-sided: the win
//! probabilities in [`TwoSided`]'s order, `us * n + them`; with cubeful equities, then per
//! pair in the same order the three equities of [`TwoSided::cubeful`] (owned, centred,
//! opponent owns). `gammon_len` is a field of its own because the gammon distributions are
//! much shorter than the bear-off ones and [`OneSided`] keeps their length. The header fixes
//! the file's size, which the reader checks exactly before it checks the CRC.
//!
//! # GNU Backgammon's formats (makebearoff.c, bearoff.c)
//!
//! Both start with a 40-byte ASCII header; values are little-endian `uint16`.
//!
//! One-sided: `gnubg-OS-PP-CC-G-Z-0xxxxxxxxxxxxxxxxxxx\n` (points, checkers, gammon flag,
//! compressed flag, normal-distribution flag, 19 `x` and a newline). makebearoff always
//! writes `15` checkers; gnubg's reader (`BearoffInit`) takes the count from offset 12 and
//! accepts 1 to 15, so a rollsim table with fewer checkers is written with its own count and
//! is the same prefix of gnubg's position order. A distribution is 32 entries, P(exactly
//! k rolls) for k = 0..31 with 0xFFFF = 1 (see [`quantize`]); **entries past 31 are dropped**,
//! as gnubg has nowhere to put them. With gammons, a second 32-entry distribution follows:
//! rolls until the first checker is off (`P(0) = 1` for positions with a checker already off).
//! - Uncompressed: record i at `40 + i·(64|128)`: the 32 bear-off entries, then 32 gammon ones.
//! - Compressed: an index of 6 bytes per position (8 with gammons): `uint32` offset counted in
//!   `uint16` units from the end of the index, then `nz`, `ioff` (length and start of the run
//!   from the first to the last non-zero entry), then `nzg`, `ioffg` for the gammon
//!   distribution. Position i's runs, bear-off then gammon, start at `40 + n·(6|8) + 2·offset`;
//!   offsets run contiguously in position order. An all-zero distribution is written as
//!   `nz = ioff = 0`, which gnubg's reader decodes as all zeros (gnubg's own `CalcIndex` would
//!   read past its array there; its tables never have one). Re-encoding gnubg 1.07's shipped
//!   `gnubg_os0.bd` with this writer reproduces it byte for byte (see the tests).
//!
//! Two-sided: `gnubg-TS-PP-CC-F` then 23 `x` and a newline (F = cubeful). Record
//! `us·n + them`, n = C(P + C, P), of 1 `uint16` (cubeless) or 4 (cubeless, owned cube,
//! centred cube, opponent owns cube); gnubg reads equity as `value / 32767.5 − 1`, so the
//! cubeless value of win probability p is `p·65535`, i.e. [`quantize`]`(p)`, and an equity e
//! is written as [`quantize`]`((e + 1) / 2)`. rollsim writes a cubeful file when the table has
//! cubeful equities.
//!
//! The values are not makebearoff's: it builds each distribution from its successors' `uint16`
//! values in integer arithmetic, picks plays by those rounded values and makes each
//! distribution sum to 0xFFFF by adjusting its mode; rollsim rounds each exact probability on
//! its own. Against gnubg_os0.bd, about 96% of the entries are equal and every position's mean
//! agrees to 2e-4 rolls; the rest differ by gnubg's choices among near-equal plays.
//!
//! gnubg addresses these files with 32-bit `unsigned int` byte offsets, so the writers refuse
//! a file over 4 GiB (and a compressed one whose offsets trip gnubg's 32-bit sanity check).

#[cfg(test)]
mod fixtures;
mod gnubg_one_sided;
mod gnubg_two_sided;
mod rollsim;

pub use gnubg_one_sided::*;
pub use gnubg_two_sided::*;
pub use rollsim::*;

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::numeric::quantize;
use super::one_sided::OneSided;
use super::position::Space;
use super::two_sided::TwoSided;
use rollsim_core::container::{Container, FrameError, check_crc};
use rollsim_core::files::CrcWriter;

impl From<FrameError> for FormatError {
    fn from(e: FrameError) -> FormatError {
        match e {
            FrameError::BadMagic => FormatError::BadMagic,
            FrameError::Truncated { expected, found } => FormatError::Truncated { expected, found },
            FrameError::Version(v) => FormatError::Version(v),
            FrameError::Checksum { stored, computed } => FormatError::Checksum { stored, computed },
        }
    }
}

/// What can go wrong reading or writing a bearoff file.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    // Transparent: "{0}" here would print the OS error twice under `{:#}`.
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error(
        "not a bearoff table: neither rollsim's format (RSBEAROF) nor gnubg's (gnubg-OS, gnubg-TS)"
    )]
    BadMagic,
    #[error("unsupported version {0} (this build reads versions 1 and 2)")]
    Version(u32),
    #[error("unknown table kind {0} (1 = one-sided, 2 = two-sided)")]
    Kind(u32),
    #[error("bad header: {0}")]
    Header(String),
    #[error("truncated: expected {expected} bytes, found {found}")]
    Truncated { expected: u64, found: u64 },
    #[error("oversized: expected {expected} bytes, found {found}")]
    Oversized { expected: u64, found: u64 },
    #[error("checksum mismatch: stored {stored:08x}, computed {computed:08x}")]
    Checksum { stored: u32, computed: u32 },
    #[error("inconsistent table: {0}")]
    Table(String),
    /// A sub-table asked of more checkers than the table has (or of none): the request's
    /// fault, not the file's.
    #[error(
        "this table holds at most {most} checkers a side: a sub-table takes 1 to {most}, not \
         {asked}"
    )]
    SubTable { asked: u32, most: u32 },
    #[error("gnubg header {header:?} malformed: {why}")]
    GnubgHeader { header: String, why: String },
    #[error("gnubg database corrupt: {0}")]
    GnubgData(String),
    #[error("unsupported gnubg database: {0}")]
    GnubgUnsupported(String),
    #[error("gnubg cannot represent this table: {0}")]
    GnubgExport(String),
}

type Result<T> = std::result::Result<T, FormatError>;

/// Entries per gnubg distribution: P(0..=31 rolls).
pub const GNUBG_ENTRIES: usize = 32;
const GNUBG_HEADER: usize = 40;

/// rollsim's format, version 1: a whole table with one checksum (version 2, read in place with
/// a checksum a column, is [`crate::table`]'s).
pub const FORMAT: Container = Container::new(b"RSBEAROF", 1);
const DESCRIPTION: usize = 64;
/// Bytes before the data: magic, six `u32`, two `u64`, the description.
const HEADER: usize = 8 + 6 * 4 + 2 * 8 + DESCRIPTION;

/// A solved table of either kind, as stored in rollsim's format.
pub enum Table {
    One(OneSided),
    Two(TwoSided),
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Table::One(t) => write!(
                f,
                "Table::One({:?}, len {}, gammon {})",
                t.space,
                t.len,
                t.gammon.is_some()
            ),
            Table::Two(t) => write!(f, "Table::Two({:?})", t.space),
        }
    }
}

/// A one-sided gnubg database as read: `dist[i]` (and `gammon_dist[i]`) for position i.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GnubgOneSided {
    pub points: u32,
    pub checkers: u32,
    pub gammon: bool,
    pub compressed: bool,
    pub dist: Vec<[u16; 32]>,
    pub gammon_dist: Option<Vec<[u16; 32]>>,
}

/// A two-sided gnubg database as read: `equity[us * n + them]` is the first (cubeless) value
/// of each record, `p·65535` for the win probability p of the side on roll.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GnubgTwoSided {
    pub points: u32,
    pub checkers: u32,
    pub cubeful: bool,
    pub equity: Vec<u16>,
}

// ---------------------------------------------------------------------------------------------
// gnubg writers

/// The 32 gnubg entries of an exact distribution: quantized, truncated or zero-padded.
fn quantized(dist: &[f64]) -> [u16; 32] {
    gnubg_entries(0, dist.iter().copied())
}

/// makebearoff's `CalcIndex`: `(ioff, nz)`, the start and length of the run from the first to
/// the last non-zero entry; `(0, 0)` when all are zero.
fn run(q: &[u16; 32]) -> (usize, usize) {
    // A mask of the non-zero entries, which compiles to a few vector compares: the two
    // searches it replaces were 1.5% of the 15x6 gnubg build's instructions.
    let mask = q
        .iter()
        .enumerate()
        .fold(0u32, |m, (k, &v)| m | u32::from(v != 0) << k);
    match mask {
        0 => (0, 0),
        m => {
            let a = m.trailing_zeros() as usize;
            (a, 32 - m.leading_zeros() as usize - a)
        }
    }
}

/// Appends `values` little-endian: their bytes as they are on a little-endian machine (one
/// copy; the byte-by-byte form was 1.3% of the 15x6 gnubg build's instructions).
fn le16s(out: &mut Vec<u8>, values: &[u16]) {
    if cfg!(target_endian = "little") {
        out.extend_from_slice(bytemuck::cast_slice(values));
    } else {
        out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    }
}

/// Refuses a file gnubg could not address with its 32-bit offsets.
fn gnubg_size_limit(size: u64) -> Result<()> {
    if size > u64::from(u32::MAX) {
        return Err(FormatError::GnubgExport(format!(
            "the file would be {size} bytes, but gnubg addresses bearoff files with 32-bit offsets (at most {} bytes)",
            u32::MAX
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// gnubg readers

/// The checked fields of a gnubg header.
struct GnubgHeader<'a> {
    text: &'a [u8],
}

impl GnubgHeader<'_> {
    fn new(bytes: &[u8]) -> Result<GnubgHeader<'_>> {
        if bytes.len() < GNUBG_HEADER {
            return Err(FormatError::Truncated {
                expected: GNUBG_HEADER as u64,
                found: bytes.len() as u64,
            });
        }
        let h = GnubgHeader {
            text: &bytes[..GNUBG_HEADER],
        };
        if !h.text.starts_with(b"gnubg-") {
            return Err(h.malformed("it does not start with \"gnubg-\""));
        }
        Ok(h)
    }

    fn malformed(&self, why: impl Into<String>) -> FormatError {
        let header = String::from_utf8_lossy(self.text).trim_end().to_string();
        FormatError::GnubgHeader {
            header,
            why: why.into(),
        }
    }

    /// The kind (`OS`, `TS`, `H…`) at offset 6.
    fn kind(&self) -> &[u8] {
        &self.text[6..8]
    }

    /// A decimal field of `width` digits at `at`, preceded by a `-`.
    fn number(&self, at: usize, width: usize, what: &str) -> Result<u32> {
        let field = &self.text[at..at + width];
        if self.text[at - 1] != b'-' || !field.iter().all(u8::is_ascii_digit) {
            return Err(self.malformed(format!("no {what} ({width} digits) at offset {at}")));
        }
        Ok(field.iter().fold(0, |v, &d| 10 * v + u32::from(d - b'0')))
    }

    fn flag(&self, at: usize, what: &str) -> Result<bool> {
        match self.number(at, 1, what)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(self.malformed(format!("{what} flag is {v}, not 0 or 1"))),
        }
    }

    /// Points at offset 9 and checkers at 12, as a rollsim space.
    fn space(&self) -> Result<Space> {
        let points = self.number(9, 2, "points")?;
        let checkers = self.number(12, 2, "checkers")?;
        Space::new(points, checkers).map_err(|e| FormatError::GnubgUnsupported(e.to_string()))
    }

    fn expect_kind(&self, want: &[u8; 2]) -> Result<()> {
        if self.kind() == want {
            return Ok(());
        }
        let what = match self.kind() {
            b"OS" => "a one-sided database",
            b"TS" => "a two-sided database",
            [b'H', ..] => "a hypergammon database",
            _ => return Err(self.malformed("unknown database type at offset 6")),
        };
        Err(FormatError::GnubgUnsupported(format!(
            "{what}, not {}",
            String::from_utf8_lossy(want)
        )))
    }
}

/// Bytes of the head [`read_whole_bytes`] reads: a gnubg header.
pub const HEAD_BYTES: usize = GNUBG_HEADER;

/// Peak bytes of reading a table file of `file_bytes` whole and decoding it, from its first
/// [`HEAD_BYTES`] (`head`): the file's bytes and the table decoded from them, which is no
/// larger than the file but for gnubg's compressed one-sided files, whose distributions are
/// stored without their zeros: decoded, 64 bytes a position and distribution.
pub fn read_whole_bytes(head: &[u8], file_bytes: u64) -> u64 {
    let compressed_os = |h: &GnubgHeader| {
        let (gammon, compressed) = (h.flag(15, "gammon").ok()?, h.flag(17, "compressed").ok()?);
        let halves = if gammon { 2 } else { 1 };
        (h.kind() == b"OS" && compressed).then_some(h.space().ok()?.len() as u64 * 64 * halves)
    };
    let decoded = GnubgHeader::new(head)
        .ok()
        .and_then(|h| compressed_os(&h))
        .unwrap_or(file_bytes);
    file_bytes.saturating_add(decoded)
}

/// Exact size or a truncated/oversized error.
pub(crate) fn exact_size(expected: u128, found: usize) -> Result<()> {
    let (e, f) = (u64::try_from(expected).unwrap_or(u64::MAX), found as u64);
    match expected.cmp(&(found as u128)) {
        std::cmp::Ordering::Greater => Err(FormatError::Truncated {
            expected: e,
            found: f,
        }),
        std::cmp::Ordering::Less => Err(FormatError::Oversized {
            expected: e,
            found: f,
        }),
        std::cmp::Ordering::Equal => Ok(()),
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

// ---------------------------------------------------------------------------------------------
// rollsim's format

fn valid_space(s: Space) -> Result<Space> {
    Space::new(s.points, s.checkers).map_err(|e| FormatError::Table(e.to_string()))
}
