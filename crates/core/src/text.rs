//! Board text shared by the games: a grid a person can type.

/// The cells of a typed grid, row by row: rows are split by newlines, `/` or `|`, cells by
/// whitespace or commas; empty rows are dropped.
pub fn grid_rows(s: &str) -> Vec<Vec<&str>> {
    s.split(['\n', '/', '|'])
        .map(|line| {
            line.split(|c: char| c.is_whitespace() || c == ',')
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

/// `n` and a noun in its number: "1 thread", "2 threads".
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_cells() {
        assert_eq!(
            grid_rows("1 2,3\n\n4|5 / 6,,7"),
            [vec!["1", "2", "3"], vec!["4"], vec!["5"], vec!["6", "7"]]
        );
        assert!(grid_rows(" / \n").is_empty());
    }

    #[test]
    fn counts_agree_in_number() {
        assert_eq!(count(1, "thread"), "1 thread");
        assert_eq!(count(0, "thread"), "0 threads");
        assert_eq!(count(2, "game"), "2 games");
    }
}
