//! `rollsim bearoff verify`, `compare` and `extract`: a table's checks, two tables' differences, and a smaller table cut from one.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args as ClapArgs;
use serde::Serialize;

use crate::{OutputArgs, input_error, print_json, progress_bar};
use rollsim_bearoff::Space;
use rollsim_bearoff::database::Database;
use rollsim_bearoff::format::{self};
use rollsim_core::files::write_atomically;
use rollsim_core::memory::human;

use super::{Format, format_name};

#[derive(ClapArgs, Debug)]
pub struct VerifyArgs {
    /// The database file.
    file: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(ClapArgs, Debug)]
pub struct CompareArgs {
    /// Two two-sided tables in rollsim's format.
    #[arg(num_args = 2, required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(ClapArgs, Debug)]
pub struct ExtractArgs {
    /// A two-sided table in rollsim's format.
    file: PathBuf,
    /// Checkers per side of the sub-table: the positions with at most this many checkers.
    #[arg(long)]
    checkers: u32,
    /// File format of --out.
    #[arg(long, value_enum, default_value_t = Format::Rollsim)]
    format: Format,
    /// Output file (written to a temporary file, then renamed).
    #[arg(long)]
    out: PathBuf,
}

#[derive(Serialize)]
struct VerifyReport {
    file: String,
    format: &'static str,
    bytes: u64,
    ok: bool,
    /// Checksummed chunks (column sections) that do not match.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    bad_columns: Vec<String>,
    seconds: f64,
}

pub(super) fn verify(a: VerifyArgs) -> anyhow::Result<()> {
    let start = Instant::now();
    let db = Database::open(&a.file)?;
    let file_bytes = std::fs::metadata(&a.file)?.len();
    let bar = progress_bar(file_bytes, "bytes", a.output.quiet || a.output.json);
    let checked = db.check(file_bytes, &|k| bar.inc(k))?;
    bar.finish_and_clear();
    let (format, bytes, bad) = (checked.format, checked.bytes, checked.failed);
    let r = VerifyReport {
        file: a.file.display().to_string(),
        format,
        bytes,
        ok: bad.is_empty(),
        bad_columns: bad,
        seconds: start.elapsed().as_secs_f64(),
    };
    if a.output.json {
        print_json(&r)?;
    } else if r.ok {
        outln!(
            "{}: ok, {} checked in {:.2} s ({})",
            r.file,
            human(r.bytes),
            r.seconds,
            r.format
        );
    }
    if !r.ok {
        let shown: Vec<&str> = r.bad_columns.iter().take(10).map(String::as_str).collect();
        return Err(input_error(format!(
            "{}: {} of its checks failed: {}{}",
            r.file,
            r.bad_columns.len(),
            shown.join(", "),
            if r.bad_columns.len() > 10 {
                ", …"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

#[derive(Serialize)]
struct CompareReport {
    a: String,
    b: String,
    values: Vec<rollsim_bearoff::table::Difference>,
    seconds: f64,
}

pub(super) fn compare(a: CompareArgs) -> anyhow::Result<()> {
    let start = Instant::now();
    let (x, y) = (
        Database::open_columns(&a.files[0])?,
        Database::open_columns(&a.files[1])?,
    );
    let values = rollsim_bearoff::table::compare(&x, &y).map_err(|e| match e {
        format::FormatError::Io(e) => e.into(),
        e => input_error(e),
    })?;
    let r = CompareReport {
        a: a.files[0].display().to_string(),
        b: a.files[1].display().to_string(),
        values,
        seconds: start.elapsed().as_secs_f64(),
    };
    if a.output.json {
        return print_json(&r);
    }
    for d in &r.values {
        outln!(
            "{:>13}: max difference {:.3e} (positions {} vs {}), mean {:.3e}",
            d.value,
            d.max,
            d.at.0,
            d.at.1,
            d.mean
        );
    }
    Ok(())
}

pub(super) fn extract(a: ExtractArgs) -> anyhow::Result<()> {
    rollsim_core::files::check_output(&a.out)?;
    rollsim_core::files::check_not_an_input(&a.out, &[&a.file])?;
    let table = Database::open_columns(&a.file)?;
    let start = Instant::now();
    match a.format {
        // Each column is checked as it is copied; the partial file goes on any failure.
        Format::Rollsim => table.extract(a.checkers, &a.out)?,
        Format::Gnubg => {
            let _lock = rollsim_core::files::lock_for_writing(&a.out)?;
            // gnubg's file has no checksums to carry the table's over: the columns it is cut
            // from are checked first.
            let space = table.space();
            if let Ok(sub) = Space::new(space.points, a.checkers)
                && a.checkers <= space.checkers
                && let Some(bad) = table.verify_columns(sub.len() as u64, &|_| {})?.first()
            {
                return Err(input_error(format!(
                    "{}: {bad}: the table is damaged; `rollsim bearoff verify` lists every \
                     damaged column",
                    a.file.display()
                )));
            }
            write_atomically(&a.out, |w| table.write_gnubg(a.checkers, w)).map_err(|e| match e {
                format::FormatError::Io(e) => {
                    anyhow::Error::from(e).context(format!("writing {}", a.out.display()))
                }
                e => input_error(format!("{}: {e}", a.file.display())),
            })?
        }
    }
    outln!(
        "wrote {} ({} checkers on {} points, {} format, {} bytes) in {:.3} s",
        a.out.display(),
        a.checkers,
        table.space().points,
        format_name(a.format),
        std::fs::metadata(&a.out).map(|m| m.len()).unwrap_or(0),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
