//! A whole run of games on a set of engines: the one place that chooses how a player's games
//! are played.

use super::{Game, PlayConfig, PlayerKind, Tally, play_batch};
use super::{play_expectimax_lockstep, play_greedy_lockstep};
use crate::engines::Engines;
use crate::{CpuEngine, RolloutEngine};
use rollsim_core::Device;
use rollsim_core::progress::Progress;

/// Games in flight together: a block at a time, so that memory does not grow with the number of
/// games, and large enough to keep a GPU's batches full.
pub const BLOCK: u32 = 1 << 16;

/// A run's tally, and where its games were computed.
pub struct Ran {
    pub tally: Tally,
    pub device: Device,
    pub adapter: Option<String>,
}

/// Plays `config`'s games block by block on `engines`, handing each block's games to `sink` as
/// it ends, with `progress` told the games done. Monte Carlo players roll out on the engines'
/// rollout engine. Network players on a GPU keep a whole block in flight, one lookup dispatch
/// per step for every afterstate (greedy) or leaf (expectimax); on CPU threads each game values
/// its boards as it meets them. Random play needs no engine.
pub fn play(
    config: &PlayConfig,
    engines: &dyn Engines,
    progress: &dyn Progress,
    sink: &mut dyn FnMut(&[Game]) -> anyhow::Result<()>,
) -> anyhow::Result<Ran> {
    let mut rollouts: Box<dyn RolloutEngine> = match config.player.kind() {
        PlayerKind::Mc => engines.rollouts()?,
        PlayerKind::Random | PlayerKind::Ntuple | PlayerKind::Expectimax => Box::new(CpuEngine),
    };
    let mut lookups = match config.player.network() {
        Some(net) if engines.device() == Device::Gpu => Some(engines.values(net)?),
        _ => None,
    };
    let (device, adapter) = match &lookups {
        Some(_) => (engines.device(), engines.adapter()),
        None => (rollouts.backend(), rollouts.adapter()),
    };
    let mut tally = Tally::default();
    for first in (0..config.games).step_by(BLOCK as usize) {
        let block = PlayConfig {
            first: config.first + first,
            games: BLOCK.min(config.games - first),
            ..config.clone()
        };
        let played = match &mut lookups {
            Some(l) if config.player.depth() > 1 => {
                play_expectimax_lockstep(&block, l.as_mut(), progress)?
            }
            Some(l) => play_greedy_lockstep(&block, l.as_mut(), progress)?,
            None => play_batch(&block, rollouts.as_mut(), progress)?,
        };
        sink(&played.games)?;
        tally.add(&played);
    }
    Ok(Ran {
        tally,
        device,
        adapter,
    })
}
