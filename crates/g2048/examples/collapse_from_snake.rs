//! Where a trained network's greedy player stops short of 32768: its games from the start,
//! and its games from a full snake (16384 down to two 4s, one merge from collapsing to 32768).
//!
//! `cargo run --release -p rollsim-2048 --example collapse_from_snake -- NET.bin [GAMES]`

use rollsim_2048::board::Board;
use rollsim_2048::ntuple::Network;
use rollsim_2048::play::{Game, play_network_game};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: NET.bin [GAMES]"))?;
    let games: u32 = args.next().map_or(Ok(200), |g| g.parse())?;
    let net = Network::load(std::path::Path::new(&path))?;
    let corner = |b: Board| [0, 3, 12, 15].iter().any(|&i| b.get(i) == b.max_exponent());
    let (mut reached, mut in_corner, mut beyond) = (0, 0, 0);
    for i in 0..games {
        let mut g = Game::new(1, i);
        play_network_game(&mut g, &net, 1, None);
        if g.reached_exponent() >= 14 {
            reached += 1;
            in_corner += u32::from(corner(g.board));
        }
        beyond += u32::from(g.reached_exponent() >= 15);
    }
    println!(
        "from the start, {games} games (seed 1): 16384 reached in {reached}, the largest tile in \
         a corner at the end in {in_corner} of those; 32768 reached in {beyond}"
    );
    let rows = [[14, 13, 12, 11], [7, 8, 9, 10], [6, 5, 4, 3], [2, 2, 0, 0]];
    let raw = (0..16).fold(0u64, |r, i| r | (rows[i / 4][i % 4] as u64) << (4 * i));
    let snake = Board::from_raw(raw);
    let mut collapsed = 0;
    for i in 0..games {
        let mut g = Game::from_position(1, i, snake);
        play_network_game(&mut g, &net, 1, None);
        collapsed += u32::from(g.reached_exponent() >= 15);
    }
    println!(
        "from the snake 16384 8192 4096 2048 / 128 256 512 1024 / 64 32 16 8 / 4 4, {games} games: \
         32768 reached in {collapsed}"
    );
    Ok(())
}
