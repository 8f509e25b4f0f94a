//! The header and layout of rollsim's two-sided table file (see [`super`]).

use crate::format::{FormatError, plural, u32_at};
use crate::numeric::CellKind;
use crate::position::Space;
use rollsim_core::container::Container;

/// rollsim's two-sided table, version 2: read in place, a checksum per column.
pub const FORMAT: Container = Container::new(b"RSBEAROF", 2);
const KIND: u32 = 2;
/// Page-aligned, so that a mapped column starts on its own boundary.
pub(super) const DATA_OFFSET: u64 = 4096;
pub(super) const HEADER: usize = 144;
const DESCRIPTION: usize = 64;

pub(super) type Result<T> = std::result::Result<T, FormatError>;

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

    pub(super) fn cell(&self, section: Section) -> CellKind {
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

    pub(super) fn crc_offset(&self) -> u64 {
        // Saturating: a header may name a table too large to exist, which is then refused.
        DATA_OFFSET.saturating_add(self.n().saturating_mul(self.record_bytes()))
    }

    pub(super) fn crc_entries(&self) -> u64 {
        self.n() * self.sections().len() as u64
    }

    pub fn file_bytes(&self) -> u64 {
        self.crc_offset().saturating_add(4 * self.crc_entries())
    }

    pub(super) fn header(&self, crc_table: u32) -> [u8; HEADER] {
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
    pub(super) fn parse(h: &[u8]) -> Result<(Layout, u32)> {
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
    pub(super) fn flags(&self) -> String {
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

#[cfg(test)]
mod tests {
    use super::Layout;
    use crate::format::FormatError;
    use crate::numeric::CellKind;
    use crate::table::fixtures::{layout, plausible, write_table};
    use crate::table::read::Table;
    use std::fs;

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
}
