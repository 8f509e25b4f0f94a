//! Game records: a game written as its seed, index and moves (one JSON line each, from
//! `2048 play --record`), and replayed from them, move by move, to check that the moves were
//! legal and give the recorded score, largest tile and ending. A game's spawns come from its
//! own stream (`Stream::game(seed, index)`), so the seed and the moves determine it.

use serde::{Deserialize, Serialize};

use crate::board::tables;
use crate::{Dir, Game, GameState, PlayerKind};

/// The letter of each move in a record, in [`Dir::ALL`] order.
pub const LETTERS: [u8; 4] = *b"URDL";

/// One recorded game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameRecord {
    /// The random player's choices come from the game's own stream, which its spawns share,
    /// so its games replay by drawing them again; other players draw nothing from it.
    pub player: PlayerKind,
    pub seed: u64,
    pub game: u32,
    pub score: u64,
    /// The largest tile reached, 65536 for a game that ended on a merge of two 32768s.
    pub max_tile: u32,
    pub state: GameState,
    /// The moves, one letter each (`U`, `R`, `D`, `L`); an ending merge of two 32768s is the
    /// last.
    pub moves: String,
}

/// Why a record does not replay.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("move {at} is {letter:?}, not one of U, R, D, L")]
    Letter { at: usize, letter: char },
    #[error("move {at} ({dir}) does not change the board: not a legal move")]
    Illegal { at: usize, dir: Dir },
    #[error("move {at} is {dir}, but the random player's draw there is {drawn}")]
    NotDrawn { at: usize, dir: Dir, drawn: Dir },
    #[error("the game ended after move {at}, but the record has {total} moves")]
    Ended { at: usize, total: usize },
    #[error("replayed {what} is {replayed}, the record says {recorded}")]
    Differs {
        what: &'static str,
        replayed: String,
        recorded: String,
    },
}

/// The longest line read as a record: a game's moves are a letter each, and no game runs to a
/// million moves, so a longer line is not a record (a binary file with no newline, say), and is
/// refused before it fills memory.
pub const MAX_LINE: usize = 1 << 20;

/// Reads the next line of a records file into `line` (without its newline); `Ok(false)` at the
/// end. A line longer than [`MAX_LINE`] is an error of its own ([`LineError::TooLong`]).
pub fn next_line(
    reader: &mut impl std::io::BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<Result<bool, LineError>> {
    use std::io::{BufRead, Read};
    line.clear();
    let limit = MAX_LINE as u64 + 1;
    let n = reader.by_ref().take(limit).read_until(b'\n', line)?;
    if n == 0 {
        return Ok(Ok(false));
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if line.len() > MAX_LINE {
        return Ok(Err(LineError::TooLong));
    }
    Ok(Ok(true))
}

/// Why a line of a records file is not a game record.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("not text (invalid UTF-8 at byte {0} of the line)")]
    NotText(usize),
    #[error(
        "starts with a byte-order mark (U+FEFF), which JSON lines do not have; save the file \
         as UTF-8 without one"
    )]
    ByteOrderMark,
    #[error("longer than {MAX_LINE} bytes, which no game record is")]
    TooLong,
    #[error("not a game record: {0}")]
    Json(String),
}

/// Parses one line of a records file: `None` for a blank line (which `2048 play --record`
/// never writes, but an editor may leave at the end), else the record it holds.
pub fn parse_line(line: &[u8]) -> Result<Option<GameRecord>, LineError> {
    let text = std::str::from_utf8(line).map_err(|e| LineError::NotText(e.valid_up_to()))?;
    if text.starts_with('\u{feff}') {
        return Err(LineError::ByteOrderMark);
    }
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(text)
        .map(Some)
        .map_err(|e| LineError::Json(e.to_string()))
}

impl GameRecord {
    /// The record of a finished game played with its moves logged ([`Game::log_moves`]); `None`
    /// when they were not.
    pub fn of(player: PlayerKind, seed: u64, g: &Game) -> Option<GameRecord> {
        Some(GameRecord {
            player,
            seed,
            game: g.index,
            score: g.score,
            max_tile: reached_tile(g),
            state: g.state,
            moves: String::from_utf8(g.move_log()?.to_vec()).expect("letters are ASCII"),
        })
    }

    /// Plays the record's moves on its game from the start, checking each, then the score, the
    /// largest tile and how the game stands.
    pub fn replay(&self) -> Result<Game, ReplayError> {
        let mut g = Game::new(self.seed, self.game);
        let t = tables();
        let total = self.moves.len();
        for (at, letter) in self.moves.bytes().enumerate() {
            let Some(k) = LETTERS.iter().position(|&l| l == letter) else {
                return Err(ReplayError::Letter {
                    at: at + 1,
                    letter: char::from(letter),
                });
            };
            if g.is_running() && g.board.is_game_over() {
                g.state = GameState::Over;
            }
            if !g.is_running() {
                return Err(ReplayError::Ended { at, total });
            }
            let dir = Dir::from_index(k);
            let m = g.board.slide_with(t, dir);
            if m.board == g.board {
                return Err(ReplayError::Illegal { at: at + 1, dir });
            }
            if self.player == PlayerKind::Random
                && let Some((drawn, _)) = g.random_move()
                && drawn != dir
            {
                return Err(ReplayError::NotDrawn {
                    at: at + 1,
                    dir,
                    drawn,
                });
            }
            g.play(m);
        }
        if g.is_running() && g.board.is_game_over() {
            g.state = GameState::Over;
        }
        let checks = [
            ("score", g.score.to_string(), self.score.to_string()),
            (
                "largest tile",
                reached_tile(&g).to_string(),
                self.max_tile.to_string(),
            ),
            (
                "ending",
                format!("{:?}", g.state),
                format!("{:?}", self.state),
            ),
        ];
        match checks.into_iter().find(|(_, a, b)| a != b) {
            Some((what, replayed, recorded)) => Err(ReplayError::Differs {
                what,
                replayed,
                recorded,
            }),
            None => Ok(g),
        }
    }
}

/// The largest tile a game reached (0 for an empty board).
fn reached_tile(g: &Game) -> u32 {
    match g.reached_exponent() {
        0 => 0,
        e => 1 << e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CpuEngine;
    use crate::play::{PlayConfig, Player, play_batch};

    fn recorded_games(player: Player, games: u32) -> Vec<GameRecord> {
        let config = PlayConfig {
            record: true,
            ..PlayConfig::new(player, games, 7)
        };
        let played = play_batch(&config, &mut CpuEngine, &|_| {}).unwrap();
        let kind = config.player.kind();
        played
            .games
            .iter()
            .map(|g| GameRecord::of(kind, 7, g).unwrap())
            .collect()
    }

    #[test]
    fn lines_that_are_not_records_say_why() {
        let r = &recorded_games(Player::Random, 1)[0];
        let line = serde_json::to_string(r).unwrap();
        assert_eq!(parse_line(line.as_bytes()).unwrap().as_ref(), Some(r));
        assert_eq!(parse_line(b"").unwrap(), None);
        assert_eq!(parse_line(b"  \r").unwrap(), None);
        assert_eq!(
            parse_line(&[b'{', 0xff, 0xfe]).unwrap_err(),
            LineError::NotText(1)
        );
        let bom = format!("\u{feff}{line}");
        assert_eq!(
            parse_line(bom.as_bytes()).unwrap_err(),
            LineError::ByteOrderMark
        );
        assert!(matches!(
            parse_line(b"{\"seed\": 1}").unwrap_err(),
            LineError::Json(_)
        ));
    }

    #[test]
    fn lines_are_read_up_to_a_limit() {
        let text = format!("a\n\nb{}", "c".repeat(MAX_LINE));
        let mut reader = std::io::BufReader::new(text.as_bytes());
        let mut line = Vec::new();
        assert_eq!(next_line(&mut reader, &mut line).unwrap(), Ok(true));
        assert_eq!(line, b"a");
        assert_eq!(next_line(&mut reader, &mut line).unwrap(), Ok(true));
        assert_eq!(line, b"");
        assert_eq!(
            next_line(&mut reader, &mut line).unwrap(),
            Err(LineError::TooLong)
        );
        let mut short = std::io::BufReader::new(&b"last"[..]);
        assert_eq!(next_line(&mut short, &mut line).unwrap(), Ok(true));
        assert_eq!(line, b"last");
        assert_eq!(next_line(&mut short, &mut line).unwrap(), Ok(false));
    }

    #[test]
    fn recorded_games_replay_and_altered_ones_do_not() {
        let mut records = recorded_games(Player::Random, 20);
        let mc = Player::Mc {
            rollouts: 3,
            objective: crate::Objective::Score,
            spending: crate::play::Spending::default(),
        };
        records.extend(recorded_games(mc, 3));
        for r in &records {
            let g = r.replay().unwrap();
            assert_eq!(g.moves as usize, r.moves.len());
            assert!(!g.is_running());
            // Through JSON, as the file holds it.
            let line = serde_json::to_string(r).unwrap();
            assert_eq!(serde_json::from_str::<GameRecord>(&line).unwrap(), *r);
        }
        let r = &records[0];
        let bad = |f: &dyn Fn(&mut GameRecord)| {
            let mut x = r.clone();
            f(&mut x);
            x.replay().unwrap_err()
        };
        assert!(matches!(
            bad(&|x| x.score += 4),
            ReplayError::Differs { what: "score", .. }
        ));
        assert!(matches!(
            bad(&|x| x.moves.push('U')),
            ReplayError::Ended { .. }
        ));
        assert!(matches!(
            bad(&|x| x.moves.insert(3, 'x')),
            ReplayError::Letter { at: 4, .. }
        ));
        assert!(matches!(
            bad(&|x| x.game += 1),
            ReplayError::Illegal { .. }
                | ReplayError::NotDrawn { .. }
                | ReplayError::Differs { .. }
                | ReplayError::Ended { .. }
        ));
        // A move that leaves the board as it is.
        let mut x = r.clone();
        let g = Game::new(x.seed, x.game);
        let stuck = Dir::ALL
            .iter()
            .position(|&d| g.board.slide(d).board == g.board);
        if let Some(k) = stuck {
            x.moves
                .replace_range(0..1, &char::from(LETTERS[k]).to_string());
            assert!(matches!(
                x.replay().unwrap_err(),
                ReplayError::Illegal { at: 1, .. }
            ));
        }
    }
}
