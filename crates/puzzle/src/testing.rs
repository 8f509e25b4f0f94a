//! Helpers shared by the puzzle's unit tests.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::board::{Board, Dir};
use super::ida::PdbHeuristic;
use super::pdb::{Partition, PatternDb};
use rollsim_core::rng::Stream;

/// The heuristic of a small partition, built in memory once per test process.
pub fn heuristic(p: Partition) -> &'static PdbHeuristic {
    static P44: OnceLock<PdbHeuristic> = OnceLock::new();
    static P555: OnceLock<PdbHeuristic> = OnceLock::new();
    let cell = match p {
        Partition::P44 => &P44,
        Partition::P555 => &P555,
        _ => panic!("tests use the small partitions only"),
    };
    cell.get_or_init(|| {
        PdbHeuristic::new(
            p.patterns()
                .iter()
                .map(|t| PatternDb::build(p.width(), t, &|_| {}))
                .collect(),
        )
    })
}

/// Every solvable board `width` wide (3 only: 181,440 boards) with its breadth-first distance.
pub fn bfs_distances(width: usize) -> &'static HashMap<Board, u8> {
    assert_eq!(width, 3, "a full breadth-first search is for the 8-puzzle");
    static D: OnceLock<HashMap<Board, u8>> = OnceLock::new();
    D.get_or_init(|| {
        let goal = Board::goal(3);
        let mut dist = HashMap::with_capacity(181_440);
        dist.insert(goal, 0u8);
        let mut level = vec![goal];
        let mut d = 0;
        while !level.is_empty() {
            d += 1;
            let mut next = Vec::new();
            for b in &level {
                for dir in Dir::ALL {
                    if let Some(nb) = b.moved(dir) {
                        dist.entry(nb).or_insert_with(|| {
                            next.push(nb);
                            d
                        });
                    }
                }
            }
            level = next;
        }
        dist
    })
}

/// A random walk of `steps` moves from `board`, never undoing the previous move.
pub fn scramble(board: &Board, steps: usize, seed: u64) -> Board {
    let mut rng = Stream::new(seed, [0, 0, 0xABC]);
    let mut b = *board;
    let mut prev: Option<Dir> = None;
    let mut done = 0;
    while done < steps {
        let d = Dir::ALL[rng.below(4) as usize];
        if prev == Some(d.opposite()) {
            continue;
        }
        if b.apply(d) {
            prev = Some(d);
            done += 1;
        }
    }
    b
}
