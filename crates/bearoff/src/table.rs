//! rollsim's two-sided table file (`RSBEAROF` version 2), read in place and written column by
//! column as the sweep finishes them.
//!
//! Little-endian throughout. Column-major, as the sweep by columns makes it: column `them`
//! holds, for every position `us` of the side on roll, its values against `them`, so a query is
//! a few reads from one column, and a build streams each column out once.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `RSBEAROF` |
//! | 8 | 4 | version, 2 |
//! | 12 | 4 | kind, 2 (two-sided) |
//! | 16 | 4 | points |
//! | 20 | 4 | checkers |
//! | 24 | 4 | cubeless cell: 1 f32, 2 f64, 3 u16 (0..=65535 over 0..=1), 4 fixed32 (i32, 2^-29) |
//! | 28 | 4 | cubeful cell, as above (u16 over -1..=1), or 0 without cubeful equities |
//! | 32 | 8 | n, positions per side, C(P + C, P) |
//! | 40 | 8 | data offset, 4096 |
//! | 48 | 8 | record bytes: n · (cubeless cell + 3 · cubeful cell) |
//! | 56 | 8 | checksum table offset: data offset + n · record |
//! | 64 | 8 | checksum entries: n per section (1 or 2) |
//! | 72 | 64 | description, UTF-8 padded with spaces |
//! | 136 | 4 | CRC-32 of the checksum table |
//! | 140 | 4 | CRC-32 of bytes 0..140 |
//!
//! Record `them` at `data offset + them · record`: the cubeless section, n cells (the winning
//! chance of `us` on roll, `us` = 0..n), then with cubeful equities three planes of n cells (the
//! money equity of `us` before its cube decision when it owns the cube, when the cube is
//! centred, when `them` owns it). The checksum table holds the CRC-32 of every section of every
//! column (`section · n + them`), so a reader opens a table of tens of GB at once and checks it
//! chunk by chunk on demand ([`Table::verify`]). The file's size is exactly what the header
//! says.
//!
//! While it is built the table lives in `OUT.partial` beside the output, with a checkpoint
//! `OUT.partial.ckpt` ([`Partial`]); the finished file is renamed into place.

use rollsim_core::files::{Create, InputFileError, Temporary, open_owned, sibling};
use rollsim_core::progress::Progress;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::columns::{Cubeful, Cubeless, Recurrence};
use super::cube::Equities;
use super::format::{FormatError, exact_size, plural, u32_at, write_gnubg_two_sided_rows};
use super::numeric::{CellKind, Fixed, Real, quantize};
use super::position::Space;
use rollsim_core::container::Container;

/// rollsim's two-sided table, version 2: read in place, a checksum per column.
pub const FORMAT: Container = Container::new(b"RSBEAROF", 2);
const KIND: u32 = 2;
/// Page-aligned, so that a mapped column starts on its own boundary.
const DATA_OFFSET: u64 = 4096;
const HEADER: usize = 144;
const DESCRIPTION: usize = 64;

type Result<T> = std::result::Result<T, FormatError>;

/// What a two-sided file holds: its space and how each section's values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub space: Space,
    pub cubeless: CellKind,
    pub cubeful: Option<CellKind>,
}

/// The sections of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    Cubeless = 0,
    Cubeful = 1,
}

impl Layout {
    pub fn n(&self) -> u64 {
        self.space.len() as u64
    }

    pub fn sections(&self) -> Vec<Section> {
        let mut s = vec![Section::Cubeless];
        if self.cubeful.is_some() {
            s.push(Section::Cubeful);
        }
        s
    }

    fn cell(&self, section: Section) -> CellKind {
        match section {
            Section::Cubeless => self.cubeless,
            Section::Cubeful => self.cubeful.expect("a cubeful section"),
        }
    }

    /// Values per pair in a section.
    pub fn values(section: Section) -> u64 {
        match section {
            Section::Cubeless => 1,
            Section::Cubeful => 3,
        }
    }

    /// Bytes of one column's section.
    pub fn section_bytes(&self, section: Section) -> u64 {
        self.n() * Self::values(section) * self.cell(section).bytes() as u64
    }

    pub fn record_bytes(&self) -> u64 {
        self.sections().iter().map(|&s| self.section_bytes(s)).sum()
    }

    /// Where column `them`'s section starts in the file.
    pub fn column_offset(&self, section: Section, them: u64) -> u64 {
        let before = if section == Section::Cubeful {
            self.section_bytes(Section::Cubeless)
        } else {
            0
        };
        DATA_OFFSET + them * self.record_bytes() + before
    }

    fn crc_offset(&self) -> u64 {
        // Saturating: a header may name a table too large to exist, which is then refused.
        DATA_OFFSET.saturating_add(self.n().saturating_mul(self.record_bytes()))
    }

    fn crc_entries(&self) -> u64 {
        self.n() * self.sections().len() as u64
    }

    pub fn file_bytes(&self) -> u64 {
        self.crc_offset().saturating_add(4 * self.crc_entries())
    }

    fn header(&self, crc_table: u32) -> [u8; HEADER] {
        let mut h = Vec::with_capacity(HEADER);
        h.extend(FORMAT.head());
        for v in [
            KIND,
            self.space.points,
            self.space.checkers,
            self.cubeless.code(),
            self.cubeful.map_or(0, CellKind::code),
        ] {
            h.extend(v.to_le_bytes());
        }
        for v in [
            self.n(),
            DATA_OFFSET,
            self.record_bytes(),
            self.crc_offset(),
            self.crc_entries(),
        ] {
            h.extend(v.to_le_bytes());
        }
        let description = format!(
            "rollsim two-sided bearoff, {} on {}, {}{}",
            plural(self.space.checkers, "checker"),
            plural(self.space.points, "point"),
            self.cubeless.name(),
            self.cubeful
                .map_or(String::new(), |c| format!(", cubeful {}", c.name()))
        );
        h.extend(format!("{description:DESCRIPTION$.DESCRIPTION$}").bytes());
        h.extend(crc_table.to_le_bytes());
        let crc = crc32fast::hash(&h);
        h.extend(crc.to_le_bytes());
        h.try_into().expect("144 header bytes")
    }

    /// The layout and checksum-table CRC of a version-2 header, every field checked.
    fn parse(h: &[u8]) -> Result<(Layout, u32)> {
        if h.len() < HEADER {
            return Err(FormatError::Truncated {
                expected: HEADER as u64,
                found: h.len() as u64,
            });
        }
        FORMAT.check_head(h, HEADER as u64)?;
        let (stored, computed) = (u32_at(h, 140), crc32fast::hash(&h[..140]));
        if stored != computed {
            return Err(FormatError::Header(format!(
                "header checksum mismatch: stored {stored:08x}, computed {computed:08x}"
            )));
        }
        if u32_at(h, 12) != KIND {
            return Err(FormatError::Kind(u32_at(h, 12)));
        }
        let space = Space::new(u32_at(h, 16), u32_at(h, 20))
            .map_err(|e| FormatError::Header(e.to_string()))?;
        let cell = |at: usize| {
            CellKind::from_code(u32_at(h, at))
                .ok_or_else(|| FormatError::Header(format!("unknown cell type {}", u32_at(h, at))))
        };
        let cubeless = cell(24)?;
        let cubeful = match u32_at(h, 28) {
            0 => None,
            _ => Some(cell(28)?),
        };
        let layout = Layout {
            space,
            cubeless,
            cubeful,
        };
        // Every derived field must be what the layout implies: no field is trusted alone.
        let expected = layout.header(u32_at(h, 136));
        if expected[..72] != h[..72] {
            return Err(FormatError::Header(
                "sizes or offsets disagree with the table's space".into(),
            ));
        }
        Ok((layout, u32_at(h, 136)))
    }
}

/// A two-sided table read in place: opening checks its header and reads its checksum table,
/// not the data (see [`Table::verify`]). Everything is read with `pread`, not through a map:
/// a file truncated or replaced while it is read (`cp new.rsb table.rsb`) is then an error
/// naming it, where a read through a map dies of SIGBUS.
pub struct Table {
    layout: Layout,
    path: PathBuf,
    file: File,
    /// Size and modification time at opening, to tell a file changed while it was read.
    opened: (u64, Option<std::time::SystemTime>),
    /// The checksum table, as stored.
    crcs: Vec<u8>,
}

/// What is wrong with a column's section.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Problem {
    /// Its bytes do not match their checksum.
    Checksum,
    /// Value `plane` of the side on roll at `us` is one no table holds (see [`possible`]).
    Value { us: u64, plane: u64, value: f64 },
}

/// A section of a column that fails a check.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BadColumn {
    pub section: Section,
    pub them: u64,
    pub problem: Problem,
}

impl std::fmt::Display for BadColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} column {}", self.section, self.them)?;
        match self.problem {
            Problem::Checksum => write!(f, " (checksum)"),
            Problem::Value { us, plane, value } => write!(
                f,
                " ({} value {value} of position {us} is not possible)",
                value_names(self.section)[plane as usize]
            ),
        }
    }
}

/// The values of a section, plane by plane, as reports name them.
pub fn value_names(section: Section) -> &'static [&'static str] {
    match section {
        Section::Cubeless => &["cubeless"],
        Section::Cubeful => &["owned", "centred", "opponent-owns"],
    }
}

/// How far a stored value may pass its range: cells rounded by the sweep (an f32 by an ulp,
/// 6e-8 near 1) may cross a bound by a rounding; damage, by far more.
const SLACK: f64 = 1e-6;

/// Whether `v` is a value `section` can hold: finite, and within its range (a winning chance in
/// [0, 1], an equity in [-1, 1]) up to [`SLACK`]. A checksum does not rule the others out: it
/// is only as good as the program that wrote it.
fn possible(section: Section, v: f64) -> bool {
    let (lo, hi) = section_range(section);
    (lo - SLACK..=hi + SLACK).contains(&v)
}

impl Table {
    pub fn open(path: &Path) -> Result<Table> {
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(FormatError::Header("not a regular file".into()));
        }
        let mut header = [0u8; HEADER];
        let got = read_up_to(&mut file, &mut header)?;
        let (layout, crc_table) = Layout::parse(&header[..got])?;
        exact_size(u128::from(layout.file_bytes()), meta.len() as usize)?;
        let mut table = Table {
            layout,
            path: path.to_path_buf(),
            file,
            opened: (meta.len(), meta.modified().ok()),
            crcs: Vec::new(),
        };
        // No checksum covers the padding before the data: it is checked for the zeros written.
        let mut padding = vec![0; DATA_OFFSET as usize - HEADER];
        table.read(&mut padding, HEADER as u64)?;
        if let Some(at) = padding.iter().position(|&b| b != 0) {
            return Err(FormatError::Header(format!(
                "byte {} of the padding before the data is not zero",
                HEADER + at
            )));
        }
        let mut crcs = vec![0; 4 * layout.crc_entries() as usize];
        table.read(&mut crcs, layout.crc_offset())?;
        let computed = crc32fast::hash(&crcs);
        if computed != crc_table {
            return Err(FormatError::Checksum {
                stored: crc_table,
                computed,
            });
        }
        table.crcs = crcs;
        Ok(table)
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    pub fn space(&self) -> Space {
        self.layout.space
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads `buf` at `at`. Errors name the file; a read past its end says that it shrank.
    fn read(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        read_at(&self.file, buf, at).map_err(|e| match self.changed() {
            Some(e) => e,
            None => named(&self.path, e),
        })
    }

    /// An error naming the file if it is not as it was when opened (truncated, rewritten).
    fn changed(&self) -> Option<io::Error> {
        let meta = self.file.metadata().ok()?;
        if (meta.len(), meta.modified().ok()) == self.opened {
            return None;
        }
        Some(io::Error::other(format!(
            "{}: changed while it was read (now {} bytes, {} when opened): was it truncated or \
             replaced? Nothing read from it is used",
            self.path.display(),
            meta.len(),
            self.opened.0
        )))
    }

    /// Fails, naming the file, if it changed since it was opened: what was read from it may
    /// mix two files.
    fn unchanged(&self) -> io::Result<()> {
        self.changed().map_or(Ok(()), Err)
    }

    /// Value `plane` of the pair (`us` on roll, `them`), from `section`; refused if it is not a
    /// value a table can hold.
    fn value(&self, section: Section, plane: u64, us: u32, them: u32) -> Result<f64> {
        let cell = self.layout.cell(section);
        let at = self.layout.column_offset(section, u64::from(them))
            + (plane * self.layout.n() + u64::from(us)) * cell.bytes() as u64;
        let mut b = [0u8; 8];
        let b = &mut b[..cell.bytes()];
        self.read(b, at)?;
        let value = decode(cell, section, b);
        if !possible(section, value) {
            return Err(self.impossible(BadColumn {
                section,
                them: u64::from(them),
                problem: Problem::Value {
                    us: u64::from(us),
                    plane,
                    value,
                },
            }));
        }
        Ok(value)
    }

    fn impossible(&self, bad: BadColumn) -> FormatError {
        FormatError::Table(format!(
            "{bad}; `rollsim bearoff verify {}` checks every column",
            self.path.display()
        ))
    }

    /// Every value of a column's section, plane by plane, into `out`; refused if one is not a
    /// value a table can hold.
    pub fn column_values(
        &self,
        section: Section,
        them: u64,
        bytes: &mut Vec<u8>,
        out: &mut Vec<f64>,
    ) -> Result<()> {
        let cell = self.layout.cell(section);
        self.read_column(section, them, bytes)?;
        out.clear();
        out.extend(
            bytes
                .chunks_exact(cell.bytes())
                .map(|b| decode(cell, section, b)),
        );
        let n = self.layout.n() as usize;
        if let Some(i) = out.iter().position(|&v| !possible(section, v)) {
            return Err(self.impossible(BadColumn {
                section,
                them,
                problem: Problem::Value {
                    us: (i % n) as u64,
                    plane: (i / n) as u64,
                    value: out[i],
                },
            }));
        }
        Ok(())
    }

    /// A column's section read into `buf`.
    pub fn read_column(&self, section: Section, them: u64, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.resize(self.layout.section_bytes(section) as usize, 0);
        self.read(buf, self.layout.column_offset(section, them))
    }

    /// The checks of a column's section read into `bytes`: its checksum, then every value.
    fn check_column(&self, section: Section, them: u64, bytes: &[u8]) -> Option<BadColumn> {
        let entry = (section as u64 * self.layout.n() + them) as usize;
        let bad = |problem| {
            Some(BadColumn {
                section,
                them,
                problem,
            })
        };
        if crc32fast::hash(bytes) != u32_at(&self.crcs, 4 * entry) {
            return bad(Problem::Checksum);
        }
        let cell = self.layout.cell(section);
        // u16 cells span their range and no more: every one is possible.
        if cell == CellKind::U16 {
            return None;
        }
        let n = self.layout.n() as usize;
        let (i, value) = bytes
            .chunks_exact(cell.bytes())
            .map(|b| decode(cell, section, b))
            .enumerate()
            .find(|&(_, v)| !possible(section, v))?;
        bad(Problem::Value {
            us: (i % n) as u64,
            plane: (i / n) as u64,
            value,
        })
    }

    fn check(&self, us: u32, them: u32) {
        let n = self.layout.n();
        assert!(
            u64::from(us) < n && u64::from(them) < n,
            "positions {us}, {them} outside a table of {n}"
        );
    }

    /// The chance that the side on roll, at `us`, wins against `them` (indices in
    /// [`Space::index`]'s order).
    pub fn win(&self, us: u32, them: u32) -> Result<f64> {
        self.check(us, them);
        self.value(Section::Cubeless, 0, us, them)
    }

    /// The money equities of the side on roll, if the table has them.
    pub fn equities(&self, us: u32, them: u32) -> Result<Option<Equities>> {
        self.check(us, them);
        if self.layout.cubeful.is_none() {
            return Ok(None);
        }
        let v = |plane| self.value(Section::Cubeful, plane, us, them);
        Ok(Some(Equities {
            owned: v(0)?,
            centred: v(1)?,
            opponent_owns: v(2)?,
        }))
    }

    /// Checks every column against its checksum and every value against its range, on CPU
    /// threads; `progress` gets the bytes checked as it goes. Returns the sections that fail.
    /// A column that cannot be read, or a file that changes while it is read, is an error
    /// naming the file.
    pub fn verify(&self, progress: &dyn Progress) -> io::Result<Vec<BadColumn>> {
        self.verify_columns(self.layout.n(), progress)
    }

    /// [`Table::verify`] of the first `columns` columns: those a sub-table is cut from.
    pub fn verify_columns(
        &self,
        columns: u64,
        progress: &dyn Progress,
    ) -> io::Result<Vec<BadColumn>> {
        use rayon::prelude::*;
        let checked: Vec<Option<BadColumn>> = self
            .layout
            .sections()
            .into_iter()
            .flat_map(|section| (0..columns.min(self.layout.n())).map(move |them| (section, them)))
            .collect::<Vec<_>>()
            .into_par_iter()
            .map_init(Vec::new, |buf, (section, them)| {
                self.read_column(section, them, buf)?;
                progress.inc(buf.len() as u64);
                Ok(self.check_column(section, them, buf))
            })
            .collect::<io::Result<_>>()?;
        self.unchanged()?;
        let mut bad: Vec<BadColumn> = checked.into_iter().flatten().collect();
        bad.sort_by_key(|b| (b.section, b.them));
        Ok(bad)
    }

    /// The table of at most `checkers` checkers a side, gnubg's order putting those positions
    /// first: the top-left block, every value as it is.
    fn sub_space(&self, checkers: u32) -> Result<Space> {
        let space = self.space();
        if checkers == 0 || checkers > space.checkers {
            return Err(FormatError::SubTable {
                asked: checkers,
                most: space.checkers,
            });
        }
        Space::new(space.points, checkers).map_err(|e| FormatError::Table(e.to_string()))
    }

    /// Writes the table of at most `checkers` checkers (see [`Table::sub_space`]) as gnubg's
    /// two-sided database (cubeful when this table is), each value rounded as gnubg stores it.
    /// Values no table holds are refused; checksums are [`Table::verify_columns`]'s.
    pub fn write_gnubg(&self, checkers: u32, out: &mut impl io::Write) -> Result<()> {
        let sub = self.sub_space(checkers)?;
        let (m, n) = (sub.len(), self.layout.n());
        let planes: Vec<(Section, u64)> = self
            .layout
            .sections()
            .into_iter()
            .flat_map(|s| (0..Layout::values(s)).map(move |p| (s, p)))
            .collect();
        let values = planes.len();
        let record: usize = planes
            .iter()
            .map(|&(s, _)| self.layout.cell(s).bytes())
            .sum();
        // gnubg's rows are rollsim's rows across all columns: read in blocks of rows of about
        // 64 MiB, one read per column and plane, rather than a few cells a read.
        let block = ((64 << 20) / (record * m)).clamp(1, m);
        let (mut rows_in, mut from, mut cache) = (0, 0, Vec::new());
        write_gnubg_two_sided_rows(sub, self.layout.cubeful.is_some(), out, |us0, buf| {
            let rows = buf.len() / (m * values);
            if us0 < from || us0 + rows > from + rows_in {
                (from, rows_in) = (us0, block.max(rows).min(m - us0));
                cache.resize(rows_in * m * record, 0);
                let mut at = 0;
                for &(section, plane) in &planes {
                    let b = self.layout.cell(section).bytes();
                    for them in 0..m as u64 {
                        let start = self.layout.column_offset(section, them)
                            + (plane * n + from as u64) * b as u64;
                        self.read(&mut cache[at..at + rows_in * b], start)?;
                        at += rows_in * b;
                    }
                }
            }
            let mut at = 0;
            for (v, &(section, plane)) in planes.iter().enumerate() {
                let cell = self.layout.cell(section);
                let b = cell.bytes();
                for them in 0..m {
                    let column = &cache[at..at + rows_in * b];
                    at += rows_in * b;
                    for k in 0..rows {
                        let i = us0 - from + k;
                        let stored = &column[i * b..][..b];
                        buf[(k * m + them) * values + v] = gnubg_value(cell, section, stored)
                            .ok_or_else(|| {
                                self.impossible(BadColumn {
                                    section,
                                    them: them as u64,
                                    problem: Problem::Value {
                                        us: (us0 + k) as u64,
                                        plane,
                                        value: decode(cell, section, stored),
                                    },
                                })
                            })?;
                    }
                }
            }
            Ok(())
        })
    }

    /// Writes the table of at most `checkers` checkers (see [`Table::sub_space`]) into `out`
    /// in this format, cells as they are, each column checked as it is read (a damaged one is
    /// refused). Written as `OUT.partial`, which is removed on an error or a signal.
    pub fn extract(&self, checkers: u32, out: &Path) -> anyhow::Result<()> {
        let sub = self
            .sub_space(checkers)
            .map_err(|e| InputFileError::new(&self.path, e))?;
        let layout = Layout {
            space: sub,
            ..self.layout
        };
        let lock = rollsim_core::files::lock_for_writing(out)?;
        let partial = Partial::temporary(lock.target(), layout)?;
        let (m, n) = (sub.len(), self.layout.n() as usize);
        let (mut column, mut bytes) = (Vec::new(), Vec::new());
        for section in self.layout.sections() {
            let cell = self.layout.cell(section).bytes();
            for them in 0..m {
                // The whole column, for its checksum.
                self.read_column(section, them as u64, &mut column)?;
                if let Some(bad) = self.check_column(section, them as u64, &column) {
                    return Err(InputFileError::new(
                        &self.path,
                        format!("{bad}: the table is damaged; `rollsim bearoff verify` lists every damaged column"),
                    )
                    .into());
                }
                bytes.clear();
                for plane in 0..Layout::values(section) as usize {
                    bytes.extend_from_slice(&column[plane * n * cell..][..m * cell]);
                }
                partial.write_column_bytes(section, them as u32, &bytes)?;
            }
        }
        self.unchanged()?;
        partial.finish(true)?;
        Ok(())
    }

    /// Total bytes [`Table::verify`] reads.
    pub fn data_bytes(&self) -> u64 {
        self.layout.n() * self.layout.record_bytes()
    }
}
/// A stored value, exactly (a u16 cell in f64, not through the sweep's f32).
fn decode(cell: CellKind, section: Section, b: &[u8]) -> f64 {
    match cell {
        CellKind::U16 => {
            let (lo, hi) = section_range(section);
            f64::from(u16::from_le_bytes([b[0], b[1]])) * ((hi - lo) / 65535.0) + lo
        }
        CellKind::F32 => f64::from(f32::from_le_bytes(b.try_into().unwrap())),
        CellKind::Fixed32 => Fixed(i32::from_le_bytes(b.try_into().unwrap())).to_f64(),
        CellKind::F64 => f64::from_le_bytes(b.try_into().unwrap()),
    }
}

fn section_range(section: Section) -> (f64, f64) {
    match section {
        Section::Cubeless => Cubeless::RANGE,
        Section::Cubeful => Cubeful::RANGE,
    }
}

/// How far one table's values are from another's, per value of a section.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Difference {
    /// `cubeless`, or the cubeful equity `owned`, `centred`, `opponent-owns`.
    pub value: &'static str,
    pub max: f64,
    /// Where the largest difference is: the side on roll's position index and its opponent's.
    pub at: (u64, u64),
    pub mean: f64,
}

/// Compares every value two tables over the same space both have; refuses values no table
/// holds.
pub fn compare(a: &Table, b: &Table) -> Result<Vec<Difference>> {
    use rayon::prelude::*;
    if a.space() != b.space() {
        return Err(FormatError::Table(format!(
            "the tables are over different spaces: {:?} and {:?}",
            a.space(),
            b.space()
        )));
    }
    let n = a.layout.n();
    let sections: Vec<Section> = a
        .layout
        .sections()
        .into_iter()
        .filter(|s| b.layout.sections().contains(s))
        .collect();
    let mut out = Vec::new();
    for section in sections {
        let planes = Layout::values(section) as usize;
        let per_column: Vec<Vec<(f64, u64, f64)>> = (0..n)
            .into_par_iter()
            .map_init(
                || (Vec::new(), Vec::new(), Vec::new()),
                |(bytes, x, y), them| -> Result<Vec<(f64, u64, f64)>> {
                    a.column_values(section, them, bytes, x)?;
                    b.column_values(section, them, bytes, y)?;
                    Ok((0..planes)
                        .map(|p| {
                            let (mut max, mut at, mut sum) = (0.0, 0, 0.0);
                            for us in 0..n as usize {
                                let d = (x[p * n as usize + us] - y[p * n as usize + us]).abs();
                                sum += d;
                                if d > max {
                                    (max, at) = (d, us as u64);
                                }
                            }
                            (max, at, sum)
                        })
                        .collect())
                },
            )
            .collect::<Result<_>>()?;
        for (p, &value) in value_names(section).iter().enumerate() {
            let mut d = Difference {
                value,
                max: 0.0,
                at: (0, 0),
                mean: 0.0,
            };
            for (them, c) in per_column.iter().enumerate() {
                let (max, us, sum) = c[p];
                d.mean += sum;
                if max > d.max {
                    (d.max, d.at) = (max, (us, them as u64));
                }
            }
            d.mean /= (n * n) as f64;
            out.push(d);
        }
    }
    a.unchanged()?;
    b.unchanged()?;
    Ok(out)
}

/// A stored cell as gnubg stores it: the winning chance p as [`quantize`]`(p)`, an equity e
/// as [`quantize`]`((e + 1) / 2)`; u16 cells are that already. `None` for a value no table
/// holds, which quantizing would hide.
fn gnubg_value(cell: CellKind, section: Section, b: &[u8]) -> Option<u16> {
    if cell == CellKind::U16 {
        return Some(u16::from_le_bytes([b[0], b[1]]));
    }
    let v = decode(cell, section, b);
    possible(section, v).then(|| match section {
        Section::Cubeless => quantize(v),
        Section::Cubeful => quantize((v + 1.0) / 2.0),
    })
}

/// Reads until `buf` is full or the file ends; the count read.
fn read_up_to(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            k => got += k,
        }
    }
    Ok(got)
}

/// Whether a file starts like a version-2 rollsim table.
pub fn is_table(head: &[u8]) -> bool {
    FORMAT.check_head(head, HEADER as u64).is_ok()
}

// ---------------------------------------------------------------------------------------------
// Writing, with checkpoints

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
    layout: Layout,
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

impl Layout {
    /// The table in words, e.g. `8 checkers on 6 points, cubeless f32, cubeful u16`.
    pub fn describe(&self) -> String {
        format!(
            "{} on {}, cubeless {}{}",
            plural(self.space.checkers, "checker"),
            plural(self.space.points, "point"),
            self.cubeless.name(),
            self.cubeful
                .map_or(String::new(), |c| format!(", cubeful {}", c.name()))
        )
    }

    /// The build flags that make this table (`--precision auto` alone mixes cells).
    fn flags(&self) -> String {
        let precision = match self.cubeful {
            Some(c) if c != self.cubeless => "auto",
            _ => self.cubeless.name(),
        };
        format!(
            "--points {} --checkers {}{} --precision {precision}",
            self.space.points,
            self.space.checkers,
            if self.cubeful.is_some() {
                " --cubeful"
            } else {
                ""
            }
        )
    }
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

    fn write_column_bytes(&self, section: Section, them: u32, bytes: &[u8]) -> io::Result<()> {
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
        write_owned(&self.checkpoint, &body)
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

/// `e` with the path it happened on, as every I/O error of a file is reported.
fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
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

/// Writes `bytes` as `path`, a file of rollsim's own, never seen half written: into a new
/// temporary beside it, synced, then renamed over it. Unlike
/// [`rollsim_core::files::write_atomically`], which writes an output's target, a symlink
/// planted at `path` is replaced, not followed.
fn write_owned(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = sibling(path, ".", &format!(".{}.tmp", std::process::id()))?;
    remove_owned(&tmp).map_err(io::Error::other)?;
    let tmp = Temporary::new(tmp);
    let mut file = open_owned(tmp.path(), Create::New).map_err(io::Error::other)?;
    io::Write::write_all(&mut file, bytes)
        .and_then(|()| file.sync_data())
        .map_err(|e| named(tmp.path(), e))?;
    drop(file);
    fs::rename(tmp.path(), path).map_err(|e| named(path, e))?;
    tmp.keep();
    if let Ok(d) = File::open(rollsim_core::files::parent_dir(path)) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8], at: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, at)
}

#[cfg(unix)]
fn read_at(file: &File, bytes: &mut [u8], at: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, bytes, at)
}

#[cfg(windows)]
fn write_at(file: &File, mut bytes: &[u8], mut at: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        let k = std::os::windows::fs::FileExt::seek_write(file, bytes, at)?;
        (bytes, at) = (&bytes[k..], at + k as u64);
    }
    Ok(())
}

#[cfg(windows)]
fn read_at(file: &File, mut bytes: &mut [u8], mut at: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, bytes, at)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            k => (bytes, at) = (&mut bytes[k..], at + k as u64),
        }
    }
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
    use super::*;

    fn layout(checkers: u32, cubeless: CellKind, cubeful: Option<CellKind>) -> Layout {
        Layout {
            space: Space::new(3, checkers).unwrap(),
            cubeless,
            cubeful,
        }
    }

    /// A cell of `kind` holding `v`, as the sweep stores it.
    fn cell(kind: CellKind, section: Section, v: f64) -> Vec<u8> {
        match kind {
            CellKind::F64 => v.to_le_bytes().to_vec(),
            CellKind::F32 => (v as f32).to_le_bytes().to_vec(),
            CellKind::Fixed32 => Fixed::from_f64(v).0.to_le_bytes().to_vec(),
            CellKind::U16 => {
                let (lo, hi) = section_range(section);
                let q = ((v - lo) / (hi - lo) * 65535.0).round() as u16;
                q.to_le_bytes().to_vec()
            }
        }
    }

    /// A whole table `out` of `layout`, value `plane` of (`us`, `them`) being `value(...)`.
    fn write_table(
        out: &Path,
        layout: Layout,
        value: impl Fn(Section, u64, u64, u64) -> f64,
    ) -> Table {
        let (partial, resumed) = Partial::open(out, layout, false).unwrap();
        assert_eq!(resumed, None);
        write_columns(&partial, 0..layout.n(), &value);
        partial.finish(false).unwrap();
        Table::open(out).unwrap()
    }

    fn write_columns(
        partial: &Partial,
        columns: std::ops::Range<u64>,
        value: &impl Fn(Section, u64, u64, u64) -> f64,
    ) {
        let l = partial.layout;
        for section in l.sections() {
            for them in columns.clone() {
                let bytes: Vec<u8> = (0..Layout::values(section))
                    .flat_map(|p| (0..l.n()).map(move |us| (p, us)))
                    .flat_map(|(p, us)| cell(l.cell(section), section, value(section, p, us, them)))
                    .collect();
                partial
                    .write_column_bytes(section, them as u32, &bytes)
                    .unwrap();
            }
        }
    }

    fn plausible(section: Section, plane: u64, us: u64, them: u64) -> f64 {
        let w = ((us * 7 + them * 3 + plane) % 11) as f64 / 10.0;
        match section {
            Section::Cubeless => w,
            Section::Cubeful => 2.0 * w - 1.0,
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".lock"))
            .collect();
        n.sort();
        n
    }

    #[test]
    fn headers_round_trip_and_every_field_is_checked() {
        for l in [
            layout(3, CellKind::F32, None),
            layout(4, CellKind::F64, Some(CellKind::U16)),
            layout(2, CellKind::Fixed32, Some(CellKind::Fixed32)),
        ] {
            let h = l.header(0x1234_5678);
            assert_eq!(Layout::parse(&h).unwrap(), (l, 0x1234_5678));
            assert!(matches!(
                Layout::parse(&h[..100]),
                Err(FormatError::Truncated { .. })
            ));
            for at in [12, 16, 24, 40, 60, 100, 136, 141] {
                let mut bad = h;
                bad[at] ^= 1;
                assert!(Layout::parse(&bad).is_err(), "byte {at}");
            }
        }
        // In a file, the padding before the data is checked too.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.rsb");
        drop(write_table(
            &path,
            layout(2, CellKind::F32, None),
            plausible,
        ));
        let mut bytes = fs::read(&path).unwrap();
        bytes[2000] = 1;
        fs::write(&path, &bytes).unwrap();
        let e = Table::open(&path).err().unwrap().to_string();
        assert!(e.contains("byte 2000 of the padding"), "{e}");
        // A header whose own checksum is recomputed must still agree with its space.
        let mut h = layout(3, CellKind::F32, None).header(0);
        h[48] ^= 4;
        let crc = crc32fast::hash(&h[..140]);
        h[140..].copy_from_slice(&crc.to_le_bytes());
        let e = Layout::parse(&h).unwrap_err().to_string();
        assert!(e.contains("disagree"), "{e}");
    }

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

    #[test]
    fn impossible_values_under_valid_checksums_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let kinds = [CellKind::F64, CellKind::F32, CellKind::Fixed32];
        for (k, kind) in kinds.into_iter().enumerate() {
            for (section, v) in [
                (Section::Cubeless, f64::NAN),
                (Section::Cubeless, -0.5),
                (Section::Cubeless, 7.0),
                (Section::Cubeful, f64::NAN),
                (Section::Cubeful, 1.5),
                (Section::Cubeful, -3.0),
            ] {
                if kind == CellKind::Fixed32 && v.is_nan() {
                    continue; // fixed32 has no NaN
                }
                let out = dir.path().join(format!("{k}-{section:?}-{v}.rsb"));
                let (bad_us, bad_them, bad_plane) = (4, 6, Layout::values(section) - 1);
                let t = write_table(&out, layout(3, kind, Some(kind)), |s, p, us, them| {
                    if (s, p, us, them) == (section, bad_plane, bad_us, bad_them) {
                        v
                    } else {
                        plausible(s, p, us, them)
                    }
                });
                let bad = t.verify(&|_| {}).unwrap();
                assert_eq!(bad.len(), 1, "{kind:?} {v}");
                assert_eq!((bad[0].section, bad[0].them), (section, bad_them));
                let Problem::Value { us, plane, .. } = bad[0].problem else {
                    panic!("{:?}", bad[0]);
                };
                assert_eq!((us, plane), (bad_us, bad_plane));
                let e = match section {
                    Section::Cubeless => t.win(bad_us as u32, bad_them as u32).unwrap_err(),
                    Section::Cubeful => t.equities(bad_us as u32, bad_them as u32).unwrap_err(),
                };
                assert!(e.to_string().contains("is not possible"), "{e}");
                t.win(3, 3).unwrap();
                let e = compare(&t, &t).unwrap_err().to_string();
                assert!(e.contains("is not possible"), "{e}");
                let mut sink = Vec::new();
                let e = t.write_gnubg(3, &mut sink).unwrap_err().to_string();
                assert!(e.contains("is not possible"), "{e}");
            }
        }
        // The bounds themselves, and u16 cells (which cannot leave their range), are fine.
        let t = write_table(
            &dir.path().join("edges.rsb"),
            layout(3, CellKind::F32, Some(CellKind::U16)),
            |s, p, us, them| match (us + them + p) % 2 {
                0 => section_range(s).0,
                _ => section_range(s).1,
            },
        );
        assert_eq!(t.verify(&|_| {}).unwrap(), []);
        assert!(compare(&t, &t).is_ok());
    }

    #[test]
    fn a_table_truncated_while_read_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.rsb");
        let l = layout(4, CellKind::F32, Some(CellKind::F32));
        let t = write_table(&path, l, plausible);
        assert_eq!(t.verify(&|_| {}).unwrap(), []);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(l.column_offset(Section::Cubeless, 3))
            .unwrap();
        let says = |e: String| {
            assert!(e.contains(&path.display().to_string()), "{e}");
            assert!(e.contains("changed while it was read"), "{e}");
        };
        says(t.verify(&|_| {}).unwrap_err().to_string());
        says(t.win(1, 30).unwrap_err().to_string());
        let out = dir.path().join("sub.rsb");
        let e = t.extract(3, &out).unwrap_err();
        assert!(
            e.downcast_ref::<InputFileError>().is_none(),
            "not bad input"
        );
        says(format!("{e:#}"));
        assert_eq!(names(dir.path()), ["t.rsb"], "no partial left");
    }

    #[test]
    fn extract_refuses_a_damaged_column_and_leaves_no_partial() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.rsb");
        let l = layout(4, CellKind::F64, None);
        drop(write_table(&path, l, plausible));
        let mut bytes = fs::read(&path).unwrap();
        bytes[l.column_offset(Section::Cubeless, 10) as usize + 8 * 30] ^= 1;
        fs::write(&path, &bytes).unwrap();
        let t = Table::open(&path).unwrap();
        // Column 10 is outside the 1-checker table (4 columns), inside the 3-checker one (20).
        t.extract(1, &dir.path().join("one.rsb")).unwrap();
        let e = t.extract(3, &dir.path().join("three.rsb")).unwrap_err();
        assert!(e.downcast_ref::<InputFileError>().is_some(), "{e:#}");
        assert!(
            format!("{e:#}").contains("Cubeless column 10 (checksum)"),
            "{e:#}"
        );
        assert_eq!(names(dir.path()), ["one.rsb", "t.rsb"]);
    }
}
