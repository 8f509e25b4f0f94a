//! Rings and their turns: a ring of cells turned as a loop carries its tiles round, and the
//! moves that turn one so that given tiles reach their goals.

use super::*;

/// The moves that turning `ring` takes to bring the tiles at `cells` to `goals`, with the blank
/// at `blank`, in the shorter direction; None if turning never does (0 if they are home).
pub(super) fn ring_turn_cost(ring: &[u8], cells: &[u8], blank: u8, goals: &[u8]) -> Option<u8> {
    if cells == goals {
        return Some(0);
    }
    let l = ring.len();
    let start = ring.iter().position(|&c| c == blank)?;
    let mut best: Option<u8> = None;
    for forward in [true, false] {
        let mut pos = cells.to_vec();
        let mut at = start;
        for moves in 1..=2 * l * l {
            let next = if forward {
                (at + 1) % l
            } else {
                (at + l - 1) % l
            };
            if let Some(t) = pos.iter().position(|&c| c == ring[next]) {
                pos[t] = ring[at];
            }
            at = next;
            if pos == goals {
                best = Some(best.map_or(moves as u8, |b| b.min(moves as u8)));
                break;
            }
        }
    }
    best
}

/// Every simple cycle of the 4x4 grid's cells (213 of them), each as its cells in order.
pub(super) fn cycles() -> &'static [Vec<u8>] {
    static CYCLES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CYCLES.get_or_init(|| {
        fn extend(start: usize, path: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
            let last = usize::from(*path.last().unwrap());
            for d in Dir::ALL {
                let Some(next) = d.step(last, W) else {
                    continue;
                };
                if next == start && path.len() >= 4 && path[1] < path[path.len() - 1] {
                    out.push(path.clone());
                } else if next > start && !path.contains(&(next as u8)) {
                    path.push(next as u8);
                    extend(start, path, out);
                    path.pop();
                }
            }
        }
        let mut out = Vec::new();
        for start in 0..16 {
            extend(start, &mut vec![start as u8], &mut out);
        }
        out
    })
}

/// Walks the blank (which must be on `ring`) around it, `forward` along the ring's order or
/// backward, until `done`; the moves, or None if that never happens within two full turns of
/// every tile.
pub(super) fn turn(
    board: &Board,
    ring: &[u8],
    forward: bool,
    done: impl Fn(&Board) -> bool,
) -> Option<(Board, Vec<Dir>)> {
    let l = ring.len();
    let mut b = *board;
    let mut moves = Vec::new();
    let mut at = ring.iter().position(|&c| usize::from(c) == b.blank())?;
    for _ in 0..2 * l * l {
        if done(&b) {
            return Some((b, moves));
        }
        let next = if forward {
            (at + 1) % l
        } else {
            (at + l - 1) % l
        };
        let dir = Dir::between(b.blank(), usize::from(ring[next]), W).expect("ring cells adjacent");
        b = b.moved(dir).expect("on the board");
        moves.push(dir);
        at = next;
    }
    done(&b).then_some((b, moves))
}

/// Turns `ring` in whichever direction finishes sooner.
pub(super) fn turn_shorter(
    board: &mut Board,
    ring: &[u8],
    done: impl Fn(&Board) -> bool,
    moves: &mut Vec<Dir>,
) {
    let a = turn(board, ring, true, &done);
    let b = turn(board, ring, false, &done);
    let (nb, m) = match (a, b) {
        (Some(a), Some(b)) => {
            if b.1.len() < a.1.len() {
                b
            } else {
                a
            }
        }
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => panic!("turning {ring:?} never finishes from {board:?}"),
    };
    *board = nb;
    moves.extend(m);
}

/// The loop a stage from 3 on turns: for the pairs, the 2x2 loop of the two goal cells and the
/// two below them; for the last stage the 2x4 loop of the last two rows.
pub(super) fn stage_ring(stage: usize) -> Vec<u8> {
    if stage == 5 {
        return RING_2X4.to_vec();
    }
    let (ga, gb) = (SPECS[stage].goals[0], SPECS[stage].goals[1]);
    vec![ga, gb, gb + W as u8, ga + W as u8]
}
