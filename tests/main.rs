//! The `rollsim` binary as a user runs it, and the library formats under arbitrary and damaged
//! input: one test binary, linked once, a module per concern.

mod common;

mod bearoff_two_sided;
mod command_properties;
mod commands;
mod docs;
mod error_chain;
mod experiment;
mod files;
mod inputs;
mod interrupt;
mod memory;
mod ntuple;
mod output;
mod properties;
mod puzzle;
mod sizes;
