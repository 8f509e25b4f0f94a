//! The two-sided sweep by columns per cell type, in nanoseconds a pair, into a sink that
//! discards the columns: `cargo bench --bench columns -- CHECKERS K CELL`
//! (K = 1 cubeless or 3 cubeful; CELL = f32, fixed or u16), e.g. `-- 10 1 f32`; by default
//! 8 checkers on 6 points, every combination.

use rollsim_bearoff::Space;
use rollsim_bearoff::columns::*;
use rollsim_bearoff::numeric::{Cell, Fixed};
use std::time::Instant;
fn run<const K: usize, R: Recurrence<K>, C: Cell>(moves: &Moves) -> f64 {
    let t = Instant::now();
    let mut w = vec![C::zeroed(); moves.window.capacity * moves.n * K];
    sweep::<K, R, C>(moves, 0, &mut w, &|_, _| Ok(()), &mut |_| Ok(())).unwrap();
    t.elapsed().as_secs_f64() * 1e9 / (moves.n * moves.n) as f64
}
fn main() {
    // cargo bench passes `--bench`; the rest are ours.
    let a: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if a.len() < 3 {
        for k in ["1", "3"] {
            for cell in ["f32", "fixed", "u16"] {
                bench(&["8".into(), k.into(), cell.into()]);
            }
        }
        return;
    }
    bench(&a);
}

fn bench(a: &[String]) {
    let c: u32 = a[0].parse().expect("checkers");
    let moves = Moves::new(Space::new(6, c).expect("a space"));
    let ns = match (a[1].as_str(), a[2].as_str()) {
        ("1", "f32") => run::<1, Cubeless, f32>(&moves),
        ("1", "fixed") => run::<1, Cubeless, Fixed>(&moves),
        ("1", "u16") => run::<1, Cubeless, u16>(&moves),
        ("3", "f32") => run::<3, Cubeful, f32>(&moves),
        ("3", "fixed") => run::<3, Cubeful, Fixed>(&moves),
        ("3", "u16") => run::<3, Cubeful, u16>(&moves),
        _ => panic!("K is 1 or 3, CELL f32, fixed or u16"),
    };
    println!("{c}x6 K={} {}: {ns:.1} ns a pair", a[1], a[2]);
}
