use rollsim_2048::board::Board;
use rollsim_2048::ntuple::Network;
use rollsim_2048::play::{Game, play_network_game};
fn main() {
    let net = Network::load(std::path::Path::new("/work/big/tc1m/tc-lambda.bin")).unwrap();
    let rows: [[u8; 4]; 4] = [[14, 13, 12, 11], [7, 8, 9, 10], [6, 5, 4, 3], [2, 2, 0, 0]];
    let mut raw = 0u64;
    for r in 0..4 {
        for c in 0..4 {
            raw |= (rows[r][c] as u64) << (4 * (4 * r + c));
        }
    }
    let b = Board::from_raw(raw);
    for c in 0..4 {
        print!("{} ", b.get(c));
    }
    println!();
    println!("value {}", net.value(b));
    let mut hist = [0; 17];
    for i in 0..40 {
        let mut g = Game::from_position(9, i, b);
        play_network_game(&mut g, &net, 1, None);
        hist[g.reached_exponent() as usize] += 1;
        if i < 3 {
            println!(
                "game {i} score {} moves {} state {:?}",
                g.score, g.moves, g.state
            );
            for r in 0..4 {
                println!(
                    "  {:?}",
                    (0..4)
                        .map(|c| {
                            let e = g.board.get(4 * r + c);
                            if e == 0 { 0 } else { 1u32 << e }
                        })
                        .collect::<Vec<_>>()
                );
            }
        }
    }
    println!("{hist:?}");
}
