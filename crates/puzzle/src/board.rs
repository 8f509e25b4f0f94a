//! Sliding-puzzle boards (the 15-puzzle, and the 8-puzzle for small tests): cells, moves,
//! text formats and the solvability check.
//!
//! Cells are numbered in reading order, 0 at the top left. The goal has tile `t` in cell `t - 1`
//! and the blank (tile 0) in the last cell: `1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15 _`.
//!
//! A move is named by the direction the *blank* moves: `U` swaps the blank with the tile above
//! it (that tile slides down), `D` with the tile below, `L` with the tile to its left, `R` with
//! the tile to its right. A solution is a string of these letters.
//!
//! Text formats ([`Board::from_str`]):
//! - a grid: 16 (or 9) numbers, one row per line or rows split by `/` or `|`, cells by spaces,
//!   tabs or commas; the blank is `0`, `_`, `.` or `-`. One line of 16 (9) numbers is read row
//!   by row.
//! - compact: 16 (9) hex digits with no separators, one per cell in reading order, `0` the blank:
//!   the goal is `123456789abcdef0` (`123456780` for the 8-puzzle). [`Board::compact`] prints it.

use std::fmt;
use std::str::FromStr;

/// Most cells a board has (4x4).
pub const MAX_CELLS: usize = 16;

/// A direction the blank moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Up,
    Down,
    Left,
    Right,
}

impl Dir {
    /// Every direction, in the order solvers try them.
    pub const ALL: [Dir; 4] = [Dir::Up, Dir::Down, Dir::Left, Dir::Right];

    /// `U`, `D`, `L` or `R`.
    pub fn letter(self) -> char {
        match self {
            Dir::Up => 'U',
            Dir::Down => 'D',
            Dir::Left => 'L',
            Dir::Right => 'R',
        }
    }

    /// The direction named by a letter (either case).
    pub fn from_letter(c: char) -> Option<Dir> {
        match c.to_ascii_uppercase() {
            'U' => Some(Dir::Up),
            'D' => Some(Dir::Down),
            'L' => Some(Dir::Left),
            'R' => Some(Dir::Right),
            _ => None,
        }
    }

    /// The move that undoes this one.
    pub fn opposite(self) -> Dir {
        match self {
            Dir::Up => Dir::Down,
            Dir::Down => Dir::Up,
            Dir::Left => Dir::Right,
            Dir::Right => Dir::Left,
        }
    }

    /// The blank's new cell after this move from `cell` on a board `width` wide, if on the board.
    #[inline]
    pub fn step(self, cell: usize, width: usize) -> Option<usize> {
        let (r, c) = (cell / width, cell % width);
        match self {
            Dir::Up if r > 0 => Some(cell - width),
            Dir::Down if r + 1 < width => Some(cell + width),
            Dir::Left if c > 0 => Some(cell - 1),
            Dir::Right if c + 1 < width => Some(cell + 1),
            _ => None,
        }
    }

    /// The direction from `from` to the adjacent cell `to`.
    pub fn between(from: usize, to: usize, width: usize) -> Option<Dir> {
        Dir::ALL
            .into_iter()
            .find(|d| d.step(from, width) == Some(to))
    }
}

/// A move sequence as a string of `U`/`D`/`L`/`R`.
pub fn moves_to_string(moves: &[Dir]) -> String {
    moves.iter().map(|d| d.letter()).collect()
}

/// Reads a move string (`U`/`D`/`L`/`R`, either case; spaces and commas ignored).
pub fn parse_moves(text: &str) -> Result<Vec<Dir>, BoardError> {
    text.chars()
        .filter(|c| !c.is_whitespace() && *c != ',')
        .map(|c| Dir::from_letter(c).ok_or(BoardError::BadMove(c)))
        .collect()
}

/// Why a board text was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    #[error("empty board text")]
    Empty,
    #[error(
        "wrong size: {cells} cells, expected 16 (a 4x4 board) or 9 (3x3), one per tile and one blank"
    )]
    Size { cells: usize },
    #[error(
        "wrong size: {digits} hex digits, expected 16 (a 4x4 board) or 9 (3x3), one per tile and one blank"
    )]
    HexSize { digits: usize },
    #[error("wrong size: row {row} has {cells} cells, but the board has {rows} rows")]
    RowLength {
        row: usize,
        cells: usize,
        rows: usize,
    },
    #[error(
        "bad tile {token:?} at row {row}, column {col}: expected a number from 1 to {max}, or 0 or _ for the blank"
    )]
    Token {
        token: String,
        row: usize,
        col: usize,
        max: usize,
    },
    #[error(
        "duplicate tile {tile} at row {row}, column {col} (also at row {first_row}, column \
         {first_col}){}",
        missing_suffix(.missing)
    )]
    Duplicate {
        tile: String,
        row: usize,
        col: usize,
        first_row: usize,
        first_col: usize,
        /// The tiles absent from the board.
        missing: Vec<u8>,
    },
    #[error("missing {}", list(.0))]
    Missing(Vec<u8>),
    #[error(
        "unsolvable board (odd parity): the tiles' permutation parity plus the blank's distance \
         from its goal cell is odd, so no sequence of moves reaches the goal (swapping any two \
         tiles would make it solvable)"
    )]
    OddParity,
    #[error("bad move {0:?}: expected U, D, L or R")]
    BadMove(char),
}

/// `tile 7`, `tiles 3, 9`, `the blank` or `tile 7 and the blank`.
fn list(tiles: &[u8]) -> String {
    let names: Vec<String> = tiles
        .iter()
        .filter(|&&t| t != 0)
        .map(u8::to_string)
        .collect();
    let mut out = match names.len() {
        0 => String::new(),
        1 => format!("tile {}", names[0]),
        _ => format!("tiles {}", names.join(", ")),
    };
    if tiles.contains(&0) {
        out += if out.is_empty() {
            "the blank"
        } else {
            " and the blank"
        };
    }
    out
}

fn missing_suffix(missing: &[u8]) -> String {
    if missing.is_empty() {
        String::new()
    } else {
        format!("; missing {}", list(missing))
    }
}

/// A board: which tile sits in each cell (0 the blank). Always a permutation of the tiles.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Board {
    width: u8,
    blank: u8,
    cells: [u8; MAX_CELLS],
}

impl Board {
    /// The goal board `width` wide (3 or 4).
    pub fn goal(width: usize) -> Board {
        assert!(width == 3 || width == 4, "boards are 3x3 or 4x4");
        let n = width * width;
        let mut cells = [0u8; MAX_CELLS];
        for (i, c) in cells.iter_mut().enumerate().take(n - 1) {
            *c = i as u8 + 1;
        }
        Board {
            width: width as u8,
            blank: (n - 1) as u8,
            cells,
        }
    }

    /// The board with these cells, in reading order (9 or 16 of them), if they are a permutation
    /// of the tiles and the blank. Solvability is not checked: see [`Board::is_solvable`].
    pub fn from_cells(cells: &[u8]) -> Result<Board, BoardError> {
        let n = cells.len();
        let width = match n {
            9 => 3,
            16 => 4,
            _ => return Err(BoardError::Size { cells: n }),
        };
        let mut seen = [usize::MAX; MAX_CELLS];
        let mut out = [0u8; MAX_CELLS];
        let mut duplicate = None;
        let at = |i: usize| (i / width + 1, i % width + 1);
        for (i, &t) in cells.iter().enumerate() {
            let (row, col) = at(i);
            if usize::from(t) >= n {
                return Err(BoardError::Token {
                    token: t.to_string(),
                    row,
                    col,
                    max: n - 1,
                });
            }
            if seen[usize::from(t)] != usize::MAX {
                duplicate.get_or_insert((t, i, seen[usize::from(t)]));
            } else {
                seen[usize::from(t)] = i;
            }
            out[i] = t;
        }
        let missing: Vec<u8> = (0..n as u8)
            .filter(|&t| seen[usize::from(t)] == usize::MAX)
            .collect();
        if let Some((t, i, first)) = duplicate {
            let ((row, col), (first_row, first_col)) = (at(i), at(first));
            return Err(BoardError::Duplicate {
                tile: if t == 0 {
                    "blank".into()
                } else {
                    t.to_string()
                },
                row,
                col,
                first_row,
                first_col,
                missing,
            });
        }
        // n cells below n without duplicates are a permutation: nothing can be missing here.
        debug_assert!(missing.is_empty());
        Ok(Board {
            width: width as u8,
            blank: seen[0] as u8,
            cells: out,
        })
    }

    /// Board width (3 or 4).
    #[inline]
    pub fn width(&self) -> usize {
        usize::from(self.width)
    }

    /// Number of cells (9 or 16).
    #[inline]
    pub fn len(&self) -> usize {
        self.width() * self.width()
    }

    /// Never: a board has at least 9 cells. (For clippy's `len_without_is_empty`.)
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The tiles by cell, in reading order, 0 the blank.
    #[inline]
    pub fn cells(&self) -> &[u8] {
        &self.cells[..self.len()]
    }

    /// The tile in `cell` (0 the blank).
    #[inline]
    pub fn tile(&self, cell: usize) -> u8 {
        self.cells[cell]
    }

    /// The blank's cell.
    #[inline]
    pub fn blank(&self) -> usize {
        usize::from(self.blank)
    }

    /// The cell holding `tile` (0: the blank).
    pub fn find(&self, tile: u8) -> usize {
        self.cells()
            .iter()
            .position(|&t| t == tile)
            .expect("every tile is on the board")
    }

    /// Whether this is the goal.
    pub fn is_goal(&self) -> bool {
        *self == Board::goal(self.width())
    }

    /// Whether the goal can be reached: the parity of the permutation (blank included, as tile
    /// `n`) equals the parity of the blank's taxicab distance from its goal cell. Every move is a
    /// transposition that moves the blank one cell, so that sum's parity never changes; and the
    /// sliding puzzle reaches every board of the goal's parity.
    pub fn is_solvable(&self) -> bool {
        let n = self.len();
        let w = self.width();
        // Goal position of each cell's content; the blank's is the last cell.
        let target = |t: u8| if t == 0 { n - 1 } else { usize::from(t) - 1 };
        let mut seen = [false; MAX_CELLS];
        let mut transpositions = 0;
        for start in 0..n {
            if seen[start] {
                continue;
            }
            let mut len = 0;
            let mut i = start;
            while !seen[i] {
                seen[i] = true;
                i = target(self.cells[i]);
                len += 1;
            }
            transpositions += len - 1;
        }
        let b = self.blank();
        let dist = (w - 1 - b / w) + (w - 1 - b % w);
        (transpositions + dist).is_multiple_of(2)
    }

    /// The board after the blank moves `dir`, if it can.
    #[inline]
    pub fn moved(&self, dir: Dir) -> Option<Board> {
        let to = dir.step(self.blank(), self.width())?;
        let mut b = *self;
        b.cells[b.blank()] = b.cells[to];
        b.cells[to] = 0;
        b.blank = to as u8;
        Some(b)
    }

    /// Moves the blank `dir`; false (and no change) if it would leave the board.
    #[inline]
    pub fn apply(&mut self, dir: Dir) -> bool {
        match self.moved(dir) {
            Some(b) => {
                *self = b;
                true
            }
            None => false,
        }
    }

    /// The compact one-line form: one hex digit per cell in reading order, `0` the blank.
    pub fn compact(&self) -> String {
        self.cells()
            .iter()
            .map(|&t| char::from_digit(u32::from(t), 16).expect("tile below 16"))
            .collect()
    }

    /// Rows of numbers split by ` / `, `_` the blank: `1 2 3 4 / … / 13 14 15 _`.
    pub fn rows(&self) -> String {
        self.cells()
            .chunks(self.width())
            .map(|row| {
                row.iter()
                    .map(|&t| {
                        if t == 0 {
                            "_".to_string()
                        } else {
                            t.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join(" / ")
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Board({})", self.compact())
    }
}

/// A grid, one row per line, numbers right-aligned, `_` the blank.
impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (r, row) in self.cells().chunks(self.width()).enumerate() {
            if r > 0 {
                writeln!(f)?;
            }
            let cells: Vec<String> = row
                .iter()
                .map(|&t| {
                    if t == 0 {
                        format!("{:>2}", "_")
                    } else {
                        format!("{t:>2}")
                    }
                })
                .collect();
            write!(f, "{}", cells.join(" "))?;
        }
        Ok(())
    }
}

/// Parses either text format (see the module documentation), then checks that the board is a
/// permutation of the tiles and that it is solvable.
impl FromStr for Board {
    type Err = BoardError;

    fn from_str(s: &str) -> Result<Board, BoardError> {
        // A byte-order mark is not part of the board (editors write one at a file's start).
        let s = s.trim_start_matches('\u{feff}').trim();
        if s.is_empty() {
            return Err(BoardError::Empty);
        }
        // 16 or 9 hex digits, with or without 0x as 2048 boards are written.
        let hex = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"));
        let s = hex.unwrap_or(s);
        let all_hex = s.bytes().all(|b| b.is_ascii_hexdigit());
        if (hex.is_some() || (all_hex && s.len() > 9)) && !(all_hex && matches!(s.len(), 9 | 16)) {
            return Err(BoardError::HexSize { digits: s.len() });
        }
        let cells = if (s.len() == 16 || s.len() == 9) && all_hex {
            let width = if s.len() == 16 { 4 } else { 3 };
            let mut cells = Vec::with_capacity(s.len());
            for (i, c) in s.chars().enumerate() {
                let t = c.to_digit(16).expect("hex digit") as u8;
                if usize::from(t) >= s.len() {
                    return Err(BoardError::Token {
                        token: c.to_string(),
                        row: i / width + 1,
                        col: i % width + 1,
                        max: s.len() - 1,
                    });
                }
                cells.push(t);
            }
            cells
        } else {
            parse_grid(s)?
        };
        let board = Board::from_cells(&cells)?;
        if !board.is_solvable() {
            return Err(BoardError::OddParity);
        }
        Ok(board)
    }
}

fn parse_grid(s: &str) -> Result<Vec<u8>, BoardError> {
    let rows = rollsim_core::text::grid_rows(s);
    let total: usize = rows.iter().map(Vec::len).sum();
    // One line: read row by row; several: a square grid.
    let width = if rows.len() == 1 {
        match total {
            16 => 4,
            9 => 3,
            _ => return Err(BoardError::Size { cells: total }),
        }
    } else {
        let w = rows.len();
        if let Some((r, row)) = rows.iter().enumerate().find(|(_, r)| r.len() != w) {
            return Err(BoardError::RowLength {
                row: r + 1,
                cells: row.len(),
                rows: w,
            });
        }
        if w != 3 && w != 4 {
            return Err(BoardError::Size { cells: total });
        }
        w
    };
    let n = width * width;
    let mut cells = Vec::with_capacity(n);
    for (i, token) in rows.iter().flatten().enumerate() {
        let bad = || BoardError::Token {
            token: token.to_string(),
            row: i / width + 1,
            col: i % width + 1,
            max: n - 1,
        };
        let t = match *token {
            "_" | "." | "-" => 0,
            t => t.parse::<u8>().map_err(|_| bad())?,
        };
        if usize::from(t) >= n {
            return Err(bad());
        }
        cells.push(t);
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goal_formats() {
        let g = Board::goal(4);
        assert_eq!(g.compact(), "123456789abcdef0");
        assert_eq!(g.rows(), "1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15 _");
        assert!(g.is_goal() && g.is_solvable());
        assert_eq!(g.blank(), 15);
        assert_eq!(Board::goal(3).compact(), "123456780");
        for text in [
            "123456789abcdef0",
            "123456789ABCDEF0",
            "1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15 _",
            "1 2 3 4\n5 6 7 8\n9 10 11 12\n13 14 15 0\n",
            "1,2,3,4|5,6,7,8|9,10,11,12|13,14,15,.",
            "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 -",
        ] {
            assert_eq!(text.parse::<Board>(), Ok(g), "{text}");
        }
        assert_eq!("1 2 3/4 5 6/7 8 _".parse::<Board>(), Ok(Board::goal(3)));
        let b: Board = "_ 1 2 3 / 5 6 7 4 / 9 10 11 8 / 13 14 15 12"
            .parse()
            .unwrap();
        assert_eq!(b.compact().parse::<Board>(), Ok(b));
        assert_eq!(b.rows().parse::<Board>(), Ok(b));
        assert_eq!(b.to_string().parse::<Board>(), Ok(b));
    }

    #[test]
    fn errors_name_the_problem() {
        let err = |s: &str| s.parse::<Board>().unwrap_err().to_string();
        assert!(err("").contains("empty"));
        assert!(err("1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15").contains("row 4 has 3 cells"));
        assert!(err("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15").contains("wrong size: 15 cells"));
        assert!(err("1 2 3 4 5 / 6 7 8 9 10").contains("wrong size"));
        assert!(err("1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 14 _").contains(
            "duplicate tile 14 at row 4, column 3 (also at row 4, column 2); missing tile 15"
        ));
        assert!(err("1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 _ _").contains(
            "duplicate tile blank at row 4, column 4 (also at row 4, column 3); missing tile 15"
        ));
        assert!(err("1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15 15").contains("missing the blank"));
        assert!(err("1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 16 _").contains("bad tile \"16\""));
        assert!(err("1 2 3 4 / 5 6 x 8 / 9 10 11 12 / 13 14 15 _").contains("row 2, column 3"));
        assert!(err("2 1 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15 _").contains("odd parity"));
        assert!(err("213456789abcdef0").contains("odd parity"));
        assert!(err("1 2 3/4 5 6/8 7 _").contains("odd parity"));
        assert_eq!(
            Board::from_cells(&[1, 2, 3, 4, 5, 6, 7, 7, 0])
                .unwrap_err()
                .to_string(),
            "duplicate tile 7 at row 3, column 2 (also at row 3, column 1); missing tile 8"
        );
        assert_eq!(
            BoardError::Missing(vec![3, 9]).to_string(),
            "missing tiles 3, 9"
        );
        assert_eq!(BoardError::Missing(vec![3]).to_string(), "missing tile 3");
    }

    #[test]
    fn parity_is_preserved_by_moves_and_flipped_by_swaps() {
        let mut b = Board::goal(4);
        let mut s = rollsim_core::rng::Stream::new(5, [0, 0, 0]);
        for _ in 0..1000 {
            b.apply(Dir::ALL[s.below(4) as usize]);
            assert!(b.is_solvable());
            let mut cells = b.cells().to_vec();
            let (i, j) = if cells[0] == 0 || cells[1] == 0 {
                (2, 3)
            } else {
                (0, 1)
            };
            cells.swap(i, j);
            assert!(!Board::from_cells(&cells).unwrap().is_solvable());
        }
    }

    #[test]
    fn moves_go_where_the_blank_goes() {
        let g = Board::goal(4);
        assert!(g.moved(Dir::Down).is_none() && g.moved(Dir::Right).is_none());
        let b = g.moved(Dir::Up).unwrap();
        assert_eq!(b.rows(), "1 2 3 4 / 5 6 7 8 / 9 10 11 _ / 13 14 15 12");
        let b = b.moved(Dir::Left).unwrap();
        assert_eq!(b.rows(), "1 2 3 4 / 5 6 7 8 / 9 10 _ 11 / 13 14 15 12");
        assert_eq!(
            parse_moves("ul D,r").unwrap(),
            [Dir::Up, Dir::Left, Dir::Down, Dir::Right]
        );
        assert_eq!(moves_to_string(&[Dir::Up, Dir::Left]), "UL");
        assert!(parse_moves("UX").is_err());
    }
}
