//! rollsim's foundations, shared by every game and knowing none: counter-based random streams
//! (Philox4x32-10), files written atomically and inputs read with checks, memory sizing and
//! large allocations, and board text.

pub mod files;
pub mod memory;
pub mod rng;
pub mod text;
