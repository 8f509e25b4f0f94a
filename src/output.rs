//! Standard output for every command, written once here: a closed pipe (`rollsim … | head`)
//! ends the output quietly while the command goes on and finishes its files; any other
//! failure (a full disk) is kept and ends the command with exit 1, naming standard output.
//! Rust's `println!` panics in both cases.

use std::fmt;
use std::io::{self, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rollsim_core::progress::Progress;

static CLOSED: AtomicBool = AtomicBool::new(false);
static FAILED: Mutex<Option<io::Error>> = Mutex::new(None);

/// Set once standard output carries a stream of data (`play --record -`): the report then
/// goes to stderr, so that the stream stays parseable.
static REPORT_TO_STDERR: AtomicBool = AtomicBool::new(false);

/// Sends every later line to standard error (see `REPORT_TO_STDERR`).
pub fn report_to_stderr() {
    REPORT_TO_STDERR.store(true, Ordering::Relaxed);
}

/// Writes one line (what `outln!` formats) to standard output.
pub fn line(args: fmt::Arguments) {
    if REPORT_TO_STDERR.load(Ordering::Relaxed) {
        eprintln!("{args}");
        return;
    }
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = io::stdout().lock();
    let written = out.write_fmt(args).and_then(|()| out.write_all(b"\n"));
    if let Err(e) = written.and_then(|()| out.flush()) {
        fail(e);
    }
}

fn fail(e: io::Error) {
    CLOSED.store(true, Ordering::Relaxed);
    if e.kind() != io::ErrorKind::BrokenPipe {
        FAILED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    }
}

/// The first failure to write standard output other than a closed pipe, once the command is
/// done.
pub fn finish() -> Result<(), io::Error> {
    if !CLOSED.load(Ordering::Relaxed)
        && let Err(e) = io::stdout().lock().flush()
    {
        fail(e);
    }
    match FAILED.lock().unwrap_or_else(|p| p.into_inner()).take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A command's result, one shape for every command: one JSON object for scripts (`--json`), or
/// its text for people.
pub trait Report: serde::Serialize {
    /// Prints the text (through `outln!`).
    fn text(&self);
}

/// Prints `report` as `--json` asks: one line of JSON, or its text.
pub fn emit(report: &impl Report, json: bool) -> anyhow::Result<()> {
    if json {
        return crate::print_json(report);
    }
    report.text();
    Ok(())
}

/// `println!` for the commands' output (see the module docs).
macro_rules! outln {
    () => {
        $crate::output::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}

/// How a column's cells line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// An aligned text table, the one every command prints: each column as wide as its widest
/// cell (header included), one space between columns, no trailing spaces. A row may carry a
/// note, printed after its last column without widening it.
pub struct Table {
    columns: Vec<(String, Align)>,
    rows: Vec<(Vec<String>, String)>,
}

impl Table {
    pub fn new(columns: &[(&str, Align)]) -> Table {
        Table {
            columns: columns.iter().map(|&(h, a)| (h.to_string(), a)).collect(),
            rows: Vec::new(),
        }
    }

    /// A row of cells, one per column.
    pub fn row(&mut self, cells: Vec<String>) {
        self.row_with_note(cells, String::new());
    }

    /// A row of cells and a note after them.
    pub fn row_with_note(&mut self, cells: Vec<String>, note: impl Into<String>) {
        debug_assert_eq!(cells.len(), self.columns.len());
        self.rows.push((cells, note.into()));
    }

    /// The table's lines.
    pub fn lines(&self) -> Vec<String> {
        let widths: Vec<usize> = (0..self.columns.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|(cells, _)| cells[c].chars().count())
                    .chain([self.columns[c].0.chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String], note: &str| {
            let mut out: Vec<String> = cells
                .iter()
                .zip(&self.columns)
                .zip(&widths)
                .map(|((cell, (_, align)), &w)| match align {
                    Align::Left => format!("{cell:<w$}"),
                    Align::Right => format!("{cell:>w$}"),
                })
                .collect();
            if !note.is_empty() {
                out.push(note.to_string());
            }
            out.join(" ").trim_end().to_string()
        };
        let header: Vec<String> = self.columns.iter().map(|(h, _)| h.clone()).collect();
        std::iter::once(line(&header, ""))
            .chain(self.rows.iter().map(|(cells, note)| line(cells, note)))
            .collect()
    }

    /// Prints the table to standard output.
    pub fn print(&self) {
        for l in self.lines() {
            line(format_args!("{l}"));
        }
    }
}

/// The command line's [`Progress`]: each phase's description on stderr, its bar, and how long
/// it took; nothing when quiet.
pub struct Bar {
    unit: &'static str,
    quiet: bool,
    phase: Mutex<Option<(indicatif::ProgressBar, Instant)>>,
}

impl Bar {
    pub fn new(unit: &'static str, quiet: bool) -> Bar {
        Bar {
            unit,
            quiet,
            phase: Mutex::new(None),
        }
    }
}

impl Progress for Bar {
    fn start(&self, len: u64, what: &str) {
        if !self.quiet {
            eprintln!("{what}");
        }
        let bar = crate::progress_bar(len, self.unit, self.quiet);
        *self.phase.lock().unwrap() = Some((bar, Instant::now()));
    }
    fn inc(&self, n: u64) {
        if let Some((bar, _)) = self.phase.lock().unwrap().as_ref() {
            bar.inc(n);
        }
    }
    fn finish(&self) {
        if let Some((bar, started)) = self.phase.lock().unwrap().take() {
            bar.finish_and_clear();
            if !self.quiet {
                eprintln!("done in {:.1} s", started.elapsed().as_secs_f64());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_their_widest_cell_and_notes_trail() {
        let mut t = Table::new(&[("name", Align::Left), ("n", Align::Right)]);
        t.row(vec!["a".into(), "1000".into()]);
        t.row_with_note(vec!["longer".into(), "7".into()], "<- best");
        assert_eq!(
            t.lines(),
            ["name      n", "a      1000", "longer    7 <- best"]
        );
    }
}
