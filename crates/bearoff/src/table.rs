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

use rollsim_core::progress::Progress;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::columns::{Cell, CellKind, Cubeful, Cubeless, Fixed, Real, Recurrence};
use super::format::{
    FormatError, exact_size, plural, quantize, u32_at, write_gnubg_two_sided_rows,
};
use super::position::Space;
use super::two_sided::cube_decision;
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

/// The money equities of the side on roll before its cube decision.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Equities {
    /// It owns the cube.
    pub owned: f64,
    /// The cube is centred.
    pub centred: f64,
    /// Its opponent owns the cube.
    pub opponent_owns: f64,
}

/// The side on roll's cube decision, and the equity it leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CubeAction {
    NoDouble,
    DoubleTake,
    DoublePass,
}

impl CubeAction {
    pub fn as_str(self) -> &'static str {
        match self {
            CubeAction::NoDouble => "no double",
            CubeAction::DoubleTake => "double, take",
            CubeAction::DoublePass => "double, pass",
        }
    }
}

impl Equities {
    /// The decision of the side on roll when it may double (the cube centred, or its own when
    /// `owned`), as gnubg's makebearoff takes it, and the resulting equity.
    pub fn decision(&self, owned: bool) -> (CubeAction, f64) {
        let no_double = if owned { self.owned } else { self.centred };
        let equity = cube_decision(no_double, self.opponent_owns);
        let action = if equity == no_double {
            CubeAction::NoDouble
        } else if equity == 1.0 {
            CubeAction::DoublePass
        } else {
            CubeAction::DoubleTake
        };
        (action, equity)
    }
}

/// A two-sided table read in place: opening maps the file and checks its header and checksum
/// table, not the data (see [`Table::verify`]).
pub struct Table {
    layout: Layout,
    map: memmap2::Mmap,
    /// For reading whole columns without mapping them into this process (see `read_column`).
    file: File,
}

/// A section of a column whose checksum does not match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadColumn {
    pub section: Section,
    pub them: u64,
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
        // SAFETY: the map is read-only; rollsim writes tables under a temporary name and
        // renames them, so a finished file is not modified in place. A file truncated by
        // someone else while mapped would fault, as with any mapped reader.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        let table = Table { layout, map, file };
        let computed = crc32fast::hash(table.crc_table());
        if computed != crc_table {
            return Err(FormatError::Checksum {
                stored: crc_table,
                computed,
            });
        }
        Ok(table)
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    pub fn space(&self) -> Space {
        self.layout.space
    }

    fn crc_table(&self) -> &[u8] {
        let at = self.layout.crc_offset() as usize;
        &self.map[at..at + 4 * self.layout.crc_entries() as usize]
    }

    /// The raw bytes of a column's section.
    pub fn column_bytes(&self, section: Section, them: u64) -> &[u8] {
        let at = self.layout.column_offset(section, them) as usize;
        &self.map[at..at + self.layout.section_bytes(section) as usize]
    }

    /// Value `plane` of the pair (`us` on roll, `them`), from `section`.
    fn value(&self, section: Section, plane: u64, us: u32, them: u32) -> f64 {
        let cell = self.layout.cell(section);
        let at = self.layout.column_offset(section, u64::from(them)) as usize
            + (plane * self.layout.n() + u64::from(us)) as usize * cell.bytes();
        decode(cell, section, &self.map[at..at + cell.bytes()])
    }

    /// Every value of a column's section, plane by plane, into `out`.
    pub fn column_values(
        &self,
        section: Section,
        them: u64,
        bytes: &mut Vec<u8>,
        out: &mut Vec<f64>,
    ) -> io::Result<()> {
        let cell = self.layout.cell(section);
        self.read_column(section, them, bytes)?;
        out.clear();
        out.extend(
            bytes
                .chunks_exact(cell.bytes())
                .map(|b| decode(cell, section, b)),
        );
        Ok(())
    }

    /// A column's section read into `buf`, not through the map: a pass over a whole table of
    /// tens of GB would otherwise count it all in this process's resident memory (23 GB for a
    /// `verify` of the 29 GB 15x15 table), though the pages are only cache.
    fn read_column(&self, section: Section, them: u64, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.resize(self.layout.section_bytes(section) as usize, 0);
        read_at(&self.file, buf, self.layout.column_offset(section, them))
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
    pub fn win(&self, us: u32, them: u32) -> f64 {
        self.check(us, them);
        self.value(Section::Cubeless, 0, us, them)
    }

    /// The money equities of the side on roll, if the table has them.
    pub fn equities(&self, us: u32, them: u32) -> Option<Equities> {
        self.check(us, them);
        self.layout.cubeful?;
        let v = |plane| self.value(Section::Cubeful, plane, us, them);
        Some(Equities {
            owned: v(0),
            centred: v(1),
            opponent_owns: v(2),
        })
    }

    /// Checks every column against its checksum, on CPU threads; `progress` gets the bytes
    /// checked as it goes. Returns the sections that do not match.
    /// A column that cannot be read (an I/O error) counts as damaged.
    pub fn verify(&self, progress: &dyn Progress) -> Vec<BadColumn> {
        use rayon::prelude::*;
        let n = self.layout.n();
        let crcs = self.crc_table();
        let mut bad: Vec<BadColumn> = self
            .layout
            .sections()
            .into_iter()
            .flat_map(|section| (0..n).map(move |them| (section, them)))
            .collect::<Vec<_>>()
            .into_par_iter()
            .map_init(Vec::new, |buf, (section, them)| {
                let read = self.read_column(section, them, buf);
                progress.inc(buf.len() as u64);
                let entry = (section as u64 * n + them) as usize;
                let ok = read.is_ok() && crc32fast::hash(buf) == u32_at(crcs, 4 * entry);
                (!ok).then_some(BadColumn { section, them })
            })
            .flatten()
            .collect();
        bad.sort_by_key(|b| (b.section, b.them));
        bad
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
    pub fn write_gnubg(&self, checkers: u32, out: &mut impl io::Write) -> Result<()> {
        let sub = self.sub_space(checkers)?;
        let m = sub.len();
        let sections = self.layout.sections();
        let values: usize = sections.iter().map(|&s| Layout::values(s) as usize).sum();
        write_gnubg_two_sided_rows(sub, self.layout.cubeful.is_some(), out, |us0, buf| {
            let rows = buf.len() / (m * values);
            for them in 0..m {
                let mut v = 0;
                for &section in &sections {
                    let column = self.column_bytes(section, them as u64);
                    for plane in 0..Layout::values(section) as usize {
                        for k in 0..rows {
                            let us = plane * self.layout.n() as usize + us0 + k;
                            buf[(k * m + them) * values + v] =
                                gnubg_value(self.layout.cell(section), section, column, us);
                        }
                        v += 1;
                    }
                }
            }
            Ok(())
        })
    }

    /// Writes the table of at most `checkers` checkers (see [`Table::sub_space`]) into `out`
    /// in this format, cells as they are.
    pub fn extract(&self, checkers: u32, out: &Path) -> Result<()> {
        let sub = self.sub_space(checkers)?;
        let layout = Layout {
            space: sub,
            ..self.layout
        };
        let _lock = rollsim_core::files::lock_for_writing(out).map_err(io::Error::other)?;
        let (partial, _) = Partial::open(out, layout, true)?;
        let (m, n) = (sub.len(), self.layout.n() as usize);
        let mut bytes = Vec::new();
        for section in self.layout.sections() {
            let cell = self.layout.cell(section).bytes();
            for them in 0..m {
                let column = self.column_bytes(section, them as u64);
                bytes.clear();
                for plane in 0..Layout::values(section) as usize {
                    bytes.extend_from_slice(&column[plane * n * cell..][..m * cell]);
                }
                partial.write_column_bytes(section, them as u32, &bytes)?;
            }
        }
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

/// Compares every value two tables over the same space both have.
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
                |(bytes, x, y), them| -> io::Result<Vec<(f64, u64, f64)>> {
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
            .collect::<io::Result<_>>()?;
        let names: &[&'static str] = match section {
            Section::Cubeless => &["cubeless"],
            Section::Cubeful => &["owned", "centred", "opponent-owns"],
        };
        for (p, &value) in names.iter().enumerate() {
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
    Ok(out)
}

/// Cell `i` of a column's section as gnubg stores it: the winning chance p as
/// [`quantize`]`(p)`, an equity e as [`quantize`]`((e + 1) / 2)`; u16 cells are that already.
fn gnubg_value(cell: CellKind, section: Section, column: &[u8], i: usize) -> u16 {
    let b = &column[i * cell.bytes()..][..cell.bytes()];
    if cell == CellKind::U16 {
        return u16::from_le_bytes([b[0], b[1]]);
    }
    let v = decode(cell, section, b);
    match section {
        Section::Cubeless => quantize(v),
        Section::Cubeful => quantize((v + 1.0) / 2.0),
    }
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
}

impl Partial {
    /// Opens the build of `layout` into `out`: resumes `OUT.partial` if its checkpoint is for
    /// the same table and its file is whole, else starts it afresh. The caller holds
    /// [`rollsim_core::files::lock_for_writing`] on `out`, so two builds never write one table.
    pub fn open(out: &Path, layout: Layout, fresh: bool) -> io::Result<(Partial, Option<Reached>)> {
        let (_, dir) = rollsim_core::files::name_and_dir(out)?;
        fs::create_dir_all(dir)?;
        let path = partial_path(out)?;
        let checkpoint = dir.join(format!(
            "{}.ckpt",
            path.file_name().unwrap_or_default().to_string_lossy()
        ));
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        let entries = layout.crc_entries() as usize;
        let partial = Partial {
            layout,
            out: out.to_path_buf(),
            path,
            checkpoint,
            file,
            crcs: (0..entries).map(|_| AtomicU32::new(0)).collect(),
        };
        let resumed = if fresh {
            None
        } else {
            partial.read_checkpoint()
        };
        if resumed.is_none() {
            let _ = fs::remove_file(&partial.checkpoint);
            partial.file.set_len(0)?;
        }
        partial.file.set_len(layout.file_bytes())?;
        Ok((partial, resumed))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read_checkpoint(&self) -> Option<Reached> {
        let bytes = fs::read(&self.checkpoint).ok()?;
        let entries = self.crcs.len();
        let want = 8 + HEADER + 8 + 4 * entries + 4;
        if bytes.len() != want || !bytes.starts_with(CHECKPOINT_MAGIC) {
            return None;
        }
        let (body, crc) = bytes.split_at(want - 4);
        if crc32fast::hash(body) != u32_at(crc, 0) {
            return None;
        }
        // The same table: the header without its two checksums.
        if body[8..8 + 136] != self.layout.header(0)[..136] {
            return None;
        }
        if self.file.metadata().ok()?.len() != self.layout.file_bytes() {
            return None;
        }
        let at = 8 + HEADER;
        let section = match u32_at(body, at) {
            0 => Section::Cubeless,
            1 if self.layout.cubeful.is_some() => Section::Cubeful,
            _ => return None,
        };
        let levels_done = u32_at(body, at + 4) as usize;
        for (i, c) in self.crcs.iter().enumerate() {
            c.store(u32_at(body, at + 8 + 4 * i), Ordering::Relaxed);
        }
        Some(Reached {
            section,
            levels_done,
        })
    }

    /// Writes a column's section (from the worker that finished it).
    pub fn write_column<C: Cell>(
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
        )?;
        self.crcs[self.entry(section, them)].store(crc32fast::hash(bytes), Ordering::Relaxed);
        Ok(())
    }

    /// Reads back a column's section written before a checkpoint, checked against its CRC.
    pub fn read_column<C: Cell>(
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
        )?;
        let stored = self.crcs[self.entry(section, them)].load(Ordering::Relaxed);
        if crc32fast::hash(bytes) != stored {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: column {them} does not match its checkpoint; delete it and {} to start over",
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
        self.file.sync_data()?;
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
        rollsim_core::files::write_atomically(&self.checkpoint, |w| io::Write::write_all(w, &body))
    }

    /// Writes the checksum table and the header, makes the file durable (if `durable`) and
    /// renames it into place; removes the checkpoint.
    pub fn finish(self, durable: bool) -> io::Result<()> {
        let table: Vec<u8> = self
            .crcs
            .iter()
            .flat_map(|c| c.load(Ordering::Relaxed).to_le_bytes())
            .collect();
        write_at(&self.file, &table, self.layout.crc_offset())?;
        write_at(&self.file, &self.layout.header(crc32fast::hash(&table)), 0)?;
        if durable {
            self.file.sync_all()?;
        }
        fs::rename(&self.path, &self.out)?;
        let _ = fs::remove_file(&self.checkpoint);
        if !durable {
            return Ok(());
        }
        if let Some(dir) = self.out.parent().filter(|d| !d.as_os_str().is_empty())
            && let Ok(d) = File::open(dir)
        {
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
    let (name, dir) = rollsim_core::files::name_and_dir(out)?;
    Ok(dir.join(format!("{}.partial", name.to_string_lossy())))
}
