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

/// Parses a rollout list such as `10,100,1000`: positive counts, at least one, no repeats, and
/// no empty items (`1,,2` or a trailing comma is a typo, not a list of two).
pub fn parse_rollouts(s: &str) -> Result<Vec<u32>, ExperimentError> {
    let err = |why: String| ExperimentError(format!("bad --rollouts {s:?}: {why}"));
    if s.trim().is_empty() {
        return Err(err("the list is empty (give e.g. 10,100,1000)".into()));
    }
    let mut list = Vec::new();
    for (k, part) in s.split(',').map(str::trim).enumerate() {
        if part.is_empty() {
            return Err(err(format!(
                "item {} is empty (a stray comma?); give counts separated by single commas, e.g. \
                 10,100,1000",
                k + 1
            )));
        }
        // Digits only: `parse` would also take a sign.
        let n: u32 = Some(part)
            .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| {
                err(format!(
                    "{part:?} is not a rollout count (a whole number from 1 to {})",
                    u32::MAX
                ))
            })?;
        if n == 0 {
            return Err(err("rollout counts must be at least 1".into()));
        }
        if list.contains(&n) {
            return Err(err(format!("{n} appears twice")));
        }
        list.push(n);
    }
    Ok(list)
}

/// A line of a results file as a JSON object, taken apart field by field so that a message
/// names the field at fault (serde's own say only "at line 1 column 40").
struct Fields(serde_json::Map<String, serde_json::Value>);

impl Fields {
    /// The object on `line`; `what` names what the line should be, for the message.
    fn of(line: &str, what: &str) -> Result<Fields, String> {
        match serde_json::from_str(line) {
            Ok(serde_json::Value::Object(map)) => Ok(Fields(map)),
            Ok(_) => Err(format!("not {what}: not a JSON object")),
            Err(e) => Err(format!("not {what}: {e}")),
        }
    }

    /// Field `name`, which must be there.
    fn take<T: serde::de::DeserializeOwned>(&mut self, name: &str) -> Result<T, String> {
        let v = self
            .0
            .remove(name)
            .ok_or_else(|| format!("field {name} is missing"))?;
        serde_json::from_value(v).map_err(|e| format!("field {name}: {e}"))
    }

    /// Field `name`, or `T`'s default when it is left out.
    fn take_or_default<T: serde::de::DeserializeOwned + Default>(
        &mut self,
        name: &str,
    ) -> Result<T, String> {
        if self.0.contains_key(name) {
            self.take(name)
        } else {
            Ok(T::default())
        }
    }

    /// Every field taken: none is left that the line's kind does not have.
    fn done(self) -> Result<(), String> {
        match self.0.keys().next() {
            Some(k) => Err(format!("unknown field {k:?}")),
            None => Ok(()),
        }
    }
}

/// What is wrong with a line of a results file before its JSON is read: a byte-order mark
/// (which some editors add, and serde reports as "expected value at line 1 column 1") or a
/// blank line (serde: "EOF while parsing").
fn line_shape(line: &str) -> Result<(), String> {
    if line.starts_with('\u{feff}') {
        return Err(
            "a byte-order mark (U+FEFF) at its start, which JSON lines do not have; save the \
             file as UTF-8 without one"
                .into(),
        );
    }
    if line.trim().is_empty() {
        return Err("a blank line; a results file has one JSON object on every line".into());
    }
    Ok(())
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

    /// The header on a results file's first line, every field checked by name.
    fn from_line(line: &str) -> Result<Header, String> {
        let mut f = Fields::of(line, "an experiment header")?;
        let h = Header {
            format: f.take("format")?,
            seed: f.take("seed")?,
            objective: f.take("objective")?,
            games: f.take("games")?,
            rollouts: f.take("rollouts")?,
            spending: f.take_or_default("spending")?,
            shard: f.take("shard")?,
        };
        f.done()?;
        Ok(h)
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

    /// The record on a line of a results file, every field read and checked by name.
    fn from_line(line: &str) -> Result<Record, String> {
        let mut f = Fields::of(line, "a game record")?;
        let r = Record {
            n: f.take("n")?,
            game: f.take("game")?,
            score: f.take("score")?,
            max_tile: f.take("max_tile")?,
            moves: f.take("moves")?,
            overflow: f.take("overflow")?,
            rollouts: f.take_or_default("rollouts")?,
            simulated_moves: f.take_or_default("simulated_moves")?,
        };
        f.done()?;
        r.check()?;
        Ok(r)
    }

    /// Checks that a game could have ended so: a game starts with two tiles and each move
    /// spawns one, a 2 or a 4, so after `moves` moves the tiles sum to between 2 and 4 times
    /// `moves + 2`; the board holds 16 tiles, none above `max_tile`; and a merge into a tile of
    /// `2^e` scores `2^e`, so a tile of `2^e` took from `(e - 2) 2^e` points (built from 4s) to
    /// `(e - 1) 2^e` (from 2s), and the score is at most `e - 1` times the tile sum.
    fn check(&self) -> Result<(), String> {
        let tile = self.max_tile;
        let Some(e) = crate::board::tile_exponent(tile) else {
            return Err(format!(
                "field max_tile: {tile} is not a tile (a power of two from 2 to 32768)"
            ));
        };
        let (e, tile) = (u64::from(e), u64::from(tile));
        if self.overflow && tile != 32768 {
            return Err(format!(
                "field overflow: true, but max_tile is {tile}: a game overflows only on a merge \
                 of two 32768s"
            ));
        }
        let moves = u64::from(self.moves);
        let (least_sum, most_sum) = (2 * (moves + 2), 4 * (moves + 2));
        // A game ends on a full board: 16 tiles from 2, one more a move at most.
        if moves < 14 {
            return Err(format!(
                "field moves: {moves}, but a game ends only on a full board, which takes at \
                 least 14 moves"
            ));
        }
        if least_sum > 16 * tile {
            return Err(format!(
                "field moves: after {moves} moves the tiles sum to at least {least_sum}, more \
                 than a board of tiles up to max_tile {tile} holds"
            ));
        }
        if tile > most_sum {
            return Err(format!(
                "field max_tile: {tile} is more than {moves} moves can build (their tiles sum \
                 to at most {most_sum})"
            ));
        }
        let score = self.score;
        if !score.is_multiple_of(4) {
            return Err(format!(
                "field score: {score} is not a multiple of 4, as every merge's points are"
            ));
        }
        let least = e.saturating_sub(2) << e;
        if score < least {
            return Err(format!(
                "field score: {score} is less than the {least} points a tile of {tile} takes"
            ));
        }
        let most = (e - 1) * most_sum;
        if score > most {
            return Err(format!(
                "field score: {score} is more than {moves} moves with tiles up to {tile} can \
                 score (at most {most})"
            ));
        }
        if self.rollouts == 0 && self.simulated_moves > 0 {
            return Err(format!(
                "field simulated_moves: {}, but rollouts is 0",
                self.simulated_moves
            ));
        }
        Ok(())
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
    let header = line_shape(first)
        .and_then(|()| Header::from_line(first))
        .map_err(|e| bad(format!("line 1 (the header): {e}")))?;
    header
        .validate()
        .map_err(|e| bad(format!("line 1 (the header): {e}")))?;
    let mut seen = BTreeSet::new();
    let mut records = Vec::with_capacity(lines.len() - 1);
    for (i, line) in lines.iter().enumerate().skip(1) {
        let r = line_shape(line)
            .and_then(|()| Record::from_line(line))
            .map_err(|e| bad(format!("line {}: {e}", i + 1)))?;
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
        let mut lock = rollsim_core::files::lock_for_writing(path)?;
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
            .open(lock.target())
            .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
        // The file as rewritten above: its other names (hard links) are refused too.
        lock.hold(path, &file)?;
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
    let named: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    rollsim_core::files::check_not_an_input(out, &named)?;
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

/// The summary's CSV beside a results file: `FILE.csv`.
pub fn csv_path(results: &Path) -> PathBuf {
    let mut name = results.as_os_str().to_os_string();
    name.push(".csv");
    PathBuf::from(name)
}

/// The first bytes of every summary CSV: a `FILE.csv` that does not start so was not written
/// by rollsim, and is not replaced.
const CSV_SIGNATURE: &[u8] = b"rollouts,games,score_mean,";

/// Checks, before any work, that the summary's CSV may be written beside `results`: missing,
/// or a CSV rollsim wrote.
pub fn check_csv(results: &Path) -> Result<(), rollsim_core::files::InputFileError> {
    rollsim_core::files::check_side_file(&csv_path(results), CSV_SIGNATURE)
}

/// Writes the summary's CSV next to the results file: `FILE.csv` (see [`check_csv`]).
pub fn write_csv(results: &Path, summary: &Summary) -> anyhow::Result<PathBuf> {
    let path = csv_path(results);
    check_csv(results)?;
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

    #[test]
    fn rollout_lists_refuse_empty_items_and_signs() {
        let e = |s: &str| parse_rollouts(s).unwrap_err().to_string();
        assert!(e("1,,2").contains("item 2 is empty"), "{}", e("1,,2"));
        assert!(e("1,2,").contains("item 3 is empty"));
        assert!(e(",1").contains("item 1 is empty"));
        assert!(e(" , ").contains("item 1 is empty"));
        assert!(e("").contains("the list is empty"));
        assert!(e("+5").contains("\"+5\" is not a rollout count"));
        assert!(e("1 2").contains("\"1 2\" is not a rollout count"));
        assert!(e("4294967296").contains("not a rollout count"));
        assert_eq!(parse_rollouts(" 7 ").unwrap(), vec![7]);
    }

    /// A header of two sweep points and ten games, and a record of a game it could hold.
    fn sample() -> (Header, Record) {
        let h = Header::new(
            1,
            Objective::Score,
            Spending::default(),
            10,
            vec![2, 5],
            Shard::ALL,
        );
        let r = Record {
            n: 5,
            game: 3,
            score: 2_000,
            max_tile: 256,
            moves: 200,
            overflow: false,
            rollouts: 3_000,
            simulated_moves: 90_000,
        };
        (h, r)
    }

    /// The error of a results file of `h` and one record line, `line`.
    fn record_error(h: &Header, line: &str) -> String {
        let text = format!("{}{line}\n", header_line(h));
        parse_results(&text).unwrap_err().to_string()
    }

    #[test]
    fn every_field_of_a_record_is_checked_by_name() {
        let (h, good) = sample();
        parse_results(&format!("{}{}", header_line(&h), good.line())).unwrap();
        /// A change to a good record, that makes it one no game could end with.
        type Change = fn(&mut Record);
        let with = |f: Change| {
            let mut r = good;
            f(&mut r);
            record_error(&h, r.line().trim_end())
        };
        let cases: [(Change, &str); 13] = [
            (
                |r| r.n = 3,
                "game 3 at 3 rollouts is not part of this experiment",
            ),
            (|r| r.game = 10, "game 10 at 5 rollouts is not part of"),
            (|r| r.max_tile = 3, "field max_tile: 3 is not a tile"),
            (|r| r.max_tile = 0, "field max_tile: 0 is not a tile"),
            (
                |r| r.max_tile = 65536,
                "field max_tile: 65536 is not a tile",
            ),
            (
                |r| r.max_tile = 2048,
                "field max_tile: 2048 is more than 200 moves can build",
            ),
            (
                |r| r.overflow = true,
                "field overflow: true, but max_tile is 256",
            ),
            (|r| r.moves = 13, "field moves: 13"),
            (
                |r| r.moves = 5000,
                "field moves: after 5000 moves the tiles sum to at least",
            ),
            (
                |r| r.score = 2002,
                "field score: 2002 is not a multiple of 4",
            ),
            (
                |r| r.score = 1000,
                "field score: 1000 is less than the 1536 points",
            ),
            (
                |r| r.score = 1 << 20,
                "field score: 1048576 is more than 200 moves",
            ),
            (
                |r| {
                    r.rollouts = 0;
                },
                "field simulated_moves: 90000, but rollouts is 0",
            ),
        ];
        for (change, says) in cases {
            let e = with(change);
            assert!(e.starts_with("line 2: ") && e.contains(says), "{says}: {e}");
        }
        // As JSON: a field of the wrong type, missing, unknown; not an object at all.
        let json = good.line();
        for (line, says) in [
            (
                json.replace("\"max_tile\":256", "\"max_tile\":-256"),
                "field max_tile: invalid value",
            ),
            (
                json.replace("\"score\":2000", "\"score\":\"2000\""),
                "field score: invalid type",
            ),
            (
                json.replace("\"overflow\":false", "\"overflow\":0"),
                "field overflow: invalid type",
            ),
            (json.replace("\"moves\":200,", ""), "field moves is missing"),
            (
                json.replace("{", "{\"extra\":1,"),
                "unknown field \"extra\"",
            ),
            ("[1, 2]".to_string(), "not a game record: not a JSON object"),
            ("{\"n\": 5".to_string(), "not a game record: EOF"),
        ] {
            let e = record_error(&h, line.trim_end());
            assert!(e.starts_with("line 2: ") && e.contains(says), "{says}: {e}");
        }
        // Old files, written before the effort was kept, hold no rollouts and simulated moves.
        let old = json.replace(",\"rollouts\":3000,\"simulated_moves\":90000", "");
        assert_ne!(old, json);
        let f = parse_results(&format!("{}{old}", header_line(&h))).unwrap();
        assert_eq!(f.records[0].rollouts, 0);
    }

    #[test]
    fn blank_lines_and_byte_order_marks_are_named() {
        let (h, r) = sample();
        let (head, rec) = (header_line(&h), r.line());
        let e = |text: &str| parse_results(text).unwrap_err().to_string();
        let blank = e(&format!("{head}\n{rec}"));
        assert!(blank.starts_with("line 2: a blank line"), "{blank}");
        let blank = e(&format!("{head}{rec}  \n"));
        assert!(blank.starts_with("line 3: a blank line"), "{blank}");
        let bom = e(&format!("\u{feff}{head}{rec}"));
        assert!(
            bom.starts_with("line 1 (the header): a byte-order mark"),
            "{bom}"
        );
        let header = e(&format!("\n{head}"));
        assert!(
            header.starts_with("line 1 (the header): a blank line"),
            "{header}"
        );
        let field = e(&head.replace("\"games\":10", "\"games\":\"ten\""));
        assert!(
            field.starts_with("line 1 (the header): field games: invalid type"),
            "{field}"
        );
        let zero = e(&head.replace("\"games\":10", "\"games\":0"));
        assert!(zero.starts_with("line 1 (the header): --games"), "{zero}");
    }

    #[test]
    fn records_of_real_games_pass_the_checks() {
        use crate::play::{PlayConfig, Player, play_batch};
        let played = play_batch(
            &PlayConfig::new(Player::Random, 300, 11),
            &mut CpuEngine,
            &|_| {},
        )
        .unwrap();
        for g in &played.games {
            let r = Record::of(1, g, Effort::default());
            r.check().unwrap_or_else(|e| panic!("{r:?}: {e}"));
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
