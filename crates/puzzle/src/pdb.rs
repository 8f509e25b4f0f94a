//! Additive disjoint pattern databases: build, store, look up.
//!
//! A pattern is a set of tiles. Its database holds, for every placement of those tiles on the
//! board, the fewest moves *of pattern tiles* needed to bring them home, whatever the other
//! tiles do: moves of the other tiles are free. Patterns that share no tile can therefore be
//! added and still never overestimate ([`Partition`]).
//!
//! Index: the cells of the pattern's tiles in pattern order, as a partial permutation of `k`
//! out of `n` cells, ranked in mixed radix: `rank = (((c0' (n-1) + c1') (n-2) + c2') …)`, where
//! `ci'` counts the cells below `ci` not taken by an earlier tile. `n! / (n-k)!` entries, one
//! byte each (the largest value of the 7-8 partition is well below 255; 4-bit entries would
//! need a modulo encoding and a search for the true value, for half the memory).
//!
//! Build: a 0-1 breadth-first search backwards from the goal over (pattern cells, blank cell)
//! states. Moves of the blank through cells no pattern tile holds cost nothing, so a state is
//! really a pattern placement and the connected region of free cells around the blank: the
//! search floods that region at no cost, and every move of a pattern tile into it costs one.
//! Level by level, with a visited bit per (placement, blank cell) and the region marked all at
//! once, so each region is expanded exactly once; the database keeps, per placement, the first
//! level that reached it: the minimum over blank positions.
//!
//! Memory while building: one byte (the database) and two bytes (the visited bits) per
//! placement, plus two levels' frontiers at 8 bytes a state; 518,918,400 placements for 8 tiles
//! of the 15-puzzle: about 1.6 GB plus the frontiers, 5.4 GB at the peak ([`build_bytes`]).
//!
//! File (`pdb-<w>x<w>-<tiles>.bin`, little endian): magic `RSPUZPDB`, u32 format version 1,
//! u8 width, u8 tile count `k`, 16 bytes of tiles (zero padded), 2 reserved zero bytes, u64
//! entry count, the entries, and a CRC-32 (IEEE) of every byte before it. Written to a temporary
//! file beside the target, synced, then renamed over it.

use rollsim_core::progress::Progress;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicU16, Ordering};

use rayon::prelude::*;

use rollsim_core::container::{Container, FrameError, HEAD, check_crc};

/// The file format: its magic, version 1.
pub const FORMAT: Container = Container::new(b"RSPUZPDB", 1);
const HEADER: usize = 40;

/// `n! / (n-k)!`: the number of placements of `k` distinct tiles on `n` cells.
pub fn placements(n: usize, k: usize) -> u64 {
    (0..k).map(|i| (n - i) as u64).product()
}

/// The rank of a partial permutation: `cells[i]` distinct, below `n` (at most 16).
#[inline(always)]
pub fn rank(cells: &[u8], n: usize) -> usize {
    let mut used: u32 = 0;
    let mut idx = 0usize;
    for (i, &c) in cells.iter().enumerate() {
        let below = (used & ((1u32 << c) - 1)).count_ones() as usize;
        idx = idx * (n - i) + usize::from(c) - below;
        used |= 1 << c;
    }
    idx
}

/// The partial permutation of `k` cells out of `n` with this rank.
pub fn unrank(mut idx: usize, n: usize, k: usize) -> Vec<u8> {
    let mut digits = vec![0usize; k];
    for i in (0..k).rev() {
        let radix = n - i;
        digits[i] = idx % radix;
        idx /= radix;
    }
    let mut used: u32 = 0;
    digits
        .into_iter()
        .map(|d| {
            // The d-th cell not yet used.
            let mut seen = 0;
            let c = (0..n as u32)
                .find(|&c| {
                    if used & (1 << c) != 0 {
                        return false;
                    }
                    seen += 1;
                    seen == d + 1
                })
                .expect("rank in range");
            used |= 1 << c;
            c as u8
        })
        .collect()
}

/// Board geometry as bit masks over cells.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub width: usize,
    pub n: usize,
    /// All cells.
    pub full: u32,
    /// The neighbours of each cell.
    pub neighbours: [u32; 16],
    not_first_col: u32,
    not_last_col: u32,
}

impl Geometry {
    pub fn new(width: usize) -> Geometry {
        let n = width * width;
        let mut neighbours = [0u32; 16];
        let (mut first, mut last) = (0u32, 0u32);
        for (c, nb) in neighbours.iter_mut().enumerate().take(n) {
            for d in super::board::Dir::ALL {
                if let Some(t) = d.step(c, width) {
                    *nb |= 1 << t;
                }
            }
            if c % width == 0 {
                first |= 1 << c;
            }
            if c % width == width - 1 {
                last |= 1 << c;
            }
        }
        let full = (1u32 << n) - 1;
        Geometry {
            width,
            n,
            full,
            neighbours,
            not_first_col: full & !first,
            not_last_col: full & !last,
        }
    }

    /// The cells of `free` connected to `start` (a set of cells in `free`) through `free`.
    #[inline(always)]
    pub fn flood(&self, start: u32, free: u32) -> u32 {
        let w = self.width;
        let mut m = start;
        loop {
            let grown = (m
                | ((m << 1) & self.not_first_col)
                | ((m >> 1) & self.not_last_col)
                | (m << w)
                | (m >> w))
                & free;
            if grown == m {
                return m;
            }
            m = grown;
        }
    }
}

/// One pattern database.
pub struct PatternDb {
    width: usize,
    tiles: Vec<u8>,
    data: Vec<u8>,
}

impl std::fmt::Debug for PatternDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PatternDb({}x{}, tiles {:?})",
            self.width, self.width, self.tiles
        )
    }
}

/// Why a database file was not used.
#[derive(Debug, thiserror::Error)]
pub enum PdbFileError {
    // Transparent: "{0}" here would print the OS error twice under `{:#}`.
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error("not a rollsim pattern database (bad magic)")]
    Magic,
    #[error("format version {0}, expected {expected}", expected = FORMAT.version)]
    Version(u32),
    #[error("holds the pattern {found}, expected {expected}")]
    Pattern { found: String, expected: String },
    #[error("{found} bytes, expected {expected} (truncated or padded)")]
    Length { found: u64, expected: u64 },
    #[error(
        "checksum mismatch (stored {stored:08x}, computed {computed:08x}): the file is corrupt"
    )]
    Checksum { stored: u32, computed: u32 },
}

impl From<FrameError> for PdbFileError {
    fn from(e: FrameError) -> PdbFileError {
        match e {
            FrameError::BadMagic => PdbFileError::Magic,
            FrameError::Truncated { expected, found } => PdbFileError::Length { found, expected },
            FrameError::Version(v) => PdbFileError::Version(v),
            FrameError::Checksum { stored, computed } => {
                PdbFileError::Checksum { stored, computed }
            }
        }
    }
}

fn pattern_name(width: usize, tiles: &[u8]) -> String {
    let t: Vec<String> = tiles.iter().map(u8::to_string).collect();
    format!("{width}x{width}-{}", t.join("-"))
}

impl PatternDb {
    /// Board width.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The pattern's tiles, in index order.
    pub fn tiles(&self) -> &[u8] {
        &self.tiles
    }

    /// The entries, by rank of the tiles' cells.
    pub fn entries(&self) -> &[u8] {
        &self.data
    }

    /// The value for the tiles at these cells (in pattern order).
    #[inline(always)]
    pub fn get(&self, cells: &[u8]) -> u8 {
        self.data[rank(cells, self.width * self.width)]
    }

    /// The file name this database is cached under.
    pub fn file_name(width: usize, tiles: &[u8]) -> String {
        format!("pdb-{}.bin", pattern_name(width, tiles))
    }

    /// Builds the database of `tiles` (distinct, 1 to n-1, at most `n - 2` of them) on a board
    /// `width` wide; `progress(k)` is told of every `k` more placements reached.
    pub fn build(width: usize, tiles: &[u8], progress: &dyn Progress) -> PatternDb {
        let geo = Geometry::new(width);
        let n = geo.n;
        let k = tiles.len();
        assert!(k >= 1 && k + 2 <= n, "a pattern has 1 to n-2 tiles");
        assert!(k <= 8, "frontier entries pack at most 8 tile cells");
        let size = placements(n, k) as usize;
        let mut data = vec![u8::MAX; size];
        let mut visited = vec![0u16; size];
        {
            // Same size and alignment; the atomic views are the only access while they live.
            let dist: &[AtomicU8] =
                unsafe { &*(data.as_mut_slice() as *mut [u8] as *const [AtomicU8]) };
            let seen: &[AtomicU16] =
                unsafe { &*(visited.as_mut_slice() as *mut [u16] as *const [AtomicU16]) };
            let goal: Vec<u8> = tiles.iter().map(|&t| t - 1).collect();
            let blank = (n - 1) as u8;
            let occupied = goal.iter().fold(0u32, |m, &c| m | 1 << c);
            let region = geo.flood(1 << blank, geo.full & !occupied);
            let g = rank(&goal, n);
            seen[g].store(region as u16, Ordering::Relaxed);
            dist[g].store(0, Ordering::Relaxed);
            progress.inc(1);
            let mut frontier: Vec<Vec<u64>> = vec![vec![pack(&goal, blank)]];
            let mut level: u8 = 0;
            while frontier.iter().any(|f| !f.is_empty()) {
                assert!(level < u8::MAX - 1, "pattern distance overflows a byte");
                let next_level = level + 1;
                frontier = frontier
                    .par_iter()
                    .flat_map(|f| f.par_chunks(1 << 14))
                    .map(|chunk| {
                        let mut out = Vec::new();
                        let mut reached = 0;
                        for &e in chunk {
                            reached += expand(&geo, k, e, next_level, dist, seen, &mut out);
                        }
                        progress.inc(reached);
                        out
                    })
                    .filter(|v| !v.is_empty())
                    .collect();
                level = next_level;
            }
        }
        debug_assert!(
            data.iter().all(|&d| d != u8::MAX),
            "every placement is reachable"
        );
        PatternDb {
            width,
            tiles: tiles.to_vec(),
            data,
        }
    }

    /// Writes the file format described in the module documentation.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        let mut crc = crc32fast::Hasher::new();
        let header = self.header();
        crc.update(&header);
        w.write_all(&header)?;
        for chunk in self.data.chunks(1 << 20) {
            crc.update(chunk);
            w.write_all(chunk)?;
        }
        w.write_all(&crc.finalize().to_le_bytes())
    }

    fn header(&self) -> [u8; HEADER] {
        header(self.width, &self.tiles)
    }

    /// Reads a database file, checking that it holds the pattern `tiles` on a board `width` wide.
    pub fn read(path: &Path, width: usize, tiles: &[u8]) -> Result<PatternDb, PdbFileError> {
        let mut bytes = fs::read(path)?;
        let expected_header = header(width, tiles);
        let expected_len = (HEADER + 4) as u64 + placements(width * width, tiles.len());
        FORMAT.check_head(&bytes, expected_len)?;
        if bytes.len() < HEADER {
            return Err(PdbFileError::Length {
                found: bytes.len() as u64,
                expected: expected_len,
            });
        }
        if bytes[..HEADER] != expected_header {
            let (fw, fk) = (usize::from(bytes[12]), usize::from(bytes[13]).min(16));
            return Err(PdbFileError::Pattern {
                found: pattern_name(fw, &bytes[14..14 + fk]),
                expected: pattern_name(width, tiles),
            });
        }
        if bytes.len() as u64 != expected_len {
            return Err(PdbFileError::Length {
                found: bytes.len() as u64,
                expected: expected_len,
            });
        }
        let body = check_crc(&bytes)?.len();
        bytes.copy_within(HEADER..body, 0);
        bytes.truncate(body - HEADER);
        bytes.shrink_to_fit();
        Ok(PatternDb {
            width,
            tiles: tiles.to_vec(),
            data: bytes,
        })
    }

    /// Writes the database to `path` atomically (see [`rollsim_core::files::write_atomically`]).
    pub fn save(&self, path: &Path) -> io::Result<()> {
        rollsim_core::files::write_atomically(path, |w| self.write_to(w))
    }
}

fn header(width: usize, tiles: &[u8]) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[..HEAD].copy_from_slice(&FORMAT.head());
    h[12] = width as u8;
    h[13] = tiles.len() as u8;
    h[14..14 + tiles.len()].copy_from_slice(tiles);
    h[32..40].copy_from_slice(&placements(width * width, tiles.len()).to_le_bytes());
    h
}

/// Bytes of frontier states, per placement, that two consecutive levels of a build hold at
/// most (with their vectors' spare capacity): measured 0.85 for 6 tiles of the 15-puzzle, 0.94
/// for 7, growing with the pattern.
const FRONTIER_PER_PLACEMENT: f64 = 1.0;

/// Peak bytes of building the database of `k` tiles on a board `width` wide: the database,
/// the visited bits and two levels' frontiers.
pub fn build_bytes(width: usize, k: usize) -> u64 {
    let n = placements(width * width, k);
    n.saturating_mul(3)
        .saturating_add((n as f64 * FRONTIER_PER_PLACEMENT * 8.0) as u64)
}

/// Peak bytes of [`load_or_build`] of every pattern of `patterns` in turn, each kept, and how
/// many are built: a pattern with a file of the right size in `dir` is read (its entries), any
/// other built ([`build_bytes`]) while the ones before it are held.
pub fn load_or_build_bytes(dir: Option<&Path>, width: usize, patterns: &[Vec<u8>]) -> (u64, usize) {
    let (mut held, mut peak, mut builds) = (0u64, 0u64, 0);
    for tiles in patterns {
        let entries = placements(width * width, tiles.len());
        let file_len = (HEADER + 4) as u64 + entries;
        let cached = dir
            .map(|d| d.join(PatternDb::file_name(width, tiles)))
            .and_then(|p| fs::metadata(p).ok())
            .is_some_and(|m| m.is_file() && m.len() == file_len);
        let need = match cached {
            true => file_len,
            false => build_bytes(width, tiles.len()),
        };
        builds += usize::from(!cached);
        peak = peak.max(held.saturating_add(need));
        held = held.saturating_add(entries);
    }
    (peak, builds)
}

/// Frontier entry: tile cells in 4-bit fields from the bottom, the blank's cell in the top 4.
#[inline(always)]
fn pack(cells: &[u8], blank: u8) -> u64 {
    cells
        .iter()
        .enumerate()
        .fold(u64::from(blank) << 60, |e, (i, &c)| {
            e | u64::from(c) << (4 * i)
        })
}

/// Expands one frontier state: every move of a pattern tile into the blank's region. Returns how
/// many placements were reached for the first time.
#[inline]
fn expand(
    geo: &Geometry,
    k: usize,
    entry: u64,
    level: u8,
    dist: &[AtomicU8],
    seen: &[AtomicU16],
    out: &mut Vec<u64>,
) -> u64 {
    let n = geo.n;
    let mut cells = [0u8; 8];
    let mut occupied = 0u32;
    for (i, c) in cells.iter_mut().enumerate().take(k) {
        *c = (entry >> (4 * i) & 15) as u8;
        occupied |= 1 << *c;
    }
    let blank = (entry >> 60) as u8;
    let region = geo.flood(1 << blank, geo.full & !occupied);
    let mut reached = 0;
    for i in 0..k {
        let from = cells[i];
        let mut targets = geo.neighbours[usize::from(from)] & region;
        while targets != 0 {
            let to = targets.trailing_zeros() as u8;
            targets &= targets - 1;
            cells[i] = to;
            let idx = rank(&cells[..k], n);
            let now_occupied = occupied ^ (1 << from) ^ (1 << to);
            let new_region = geo.flood(1 << from, geo.full & !now_occupied) as u16;
            let old = seen[idx].fetch_or(new_region, Ordering::Relaxed);
            if old & new_region == 0 {
                if old == 0 {
                    dist[idx].store(level, Ordering::Relaxed);
                    reached += 1;
                }
                out.push(pack(&cells[..k], from));
            }
        }
        cells[i] = from;
    }
    reached
}

/// A set of disjoint patterns whose databases add up to an admissible heuristic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Partition {
    /// 15-puzzle: tiles 1-8 (the top two rows) and 9-15 (the bottom two); 577 MB.
    #[serde(rename = "7-8")]
    P78,
    /// 15-puzzle: {1,2,5,6,9,13}, {3,4,7,8,11,12}, {10,14,15}; 11.5 MB.
    #[serde(rename = "6-6-3")]
    P663,
    /// 15-puzzle: {1,2,3,5,6}, {4,7,8,11,12}, {9,10,13,14,15}; 1.6 MB, for tests.
    #[serde(rename = "5-5-5")]
    P555,
    /// 8-puzzle: {1,2,3,4}, {5,6,7,8}; 6 KB, for tests.
    #[serde(rename = "4-4")]
    P44,
}

impl Partition {
    /// Board width the partition is for.
    pub fn width(self) -> usize {
        match self {
            Partition::P44 => 3,
            _ => 4,
        }
    }

    /// The patterns.
    pub fn patterns(self) -> Vec<Vec<u8>> {
        match self {
            Partition::P78 => vec![(1..=8).collect(), (9..=15).collect()],
            Partition::P663 => vec![
                vec![1, 2, 5, 6, 9, 13],
                vec![3, 4, 7, 8, 11, 12],
                vec![10, 14, 15],
            ],
            Partition::P555 => vec![
                vec![1, 2, 3, 5, 6],
                vec![4, 7, 8, 11, 12],
                vec![9, 10, 13, 14, 15],
            ],
            Partition::P44 => vec![vec![1, 2, 3, 4], vec![5, 6, 7, 8]],
        }
    }

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Partition::P78 => "7-8",
            Partition::P663 => "6-6-3",
            Partition::P555 => "5-5-5",
            Partition::P44 => "4-4",
        }
    }
}

/// What [`load_or_build`] did for one database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Read from this file.
    Loaded(PathBuf),
    /// Built (the file was missing, or unreadable for the reason given) and saved there.
    Built {
        path: Option<PathBuf>,
        reason: String,
        save_error: Option<String>,
    },
}

/// The default cache directory: the platform's user cache (`dirs::cache_dir`: on Linux
/// `$XDG_CACHE_HOME`, else `$HOME/.cache`; `~/Library/Caches` on macOS; the local app data
/// folder on Windows), then `rollsim`.
pub fn default_dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("rollsim"))
}

/// The database of `tiles`: read from `dir` when a valid file is there, otherwise built (a
/// phase of `progress`, in placements) and (if `dir` is given) saved there. A missing,
/// truncated, foreign or corrupt file is rebuilt.
pub fn load_or_build(
    dir: Option<&Path>,
    width: usize,
    tiles: &[u8],
    progress: &dyn Progress,
) -> (PatternDb, Source) {
    let path = dir.map(|d| d.join(PatternDb::file_name(width, tiles)));
    let reason = match &path {
        None => "no cache directory".to_string(),
        Some(p) => match PatternDb::read(p, width, tiles) {
            Ok(db) => return (db, Source::Loaded(p.clone())),
            Err(PdbFileError::Io(e)) if e.kind() == io::ErrorKind::NotFound => {
                format!("{} does not exist", p.display())
            }
            Err(e) => format!("{}: {e}", p.display()),
        },
    };
    let entries = placements(width * width, tiles.len());
    progress.start(
        entries,
        &format!(
            "building the {width}x{width} pattern database of tiles {tiles:?} ({entries} \
             entries): {reason}"
        ),
    );
    let db = PatternDb::build(width, tiles, progress);
    progress.finish();
    let save_error = path
        .as_ref()
        .and_then(|p| db.save(p).err().map(|e| format!("{}: {e}", p.display())));
    (
        db,
        Source::Built {
            path,
            reason,
            save_error,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Board, Dir};
    use rollsim_core::progress::Silent;
    use std::collections::{HashMap, VecDeque};

    #[test]
    fn memory_is_planned_per_pattern_build_or_file() {
        // 8 tiles: 518,918,400 placements at 3 bytes and 8 bytes of frontier each.
        assert_eq!(build_bytes(4, 8), 518_918_400 * 11);
        let p78 = Partition::P78.patterns();
        // Nothing cached: the 8-tile build is the peak (the 7-tile one comes after it).
        assert_eq!(load_or_build_bytes(None, 4, &p78), (build_bytes(4, 8), 2));
        let dir = tempfile::tempdir().unwrap();
        let small = Partition::P44.patterns();
        let built = load_or_build_bytes(Some(dir.path()), 3, &small);
        assert_eq!(built, (placements(9, 4) + build_bytes(3, 4), 2));
        for tiles in &small {
            let (db, _) = load_or_build(Some(dir.path()), 3, tiles, &Silent);
            assert_eq!(db.entries().len() as u64, placements(9, 4));
        }
        // Both cached: each file is read while the one before it is held.
        let file = (HEADER + 4) as u64 + placements(9, 4);
        let cached = load_or_build_bytes(Some(dir.path()), 3, &small);
        assert_eq!(cached, (placements(9, 4) + file, 0));
    }

    #[test]
    fn rank_is_a_bijection() {
        for (n, k) in [(9, 3), (16, 2), (9, 8), (6, 6)] {
            let size = placements(n, k) as usize;
            let mut seen = std::collections::HashSet::new();
            for idx in 0..size {
                let cells = unrank(idx, n, k);
                assert_eq!(rank(&cells, n), idx);
                let mask = cells.iter().fold(0u32, |m, &c| m | 1 << c);
                assert!(
                    mask.count_ones() as usize == k && mask < 1 << n,
                    "{cells:?}"
                );
                assert!(seen.insert(cells));
            }
        }
        assert_eq!(placements(16, 8), 518_918_400);
        assert_eq!(placements(16, 7), 57_657_600);
    }

    #[test]
    fn flood_stays_in_free_cells() {
        let g = Geometry::new(4);
        // A wall down column 1: the blank at cell 0 reaches column 0 only.
        let wall = (0..4).fold(0u32, |m, r| m | 1 << (4 * r + 1));
        assert_eq!(g.flood(1, g.full & !wall), 0x1111);
        assert_eq!(g.flood(1, g.full), g.full);
        let g3 = Geometry::new(3);
        assert_eq!(g3.flood(1 << 2, g3.full & !(1 << 5 | 1 << 1)), 1 << 2);
    }

    /// The database against its definition, by brute force on the 8-puzzle: a Dijkstra over
    /// whole boards where moving a pattern tile costs 1 and any other move 0, from the goal,
    /// minimised over every board with the pattern tiles at the same cells.
    #[test]
    fn small_databases_match_a_brute_force_search() {
        for tiles in [
            vec![1u8, 2, 3, 4],
            vec![5, 6, 7, 8],
            vec![2, 7],
            vec![1, 5, 8],
        ] {
            let db = PatternDb::build(3, &tiles, &|_| {});
            let mut best: HashMap<Vec<u8>, u32> = HashMap::new();
            let mut dist: HashMap<Board, u32> = HashMap::new();
            let mut q = VecDeque::new();
            let goal = Board::goal(3);
            dist.insert(goal, 0);
            q.push_back(goal);
            while let Some(b) = q.pop_front() {
                let d = dist[&b];
                let key: Vec<u8> = tiles.iter().map(|&t| b.find(t) as u8).collect();
                let e = best.entry(key).or_insert(d);
                *e = (*e).min(d);
                for dir in Dir::ALL {
                    let Some(nb) = b.moved(dir) else { continue };
                    let cost = u32::from(tiles.contains(&nb.tile(b.blank())));
                    let nd = d + cost;
                    if dist.get(&nb).is_none_or(|&old| nd < old) {
                        dist.insert(nb, nd);
                        if cost == 0 {
                            q.push_front(nb);
                        } else {
                            q.push_back(nb);
                        }
                    }
                }
            }
            assert_eq!(dist.len(), 181_440);
            assert_eq!(best.len() as u64, placements(9, tiles.len()));
            for (cells, d) in best {
                assert_eq!(u32::from(db.get(&cells)), d, "{tiles:?} at {cells:?}");
            }
        }
    }

    #[test]
    fn files_round_trip_and_corruption_is_caught() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cache");
        let tiles = [1u8, 2, 3];
        let (db, src) = load_or_build(Some(&dir), 4, &tiles, &Silent);
        assert!(
            matches!(
                src,
                Source::Built {
                    save_error: None,
                    ..
                }
            ),
            "{src:?}"
        );
        let (again, src) = load_or_build(Some(&dir), 4, &tiles, &Silent);
        assert!(matches!(src, Source::Loaded(_)));
        assert_eq!(db.entries(), again.entries());
        let path = dir.join(PatternDb::file_name(4, &tiles));
        assert!(path.ends_with("pdb-4x4-1-2-3.bin"));
        // One flipped bit in the body.
        let mut bytes = fs::read(&path).unwrap();
        bytes[HEADER + 100] ^= 4;
        fs::write(&path, &bytes).unwrap();
        assert!(matches!(
            PatternDb::read(&path, 4, &tiles),
            Err(PdbFileError::Checksum { .. })
        ));
        let (rebuilt, src) = load_or_build(Some(&dir), 4, &tiles, &Silent);
        match src {
            Source::Built { reason, .. } => assert!(reason.contains("checksum"), "{reason}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(rebuilt.entries(), db.entries());
        assert!(PatternDb::read(&path, 4, &tiles).is_ok());
        // Truncated; another pattern's file; not a database at all.
        fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
        assert!(matches!(
            PatternDb::read(&path, 4, &tiles),
            Err(PdbFileError::Length { .. })
        ));
        db.save(&path).unwrap();
        assert!(matches!(
            PatternDb::read(&path, 4, &[1, 2, 4]),
            Err(PdbFileError::Pattern { .. })
        ));
        fs::write(&path, b"hello").unwrap();
        assert!(matches!(
            PatternDb::read(&path, 4, &tiles),
            Err(PdbFileError::Magic)
        ));
        // No temporary files left behind.
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let _ = fs::remove_dir_all(&dir);
    }
}
