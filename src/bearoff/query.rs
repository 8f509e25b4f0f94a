//! `rollsim bearoff query`: one position's distribution, or a race between two.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use serde::Serialize;

use crate::{OutputArgs, input_error};
use rollsim_bearoff::database::Database;
use rollsim_bearoff::one_sided::{PIPS_PER_ROLL, mean_sd};

use super::table_error;

#[derive(ClapArgs, Debug)]
pub struct QueryArgs {
    /// The database file.
    file: PathBuf,
    /// One position (its distribution), or two (the side on roll first: its winning chance).
    /// Checker counts from the 1-point up, e.g. 3,2,0,0,0,1.
    #[arg(num_args = 1..=2, required = true)]
    positions: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Serialize)]
struct PositionReport {
    position: String,
    index: u32,
    mean: f64,
    sd: f64,
    epc: f64,
    /// P(exactly k rolls), k = 0, 1, …
    distribution: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gammon_mean: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gammon_distribution: Option<Vec<f64>>,
}

#[derive(Serialize)]
struct RaceReport {
    on_roll: String,
    opponent: String,
    win: f64,
    /// "exact" from a two-sided table, or "one-sided estimate".
    method: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cubeful: Option<CubefulReport>,
}

/// Money equities of the side on roll, before its cube decision, per cube position; and the
/// decision with the cube centred.
#[derive(Serialize)]
struct CubefulReport {
    owned: f64,
    centred: f64,
    opponent_owns: f64,
    centred_action: &'static str,
    centred_equity: f64,
}

pub(super) fn query(a: QueryArgs) -> anyhow::Result<()> {
    let db = Database::open(&a.file)?;
    let space = db.space()?;
    let mut idx = Vec::new();
    let mut checkers = Vec::new();
    for p in &a.positions {
        let counts = space
            .parse(p)
            .map_err(|e| input_error(format!("bad position {p:?}: {e}")))?;
        idx.push(space.index(&counts));
        checkers.push(counts.iter().map(|&c| u32::from(c)).sum::<u32>());
    }
    if let [i] = idx[..] {
        let Some(entry) = db.one_sided(i) else {
            return Err(input_error(
                "a two-sided table needs two positions: the side on roll, then its opponent",
            ));
        };
        let (mean, sd) = entry.mean_sd();
        // Rolls to the first checker off mean something only with all 15 on the board.
        let gammon = entry.gammon.filter(|_| checkers[0] == 15);
        let r = PositionReport {
            position: a.positions[0].clone(),
            index: i,
            mean,
            sd,
            epc: mean * PIPS_PER_ROLL,
            gammon_mean: gammon.as_ref().map(|g| mean_sd(g).0),
            distribution: trim(entry.dist),
            gammon_distribution: gammon.map(trim),
        };
        return crate::output::emit(&r, a.output.json);
    }
    let race = db
        .race(idx[0], idx[1])
        .map_err(|e| table_error(&a.file, e))?;
    let cubeful = race.equities.map(|e| {
        let (action, equity) = e.decision(false);
        CubefulReport {
            owned: e.owned,
            centred: e.centred,
            opponent_owns: e.opponent_owns,
            centred_action: action.as_str(),
            centred_equity: equity,
        }
    });
    let (win, method) = (race.win, race.method);
    let r = RaceReport {
        on_roll: a.positions[0].clone(),
        opponent: a.positions[1].clone(),
        win,
        method,
        cubeful,
    };
    crate::output::emit(&r, a.output.json)
}

impl crate::output::Report for PositionReport {
    fn text(&self) {
        let r = self;
        outln!("position {} (index {})", r.position, r.index);
        outln!(
            "expected rolls {:.6}, sd {:.6}, effective pip count {:.3}",
            r.mean,
            r.sd,
            r.epc
        );
        print_distribution("rolls", &r.distribution);
        if let (Some(gm), Some(gd)) = (r.gammon_mean, &r.gammon_distribution) {
            outln!("first checker off: expected rolls {gm:.6}");
            print_distribution("rolls to first off", gd);
        }
    }
}

impl crate::output::Report for RaceReport {
    fn text(&self) {
        let r = self;
        outln!(
            "side on roll {} vs {}: wins {:.6} ({})",
            r.on_roll,
            r.opponent,
            r.win,
            r.method
        );
        if let Some(c) = &r.cubeful {
            outln!(
                "money equity before its cube decision: {:+.6} owning the cube, {:+.6} centred, \
                 {:+.6} when the opponent owns it",
                c.owned,
                c.centred,
                c.opponent_owns
            );
            outln!(
                "cube centred: {}, equity {:+.6}",
                c.centred_action,
                c.centred_equity
            );
        }
    }
}

/// The distribution without its trailing zeros.
fn trim(mut d: Vec<f64>) -> Vec<f64> {
    while d.len() > 1 && d.last() == Some(&0.0) {
        d.pop();
    }
    d
}

fn print_distribution(what: &str, d: &[f64]) {
    for (k, p) in d.iter().enumerate().filter(|(_, p)| **p > 0.0) {
        if *p >= 1e-4 {
            outln!("  {k:>3} {what}: {p:.6}");
        } else {
            outln!("  {k:>3} {what}: {p:.3e}");
        }
    }
}
