//! rollsim: a GPU-accelerated batch simulator for 2048, backgammon bearoff and the 15-puzzle.
//!
//! Every GPU kernel in `shaders/` has a CPU twin here that computes the same thing bit for bit
//! and doubles as the backend when there is no GPU.

pub mod bearoff;
pub mod bench;
pub mod chart;
pub mod cli;
pub mod files;
pub mod game2048;
pub mod gpu;
pub mod memory;
pub mod puzzle;
pub mod rng;
pub mod text;
