//! Every error type that wraps an I/O error prints the OS's text once in rollsim's `{:#}`
//! report (the class of "Is a directory (os error 21): Is a directory (os error 21)").

use std::io;

use rollsim_2048::ntuple::NetworkError;
use rollsim_bearoff::format::FormatError;
use rollsim_puzzle::pdb::PdbFileError;

fn os_error() -> io::Error {
    io::Error::from_raw_os_error(21)
}

fn assert_once(e: impl Into<anyhow::Error>) {
    let text = format!("{:#}", e.into().context("writing /x"));
    let os = os_error().to_string();
    assert_eq!(text.matches(&os).count(), 1, "{text}");
}

#[test]
fn wrapped_io_errors_print_once() {
    assert_once(FormatError::from(os_error()));
    assert_once(NetworkError::from(os_error()));
    assert_once(PdbFileError::from(os_error()));
}
