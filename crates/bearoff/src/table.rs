//! rollsim's two-sided table file (`RSBEAROF` version 2), read in place and written column by
//! column as the sweep finishes them.
//!
//! Little-endian throughout. Column-major, as the sweep by columns makes it: column `them`
//! holds, for every position `us` of the side on roll, its values against `them`, so a query is
//! a few reads from one column, and a build streams each column out once.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `RSBEAROF` |
//! | 8 | 4 | version, 2 |
//! | 12 | 4 | kind, 2 (two-sided) |
//! | 16 | 4 | points |
//! | 20 | 4 | checkers |
//! | 24 | 4 | cubeless cell: 1 f32, 2 f64, 3 u16 (0..=65535 over 0..=1), 4 fixed32 (i32, 2^-29) |
//! | 28 | 4 | cubeful cell, as above (u16 over -1..=1), or 0 without cubeful equities |
//! | 32 | 8 | n, positions per side, C(P + C, P) |
//! | 40 | 8 | data offset, 4096 |
//! | 48 | 8 | record bytes: n · (cubeless cell + 3 · cubeful cell) |
//! | 56 | 8 | checksum table offset: data offset + n · record |
//! | 64 | 8 | checksum entries: n per section (1 or 2) |
//! | 72 | 64 | description, UTF-8 padded with spaces |
//! | 136 | 4 | CRC-32 of the checksum table |
//! | 140 | 4 | CRC-32 of bytes 0..140 |
//!
//! Record `them` at `data offset + them · record`: the cubeless section, n cells (the winning
//! chance of `us` on roll, `us` = 0..n), then with cubeful equities three planes of n cells (the
//! money equity of `us` before its cube decision when it owns the cube, when the cube is
//! centred, when `them` owns it). The checksum table holds the CRC-32 of every section of every
//! column (`section · n + them`), so a reader opens a table of tens of GB at once and checks it
//! chunk by chunk on demand ([`Table::verify`]). The file's size is exactly what the header
//! says.
//!
//! While it is built the table lives in `OUT.partial` beside the output, with a checkpoint
//! `OUT.partial.ckpt` ([`Partial`]); the finished file is renamed into place.

#[cfg(test)]
mod fixtures;
mod io;
mod layout;
mod partial;
mod read;

pub use layout::{FORMAT, Layout, Section};
pub use partial::{Partial, Reached, partial_path};
pub use read::{BadColumn, Difference, Problem, Table, compare, is_table, value_names};
