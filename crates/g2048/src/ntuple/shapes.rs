//! Tuple shapes: the standard 4x6-tuple network's, a small one for tests and quick runs, and
//! the checks every network's shapes pass.

use super::*;

/// The classic 4x6-tuple network (Szubert & Jaśkowski's successors; TDL2048+): two straight
/// 6-cell shapes and two 2x3 rectangles. 4 x 16^6 weights, 32 features a board.
pub fn standard_tuples() -> Vec<Vec<u8>> {
    vec![
        vec![0, 1, 2, 3, 4, 5],
        vec![4, 5, 6, 7, 8, 9],
        vec![0, 1, 2, 4, 5, 6],
        vec![4, 5, 6, 8, 9, 10],
    ]
}

/// A small network for tests and quick experiments: the outer and inner rows and the corner,
/// edge and centre 2x2 squares (Szubert & Jaśkowski's 4-tuples, up to symmetry). 5 x 16^4
/// weights (1.25 MiB as f32), 40 features a board.
pub fn small_tuples() -> Vec<Vec<u8>> {
    vec![
        vec![0, 1, 2, 3],
        vec![4, 5, 6, 7],
        vec![0, 1, 4, 5],
        vec![1, 2, 5, 6],
        vec![5, 6, 9, 10],
    ]
}

/// Checks tuple shapes; returns the number of weights they need.
pub(super) fn check_tuples(tuples: &[Vec<u8>]) -> Result<usize, NetworkError> {
    let bad = |s: String| Err(NetworkError::Tuples(s));
    if tuples.is_empty() || tuples.len() > MAX_TUPLES {
        return bad(format!(
            "{} tuples (1 to {MAX_TUPLES} allowed)",
            tuples.len()
        ));
    }
    let mut total = 0usize;
    for (t, cells) in tuples.iter().enumerate() {
        if cells.is_empty() || cells.len() > MAX_CELLS {
            return bad(format!(
                "tuple {t} has {} cells (1 to {MAX_CELLS} allowed)",
                cells.len()
            ));
        }
        if let Some(c) = cells.iter().find(|&&c| c >= 16) {
            return bad(format!("tuple {t} names cell {c} (cells are 0 to 15)"));
        }
        if (1..cells.len()).any(|j| cells[..j].contains(&cells[j])) {
            return bad(format!("tuple {t} names a cell twice: {cells:?}"));
        }
        total += 1 << (4 * cells.len());
    }
    if total > MAX_WEIGHTS {
        return bad(format!(
            "{total} weights in all (at most {MAX_WEIGHTS} allowed)"
        ));
    }
    Ok(total)
}

/// The weights a network of `tuples` and `recipe`'s stages holds, both checked.
pub(super) fn weights_needed(tuples: &[Vec<u8>], recipe: &Recipe) -> Result<usize, NetworkError> {
    let per_stage = check_tuples(tuples)?;
    let stages = recipe.split_exponents()?.len() + 1;
    match per_stage.checked_mul(stages) {
        Some(n) if n <= MAX_WEIGHTS => Ok(n),
        _ => Err(NetworkError::Tuples(format!(
            "{stages} stages of {per_stage} weights (at most {MAX_WEIGHTS} in all)"
        ))),
    }
}
