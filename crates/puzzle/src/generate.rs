//! Random solvable boards, uniformly distributed, reproducible from a seed.
//!
//! Board `i` of seed `s` is drawn from the Philox stream `Stream::new(s, [i, 0, 3 << 28 | n])`
//! (`n` the number of cells, 16 or 9). The top four bits of the last counter word name the
//! stream's purpose across rollsim: 1 and 2 are 2048's games and rollouts
//! ([`rollsim_core::rng::StreamKind`]), 3 is the puzzle's boards, so no puzzle stream shares a counter
//! with a 2048 stream. A board depends only on the seed and its index, never on the thread that
//! draws it.
//!
//! The draw: a Fisher-Yates shuffle of the cells (exactly uniform over all `n!` arrangements,
//! [`Stream::below`] being exact), then, if the arrangement is unsolvable, the tiles in its first
//! two non-blank cells are swapped. That swap keeps the blank where it is, so it is an
//! involution that flips the parity: it maps the unsolvable arrangements one to one onto the
//! solvable ones, and every solvable board has probability exactly `2 / n!`.

use super::board::Board;
use rollsim_core::rng::{Stream, StreamKind};

/// The stream board `index` of `seed` is drawn from, for a board of `cells` cells.
pub fn board_stream(seed: u64, index: u32, cells: u32) -> Stream {
    Stream::new(seed, [index, 0, (StreamKind::Puzzle as u32) << 28 | cells])
}

/// Board `index` of `seed`, `width` wide (3 or 4): uniform over the solvable boards.
pub fn random_board(seed: u64, index: u32, width: usize) -> Board {
    let n = width * width;
    let mut rng = board_stream(seed, index, n as u32);
    let mut cells: Vec<u8> = (0..n as u8).collect();
    for i in (1..n).rev() {
        let j = rng.below(i as u32 + 1) as usize;
        cells.swap(i, j);
    }
    let board = Board::from_cells(&cells).expect("a permutation");
    if board.is_solvable() {
        return board;
    }
    let mut tiles = (0..n).filter(|&i| cells[i] != 0);
    let (a, b) = (tiles.next().unwrap(), tiles.next().unwrap());
    cells.swap(a, b);
    let board = Board::from_cells(&cells).expect("a permutation");
    debug_assert!(board.is_solvable());
    board
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_are_solvable_reproducible_and_distinct() {
        let boards: Vec<Board> = (0..2000).map(|i| random_board(9, i, 4)).collect();
        assert!(boards.iter().all(Board::is_solvable));
        assert_eq!(random_board(9, 17, 4), boards[17]);
        assert_ne!(random_board(10, 17, 4), boards[17]);
        let distinct: std::collections::HashSet<_> = boards.iter().collect();
        assert_eq!(distinct.len(), boards.len());
        assert!((0..500).all(|i| random_board(1, i, 3).is_solvable()));
    }

    /// Every solvable 3x3 board equally likely: a chi-square over all 181,440 of them would need
    /// millions of draws, so check the marginals that a biased fix-up would skew: the cell of the
    /// blank, of tile 1 and the pair (cell 0, cell 1) contents.
    #[test]
    fn marginals_are_uniform() {
        let draws = 200_000u32;
        let mut blank = [0u32; 16];
        let mut one = [0u32; 16];
        let mut first_two = vec![0u32; 256];
        for i in 0..draws {
            let b = random_board(3, i, 4);
            blank[b.blank()] += 1;
            one[b.find(1)] += 1;
            first_two[usize::from(b.tile(0)) * 16 + usize::from(b.tile(1))] += 1;
        }
        let chi2 = |counts: &[u32], cells: usize| {
            let e = f64::from(draws) / cells as f64;
            counts
                .iter()
                .filter(|&&c| c > 0)
                .map(|&c| (f64::from(c) - e).powi(2) / e)
                .sum::<f64>()
        };
        // 15 degrees of freedom: 0.999 quantile 37.7. 239 (ordered pairs): 0.999 quantile ~ 320.
        assert!(chi2(&blank, 16) < 37.7, "{blank:?}");
        assert!(chi2(&one, 16) < 37.7, "{one:?}");
        assert_eq!(first_two.iter().filter(|&&c| c > 0).count(), 240);
        assert!(chi2(&first_two, 240) < 320.0);
    }
}
