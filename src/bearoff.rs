//! `rollsim bearoff …`: build and query bearoff databases.

use std::path::Path;

use clap::{Subcommand, ValueEnum};

use super::input_error;
use rollsim_bearoff::format;

mod build;
mod check;
mod query;

use build::{BuildArgs, build};
use check::{CompareArgs, ExtractArgs, VerifyArgs, compare, extract, verify};
use query::{QueryArgs, query};

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build a one-sided (default) or two-sided bearoff database.
    Build(BuildArgs),
    /// Look positions up in a database (rollsim's or gnubg's format).
    Query(QueryArgs),
    /// Check every checksum of a database.
    Verify(VerifyArgs),
    /// Compare every value of two two-sided tables over the same space (e.g. two precisions).
    Compare(CompareArgs),
    /// Cut the table of fewer checkers out of a two-sided table (the block gnubg's order puts
    /// first), e.g. gnubg's 6x6 `gnubg_ts0.bd` out of the 15x15 table.
    Extract(ExtractArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rollsim's own format: exact f64 values, header, checksum.
    Rollsim,
    /// GNU Backgammon's .bd format (uint16 fixed point).
    Gnubg,
}

pub fn run(c: Command) -> anyhow::Result<()> {
    match c {
        Command::Build(a) => build(a),
        Command::Query(a) => query(a),
        Command::Verify(a) => verify(a),
        Command::Extract(a) => extract(a),
        Command::Compare(a) => compare(a),
    }
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Rollsim => "rollsim",
        Format::Gnubg => "gnubg",
    }
}

/// An error reading two-sided table `path`: of its I/O (exit 1; the message names the file),
/// or of its contents (bad input).
fn table_error(path: &Path, e: format::FormatError) -> anyhow::Error {
    match e {
        format::FormatError::Io(e) => e.into(),
        e => input_error(format!("{}: {e}", path.display())),
    }
}
