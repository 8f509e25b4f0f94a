//! The checker: replays a move sequence from a board, rejects any illegal move and confirms the
//! goal.
//!
//! It shares nothing with the solvers but the [`Board`] and [`Dir`] types: the replay works on
//! its own copy of the cells with its own row and column arithmetic, so a bug in the move code
//! the solvers use cannot hide itself here. Every solution any solver returns goes through
//! [`verify`] in the tests, and in the command line unless `--no-verify`.

use super::board::{Board, Dir};

/// Why a move sequence is not a solution.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error("move {index} ({letter}) is illegal: the blank is at row {row}, column {col}")]
    Illegal {
        /// 1-based position of the move in the sequence.
        index: usize,
        letter: char,
        row: usize,
        col: usize,
    },
    #[error("the {moves} moves end at {end}, not at the goal")]
    NotGoal { moves: usize, end: String },
}

/// The board after `moves`, or the first illegal move.
pub fn replay(board: &Board, moves: &[Dir]) -> Result<Vec<u8>, CheckError> {
    let w = board.width();
    let mut cells: Vec<u8> = board.cells().to_vec();
    let mut blank = cells
        .iter()
        .position(|&t| t == 0)
        .expect("a board has a blank");
    for (i, &d) in moves.iter().enumerate() {
        let (row, col) = (blank / w, blank % w);
        let (r, c) = match d {
            Dir::Up => (row.checked_sub(1), Some(col)),
            Dir::Down => (Some(row + 1).filter(|&r| r < w), Some(col)),
            Dir::Left => (Some(row), col.checked_sub(1)),
            Dir::Right => (Some(row), Some(col + 1).filter(|&c| c < w)),
        };
        let (Some(r), Some(c)) = (r, c) else {
            return Err(CheckError::Illegal {
                index: i + 1,
                letter: d.letter(),
                row: row + 1,
                col: col + 1,
            });
        };
        let to = r * w + c;
        cells.swap(blank, to);
        blank = to;
    }
    Ok(cells)
}

/// Ok when `moves` are all legal from `board` and end at the goal.
pub fn verify(board: &Board, moves: &[Dir]) -> Result<(), CheckError> {
    let end = replay(board, moves)?;
    let n = end.len();
    let goal = end
        .iter()
        .enumerate()
        .all(|(i, &t)| usize::from(t) == if i + 1 == n { 0 } else { i + 1 });
    if goal {
        Ok(())
    } else {
        Err(CheckError::NotGoal {
            moves: moves.len(),
            end: end
                .iter()
                .map(|&t| char::from_digit(u32::from(t), 16).unwrap_or('?'))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::parse_moves;

    #[test]
    fn accepts_solutions_and_rejects_the_rest() {
        let g = Board::goal(4);
        assert_eq!(verify(&g, &[]), Ok(()));
        let b = g.moved(Dir::Up).unwrap().moved(Dir::Left).unwrap();
        assert_eq!(verify(&b, &parse_moves("RD").unwrap()), Ok(()));
        assert!(matches!(
            verify(&b, &parse_moves("R").unwrap()),
            Err(CheckError::NotGoal { moves: 1, .. })
        ));
        assert_eq!(
            verify(&g, &parse_moves("UD D").unwrap()),
            Err(CheckError::Illegal {
                index: 3,
                letter: 'D',
                row: 4,
                col: 4
            })
        );
        assert!(verify(&g, &parse_moves("R").unwrap()).is_err());
        let top_left: Board = "_ 1 2 3 / 5 6 7 4 / 9 10 11 8 / 13 14 15 12"
            .parse()
            .unwrap();
        assert_eq!(verify(&top_left, &parse_moves("RRRDDD").unwrap()), Ok(()));
        for bad in ["U", "L"] {
            assert!(matches!(
                verify(&top_left, &parse_moves(bad).unwrap()),
                Err(CheckError::Illegal { index: 1, .. })
            ));
        }
        let e = verify(&g, &parse_moves("UUUU").unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "move 4 (U) is illegal: the blank is at row 1, column 4"
        );
    }

    /// Rosetta Code's "15 puzzle solver" task: this board, the same goal as ours, and a published
    /// optimal solution of 52 moves written as the directions the blank moves.
    #[test]
    fn a_published_solution_checks() {
        let b: Board = "15 14 1 6 / 9 11 4 12 / 0 10 7 3 / 13 8 5 2"
            .parse()
            .unwrap();
        let m = parse_moves("rrrulddluuuldrurdddrullulurrrddldluurddlulurruldrdrd").unwrap();
        assert_eq!(m.len(), 52);
        assert_eq!(verify(&b, &m), Ok(()));
        // A 3x3 board and its checks.
        let e: Board = "1 2 3 / 4 5 6 / 7 _ 8".parse().unwrap();
        assert_eq!(verify(&e, &[Dir::Right]), Ok(()));
        assert!(verify(&e, &[Dir::Down]).is_err());
    }
}
