//! Tables made for the tests of this module.

use super::layout::{Layout, Section};
use super::partial::Partial;
use super::read::{Table, section_range};
use std::fs;
use std::path::Path;

use crate::numeric::{CellKind, Fixed, Real};
use crate::position::Space;

pub(super) fn layout(checkers: u32, cubeless: CellKind, cubeful: Option<CellKind>) -> Layout {
    Layout {
        space: Space::new(3, checkers).unwrap(),
        cubeless,
        cubeful,
    }
}

/// A cell of `kind` holding `v`, as the sweep stores it.
pub(super) fn cell(kind: CellKind, section: Section, v: f64) -> Vec<u8> {
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
pub(super) fn write_table(
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

pub(super) fn write_columns(
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

pub(super) fn plausible(section: Section, plane: u64, us: u64, them: u64) -> f64 {
    let w = ((us * 7 + them * 3 + plane) % 11) as f64 / 10.0;
    match section {
        Section::Cubeless => w,
        Section::Cubeful => 2.0 * w - 1.0,
    }
}

pub(super) fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    n.sort();
    n
}
