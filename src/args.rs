//! The command line's value enums: each mirrors a domain enum variant by variant, with the help
//! text of its values, and converts into it and back, both by exhaustive matches, so that
//! neither side can gain a variant the other lacks. The domain crates know nothing of clap.

use rollsim_2048::play::Spending;
use rollsim_2048::{Objective, PlayerKind};
use rollsim_gpu::Backend;
use rollsim_puzzle::{Partition, Plan};

/// Defines a clap value enum `$arg` mirroring `$domain`, and `From<$arg> for $domain`.
macro_rules! mirror {
    ($(#[$m:meta])* $arg:ident => $domain:ident { $($(#[$vm:meta])* $v:ident => $dv:ident,)+ }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
        pub enum $arg {
            $($(#[$vm])* $v,)+
        }

        impl From<$arg> for $domain {
            fn from(a: $arg) -> $domain {
                match a {
                    $($arg::$v => $domain::$dv,)+
                }
            }
        }

        // Unused, but exhaustive: a variant added to the domain enum fails to compile here
        // until the command line has it.
        impl From<$domain> for $arg {
            fn from(d: $domain) -> $arg {
                match d {
                    $($domain::$dv => $arg::$v,)+
                }
            }
        }
    };
}

mirror! {
    /// `--backend`.
    BackendArg => Backend {
        Auto => Auto,
        Cpu => Cpu,
        Gpu => Gpu,
    }
}

mirror! {
    /// `--objective`: what a Monte Carlo player maximises.
    ObjectiveArg => Objective {
        /// The move's own points plus the mean points of its rollouts
        Score => Score,
        /// The mean sum of the tiles on the rollouts' final boards
        Tilesum => Tilesum,
    }
}

mirror! {
    /// `--player`.
    PlayerArg => PlayerKind {
        /// A uniformly random legal move
        Random => Random,
        /// Monte Carlo: the move with the best mean over random rollouts
        Mc => Mc,
        /// An n-tuple network, greedy: the move with the best reward + V(afterstate)
        Ntuple => Ntuple,
        /// Expectimax over moves and spawns to a depth in moves, the network at the leaves
        Expectimax => Expectimax,
    }
}

mirror! {
    /// `--pdb`: a partition of the tiles into pattern databases.
    PartitionArg => Partition {
        /// 15-puzzle: tiles 1-8 (the top two rows) and 9-15 (the bottom two); 577 MB
        #[value(name = "7-8")]
        P78 => P78,
        /// 15-puzzle: {1,2,5,6,9,13}, {3,4,7,8,11,12}, {10,14,15}; 11.5 MB
        #[value(name = "6-6-3")]
        P663 => P663,
        /// 15-puzzle: {1,2,3,5,6}, {4,7,8,11,12}, {9,10,13,14,15}; 1.6 MB, for tests
        #[value(name = "5-5-5")]
        P555 => P555,
        /// 8-puzzle: {1,2,3,4}, {5,6,7,8}; 6 KB, for tests
        #[value(name = "4-4")]
        P44 => P44,
    }
}

mirror! {
    /// `--plan`: how the solve loop carries out each stage.
    PlanArg => Plan {
        /// Each stage by turning loops; the loops for tiles 1 and 2 chosen together, for the
        /// shortest whole solution (the solve loop, planned ahead)
        Lookahead => Lookahead,
        /// Each stage by turning loops; each loop the cheapest for its own stage alone
        Greedy => Greedy,
        /// Each stage by its shortest move sequence (a per-stage lower bound, for comparison)
        Shortest => Shortest,
    }
}

/// How the Monte Carlo player spends a move's rollouts (`2048 play --player mc`, `2048
/// experiment`); without either flag, every candidate gets its own rollouts.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct SpendingArgs {
    /// Common random numbers: every candidate of a move plays the same rollout streams, so
    /// that their comparison sees less noise
    #[arg(long)]
    pub crn: bool,
    /// Race the candidates for the same budget: rounds of a quarter of --rollouts each, a
    /// candidate clearly behind the best (their 99.5% bounds apart) dropped and its share
    /// played by the others
    #[arg(long)]
    pub race: bool,
}

impl From<SpendingArgs> for Spending {
    fn from(a: SpendingArgs) -> Spending {
        Spending {
            common: a.crn,
            race: a.race,
        }
    }
}
