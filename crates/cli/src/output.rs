//! Standard output for every command, written once here: a closed pipe (`rollsim … | head`)
//! ends the output quietly while the command goes on and finishes its files; any other
//! failure (a full disk) is kept and ends the command with exit 1, naming standard output.
//! Rust's `println!` panics in both cases.

use std::fmt;
use std::io::{self, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);
static FAILED: Mutex<Option<io::Error>> = Mutex::new(None);

/// Writes one line (what `outln!` formats) to standard output.
pub fn line(args: fmt::Arguments) {
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

/// `println!` for the commands' output (see the module docs).
macro_rules! outln {
    () => {
        $crate::output::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}
