//! The 2048 board as a `u64` of sixteen 4-bit exponents, and table-driven moves.
//!
//! Cell `i` (row-major, `i = 4 * row + col`) is nibble `i`, bits `4i..4i+4`; 0 is an empty cell
//! and `e` a tile of value `2^e`. A row is a `u16` with its column 0 in the low nibble. Moves
//! look rows up in 65536-entry tables; up and down look up the rows of the transposed board in
//! column tables that put the result straight back into columns.

use std::fmt;
use std::sync::OnceLock;

use rollsim_core::rng::Stream;

/// The largest exponent a cell can hold: 15, a 32768 tile.
pub const MAX_EXPONENT: u8 = 15;

/// The exponent of a tile value a board can hold (2 to 32768), `None` for any other number.
pub fn tile_exponent(tile: u32) -> Option<u8> {
    (tile >= 2 && tile.is_power_of_two() && tile.trailing_zeros() <= u32::from(MAX_EXPONENT))
        .then(|| tile.trailing_zeros() as u8)
}

/// Set in a row's reward entry when a move would merge two 32768 tiles into an unrepresentable
/// 65536. Four row rewards are summed per move, each below 2^18, so the flag survives the sum.
pub const OVERFLOW_FLAG: u32 = 1 << 24;

/// A move direction. The order is the tie-break order of every player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Dir {
    Up = 0,
    Right = 1,
    Down = 2,
    Left = 3,
}

impl Dir {
    pub const ALL: [Dir; 4] = [Dir::Up, Dir::Right, Dir::Down, Dir::Left];

    pub fn name(self) -> &'static str {
        match self {
            Dir::Up => "up",
            Dir::Right => "right",
            Dir::Down => "down",
            Dir::Left => "left",
        }
    }

    #[inline]
    pub fn from_index(i: usize) -> Dir {
        Dir::ALL[i]
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a move does to a board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moved {
    /// The board after sliding and merging, before any spawn. Meaningless when `overflow`.
    pub board: Board,
    /// Points scored: the sum of the merged tiles' values.
    pub score: u32,
    /// The move would merge two 32768 tiles; the board cannot represent the result.
    pub overflow: bool,
}

/// A 4x4 2048 board.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Board {
    pub raw: u64,
}

/// The move tables, built once per process (about 1.5 MiB).
pub struct Tables {
    /// Per row: the row slid left (bits 0..16), slid right (16..32), and the points of sliding
    /// it either way (32..64; a run of k equal tiles merges k/2 times in both directions), with
    /// [`OVERFLOW_FLAG`] where a 32768 pair would merge. One load gives a row's result and
    /// points; 512 KiB in all, so the table stays in L2, where separate row and column tables
    /// took 1.5 MiB.
    rows: Box<[u64]>,
}

/// Slides a row of four exponents toward index 0, merging each pair of equal neighbours once.
/// The definition every table is built from. Returns the new row, the points and the overflow.
pub fn slide_row_left(cells: [u8; 4]) -> ([u8; 4], u32, bool) {
    let mut out = [0u8; 4];
    let mut n = 0;
    let mut score = 0;
    let mut overflow = false;
    let mut pending: Option<u8> = None;
    for &c in cells.iter().filter(|&&c| c != 0) {
        match pending {
            Some(p) if p == c => {
                if c == MAX_EXPONENT {
                    overflow = true;
                    out[n] = MAX_EXPONENT;
                } else {
                    out[n] = c + 1;
                    score += 1u32 << (c + 1);
                }
                n += 1;
                pending = None;
            }
            Some(p) => {
                out[n] = p;
                n += 1;
                pending = Some(c);
            }
            None => pending = Some(c),
        }
    }
    if let Some(p) = pending {
        out[n] = p;
    }
    (out, score, overflow)
}

fn row_cells(row: u16) -> [u8; 4] {
    std::array::from_fn(|i| ((row >> (4 * i)) & 0xf) as u8)
}

fn cells_row(cells: [u8; 4]) -> u16 {
    cells
        .iter()
        .enumerate()
        .fold(0, |r, (i, &c)| r | u16::from(c) << (4 * i))
}

impl Tables {
    fn build() -> Tables {
        let rows = (0..=u16::MAX)
            .map(|x| {
                let cells = row_cells(x);
                let (l, score, overflow) = slide_row_left(cells);
                let mut rev = cells;
                rev.reverse();
                let (mut r, _, _) = slide_row_left(rev);
                r.reverse();
                let reward = score | if overflow { OVERFLOW_FLAG } else { 0 };
                u64::from(cells_row(l)) | u64::from(cells_row(r)) << 16 | u64::from(reward) << 32
            })
            .collect();
        Tables { rows }
    }

    /// The row tables as the GPU kernels take them: `left | right << 16` per row, and rewards.
    pub fn gpu_row_tables(&self) -> (Vec<u32>, Vec<u32>) {
        let lr = self.rows.iter().map(|&e| e as u32).collect();
        let reward = self.rows.iter().map(|&e| (e >> 32) as u32).collect();
        (lr, reward)
    }
}

/// The process-wide move tables.
#[inline]
pub fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(Tables::build)
}

/// One bit (the low bit of its nibble) per empty cell.
#[inline(always)]
fn empty_mask(raw: u64) -> u64 {
    let mut x = raw | (raw >> 2);
    x |= x >> 1;
    !x & 0x1111_1111_1111_1111
}

impl Board {
    pub const EMPTY: Board = Board { raw: 0 };

    pub const fn from_raw(raw: u64) -> Board {
        Board { raw }
    }

    /// A board from exponents in row-major order.
    pub fn from_exponents(cells: [u8; 16]) -> Board {
        debug_assert!(cells.iter().all(|&c| c <= MAX_EXPONENT));
        let raw = cells
            .iter()
            .enumerate()
            .fold(0u64, |r, (i, &c)| r | u64::from(c) << (4 * i));
        Board { raw }
    }

    pub fn exponents(self) -> [u8; 16] {
        std::array::from_fn(|i| self.get(i))
    }

    /// The exponent in cell `i` (row-major).
    #[inline]
    pub fn get(self, i: usize) -> u8 {
        ((self.raw >> (4 * i)) & 0xf) as u8
    }

    #[inline]
    pub fn set(&mut self, i: usize, exponent: u8) {
        debug_assert!(exponent <= MAX_EXPONENT);
        self.raw = self.raw & !(0xf << (4 * i)) | u64::from(exponent) << (4 * i);
    }

    #[inline]
    pub fn row(self, r: usize) -> u16 {
        (self.raw >> (16 * r)) as u16
    }

    #[inline(always)]
    pub fn count_empty(self) -> u32 {
        empty_mask(self.raw).count_ones()
    }

    /// The board mirrored on its main diagonal.
    #[inline(always)]
    pub fn transpose(self) -> Board {
        let x = self.raw;
        let a1 = x & 0xF0F0_0F0F_F0F0_0F0F;
        let a2 = x & 0x0000_F0F0_0000_F0F0;
        let a3 = x & 0x0F0F_0000_0F0F_0000;
        let a = a1 | (a2 << 12) | (a3 >> 12);
        let b1 = a & 0xFF00_FF00_00FF_00FF;
        let b2 = a & 0x00FF_00FF_0000_0000;
        let b3 = a & 0x0000_0000_FF00_FF00;
        Board {
            raw: b1 | (b2 >> 24) | (b3 << 24),
        }
    }

    /// Slides the board in `dir` with the given tables. The move is legal iff the board changes.
    /// Up and down are left and right on the transposed board. Both transposes are computed
    /// and selected without a branch: the direction of a random move is unpredictable, and the
    /// branchy version (four code paths) was the slower one.
    #[inline(always)]
    pub fn slide_with(self, t: &Tables, dir: Dir) -> Moved {
        let vertical = matches!(dir, Dir::Up | Dir::Down);
        let shift = if matches!(dir, Dir::Right | Dir::Down) {
            16
        } else {
            0
        };
        let src = if vertical { self.transpose() } else { self };
        let mut out = 0u64;
        let mut reward = 0u32;
        for r in 0..4 {
            let e = t.rows[usize::from(src.row(r))];
            out |= (e >> shift & 0xffff) << (16 * r);
            reward += (e >> 32) as u32;
        }
        let out = Board { raw: out };
        Moved {
            board: if vertical { out.transpose() } else { out },
            score: reward & (OVERFLOW_FLAG - 1),
            overflow: reward >= OVERFLOW_FLAG,
        }
    }

    /// Slides the board in `dir`.
    #[inline]
    pub fn slide(self, dir: Dir) -> Moved {
        self.slide_with(tables(), dir)
    }

    /// The legal moves (those that change the board), in [`Dir::ALL`] order.
    pub fn legal_moves(self) -> impl Iterator<Item = (Dir, Moved)> {
        let t = tables();
        Dir::ALL.into_iter().filter_map(move |d| {
            let m = self.slide_with(t, d);
            (m.board != self).then_some((d, m))
        })
    }

    pub fn is_game_over(self) -> bool {
        self.legal_moves().next().is_none()
    }

    /// Puts a 2 (probability 9/10) or a 4 (1/10) on a uniformly chosen empty cell, from one
    /// exact draw below `10 * empty`: the quotient picks the cell, a remainder of 0 makes a 4.
    /// The board must have an empty cell (every legal move leaves one).
    #[inline(always)]
    pub fn spawn(&mut self, rng: &mut Stream) {
        let mut mask = empty_mask(self.raw);
        let empty = mask.count_ones();
        debug_assert!(empty > 0, "spawn on a full board");
        let r = rng.below(10 * empty);
        for _ in 0..r / 10 {
            mask &= mask - 1;
        }
        let shift = mask.trailing_zeros();
        let exponent = if r.is_multiple_of(10) { 2 } else { 1 };
        self.raw |= exponent << shift;
    }

    /// Whether some tile has an exponent of at least `e` (1 to 15): each nibble plus `16 - e`
    /// carries into bit 4 exactly when it is `e` or more, tested for all 16 at once in two
    /// halves of byte lanes.
    #[inline]
    pub fn has_exponent_at_least(self, e: u8) -> bool {
        debug_assert!((1..=15).contains(&e));
        const LOW: u64 = 0x0f0f_0f0f_0f0f_0f0f;
        const CARRY: u64 = 0x1010_1010_1010_1010;
        let add = u64::from(16 - e) * 0x0101_0101_0101_0101;
        (((self.raw & LOW) + add) | (((self.raw >> 4) & LOW) + add)) & CARRY != 0
    }

    /// Tile downgrading (TDL2048+'s `shift`): every tile above the board's largest missing
    /// exponent (from 2 up to its largest tile) one exponent lower. Equal tiles stay equal and
    /// different ones different, so the board moves and merges as before, on smaller tiles.
    /// Unchanged when no exponent below the largest is missing.
    pub fn downgraded(self) -> Board {
        let present = (0..16).fold(0u32, |p, i| p | 1 << self.get(i));
        let largest = 31 - present.leading_zeros();
        let holes = !present & ((1 << largest) - 1) & !1;
        if holes == 0 {
            return self;
        }
        let hole = 31 - holes.leading_zeros();
        let raw = (0..16)
            .filter(|&i| u32::from(self.get(i)) > hole)
            .fold(self.raw, |r, i| r - (1 << (4 * i)));
        Board::from_raw(raw)
    }

    /// The board a network values in place of this one: [`Board::downgraded`] when it holds an
    /// exponent of `at` or more, itself otherwise (and always when `at` is `None`).
    #[inline]
    pub fn leaf(self, at: Option<u8>) -> Board {
        match at {
            Some(e) if self.has_exponent_at_least(e) => self.downgraded(),
            _ => self,
        }
    }

    /// The largest exponent on the board.
    pub fn max_exponent(self) -> u8 {
        (0..16).map(|i| self.get(i)).max().unwrap_or(0)
    }

    /// The sum of the tile values.
    pub fn tile_sum(self) -> u32 {
        (0..16)
            .map(|i| self.get(i))
            .filter(|&e| e > 0)
            .map(|e| 1u32 << e)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deliberately naive move: tile values on a grid, rotated so every move is "left".
    fn naive_slide(board: Board, dir: Dir) -> (Board, u64, bool) {
        let mut g = [[0u64; 4]; 4];
        for (i, e) in board.exponents().into_iter().enumerate() {
            g[i / 4][i % 4] = if e == 0 { 0 } else { 1 << e };
        }
        // Read each line in the direction of travel.
        let line = |k: usize, j: usize| -> (usize, usize) {
            match dir {
                Dir::Left => (k, j),
                Dir::Right => (k, 3 - j),
                Dir::Up => (j, k),
                Dir::Down => (3 - j, k),
            }
        };
        let mut out = [[0u64; 4]; 4];
        let mut score = 0;
        let mut overflow = false;
        for k in 0..4 {
            let tiles: Vec<u64> = (0..4)
                .map(|j| {
                    let (r, c) = line(k, j);
                    g[r][c]
                })
                .filter(|&v| v != 0)
                .collect();
            let mut merged = Vec::new();
            let mut j = 0;
            while j < tiles.len() {
                if j + 1 < tiles.len() && tiles[j] == tiles[j + 1] {
                    let v = 2 * tiles[j];
                    score += v;
                    overflow |= v > 32768;
                    merged.push(v);
                    j += 2;
                } else {
                    merged.push(tiles[j]);
                    j += 1;
                }
            }
            for (j, v) in merged.into_iter().enumerate() {
                let (r, c) = line(k, j);
                out[r][c] = v;
            }
        }
        let mut b = Board::EMPTY;
        for (i, v) in out.into_iter().flatten().enumerate() {
            b.set(
                i,
                if v == 0 {
                    0
                } else {
                    v.trailing_zeros().min(15) as u8
                },
            );
        }
        (b, score, overflow)
    }

    fn grid(rows: [[u32; 4]; 4]) -> Board {
        let mut b = Board::EMPTY;
        for (r, row) in rows.iter().enumerate() {
            for (c, &v) in row.iter().enumerate() {
                b.set(4 * r + c, if v == 0 { 0 } else { v.trailing_zeros() as u8 });
            }
        }
        b
    }

    #[test]
    fn tables_agree_with_naive_moves_on_random_boards() {
        let mut rng = Stream::new(2048, [0, 0, 0]);
        for i in 0..200_000 {
            // Mix sparse and dense boards, and boards rich in equal neighbours.
            let max = [3u32, 6, 12, 16][i % 4];
            let raw = (0..16).fold(0u64, |r, c| {
                let e = u64::from(rng.below(max).min(15));
                r | e << (4 * c)
            });
            let b = Board::from_raw(raw);
            for d in Dir::ALL {
                let m = b.slide(d);
                let (nb, score, overflow) = naive_slide(b, d);
                assert_eq!(m.overflow, overflow, "{b:?} {d}");
                if !overflow {
                    assert_eq!(m.board, nb, "{b:?} {d}");
                    assert_eq!(u64::from(m.score), score, "{b:?} {d}");
                }
            }
        }
    }

    #[test]
    fn merges_once_per_move() {
        let b = grid([[2, 2, 2, 2], [4, 4, 8, 0], [2, 0, 2, 4], [8, 8, 8, 0]]);
        let m = b.slide(Dir::Left);
        assert_eq!(
            m.board,
            grid([[4, 4, 0, 0], [8, 8, 0, 0], [4, 4, 0, 0], [16, 8, 0, 0]])
        );
        assert_eq!(m.score, 4 + 4 + 8 + 4 + 16);
        let m = b.slide(Dir::Right);
        assert_eq!(
            m.board,
            grid([[0, 0, 4, 4], [0, 0, 8, 8], [0, 0, 4, 4], [0, 0, 8, 16]])
        );
        assert_eq!(m.score, 4 + 4 + 8 + 4 + 16);
    }

    #[test]
    fn vertical_moves_match_horizontal_on_the_transpose() {
        let b = grid([[2, 4, 0, 2], [2, 0, 0, 2], [4, 4, 8, 2], [4, 0, 8, 2]]);
        let up = b.slide(Dir::Up);
        assert_eq!(
            up.board,
            grid([[4, 8, 16, 4], [8, 0, 0, 4], [0, 0, 0, 0], [0, 0, 0, 0]])
        );
        assert_eq!(up.score, 4 + 8 + 8 + 16 + 4 + 4);
        let t = b.transpose();
        assert_eq!(t.transpose(), b);
        assert_eq!(up.board, t.slide(Dir::Left).board.transpose());
        assert_eq!(
            b.slide(Dir::Down).board,
            t.slide(Dir::Right).board.transpose()
        );
    }

    #[test]
    fn illegal_moves_change_nothing_and_full_locked_boards_are_over() {
        let b = grid([[2, 0, 0, 0], [4, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
        assert_eq!(b.slide(Dir::Left).board, b);
        assert_eq!(b.slide(Dir::Up).board, b);
        let legal: Vec<Dir> = b.legal_moves().map(|(d, _)| d).collect();
        assert_eq!(legal, [Dir::Right, Dir::Down]);
        let locked = grid([[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 2]]);
        assert!(locked.is_game_over());
        let not_locked = grid([[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 4]]);
        assert!(!not_locked.is_game_over());
    }

    #[test]
    fn merging_two_32768_tiles_is_reported() {
        let b = grid([[32768, 32768, 0, 0], [0; 4], [0; 4], [2, 0, 0, 0]]);
        assert!(b.slide(Dir::Left).overflow);
        assert!(b.slide(Dir::Right).overflow);
        assert!(!b.slide(Dir::Down).overflow);
        let b = grid([[16384, 16384, 0, 0], [0; 4], [0; 4], [0; 4]]);
        let m = b.slide(Dir::Left);
        assert!(!m.overflow);
        assert_eq!(m.board.max_exponent(), 15);
        assert_eq!(m.score, 32768);
    }

    #[test]
    fn exponent_threshold_matches_the_largest_tile() {
        let mut rng = rollsim_core::rng::Stream::new(8, [0, 0, 0]);
        for k in 0..20_000 {
            let raw = u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32());
            let b = Board::from_raw(raw >> (4 * (k % 16)));
            for e in 1..=15 {
                assert_eq!(
                    b.has_exponent_at_least(e),
                    b.max_exponent() >= e,
                    "{b:?} {e}"
                );
            }
        }
    }

    #[test]
    fn downgrading_lowers_the_tiles_above_the_largest_hole() {
        let b = |s: &str| s.parse::<Board>().unwrap();
        // 4096 is missing: 32768, 16384 and 8192 step down; 2048 and below stay.
        let x = b("32768 16384 8192 2048 / 1024 512 2 2 / 0 0 0 0 / 0 0 0 32768");
        let want = b("16384 8192 4096 2048 / 1024 512 2 2 / 0 0 0 0 / 0 0 0 16384");
        assert_eq!(x.downgraded(), want);
        assert_eq!(x.leaf(Some(15)), want);
        assert_eq!(x.leaf(None), x);
        assert_eq!(want.leaf(Some(15)), want, "no 32768 left: not downgraded");
        // Every exponent from 2 to the largest present: nothing to lower.
        let full = b("2 4 8 16 / 32 64 128 256 / 512 1024 2048 4096 / 8192 16384 32768 0");
        assert_eq!(full.downgraded(), full);
        // Only the 2 missing: every tile steps down.
        assert_eq!(
            b("4 8 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0").downgraded(),
            b("2 4 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0")
        );
        // Moves and merges are the same on the downgraded board.
        let t = tables();
        for d in Dir::ALL {
            let (m, n) = (x.slide_with(t, d), want.slide_with(t, d));
            assert_eq!(m.board.downgraded(), n.board, "{d:?}");
        }
    }

    #[test]
    fn spawn_distribution() {
        // A board with 4 empty cells: each cell 1/4, a 4 with probability 1/10.
        let b = grid([
            [2, 4, 0, 8],
            [16, 0, 32, 64],
            [0, 128, 256, 512],
            [1024, 2, 0, 4],
        ]);
        let empties = [2, 5, 8, 14];
        let mut rng = Stream::new(7, [1, 1, 1]);
        let n = 400_000;
        let mut per_cell = [0u32; 16];
        let mut fours = 0;
        for _ in 0..n {
            let mut s = b;
            s.spawn(&mut rng);
            let diff = s.raw ^ b.raw;
            let cell = diff.trailing_zeros() as usize / 4;
            assert!(empties.contains(&cell));
            assert_eq!(diff.count_ones(), 1, "exactly one tile placed");
            per_cell[cell] += 1;
            fours += u32::from(s.get(cell) == 2);
        }
        // 5 sigma bounds.
        let p4 = f64::from(fours) / f64::from(n);
        assert!(
            (p4 - 0.1).abs() < 5.0 * (0.09 / f64::from(n)).sqrt(),
            "p4 = {p4}"
        );
        for &c in &empties {
            let p = f64::from(per_cell[c]) / f64::from(n);
            assert!(
                (p - 0.25).abs() < 5.0 * (0.1875 / f64::from(n)).sqrt(),
                "cell {c}: {p}"
            );
        }
    }

    #[test]
    fn tile_sum_and_max() {
        let b = grid([[2, 4, 0, 8], [0; 4], [0; 4], [32768, 0, 0, 0]]);
        assert_eq!(b.tile_sum(), 32782);
        assert_eq!(b.max_exponent(), 15);
        assert_eq!(b.count_empty(), 12);
    }
}
