//! Rollout-count sweeps of the Monte Carlo player (`rollsim 2048 experiment`): resumable
//! results files, shards and their merge, and the summary with confidence intervals.
//!
//! A results file is JSON lines: a [`Header`] naming the parameters, then one [`Record`] per
//! finished game, appended (and flushed) as games finish. Game `i` of sweep point `N` is game
//! `i` of `rollsim 2048 play --player mc --rollouts N` with the same seed and objective, so a
//! record depends only on (seed, objective, N, i): never on shards, batches or the backend.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{File, OpenOptions};

use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::play::{Effort, Game, GameState, Objective, Spending, play_mc_games};
use super::reach::Reached;
use super::rollout::RolloutEngine;
use rollsim_core::progress::Progress;
use rollsim_core::stats::{Histogram, Interval, Z95, wilson};

/// The `format` of a results file's header.
pub const FORMAT: &str = "rollsim-2048-experiment/1";

/// Bad input about an experiment (a bad shard, a results file of other parameters, shards that
/// do not fit together): the command line reports it with exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ExperimentError(pub String);

fn bad(msg: impl Into<String>) -> anyhow::Error {
    ExperimentError(msg.into()).into()
}

/// Shard `index` of `count`: the games whose index is `index` mod `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    pub fn contains(self, game: u32) -> bool {
        game % self.count == self.index
    }

    /// How many of games `0..games` the shard holds, without counting them one by one (a
    /// header may name four billion games).
    pub fn games_in(self, games: u32) -> u64 {
        u64::from(games / self.count) + u64::from(games % self.count > self.index)
    }

    /// The shard's games in `range`, ascending.
    pub fn games(self, range: std::ops::Range<u32>) -> impl Iterator<Item = u32> {
        let first = range
            .start
            .saturating_add((self.index + self.count - range.start % self.count) % self.count);
        (first..range.end).step_by(self.count as usize)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ExperimentError;

    fn from_str(s: &str) -> Result<Shard, ExperimentError> {
        let err = |why: &str| ExperimentError(format!("bad shard {s:?}: {why}"));
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| err("expected INDEX/COUNT, e.g. 0/4"))?;
        let index: u32 = i.trim().parse().map_err(|_| err("INDEX is not a number"))?;
        let count: u32 = n.trim().parse().map_err(|_| err("COUNT is not a number"))?;
        if count == 0 {
            return Err(err("COUNT must be at least 1"));
        }
        if index >= count {
            return Err(err(
                "INDEX must be below COUNT (shards are numbered from 0)",
            ));
        }
        Ok(Shard { index, count })
    }
}

impl Serialize for Shard {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Shard {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Shard, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Parses a rollout list such as `10,100,1000`: positive counts, at least one, no repeats.
pub fn parse_rollouts(s: &str) -> Result<Vec<u32>, ExperimentError> {
    let err = |why: String| ExperimentError(format!("bad --rollouts {s:?}: {why}"));
    let mut list = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let n: u32 = part
            .parse()
            .map_err(|_| err(format!("{part:?} is not a rollout count")))?;
        if n == 0 {
            return Err(err("rollout counts must be at least 1".into()));
        }
        if list.contains(&n) {
            return Err(err(format!("{n} appears twice")));
        }
        list.push(n);
    }
    if list.is_empty() {
        return Err(err("the list is empty (give e.g. 10,100,1000)".into()));
    }
    Ok(list)
}

/// The first line of a results file: what the games are.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub seed: u64,
    pub objective: Objective,
    /// Games per sweep point (all shards together).
    pub games: u32,
    /// Rollouts per move of each sweep point, in the order played.
    pub rollouts: Vec<u32>,
    /// How each move's rollouts are spent (left out of the file when plain).
    #[serde(default, skip_serializing_if = "Spending::is_plain")]
    pub spending: Spending,
    pub shard: Shard,
}

impl Header {
    pub fn new(
        seed: u64,
        objective: Objective,
        spending: Spending,
        games: u32,
        rollouts: Vec<u32>,
        shard: Shard,
    ) -> Self {
        Header {
            format: FORMAT.to_string(),
            seed,
            objective,
            games,
            rollouts,
            spending,
            shard,
        }
    }

    /// Checks the parameters themselves.
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.format != FORMAT {
            return Err(bad(format!(
                "unknown results format {:?} (expected {FORMAT:?})",
                self.format
            )));
        }
        if self.games == 0 {
            return Err(bad("--games must be at least 1"));
        }
        if self.rollouts.is_empty() || self.rollouts.contains(&0) {
            return Err(bad("the rollout list must hold at least one count, none 0"));
        }
        if let Some((i, n)) = self
            .rollouts
            .iter()
            .enumerate()
            .find(|&(i, n)| self.rollouts[..i].contains(n))
        {
            return Err(bad(format!(
                "the rollout list names {n} twice (the second time at place {})",
                i + 1
            )));
        }
        Ok(())
    }

    /// The same experiment, whatever the shard.
    fn same_sweep(&self, other: &Header) -> bool {
        Header {
            shard: Shard::ALL,
            ..self.clone()
        } == Header {
            shard: Shard::ALL,
            ..other.clone()
        }
    }

    /// Every (N, game) of this shard, in play order.
    pub fn games_of_shard(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.rollouts
            .iter()
            .flat_map(move |&n| self.shard.games(0..self.games).map(move |g| (n, g)))
    }
}

/// One finished game, a line of a results file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Rollouts per move.
    pub n: u32,
    /// The game's index under the seed.
    pub game: u32,
    pub score: u64,
    pub max_tile: u32,
    pub moves: u32,
    /// Stopped because the chosen move would have merged two 32768 tiles.
    pub overflow: bool,
    /// Rollouts played to choose the game's moves (0 in files written before it was kept).
    #[serde(default)]
    pub rollouts: u64,
    /// Moves those rollouts simulated.
    #[serde(default)]
    pub simulated_moves: u64,
}

impl Record {
    pub fn of(n: u32, g: &Game, effort: Effort) -> Record {
        let e = g.board.max_exponent();
        Record {
            n,
            game: g.index,
            score: g.score,
            max_tile: if e == 0 { 0 } else { 1 << e },
            moves: g.moves,
            overflow: g.state == GameState::Overflow,
            rollouts: effort.rollouts,
            simulated_moves: effort.simulated_moves,
        }
    }

    fn line(&self) -> String {
        let mut s = serde_json::to_string(self).expect("a record serializes");
        s.push('\n');
        s
    }
}

fn header_line(h: &Header) -> String {
    let mut s = serde_json::to_string(h).expect("a header serializes");
    s.push('\n');
    s
}

/// A results file as read: its header, its records, and whether its last line was cut short
/// (an interrupted write; that line is left out).
#[derive(Debug)]
pub struct ResultsFile {
    pub header: Header,
    pub records: Vec<Record>,
    pub truncated: bool,
}

/// The largest results file read: a record is a few hundred bytes, so this is millions of
/// games, and the file is read whole.
const MAX_RESULTS_BYTES: u64 = 4 << 30;

/// Reads a results file. An unterminated last line that does not parse is an interrupted write
/// and is dropped; any other bad line is an error. The records must belong to the header's
/// sweep and shard, each once.
pub fn read_results(path: &Path) -> anyhow::Result<ResultsFile> {
    let text = rollsim_core::files::read_input_text(path, MAX_RESULTS_BYTES)?;
    parse_results(&text).map_err(|e| match e.downcast::<ExperimentError>() {
        Ok(ExperimentError(m)) => bad(format!("{}: {m}", path.display())),
        Err(e) => e,
    })
}

fn parse_results(text: &str) -> anyhow::Result<ResultsFile> {
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut truncated = false;
    if let Some(last) = lines.last()
        && !last.ends_with('\n')
    {
        // Even a cut line that happens to parse is dropped: its game is replayed.
        truncated = true;
        lines.pop();
    }
    let Some(first) = lines.first() else {
        return Err(bad(
            "no header line (not a results file of `rollsim 2048 experiment`)",
        ));
    };
    let header: Header = serde_json::from_str(first).map_err(|e| {
        bad(format!(
            "line 1 is not an experiment header ({e}); not a results file of `rollsim 2048 experiment`"
        ))
    })?;
    header.validate()?;
    let mut seen = BTreeSet::new();
    let mut records = Vec::with_capacity(lines.len() - 1);
    for (i, line) in lines.iter().enumerate().skip(1) {
        let r: Record = serde_json::from_str(line)
            .map_err(|e| bad(format!("line {}: not a game record: {e}", i + 1)))?;
        if !header.rollouts.contains(&r.n)
            || r.game >= header.games
            || !header.shard.contains(r.game)
        {
            return Err(bad(format!(
                "line {}: game {} at {} rollouts is not part of this experiment (shard {})",
                i + 1,
                r.game,
                r.n,
                header.shard
            )));
        }
        if !seen.insert((r.n, r.game)) {
            return Err(bad(format!(
                "line {}: game {} at {} rollouts appears twice",
                i + 1,
                r.game,
                r.n
            )));
        }
        records.push(r);
    }
    Ok(ResultsFile {
        header,
        records,
        truncated,
    })
}

/// Writes `contents` to `path` atomically (see [`rollsim_core::files::write_atomically`]).
fn write_atomic(path: &Path, contents: &str) -> anyhow::Result<()> {
    rollsim_core::files::write_atomically(path, |w| w.write_all(contents.as_bytes()))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

/// A results file open for appending, with the games it already holds.
pub struct Results {
    path: PathBuf,
    file: File,
    /// Held while the file is written: a second writer is refused.
    _lock: rollsim_core::files::WriteLock,
    pub done: Vec<Record>,
    /// Whether the file held games from an earlier run.
    pub resumed: bool,
    /// Whether an interrupted last line was dropped.
    pub repaired: bool,
}

impl Results {
    /// Opens `path` for the experiment `header`: creates it (header line only) when missing or
    /// empty; otherwise checks its header is `header` (else an [`ExperimentError`]), rewrites it
    /// without an interrupted last line if there is one, and continues it.
    pub fn open(path: &Path, header: &Header) -> anyhow::Result<Results> {
        header.validate()?;
        let lock = rollsim_core::files::lock_for_writing(path)?;
        let exists = std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
        let (done, repaired) = if exists {
            let old = read_results(path)?;
            if old.header != *header {
                return Err(bad(format!(
                    "{} holds a different experiment:\n  file:    {}\n  this run: {}\n\
                     rerun with the file's parameters, or give another results file",
                    path.display(),
                    serde_json::to_string(&old.header)?,
                    serde_json::to_string(header)?
                )));
            }
            if old.truncated {
                let mut text = header_line(&old.header);
                for r in &old.records {
                    text.push_str(&r.line());
                }
                write_atomic(path, &text)?;
            }
            (old.records, old.truncated)
        } else {
            write_atomic(path, &header_line(header))?;
            (Vec::new(), false)
        };
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
        Ok(Results {
            path: path.to_path_buf(),
            file,
            _lock: lock,
            resumed: !done.is_empty(),
            done,
            repaired,
        })
    }

    /// Appends records in one write, flushed to disk.
    pub fn append(&mut self, records: &[Record]) -> anyhow::Result<()> {
        let text: String = records.iter().map(Record::line).collect();
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", self.path.display()))?;
        self.done.extend_from_slice(records);
        Ok(())
    }

    /// The games of `header`'s shard still to play, per sweep point in order.
    pub fn pending(&self, header: &Header) -> Vec<(u32, u64)> {
        header
            .rollouts
            .iter()
            .map(|&n| {
                let done = self.done.iter().filter(|r| r.n == n).count() as u64;
                (n, header.shard.games_in(header.games) - done)
            })
            .filter(|&(_, g)| g > 0)
            .collect()
    }
}

/// Games played in flight together: a block at a time, so that memory does not grow with the
/// header's games, and enough to keep a GPU's batches full.
const BLOCK: u32 = 1 << 16;

/// Plays every game of `header`'s shard missing from the results file at `path`, one sweep
/// point after another, each point's games in lockstep, appending each step's finished games.
/// Each point is a phase of `progress`, in games. Returns the rollouts played.
pub fn run(
    header: &Header,
    results: &mut Results,
    engine: &mut dyn RolloutEngine,
    progress: &dyn Progress,
) -> anyhow::Result<u64> {
    let mut rollouts = 0;
    let done: BTreeSet<(u32, u32)> = results.done.iter().map(|r| (r.n, r.game)).collect();
    for (n, count) in results.pending(header) {
        progress.start(count, &format!("N={n} ({count} games)"));
        for first in (0..header.games).step_by(BLOCK as usize) {
            let end = first.saturating_add(BLOCK).min(header.games);
            let games: Vec<u32> = header
                .shard
                .games(first..end)
                .filter(|&g| !done.contains(&(n, g)))
                .collect();
            if games.is_empty() {
                continue;
            }
            let (_, r) = play_mc_games(
                engine,
                header.seed,
                games.iter().map(|&g| Game::new(header.seed, g)).collect(),
                n,
                header.objective,
                header.spending,
                &mut |ended| {
                    let records: Vec<Record> =
                        ended.iter().map(|&(g, e)| Record::of(n, g, e)).collect();
                    results.append(&records)?;
                    progress.inc(records.len() as u64);
                    Ok(())
                },
            )?;
            rollouts += r;
        }
        progress.finish();
    }
    Ok(rollouts)
}

/// The text of a complete, unsharded results file: the header (shard 0/1) and the records
/// sorted by (N, game).
pub fn canonical_text(header: &Header, records: &[Record]) -> String {
    let mut records = records.to_vec();
    records.sort_by_key(|r| (r.n, r.game));
    let mut text = header_line(&Header {
        shard: Shard::ALL,
        ..header.clone()
    });
    for r in &records {
        text.push_str(&r.line());
    }
    text
}

/// Merges the results files of the shards of one experiment into `out`: checks that their
/// headers name the same sweep, that no game appears twice, and that every game is there (or
/// names the missing ones), then writes the unsharded file, sorted. Returns the games written.
pub fn merge(out: &Path, inputs: &[PathBuf]) -> anyhow::Result<usize> {
    if inputs.is_empty() {
        return Err(bad("merge needs at least one results file"));
    }
    // The output is written over: it must not be one of the files it is made from.
    if let Ok(o) = std::fs::canonicalize(out)
        && let Some(p) = inputs
            .iter()
            .find(|p| std::fs::canonicalize(p).is_ok_and(|p| p == o))
    {
        return Err(bad(format!(
            "{} is both the output and an input of the merge; give another output file",
            p.display()
        )));
    }
    let mut header: Option<(Header, &Path)> = None;
    let mut owner: BTreeMap<(u32, u32), &Path> = BTreeMap::new();
    let mut records = Vec::new();
    for path in inputs {
        let f = read_results(path)?;
        if f.truncated {
            return Err(bad(format!(
                "{}: the last line is cut short (an interrupted run); rerun that shard to finish it",
                path.display()
            )));
        }
        match &header {
            None => header = Some((f.header.clone(), path)),
            Some((h, first)) if !h.same_sweep(&f.header) => {
                return Err(bad(format!(
                    "{} and {} are from different experiments:\n  {}\n  {}",
                    first.display(),
                    path.display(),
                    serde_json::to_string(h)?,
                    serde_json::to_string(&f.header)?
                )));
            }
            Some(_) => {}
        }
        for r in f.records {
            if let Some(other) = owner.insert((r.n, r.game), path) {
                return Err(bad(format!(
                    "game {} at {} rollouts is in both {} and {}: shards overlap",
                    r.game,
                    r.n,
                    other.display(),
                    path.display()
                )));
            }
            records.push(r);
        }
    }
    let (header, _) = header.expect("at least one input");
    let all = Header {
        shard: Shard::ALL,
        ..header.clone()
    };
    // Counted, not listed: a header may name four billion games.
    let expected = all.rollouts.len() as u64 * u64::from(all.games);
    let missing = expected - owner.len() as u64;
    if missing > 0 {
        let shown: Vec<String> = all
            .games_of_shard()
            .filter(|k| !owner.contains_key(k))
            .take(20)
            .map(|(n, g)| format!("game {g} at {n} rollouts"))
            .collect();
        return Err(bad(format!(
            "{missing} of {expected} games are missing (a shard not given, or not finished): {}{}",
            shown.join(", "),
            if missing > shown.len() as u64 {
                ", …"
            } else {
                ""
            }
        )));
    }
    write_atomic(out, &canonical_text(&all, &records))?;
    Ok(records.len())
}

/// Score statistics of a sweep point.
#[derive(Clone, Debug, Serialize)]
pub struct ScoreSummary {
    pub mean: f64,
    /// 95% interval of the mean (normal approximation).
    pub mean_ci95: Interval,
    pub median: f64,
    pub sd: f64,
    pub min: u64,
    pub max: u64,
}

/// The share of games reaching a tile, with its 95% Wilson interval.
#[derive(Clone, Debug, Serialize)]
pub struct Reach {
    pub tile: u32,
    pub games: u64,
    pub rate: f64,
    pub ci95: Interval,
}

/// One sweep point of the summary.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub rollouts: u32,
    /// Games in the file.
    pub games: u64,
    /// Games the sweep point has (of the file's shard).
    pub expected: u64,
    pub score: ScoreSummary,
    pub reach: Vec<Reach>,
    pub moves_per_game: f64,
    /// Rollouts and simulated moves per game (0 for files written before they were kept).
    pub rollouts_per_game: f64,
    pub simulated_moves_per_game: f64,
    pub overflow_games: u64,
}

/// The summary of a results file (`--report`).
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub seed: u64,
    pub objective: Objective,
    #[serde(skip_serializing_if = "Spending::is_plain")]
    pub spending: Spending,
    pub games: u32,
    pub shard: Shard,
    /// Whether every game of the file's shard is there.
    pub complete: bool,
    pub points: Vec<Point>,
}

/// Summarises a results file's games per sweep point (points with no games are left out).
pub fn summarize(f: &ResultsFile) -> Summary {
    let h = &f.header;
    let points: Vec<Point> = h
        .rollouts
        .iter()
        .filter_map(|&n| {
            let rs: Vec<&Record> = f.records.iter().filter(|r| r.n == n).collect();
            if rs.is_empty() {
                return None;
            }
            let scores: Histogram = rs.iter().map(|r| r.score).collect();
            let score = scores.summary();
            let mut reached = Reached::default();
            for r in &rs {
                let largest = r.max_tile.checked_ilog2().unwrap_or(0) as u8;
                reached.add(super::reach::reached_exponent(largest, r.overflow));
            }
            let games = rs.len() as u64;
            Some(Point {
                rollouts: n,
                games,
                expected: h.shard.games_in(h.games),
                score: ScoreSummary {
                    mean: score.mean,
                    mean_ci95: score.mean_interval(Z95),
                    median: score.median,
                    sd: score.sd,
                    min: score.min,
                    max: score.max,
                },
                reach: reached
                    .counts()
                    .map(|(tile, k)| Reach {
                        tile,
                        games: k,
                        rate: k as f64 / games as f64,
                        ci95: wilson(k, games, Z95),
                    })
                    .collect(),
                moves_per_game: rs.iter().map(|r| f64::from(r.moves)).sum::<f64>() / games as f64,
                rollouts_per_game: rs.iter().map(|r| r.rollouts as f64).sum::<f64>() / games as f64,
                simulated_moves_per_game: rs.iter().map(|r| r.simulated_moves as f64).sum::<f64>()
                    / games as f64,
                overflow_games: rs.iter().filter(|r| r.overflow).count() as u64,
            })
        })
        .collect();
    let complete = f.records.len() as u64 == h.rollouts.len() as u64 * h.shard.games_in(h.games);
    Summary {
        seed: h.seed,
        objective: h.objective,
        spending: h.spending,
        games: h.games,
        shard: h.shard,
        complete,
        points,
    }
}

impl Summary {
    /// One CSV row per sweep point, with a header row.
    pub fn csv(&self) -> String {
        let mut header: Vec<String> = [
            "rollouts",
            "games",
            "score_mean",
            "score_mean_lo95",
            "score_mean_hi95",
            "score_median",
            "score_sd",
            "score_min",
            "score_max",
            "moves_per_game",
            "rollouts_per_game",
            "simulated_moves_per_game",
            "overflow_games",
        ]
        .map(String::from)
        .into();
        for (t, _) in Reached::default().counts() {
            header.extend([
                format!("reach_{t}"),
                format!("reach_{t}_lo95"),
                format!("reach_{t}_hi95"),
            ]);
        }
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&header).expect("writing to memory");
        for p in &self.points {
            let mut row = vec![
                p.rollouts.to_string(),
                p.games.to_string(),
                format!("{:.3}", p.score.mean),
                format!("{:.3}", p.score.mean_ci95.lo),
                format!("{:.3}", p.score.mean_ci95.hi),
                format!("{:.1}", p.score.median),
                format!("{:.3}", p.score.sd),
                p.score.min.to_string(),
                p.score.max.to_string(),
                format!("{:.3}", p.moves_per_game),
                format!("{:.1}", p.rollouts_per_game),
                format!("{:.1}", p.simulated_moves_per_game),
                p.overflow_games.to_string(),
            ];
            for r in &p.reach {
                row.extend([r.rate, r.ci95.lo, r.ci95.hi].map(|x| format!("{x:.6}")));
            }
            w.write_record(&row).expect("writing to memory");
        }
        String::from_utf8(w.into_inner().expect("writing to memory")).expect("UTF-8 fields")
    }
}

/// Writes the summary's CSV next to the results file: `FILE.csv`.
pub fn write_csv(results: &Path, summary: &Summary) -> anyhow::Result<PathBuf> {
    let mut name = results.as_os_str().to_os_string();
    name.push(".csv");
    let path = PathBuf::from(name);
    write_atomic(&path, &summary.csv()).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_games_are_counted_and_stepped_without_scanning() {
        for (index, count) in [(0, 1), (0, 3), (2, 3), (4, 5)] {
            let shard = Shard { index, count };
            for games in [0, 1, 2, 3, 7, 10, 11] {
                let want: Vec<u32> = (0..games).filter(|&g| shard.contains(g)).collect();
                assert_eq!(shard.games_in(games), want.len() as u64);
                assert_eq!(shard.games(0..games).collect::<Vec<_>>(), want);
                let mid: Vec<u32> = (3..games).filter(|&g| shard.contains(g)).collect();
                assert_eq!(shard.games(3..games.max(3)).collect::<Vec<_>>(), mid);
            }
        }
        assert_eq!(
            Shard { index: 1, count: 2 }.games_in(u32::MAX),
            (1 << 31) - 1
        );
    }
    use crate::CpuEngine;

    #[test]
    fn experiment_shard_and_rollout_parsing() {
        assert_eq!(
            "1/3".parse::<Shard>().unwrap(),
            Shard { index: 1, count: 3 }
        );
        for bad in ["3/2", "0/0", "x/y", "2", "1/", "-1/2", "2/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(parse_rollouts("10, 100,1000").unwrap(), vec![10, 100, 1000]);
        for bad in ["", ",", "0", "10,10", "x", "-5"] {
            assert!(parse_rollouts(bad).is_err(), "{bad}");
        }
    }

    fn run_all(path: &Path, h: &Header) -> String {
        let mut r = Results::open(path, h).unwrap();
        run(h, &mut r, &mut CpuEngine, &rollsim_core::progress::Silent).unwrap();
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn experiment_resume_after_cut_line_matches_one_shot() {
        let h = Header::new(
            5,
            Objective::Score,
            Spending::default(),
            4,
            vec![2, 3],
            Shard::ALL,
        );
        let dir = tempfile::tempdir().unwrap();
        let temp = |name: &str| dir.path().join(name);
        let one = temp("oneshot");
        let full = run_all(&one, &h);
        let parsed = parse_results(&full).unwrap();
        assert_eq!(parsed.records.len(), 8);
        assert!(!parsed.truncated);
        // An interrupted run: the header, three games and half a line.
        let lines: Vec<&str> = full.split_inclusive('\n').collect();
        let cut = temp("cut");
        let partial = format!("{}{}", lines[..4].concat(), &lines[4][..lines[4].len() / 2]);
        std::fs::write(&cut, partial).unwrap();
        let resumed = run_all(&cut, &h);
        let sorted = |t: &str| {
            let mut v: Vec<String> = t.lines().map(str::to_string).collect();
            v[1..].sort();
            v
        };
        assert_eq!(sorted(&resumed), sorted(&full));
        // Nothing left: a rerun changes nothing.
        assert_eq!(run_all(&cut, &h), resumed);
        // Another experiment in the same file is refused.
        let other = Header::new(
            6,
            Objective::Score,
            Spending::default(),
            4,
            vec![2, 3],
            Shard::ALL,
        );
        let e = Results::open(&cut, &other).err().unwrap();
        assert!(e.is::<ExperimentError>(), "{e}");
        let _ = std::fs::remove_file(one);
        let _ = std::fs::remove_file(cut);
    }
}
