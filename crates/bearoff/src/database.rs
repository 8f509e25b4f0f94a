//! A bearoff database as a user names it, in any format rollsim reads: the format sniffed from
//! its first bytes, gnubg's 16-bit values decoded, its checks, and its answers to queries. A
//! new format is a variant here, not an arm in every command.

use std::io::Read;
use std::path::Path;

use crate::Space;
use crate::cube::Equities;
use crate::format::{
    self, FormatError, GnubgOneSided, GnubgTwoSided, Table as Whole, read_gnubg_one_sided,
    read_gnubg_two_sided, read_rollsim,
};
use crate::numeric::CellKind;
use crate::one_sided::{mean_sd, race_win_probability};
use crate::table::{self, Table as Columns};
use rollsim_core::files::InputFileError;
use rollsim_core::progress::Progress;

/// The largest file read whole (rollsim's two-sided format 2 is read in place): gnubg
/// addresses its files with 32-bit offsets, and rollsim's one-sided 15x10 table is 1.6 GB.
const MAX_READ: u64 = 1 << 33;

/// A database read from a file.
pub enum Database {
    /// rollsim's two-sided table (format 2), read in place.
    Columns(Columns),
    /// rollsim's format 1, one- or two-sided, read whole.
    Rollsim(Whole),
    GnubgOne(GnubgOneSided),
    GnubgTwo(GnubgTwoSided),
}

/// One position of a one-sided table: the exact mean where the file has it, the distribution
/// of rolls to bear off, and of rolls to the first checker off where present.
pub struct OneSidedEntry {
    pub exact_mean: Option<f64>,
    pub dist: Vec<f64>,
    pub gammon: Option<Vec<f64>>,
}

impl OneSidedEntry {
    /// The mean rolls to bear off and their standard deviation (the exact mean where known).
    pub fn mean_sd(&self) -> (f64, f64) {
        let (mean, sd) = mean_sd(&self.dist);
        (self.exact_mean.unwrap_or(mean), sd)
    }
}

/// What a database says of a race: the side on roll's chance to win, how it was found, and
/// the money equities where the table has them.
pub struct Race {
    pub win: f64,
    /// "exact" (and its cell type) from a two-sided table, or "one-sided estimate".
    pub method: &'static str,
    pub equities: Option<Equities>,
}

/// What a check of a whole database found.
pub struct Checked {
    /// The format and what could be checked in it.
    pub format: &'static str,
    /// Bytes checked.
    pub bytes: u64,
    /// Each check that failed, in words.
    pub failed: Vec<String>,
}

impl Database {
    /// Opens `path`: refuses what is not a bearoff database rollsim reads, naming the file
    /// (an [`InputFileError`]), and plans the memory of a format read whole before reading it.
    /// I/O errors stay I/O errors.
    pub fn open(path: &Path) -> anyhow::Result<Database> {
        let bad = |e: FormatError| -> anyhow::Error {
            match e {
                FormatError::Io(e) => e.into(),
                e => InputFileError::new(path, e).into(),
            }
        };
        let (file, size) = rollsim_core::files::open_input(path, u64::MAX)?;
        let unreadable = |e| InputFileError::new(path, e);
        // The head says the format; a format read whole is then read on from it.
        let mut bytes = Vec::new();
        (&file)
            .take(12)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if table::is_table(&bytes) {
            return Ok(Database::Columns(Columns::open(path).map_err(bad)?));
        }
        if size > MAX_READ {
            return Err(InputFileError::new(
                path,
                format!("{size} bytes is larger than any bearoff table of a format read whole"),
            )
            .into());
        }
        // The head says how much memory the table takes decoded, planned before it is read.
        (&file)
            .take((format::HEAD_BYTES - bytes.len()) as u64)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        let need = format::read_whole_bytes(&bytes, size);
        rollsim_core::memory::check_memory(&format!("reading {}", path.display()), need)
            .map_err(|e| InputFileError::new(path, e))?;
        bytes.reserve(size as usize);
        (&file)
            .take(MAX_READ - bytes.len() as u64)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if bytes.starts_with(b"gnubg-OS") {
            Ok(Database::GnubgOne(
                read_gnubg_one_sided(&bytes).map_err(bad)?,
            ))
        } else if bytes.starts_with(b"gnubg-TS") {
            Ok(Database::GnubgTwo(
                read_gnubg_two_sided(&bytes).map_err(bad)?,
            ))
        } else if bytes.starts_with(b"gnubg-") {
            let kind = String::from_utf8_lossy(&bytes[6..bytes.len().min(8)]).into_owned();
            Err(InputFileError::new(
                path,
                format!(
                    "a gnubg database of kind {kind:?}{}; rollsim reads gnubg's one-sided (OS) \
                     and two-sided (TS) bearoff databases",
                    if kind.starts_with('H') {
                        " (hypergammon)"
                    } else {
                        ""
                    }
                ),
            )
            .into())
        } else {
            Ok(Database::Rollsim(read_rollsim(&bytes).map_err(bad)?))
        }
    }

    /// A two-sided table in rollsim's format 2, or an error naming `path`.
    pub fn open_columns(path: &Path) -> anyhow::Result<Columns> {
        match Database::open(path)? {
            Database::Columns(t) => Ok(t),
            _ => Err(InputFileError::new(
                path,
                "not a two-sided table in rollsim's format (version 2)",
            )
            .into()),
        }
    }

    /// The positions of one side.
    pub fn space(&self) -> Result<Space, crate::position::PositionError> {
        match self {
            Database::Columns(t) => Ok(t.space()),
            Database::Rollsim(Whole::One(t)) => Ok(t.space),
            Database::Rollsim(Whole::Two(t)) => Ok(t.space),
            Database::GnubgOne(g) => Space::new(g.points, g.checkers),
            Database::GnubgTwo(g) => Space::new(g.points, g.checkers),
        }
    }

    /// Position `i`'s entry, where the database is one-sided.
    pub fn one_sided(&self, i: u32) -> Option<OneSidedEntry> {
        match self {
            Database::Rollsim(Whole::One(t)) => Some(OneSidedEntry {
                exact_mean: Some(t.mean[i as usize]),
                dist: t.distribution(i).to_vec(),
                gammon: t.gammon_distribution(i).map(<[f64]>::to_vec),
            }),
            Database::GnubgOne(g) => {
                let f = |d: &[u16; 32]| d.iter().map(|&x| f64::from(x) / 65535.0).collect();
                Some(OneSidedEntry {
                    exact_mean: None,
                    dist: f(&g.dist[i as usize]),
                    gammon: g.gammon_dist.as_ref().map(|gd| f(&gd[i as usize])),
                })
            }
            _ => None,
        }
    }

    /// The race of the side on roll at `us` against `them` (indices in [`Space::index`]'s
    /// order): exact from a two-sided table, estimated from two one-sided distributions.
    pub fn race(&self, us: u32, them: u32) -> Result<Race, FormatError> {
        let n = self
            .space()
            .map_err(|e| FormatError::Header(e.to_string()))?
            .len();
        let pair = us as usize * n + them as usize;
        Ok(match self {
            Database::Columns(t) => Race {
                win: t.win(us, them)?,
                method: match t.layout().cubeless {
                    CellKind::F64 => "exact",
                    CellKind::F32 => "exact (f32)",
                    CellKind::Fixed32 => "exact (fixed32)",
                    CellKind::U16 => "exact (16-bit)",
                },
                equities: t.equities(us, them)?,
            },
            Database::Rollsim(Whole::Two(t)) => Race {
                win: t.win(us, them),
                method: "exact",
                equities: t.cubeful.as_ref().map(|c| {
                    let [owned, centred, opponent_owns] = c[pair];
                    Equities {
                        owned,
                        centred,
                        opponent_owns,
                    }
                }),
            },
            Database::GnubgTwo(g) => {
                let equity = f64::from(g.equity[pair]) / 32767.5 - 1.0;
                Race {
                    win: equity / 2.0 + 0.5,
                    method: "exact (gnubg, 16-bit)",
                    equities: None,
                }
            }
            Database::Rollsim(Whole::One(_)) | Database::GnubgOne(_) => {
                let dist = |i| self.one_sided(i).expect("a one-sided table").dist;
                Race {
                    win: race_win_probability(&dist(us), &dist(them)),
                    method: "one-sided estimate",
                    equities: None,
                }
            }
        })
    }

    /// Checks everything the format lets be checked; `progress` gets the bytes checked, where
    /// the check reads the file again. `file_bytes` is the file's size, what a format checked
    /// whole by opening it reports.
    pub fn check(&self, file_bytes: u64, progress: &dyn Progress) -> std::io::Result<Checked> {
        Ok(match self {
            Database::Columns(t) => Checked {
                format: "rollsim two-sided (checksum per column, value ranges)",
                bytes: t.data_bytes(),
                failed: t
                    .verify(progress)?
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
            },
            // Read whole, their checksum or structure was checked by opening them.
            Database::Rollsim(_) => Checked {
                format: "rollsim (whole-file checksum)",
                bytes: file_bytes,
                failed: Vec::new(),
            },
            // gnubg's files carry no checksum: what can be checked is the structure (by
            // opening) and, one-sided, that each distribution sums to 1 within rounding.
            Database::GnubgOne(g) => Checked {
                format: "gnubg one-sided (no checksum; structure and sums)",
                bytes: file_bytes,
                failed: gnubg_sums_off(g),
            },
            Database::GnubgTwo(_) => Checked {
                format: "gnubg two-sided (no checksum; structure)",
                bytes: file_bytes,
                failed: Vec::new(),
            },
        })
    }
}

/// The distributions of a gnubg one-sided file that do not sum to 1 within rounding: each of
/// 32 entries is off by at most half a unit (rollsim) or sums exactly (makebearoff), so more
/// than 16 units (0.02%) is damage. Entries past 31 rolls are dropped, so a distribution
/// reaching them may sum to less: 15 checkers on 10 points lose under 0.001%.
fn gnubg_sums_off(g: &GnubgOneSided) -> Vec<String> {
    const SLACK: i64 = 16;
    let halves = [Some(&g.dist), g.gammon_dist.as_ref()];
    let mut bad = Vec::new();
    for (what, dists) in ["bear-off", "first-off"].into_iter().zip(halves) {
        for (i, d) in dists.into_iter().flatten().enumerate() {
            let sum: i64 = d.iter().map(|&v| i64::from(v)).sum();
            if (sum - 65535).abs() > SLACK {
                bad.push(format!(
                    "position {i}: {what} distribution sums to {sum}/65535"
                ));
            }
        }
    }
    bad
}
