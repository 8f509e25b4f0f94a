//! Every WGSL source of rollsim, in one place, as vello keeps its shaders in one crate.
//!
//! A kernel's name is its address:
//! - `shaders/<crate>/<stem>.wgsl` is a kernel of crate `<crate>`. Its CPU twin is
//!   `crates/<crate>/src/<stem>.rs` and its host `crates/<crate>/src/<stem>/gpu.rs`, which
//!   composes it and checks it against the twin;
//! - `shaders/<crate>/<stem>/<part>.wgsl` is a part of that kernel, one of the variants its host
//!   chooses between (a cell type, a reduction);
//! - `shaders/shared/` holds parts that several kernels compose and that declare no binding;
//! - `shaders/checks/` holds kernels that exist only to check a shared part against its CPU
//!   twin (Philox against `rollsim_core::rng`).
//!
//! A test walks this folder and checks each kernel's twin and host exist. The host crates
//! compose and validate their kernels with naga (`rollsim_gpu::kernel::Kernel::validate`).

/// Parts shared by several kernels: types, functions and constants, no bindings.
pub mod shared {
    /// Philox4x32-10 and the random streams of `rollsim_core::rng`.
    pub const PHILOX: &str = include_str!("../shared/philox.wgsl");
    /// The 2048 board: rows, moves, spawns (`rollsim_2048::board`).
    pub const BOARD_2048: &str = include_str!("../shared/board2048.wgsl");
    /// One side's bearoff position: gnubg's index, unranked, and single-die moves on it.
    pub const BEAROFF_POSITION: &str = include_str!("../shared/bearoff_position.wgsl");
    /// The 21 dice rolls in `Roll::ALL_21`'s order, and their weights.
    pub const BEAROFF_ROLLS: &str = include_str!("../shared/bearoff_rolls.wgsl");
}

/// Kernels of `rollsim-2048`.
pub mod g2048 {
    /// Random rollouts with exact per-root sums.
    pub const ROLLOUT: &str = include_str!("../g2048/rollout.wgsl");
    /// An invocation's sums of its last root added straight into the global sums.
    pub const ROLLOUT_FLUSH: &str = include_str!("../g2048/rollout/flush.wgsl");
    /// The same sums added across a subgroup first, for adapters with subgroups.
    pub const ROLLOUT_FLUSH_SUBGROUP: &str = include_str!("../g2048/rollout/flush_subgroup.wgsl");
    /// Bulk n-tuple network values.
    pub const NTUPLE: &str = include_str!("../g2048/ntuple.wgsl");
}

/// Kernels of `rollsim-bearoff`.
pub mod bearoff {
    /// One level of the one-sided sweep (f64).
    pub const ONE_SIDED: &str = include_str!("../bearoff/one_sided.wgsl");
    /// One level of the two-sided sweep by columns.
    pub const COLUMNS: &str = include_str!("../bearoff/columns.wgsl");
    /// The columns kernel's cells in 32-bit fixed point.
    pub const COLUMNS_FIXED32: &str = include_str!("../bearoff/columns/fixed32.wgsl");
    /// The columns kernel's cells in 16 bits, two to a word.
    pub const COLUMNS_U16: &str = include_str!("../bearoff/columns/u16.wgsl");
}

/// Kernels that check a shared part against its CPU twin.
pub mod checks {
    /// Draws Philox words for comparison with `rollsim_core::rng`.
    pub const PHILOX: &str = include_str!("../checks/philox.wgsl");
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every kernel `shaders/<crate>/<stem>.wgsl` has its CPU twin and its host where its
    /// name says, and every part folder belongs to a kernel.
    #[test]
    fn a_kernels_name_is_its_address() {
        let shaders = Path::new(env!("CARGO_MANIFEST_DIR"));
        let crates = shaders.join("../crates");
        let mut kernels = 0;
        for entry in std::fs::read_dir(shaders).unwrap().flatten() {
            let krate = entry.file_name().into_string().unwrap();
            if !entry.path().is_dir() || ["shared", "checks", "src"].contains(&krate.as_str()) {
                continue;
            }
            for file in std::fs::read_dir(entry.path()).unwrap().flatten() {
                let name = file.file_name().into_string().unwrap();
                let stem = name.trim_end_matches(".wgsl");
                let src = crates.join(&krate).join("src");
                if file.path().is_dir() {
                    assert!(
                        entry.path().join(format!("{name}.wgsl")).is_file(),
                        "shaders/{krate}/{name}/ holds parts of no kernel {name}.wgsl"
                    );
                    continue;
                }
                for twin in [
                    src.join(format!("{stem}.rs")),
                    src.join(stem).join("gpu.rs"),
                ] {
                    assert!(
                        twin.is_file(),
                        "shaders/{krate}/{name}: {} is missing",
                        twin.display()
                    );
                }
                kernels += 1;
            }
        }
        assert_eq!(kernels, 4, "rollout, ntuple, one_sided, columns");
    }
}
