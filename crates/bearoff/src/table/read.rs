//! A two-sided table read in place, its checks, its gnubg export and extraction, and the
//! comparison of two tables.

use super::io::{named, read_at};
use super::layout::{DATA_OFFSET, FORMAT, HEADER, Layout, Result, Section};
use super::partial::Partial;
use rollsim_core::files::InputFileError;
use rollsim_core::progress::Progress;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::columns::{Cubeful, Cubeless, Recurrence};
use crate::cube::Equities;
use crate::format::{FormatError, exact_size, u32_at, write_gnubg_two_sided_rows};
use crate::numeric::{CellKind, Fixed, Real, quantize};
use crate::position::Space;

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

pub(super) fn section_range(section: Section) -> (f64, f64) {
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

#[cfg(test)]
mod tests {
    use super::{Problem, Table, compare, section_range};
    use crate::numeric::CellKind;
    use crate::table::fixtures::{layout, names, plausible, write_table};
    use crate::table::layout::{Layout, Section};
    use rollsim_core::files::InputFileError;
    use std::fs::{self, File};

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
