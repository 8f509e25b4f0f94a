//! What a network's weights are and how they were trained, stored in its file (version 2) so
//! that a player needs no flags to use it: the stages, the initial value, and each training
//! session's method.

use serde::{Deserialize, Serialize};

use super::NetworkError;
use crate::Board;

/// The most stage splits a network may have (so at most 4 stages).
pub const MAX_SPLITS: usize = 3;

/// How a training session sets each weight's learning rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    /// TD learning: every weight moves by `alpha / features` times the TD error.
    Fixed,
    /// Temporal coherence (Jaśkowski, Beal and Smith): that rate scaled, weight by weight, by
    /// `|E| / A`, the weight's accumulated error over its accumulated absolute error (1 before
    /// its first update). Weights whose errors keep one sign learn at the full rate; those
    /// whose errors cancel out slow down.
    Coherence,
}

impl Rate {
    pub fn name(self) -> &'static str {
        match self {
            Rate::Fixed => "td",
            Rate::Coherence => "tc",
        }
    }
}

/// One training session (a run of `2048 train`, or several resumed with the same method).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub rate: Rate,
    pub alpha: f32,
    /// 0: TD(0) online, each afterstate updated a move later. Above 0: TD(λ), each game's
    /// afterstates updated from its end backward toward their λ-returns.
    pub lambda: f32,
    /// The network's training games when the session started and when it ended.
    pub from: u64,
    pub to: u64,
    #[serde(flatten)]
    pub shaping: Shaping,
}

/// How a session's games started, beyond the beginning (shaping).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shaping {
    /// Carousel shaping: every other game started where an earlier one first held this tile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_at: Option<u32>,
    /// Midpoint restarts: a game longer than [`crate::train::MIDPOINT_MIN_MOVES`] moves went on
    /// from its middle afterstate with a new tile, again until a run was that short.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub midpoint: bool,
}

/// What the weights are and how they were trained.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// Stage splits as tile values, increasing: a board's stage is the number of them that its
    /// largest tile reaches, and each stage has its own weights (multi-stage networks). Empty:
    /// one stage.
    #[serde(default)]
    pub stages: Vec<u32>,
    /// The value every board had before training (optimistic initialisation when above 0),
    /// spread evenly over a board's features.
    #[serde(default)]
    pub init: f32,
    /// The training sessions, oldest first.
    #[serde(default)]
    pub training: Vec<Session>,
}

impl Recipe {
    /// The stage splits as exponents, checked: powers of two from 8 to 32768, increasing, at
    /// most [`MAX_SPLITS`].
    pub fn split_exponents(&self) -> Result<Vec<u8>, NetworkError> {
        let bad = |s: String| Err(NetworkError::Recipe(s));
        if self.stages.len() > MAX_SPLITS {
            return bad(format!(
                "{} stage splits (at most {MAX_SPLITS})",
                self.stages.len()
            ));
        }
        let mut out = Vec::with_capacity(self.stages.len());
        for &t in &self.stages {
            let Some(e) = crate::board::tile_exponent(t).filter(|&e| e >= 3) else {
                return bad(format!("stage split {t} is not a tile from 8 to 32768"));
            };
            if out.last().is_some_and(|&l| l >= e) {
                return bad(format!("stage splits {:?} do not increase", self.stages));
            }
            out.push(e);
        }
        if !self.init.is_finite() {
            return bad(format!("initial value {} is not finite", self.init));
        }
        Ok(out)
    }

    /// Records `games` more training games by `rate`, `alpha` and `lambda`, ending at `to`:
    /// the last session grows when it used the same method, otherwise a new one starts.
    pub fn record(
        &mut self,
        rate: Rate,
        alpha: f32,
        lambda: f32,
        shaping: Shaping,
        to: u64,
        games: u64,
    ) {
        match self.training.last_mut() {
            Some(s)
                if s.rate == rate
                    && s.alpha == alpha
                    && s.lambda == lambda
                    && s.shaping == shaping
                    && s.to + games == to =>
            {
                s.to = to;
            }
            _ => self.training.push(Session {
                rate,
                alpha,
                lambda,
                from: to - games,
                to,
                shaping,
            }),
        }
    }

    /// One line: "2 stages (split at 16384), init 0, 1000000 games of tc alpha 1 lambda 0.5".
    pub fn describe(&self) -> String {
        let mut parts = vec![match self.stages.len() {
            0 => "1 stage".to_string(),
            n => format!(
                "{} stages (split at {})",
                n + 1,
                self.stages
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }];
        parts.push(format!("init {}", self.init));
        for s in &self.training {
            parts.push(format!(
                "{} games of {} alpha {} lambda {}{}{}",
                s.to - s.from,
                s.rate.name(),
                s.alpha,
                s.lambda,
                s.shaping
                    .restart_at
                    .map_or(String::new(), |t| format!(" restarting at {t}")),
                if s.shaping.midpoint {
                    " restarting from midpoints"
                } else {
                    ""
                }
            ));
        }
        parts.join(", ")
    }
}

/// A board's stage under split exponents `splits`: how many of them its largest tile reaches.
#[inline]
pub fn stage_of(board: Board, splits: &[u8]) -> usize {
    splits
        .iter()
        .take_while(|&&e| board.has_exponent_at_least(e))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_are_checked_and_stages_counted() {
        let r = |stages: Vec<u32>| Recipe {
            stages,
            ..Recipe::default()
        };
        assert_eq!(r(vec![]).split_exponents().unwrap(), Vec::<u8>::new());
        assert_eq!(
            r(vec![8192, 16384]).split_exponents().unwrap(),
            vec![13, 14]
        );
        for bad in [
            vec![3000],
            vec![4],
            vec![65536],
            vec![16384, 8192],
            vec![8, 16, 32, 64],
        ] {
            assert!(r(bad.clone()).split_exponents().is_err(), "{bad:?}");
        }
        let b: Board = "8192 2 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 16384"
            .parse()
            .unwrap();
        assert_eq!(stage_of(b, &[13, 14]), 2);
        assert_eq!(stage_of(b, &[14, 15]), 1);
        assert_eq!(stage_of(b, &[15]), 0);
        assert_eq!(stage_of(b, &[]), 0);
    }

    #[test]
    fn sessions_extend_or_start_and_read_in_a_line() {
        let mut r = Recipe::default();
        let none = Shaping::default();
        let carousel = Shaping {
            restart_at: Some(16384),
            midpoint: false,
        };
        r.record(Rate::Fixed, 0.1, 0.0, none, 1000, 1000);
        r.record(Rate::Fixed, 0.1, 0.0, none, 3000, 2000);
        r.record(Rate::Coherence, 1.0, 0.5, carousel, 4000, 1000);
        let midpoint = Shaping {
            midpoint: true,
            ..none
        };
        r.record(Rate::Coherence, 1.0, 0.5, midpoint, 5000, 1000);
        assert_eq!(r.training.len(), 3);
        assert_eq!((r.training[0].from, r.training[0].to), (0, 3000));
        assert_eq!((r.training[1].from, r.training[1].to), (3000, 4000));
        assert_eq!(
            r.describe(),
            "1 stage, init 0, 3000 games of td alpha 0.1 lambda 0, 1000 games of tc alpha 1 \
             lambda 0.5 restarting at 16384, 1000 games of tc alpha 1 lambda 0.5 restarting \
             from midpoints"
        );
        // Sessions of older files, without the shaping fields, read as none.
        let old = r#"{"rate":"fixed","alpha":0.1,"lambda":0.0,"from":0,"to":10}"#;
        assert_eq!(serde_json::from_str::<Session>(old).unwrap().shaping, none);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<Recipe>(&json).unwrap(), r);
    }
}
