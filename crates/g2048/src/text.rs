//! Board text formats: a 4x4 grid of tile values a person can type, and the raw hex word.
//!
//! Grid: sixteen tile values, four per row; cells are separated by spaces, tabs or commas, rows
//! by newlines, `/` or `|`; an empty cell is `0`, `.`, `_` or `-`. A single line of sixteen
//! values is read row by row. Hex: `0x` and 16 hex digits (or the 16 digits alone), the `u64`
//! with cell 0 in the lowest nibble.

use std::fmt;
use std::str::FromStr;

use super::board::Board;
use rollsim_core::text::count;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoardParseError {
    #[error("empty board text")]
    Empty,
    #[error("bad hex board {0:?}: expected exactly 16 hex digits (after 0x or alone)")]
    Hex(String),
    /// A hex word with a sign (`+0x…`, `-0x…`): a board is a bit pattern, not a signed number.
    #[error("bad hex board {0:?}: a board takes no sign; give 0x and 16 hex digits")]
    Sign(String),
    /// One word that is neither a hex board nor a tile, which a count of cells would misname.
    #[error("bad board {0:?}: neither a hex board (0x and 16 hex digits) nor a grid of 16 tiles")]
    Word(String),
    #[error(
        "bad tile {tile:?} at row {row}, column {col}: expected 0 or a power of two from 2 to 32768"
    )]
    Tile {
        tile: String,
        row: usize,
        col: usize,
    },
    #[error("row {row} has {}, expected 4", count(*.cells, "cell"))]
    RowLength { row: usize, cells: usize },
    #[error("the board has {}, expected 4", count(*.0, "row"))]
    Rows(usize),
    #[error("the board has {}, expected 16", count(*.0, "cell"))]
    Cells(usize),
}

fn parse_tile(text: &str, row: usize, col: usize) -> Result<u8, BoardParseError> {
    let bad = || BoardParseError::Tile {
        tile: text.to_string(),
        row: row + 1,
        col: col + 1,
    };
    if matches!(text, "." | "_" | "-") {
        return Ok(0);
    }
    // Digits only: `parse` would also take a sign, `+2`.
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let v: u32 = text.parse().map_err(|_| bad())?;
    match v {
        0 => Ok(0),
        v => crate::board::tile_exponent(v).ok_or_else(bad),
    }
}

/// Whether `s` was meant as a hex board: `0x` first, or more hex digits than a row of tiles has.
fn looks_hex(s: &str) -> bool {
    s.starts_with("0x")
        || s.starts_with("0X")
        || (s.len() >= 16 && s.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl FromStr for Board {
    type Err = BoardParseError;

    fn from_str(s: &str) -> Result<Board, BoardParseError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(BoardParseError::Empty);
        }
        let hex = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"));
        // 16 hex digits alone are a board too; more than 16 cannot be a row of tiles.
        let bare_hex = s.len() >= 16 && s.bytes().all(|b| b.is_ascii_hexdigit());
        if let Some(digits) = hex.or(bare_hex.then_some(s)) {
            // Digits only: from_str_radix would also take a sign.
            if digits.len() != 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(BoardParseError::Hex(s.to_string()));
            }
            return u64::from_str_radix(digits, 16)
                .map(Board::from_raw)
                .map_err(|_| BoardParseError::Hex(s.to_string()));
        }
        if let Some(unsigned) = s.strip_prefix(['+', '-'])
            && looks_hex(unsigned)
        {
            return Err(BoardParseError::Sign(s.to_string()));
        }
        let rows = rollsim_core::text::grid_rows(s);
        if let [row] = rows.as_slice()
            && let [word] = row.as_slice()
            && parse_tile(word, 0, 0).is_err()
        {
            return Err(BoardParseError::Word(s.to_string()));
        }
        let rows = if rows.len() == 1 {
            if rows[0].len() != 16 {
                return Err(BoardParseError::Cells(rows[0].len()));
            }
            rows[0].chunks(4).map(<[&str]>::to_vec).collect()
        } else {
            rows
        };
        if rows.len() != 4 {
            return Err(BoardParseError::Rows(rows.len()));
        }
        let mut cells = [0u8; 16];
        for (r, row) in rows.iter().enumerate() {
            if row.len() != 4 {
                return Err(BoardParseError::RowLength {
                    row: r + 1,
                    cells: row.len(),
                });
            }
            for (c, t) in row.iter().enumerate() {
                cells[4 * r + c] = parse_tile(t, r, c)?;
            }
        }
        Ok(Board::from_exponents(cells))
    }
}

impl Board {
    /// The raw word as `0x` and 16 hex digits, the form `FromStr` reads back.
    pub fn hex(self) -> String {
        format!("{:#018x}", self.raw)
    }

    /// The grid on one line, rows separated by ` / `, the form a shell argument takes.
    pub fn one_line(self) -> String {
        (0..4)
            .map(|r| {
                (0..4)
                    .map(|c| tile_text(self.get(4 * r + c)))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join(" / ")
    }
}

fn tile_text(e: u8) -> String {
    if e == 0 {
        ".".to_string()
    } else {
        (1u32 << e).to_string()
    }
}

/// The grid, right-aligned in columns of 6, one row per line.
impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in 0..4 {
            for c in 0..4 {
                write!(f, "{:>6}", tile_text(self.get(4 * r + c)))?;
            }
            if r < 3 {
                writeln!(f)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_round_trips() {
        let b: Board = "2 4 0 8\n16 . 32 64\n_ 128 256 512\n1024 2048 4096 32768"
            .parse()
            .unwrap();
        assert_eq!(b.get(0), 1);
        assert_eq!(b.get(15), 15);
        assert_eq!(b.get(4 * 2), 0);
        assert_eq!(b.to_string().parse::<Board>().unwrap(), b);
        assert_eq!(b.one_line().parse::<Board>().unwrap(), b);
        assert_eq!(b.hex().parse::<Board>().unwrap(), b);
        assert_eq!(
            "2,4,0,8 / 16,0,32,64 / 0,128,256,512 / 1024,2048,4096,32768"
                .parse::<Board>()
                .unwrap(),
            b
        );
    }

    #[test]
    fn hex_forms() {
        let b: Board = "0x0000000000000021".parse().unwrap();
        assert_eq!(b.get(0), 1);
        assert_eq!(b.get(1), 2);
        assert_eq!("0000000000000021".parse::<Board>().unwrap(), b);
        assert_eq!(b.hex(), "0x0000000000000021");
        assert!(matches!(
            "0x123".parse::<Board>(),
            Err(BoardParseError::Hex(_))
        ));
        assert!(matches!(
            "0xg000000000000000".parse::<Board>(),
            Err(BoardParseError::Hex(_))
        ));
    }

    #[test]
    fn bad_boards_say_what_is_wrong() {
        let e = |s: &str| s.parse::<Board>().unwrap_err().to_string();
        assert_eq!(e(""), "empty board text");
        assert!(
            e("2 4 0 3 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0")
                .contains("bad tile \"3\" at row 1, column 4")
        );
        assert!(e("2 4 0 65536 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0").contains("65536"));
        assert!(e("1 0 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0").contains("\"1\""));
        assert_eq!(
            e("2 4 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0"),
            "row 1 has 3 cells, expected 4"
        );
        assert_eq!(
            e("2 4 0 0 / 0 0 0 0 / 0 0 0 0"),
            "the board has 3 rows, expected 4"
        );
        assert_eq!(e("2 4 0 0 2"), "the board has 5 cells, expected 16");
        assert!(e("two 0 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0").contains("two"));
        assert_eq!(e("2"), "the board has 1 cell, expected 16");
        assert_eq!(
            e("2 0 0 0 / 0 / 0 0 0 0 / 0 0 0 0"),
            "row 2 has 1 cell, expected 4"
        );
        assert_eq!(e("2 0 0 0"), "the board has 4 cells, expected 16");
        // A sign is a tile's fault, not taken as part of a number.
        assert!(e("+2 0 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 0").contains("bad tile \"+2\""));
    }

    #[test]
    fn signed_and_single_word_boards_say_so() {
        let e = |s: &str| s.parse::<Board>().unwrap_err();
        for signed in [
            "+0x0000000000000021",
            "-0x0000000000000021",
            "+0X21",
            " -0000000000000021 ",
        ] {
            let err = e(signed);
            assert_eq!(err, BoardParseError::Sign(signed.trim().to_string()));
            assert!(err.to_string().contains("takes no sign"), "{err}");
        }
        for word in ["x21", "0y0000000000000021", "hello", "+", "2048!"] {
            assert_eq!(e(word), BoardParseError::Word(word.to_string()), "{word}");
            assert!(!e(word).to_string().contains("cells"));
        }
    }
}
