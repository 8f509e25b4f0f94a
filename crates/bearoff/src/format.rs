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

// ---------------------------------------------------------------------------------------------
// Files

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::sync::OnceLock;

    #[test]
    fn impossible_values_under_a_valid_checksum_are_refused() {
        let space = Space::new(3, 3).unwrap();
        for (at, v) in [(5, f64::NAN), (7, -0.5), (9, 1.5)] {
            let mut t = OneSided::build(space, false);
            t.dist[at] = v;
            let mut bytes = Vec::new();
            write_rollsim(&Table::One(t), &mut bytes).unwrap();
            let err = read_rollsim(&bytes).unwrap_err().to_string();
            assert!(err.contains("not a possible value"), "{err}");
        }
        let mut bytes = Vec::new();
        write_rollsim(&Table::One(OneSided::build(space, false)), &mut bytes).unwrap();
        assert!(read_rollsim(&bytes).is_ok());
    }

    /// The 15-checker, 6-point table with gammon distributions, built once.
    fn table() -> &'static OneSided {
        static T: OnceLock<OneSided> = OnceLock::new();
        T.get_or_init(|| OneSided::build(Space::new(6, 15).unwrap(), true))
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// A small two-sided table with made-up values, awkward floats included.
    fn two_sided() -> TwoSided {
        let space = Space::new(3, 2).unwrap();
        let n = space.len();
        let mut win: Vec<f64> = (0..n * n).map(|k| (k as f64 * 0.37).sin().abs()).collect();
        win[..5].copy_from_slice(&[
            1.0,
            -0.0,
            1.0 / 3.0,
            f64::MIN_POSITIVE / 8.0,
            1.0 - f64::EPSILON / 2.0,
        ]);
        TwoSided {
            space,
            win,
            cubeful: None,
        }
    }

    fn rollsim_bytes(t: &Table) -> Vec<u8> {
        let mut v = Vec::new();
        write_rollsim(t, &mut v).unwrap();
        v
    }

    fn same_one_sided(a: &OneSided, b: &OneSided) {
        assert_eq!(a.space, b.space);
        assert_eq!(a.len, b.len);
        assert_eq!(bits(&a.mean), bits(&b.mean));
        assert_eq!(bits(&a.dist), bits(&b.dist));
        let (ga, gb) = (a.gammon.as_ref().unwrap(), b.gammon.as_ref().unwrap());
        assert_eq!(ga.1, gb.1);
        assert_eq!(bits(&ga.0), bits(&gb.0));
        assert_eq!(bits(&ga.2), bits(&gb.2));
    }

    #[test]
    fn reading_whole_is_planned_from_the_head() {
        let t = table();
        let gnubg = |compressed| {
            let mut b = io::Cursor::new(Vec::new());
            write_gnubg_one_sided(t, compressed, true, &mut b).unwrap();
            b.into_inner()
        };
        let packed = gnubg(true);
        let size = packed.len() as u64;
        let decoded = read_gnubg_one_sided(&packed).unwrap();
        let held = (decoded.dist.len() + decoded.gammon_dist.as_ref().unwrap().len()) * 64;
        assert_eq!(
            read_whole_bytes(&packed[..HEAD_BYTES], size),
            size + held as u64
        );
        assert!(held as u64 > size, "compressed files grow when decoded");
        // Every other format decodes to no more than its file.
        let plain = gnubg(false);
        let size = plain.len() as u64;
        assert_eq!(read_whole_bytes(&plain[..HEAD_BYTES], size), 2 * size);
        let rollsim = rollsim_bytes(&Table::Two(two_sided()));
        assert_eq!(read_whole_bytes(&rollsim[..HEAD_BYTES], 1000), 2000);
        assert_eq!(read_whole_bytes(b"short", 10), 20);
    }

    #[test]
    fn rollsim_round_trip_one_sided_with_gammon() {
        let t = table();
        assert!(
            t.gammon.as_ref().unwrap().1 != t.len,
            "the two lengths differ in practice"
        );
        // Round trip through a file written atomically.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join("os6.rsb");
        let borrowed = Table::One(OneSided {
            space: t.space,
            mean: t.mean.clone(),
            len: t.len,
            dist: t.dist.clone(),
            gammon: t.gammon.clone(),
        });
        rollsim_core::files::write_atomically(&path, |w| write_rollsim(&borrowed, w)).unwrap();
        let bytes = fs::read(&path).unwrap();
        fs::remove_dir_all(dir).unwrap();
        assert_eq!(&bytes[..8], b"RSBEAROF");
        assert_eq!(
            &bytes[48..112],
            format!(
                "{:64}",
                "rollsim one-sided bearoff, 15 checkers on 6 points, gammon"
            )
            .as_bytes()
        );
        let gl = t.gammon.as_ref().unwrap().1;
        assert_eq!(bytes.len(), HEADER + 54_264 * 8 * (t.len + 1 + gl + 1) + 4);
        match read_rollsim(&bytes).unwrap() {
            Table::One(back) => same_one_sided(t, &back),
            other => panic!("read {other:?}"),
        }
    }

    #[test]
    fn cubeful_tables_round_trip_and_export() {
        let space = Space::new(3, 3).unwrap();
        let t = TwoSided::build_with_progress(space, true, &|_| {});
        let n = space.len();
        let bytes = rollsim_bytes(&Table::Two(TwoSided {
            space,
            win: t.win.clone(),
            cubeful: t.cubeful.clone(),
        }));
        assert_eq!(bytes.len(), HEADER + 8 * 4 * n * n + 4);
        match read_rollsim(&bytes).unwrap() {
            Table::Two(back) => {
                assert_eq!(bits(&back.win), bits(&t.win));
                let flat =
                    |c: &Vec<[f64; 3]>| c.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    flat(back.cubeful.as_ref().unwrap()),
                    flat(t.cubeful.as_ref().unwrap())
                );
            }
            Table::One(_) => panic!("read a two-sided table as one-sided"),
        }
        let mut g = Vec::new();
        write_gnubg_two_sided(&t, &mut g).unwrap();
        assert_eq!(&g[..16], b"gnubg-TS-03-03-1");
        assert_eq!(g.len(), GNUBG_HEADER + 8 * n * n);
        let r = read_gnubg_two_sided(&g).unwrap();
        assert!(r.cubeful);
        // The record of pair 5: cubeless, then owned, centred, opponent owns.
        let rec = &g[GNUBG_HEADER + 8 * 5..GNUBG_HEADER + 8 * 6];
        let v = |k: usize| u16::from_le_bytes([rec[2 * k], rec[2 * k + 1]]);
        assert_eq!(v(0), quantize(t.win[5]));
        for k in 0..3 {
            assert_eq!(
                v(k + 1),
                quantize((t.cubeful.as_ref().unwrap()[5][k] + 1.0) / 2.0)
            );
        }
    }

    #[test]
    fn rollsim_round_trip_two_sided() {
        let t = two_sided();
        let bytes = rollsim_bytes(&Table::Two(TwoSided {
            space: t.space,
            win: t.win.clone(),
            cubeful: None,
        }));
        assert_eq!(bytes.len(), HEADER + 8 * 100 + 4);
        match read_rollsim(&bytes).unwrap() {
            Table::Two(back) => {
                assert_eq!(back.space, t.space);
                assert_eq!(bits(&back.win), bits(&t.win));
            }
            other => panic!("read {other:?}"),
        }
    }

    #[test]
    fn rollsim_damage_is_reported_never_panics() {
        let bytes = rollsim_bytes(&Table::Two(two_sided()));
        let total = bytes.len() as u64;
        for k in 0..bytes.len() {
            match read_rollsim(&bytes[..k]) {
                Err(FormatError::Truncated { expected, found }) => {
                    assert_eq!(found, k as u64);
                    assert!(
                        expected == total || (k < HEADER + 4 && expected == (HEADER + 4) as u64)
                    );
                }
                other => panic!("prefix {k}: {other:?}"),
            }
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(
            matches!(read_rollsim(&longer), Err(FormatError::Oversized { expected, found }) if expected == total && found == total + 1)
        );
        let mut magic = bytes.clone();
        magic[0] = b'X';
        assert!(matches!(read_rollsim(&magic), Err(FormatError::BadMagic)));
        let mut version = bytes.clone();
        version[8] = 2;
        assert!(matches!(
            read_rollsim(&version),
            Err(FormatError::Version(2))
        ));
        let mut data = bytes.clone();
        data[HEADER + 17] ^= 0x10;
        assert!(matches!(
            read_rollsim(&data),
            Err(FormatError::Checksum { .. })
        ));
        // Any single flipped byte anywhere is an error, never a panic.
        for k in 0..bytes.len() {
            let mut b = bytes.clone();
            b[k] ^= 0xFF;
            assert!(read_rollsim(&b).is_err(), "flipped byte {k} went unnoticed");
        }
        // And a damaged one-sided header (huge len) is refused without allocating.
        let os = Table::One(OneSided::build(Space::new(2, 2).unwrap(), false));
        let mut b = rollsim_bytes(&os);
        b[28..32].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            read_rollsim(&b),
            Err(FormatError::Truncated { .. })
        ));
        assert!(format!("{}", read_rollsim(&b).unwrap_err()).starts_with("truncated: expected "));
    }

    fn gnubg_bytes(t: &OneSided, compressed: bool, gammon: bool) -> Result<Vec<u8>> {
        let mut b = io::Cursor::new(Vec::new());
        write_gnubg_one_sided(t, compressed, gammon, &mut b)?;
        Ok(b.into_inner())
    }

    #[test]
    fn gnubg_one_sided_layouts_agree_with_the_exact_table() {
        let t = table();
        let n = t.space.len();
        let comp = gnubg_bytes(t, true, true).unwrap();
        let plain = gnubg_bytes(t, false, true).unwrap();
        assert_eq!(&comp[..40], b"gnubg-OS-06-15-1-1-0xxxxxxxxxxxxxxxxxxx\n");
        assert_eq!(&plain[..40], b"gnubg-OS-06-15-1-0-0xxxxxxxxxxxxxxxxxxx\n");
        assert_eq!(plain.len(), 40 + n * 128);
        // Compressed index: position 0 is one entry of each distribution, at offset 0.
        assert_eq!(&comp[40..48], &[0, 0, 0, 0, 1, 0, 1, 0]);
        assert_eq!(&comp[48..52], &2u32.to_le_bytes());
        assert_eq!(&comp[40 + 8 * n..40 + 8 * n + 4], &[0xFF; 4]);

        let c = read_gnubg_one_sided(&comp).unwrap();
        let p = read_gnubg_one_sided(&plain).unwrap();
        assert!(c.compressed && !p.compressed && c.gammon);
        assert_eq!((c.points, c.checkers), (6, 15));
        assert_eq!((&c.dist, &c.gammon_dist), (&p.dist, &p.gammon_dist));
        let g = c.gammon_dist.as_ref().unwrap();
        assert_eq!(c.dist.len(), n);
        let want = |x: &[f64]| -> [u16; 32] {
            std::array::from_fn(|k| quantize(x.get(k).copied().unwrap_or(0.0)))
        };
        for (i, (d, gd)) in c.dist.iter().zip(g).enumerate() {
            assert_eq!(*d, want(t.distribution(i as u32)), "position {i}");
            assert_eq!(
                *gd,
                want(t.gammon_distribution(i as u32).unwrap()),
                "gammon {i}"
            );
        }
        let mut off = [0u16; 32];
        off[0] = 0xFFFF;
        assert_eq!((c.dist[0], g[0]), (off, off));
        // Two checkers on the 6 point: P(1 roll) = 1/9, P(2 rolls) = 0.671296 = 145/216.
        let i = t.space.index(&[0, 0, 0, 0, 0, 2]) as usize;
        assert!((t.distribution(i as u32)[2] - 0.671296).abs() < 1e-6);
        assert_eq!(c.dist[i][..3], [0, quantize(1.0 / 9.0), quantize(0.671296)]);
        assert_eq!(quantize(0.671296), 43993);
    }

    #[test]
    fn gnubg_one_sided_without_gammon_and_with_few_checkers() {
        let t = OneSided::build(Space::new(4, 3).unwrap(), false);
        assert!(matches!(
            gnubg_bytes(&t, true, true),
            Err(FormatError::GnubgExport(_))
        ));
        for compressed in [true, false] {
            let b = gnubg_bytes(&t, compressed, false).unwrap();
            let want = format!(
                "gnubg-OS-04-03-0-{}-0xxxxxxxxxxxxxxxxxxx\n",
                u8::from(compressed)
            );
            assert_eq!(&b[..40], want.as_bytes());
            let r = read_gnubg_one_sided(&b).unwrap();
            assert_eq!(
                (r.points, r.checkers, r.gammon, r.compressed),
                (4, 3, false, compressed)
            );
            assert!(r.gammon_dist.is_none());
            assert_eq!(r.dist.len(), 35);
            for (i, d) in r.dist.iter().enumerate() {
                assert_eq!(d, &quantized(t.distribution(i as u32)));
            }
            if compressed {
                assert_eq!(&b[40..46], &[0, 0, 0, 0, 1, 0]); // 6-byte index entries
            } else {
                assert_eq!(b.len(), 40 + 35 * 64);
            }
        }
    }

    #[test]
    fn gnubg_one_sided_damage_is_reported_never_panics() {
        let t = OneSided::build(Space::new(3, 3).unwrap(), false);
        let b = gnubg_bytes(&t, true, false).unwrap();
        for k in 0..b.len() {
            assert!(
                matches!(
                    read_gnubg_one_sided(&b[..k]),
                    Err(FormatError::Truncated { .. })
                ),
                "prefix {k}"
            );
        }
        for k in 0..b.len() {
            let mut d = b.clone();
            d[k] ^= 0xFF;
            let _ = read_gnubg_one_sided(&d);
        }
        let mut d = b.clone();
        d[44] = 33; // nz
        assert!(matches!(
            read_gnubg_one_sided(&d),
            Err(FormatError::GnubgData(_))
        ));
        let mut d = b.clone();
        d[19] = b'1';
        assert!(matches!(
            read_gnubg_one_sided(&d),
            Err(FormatError::GnubgUnsupported(_))
        ));
        let mut d = b.clone();
        d[..5].copy_from_slice(b"GNUBG");
        let e = read_gnubg_one_sided(&d).unwrap_err();
        assert!(matches!(e, FormatError::GnubgHeader { .. }), "{e}");
        assert!(
            e.to_string()
                .starts_with("gnubg header \"GNUBG-OS-03-03-0-1-0x"),
            "{e}"
        );
        // A header claiming a huge table is refused before anything is allocated for it.
        for z in [b'0', b'1'] {
            let mut big = b"gnubg-OS-18-15-1-0-0xxxxxxxxxxxxxxxxxxx\n".to_vec();
            big[17] = z;
            assert!(matches!(
                read_gnubg_one_sided(&big),
                Err(FormatError::Truncated { .. })
            ));
        }
        let mut d = b.clone();
        d[9..11].copy_from_slice(b"6x");
        assert!(matches!(
            read_gnubg_one_sided(&d),
            Err(FormatError::GnubgHeader { .. })
        ));
    }

    #[test]
    fn gnubg_two_sided() {
        let t = two_sided();
        let mut b = Vec::new();
        write_gnubg_two_sided(&t, &mut b).unwrap();
        assert_eq!(&b[..40], b"gnubg-TS-03-02-0xxxxxxxxxxxxxxxxxxxxxxx\n");
        assert_eq!(b.len(), 40 + 2 * 100);
        let r = read_gnubg_two_sided(&b).unwrap();
        assert_eq!((r.points, r.checkers, r.cubeful), (3, 2, false));
        assert_eq!(
            r.equity,
            t.win.iter().map(|&p| quantize(p)).collect::<Vec<_>>()
        );
        assert_eq!(r.equity[..3], [0xFFFF, 0, 21845]);
        assert!(matches!(
            read_gnubg_one_sided(&b),
            Err(FormatError::GnubgUnsupported(_))
        ));
        assert!(matches!(
            read_gnubg_two_sided(&b[..239]),
            Err(FormatError::Truncated {
                expected: 240,
                found: 239
            })
        ));
        // A cubeful file: four values per record, the first kept.
        let mut cubeful = b"gnubg-TS-03-02-1xxxxxxxxxxxxxxxxxxxxxxx\n".to_vec();
        for k in 0..100u16 {
            for v in [k, 1, 2, 3] {
                cubeful.extend(v.to_le_bytes());
            }
        }
        let r = read_gnubg_two_sided(&cubeful).unwrap();
        assert!(r.cubeful);
        assert_eq!(r.equity, (0..100).collect::<Vec<u16>>());
    }

    /// Reads gnubg's own gnubg_os0.bd (Debian's gnubg-data ships it) when present: writing
    /// back what was read must give the same bytes, and its distributions must match the exact
    /// table's up to gnubg's choices among near-equal plays and its integer arithmetic. Set
    /// ROLLSIM_GNUBG_OS0 to its path, or it is looked for where Debian installs it; skipped
    /// when absent.
    #[test]
    fn gnubg_shipped_one_sided_database() {
        let path = std::env::var("ROLLSIM_GNUBG_OS0")
            .unwrap_or_else(|_| "/usr/share/gnubg/gnubg_os0.bd".into());
        let Ok(bytes) = fs::read(&path) else {
            eprintln!("skipped: no {path}");
            return;
        };
        let r = read_gnubg_one_sided(&bytes).unwrap();
        assert_eq!(
            (r.points, r.checkers, r.gammon, r.compressed),
            (6, 15, true, true)
        );
        let g = r.gammon_dist.as_ref().unwrap();
        let mut again = io::Cursor::new(Vec::new());
        let dist = |i: usize, gammon: bool| if gammon { g[i] } else { r.dist[i] };
        encode_gnubg_one_sided(Space::new(6, 15).unwrap(), true, true, dist, &mut again).unwrap();
        let again = again.into_inner();
        assert!(again == bytes, "re-encoding gnubg_os0.bd changed it");

        let t = table();
        let (mut same, mut total) = (0, 0);
        for (i, (d, gd)) in r.dist.iter().zip(g).enumerate() {
            let ours = quantized(t.distribution(i as u32));
            let gours = quantized(t.gammon_distribution(i as u32).unwrap());
            let mean: f64 = d
                .iter()
                .enumerate()
                .map(|(k, &v)| k as f64 * f64::from(v))
                .sum();
            let mean = mean / 65535.0;
            assert!(
                (mean - t.mean[i]).abs() < 5e-4,
                "position {i}: {mean} vs {}",
                t.mean[i]
            );
            assert_eq!(d.iter().map(|&v| u32::from(v)).sum::<u32>(), 0xFFFF);
            assert!(
                gours.iter().zip(gd).all(|(a, b)| a.abs_diff(*b) <= 2),
                "gammon {i}"
            );
            same += ours.iter().zip(d).filter(|(a, b)| a == b).count();
            total += 32;
        }
        assert!(
            same as f64 > 0.95 * total as f64,
            "{same} of {total} entries agree"
        );
    }
}
