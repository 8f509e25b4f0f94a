//! Tile reach, defined once for every report (play, training blocks, experiment summaries):
//! the share of games whose largest tile reached each of 128 to 65536.

use std::collections::BTreeMap;

/// Exponents of the tiles reported: 2^7 = 128 to 2^16 = 65536. A nibble holds at most 32768;
/// a game reaches 65536 when its player merges two 32768 tiles, which ends it
/// ([`crate::Game::reached_exponent`]).
pub const EXPONENTS: std::ops::RangeInclusive<u8> = 7..=16;
/// The smallest tile a one-line text report shows: strong players part from 2048 on.
pub const SHOWN_FROM: u32 = 2048;

/// The exponent of the largest tile a game reached, from its final board's largest exponent:
/// 16 (65536) when it ended on a merge of two 32768 tiles (`overflow`).
pub fn reached_exponent(max_exponent: u8, overflow: bool) -> u8 {
    if overflow { 16 } else { max_exponent }
}

/// Games counted by the largest tile they reached.
#[derive(Clone, Debug, Default)]
pub struct Reached {
    games: u64,
    /// `at_least[k]`: games whose largest tile is at least 2^(7 + k).
    at_least: [u64; 10],
}

impl Reached {
    /// A game whose largest tile is 2^`max_exponent` (0: an empty board).
    pub fn add(&mut self, max_exponent: u8) {
        self.games += 1;
        for (e, n) in EXPONENTS.zip(&mut self.at_least) {
            *n += u64::from(max_exponent >= e);
        }
    }

    pub fn games(&self) -> u64 {
        self.games
    }

    /// Per tile, the games that reached it.
    pub fn counts(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        EXPONENTS.zip(&self.at_least).map(|(e, &n)| (1u32 << e, n))
    }

    /// Per tile, the 95% Wilson interval of the share of games that reached it.
    pub fn intervals95(&self) -> BTreeMap<u32, rollsim_core::stats::Interval> {
        use rollsim_core::stats::{Z95, wilson};
        self.counts()
            .map(|(t, n)| (t, wilson(n, self.games, Z95)))
            .collect()
    }

    /// Per tile, the share of games that reached it (0 with no games).
    pub fn rates(&self) -> BTreeMap<u32, f64> {
        let games = self.games.max(1) as f64;
        self.counts().map(|(t, n)| (t, n as f64 / games)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_count_for_every_tile_up_to_their_largest() {
        let mut r = Reached::default();
        for e in [0, 7, 11, 11, 16] {
            r.add(e);
        }
        let rates = r.rates();
        assert_eq!(rates.len(), 10);
        assert_eq!(
            (
                rates[&128],
                rates[&2048],
                rates[&4096],
                rates[&32768],
                rates[&65536]
            ),
            (0.8, 0.6, 0.2, 0.2, 0.2)
        );
        assert_eq!(Reached::default().rates()[&128], 0.0);
    }
}
