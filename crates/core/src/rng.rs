//! Counter-based random numbers: Philox4x32-10 and the streams built on it.
//!
//! Every random word rollsim draws comes from [`philox4x32_10`] applied to a counter that names
//! *what* the word is for (which game, which move, which candidate, which rollout) rather than
//! *when* it was drawn. That is what makes a run reproducible whatever the thread count, and what
//! lets the WGSL twin (`shaders/shared/philox.wgsl`) draw the very same words on the GPU: the
//! generator needs only 32-bit integer operations, and its state is a handful of `u32`s.

/// Philox multipliers and Weyl key increments (Salmon et al., SC 2011).
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// One Philox4x32-10 block: 4 counter words and 2 key words in, 4 random words out.
#[inline(always)]
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let [mut c0, mut c1, mut c2, mut c3] = counter;
    let [mut k0, mut k1] = key;
    for round in 0..10 {
        if round > 0 {
            k0 = k0.wrapping_add(W0);
            k1 = k1.wrapping_add(W1);
        }
        let p0 = u64::from(M0) * u64::from(c0);
        let p1 = u64::from(M1) * u64::from(c2);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    [c0, c1, c2, c3]
}

/// What a stream is for; the top four bits of the last counter word, so that streams of
/// different purposes never share a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum StreamKind {
    /// The spawns (and a random player's choices) of one real game.
    Game = 1,
    /// One Monte Carlo rollout.
    Rollout = 2,
    /// One random 15-puzzle board.
    Puzzle = 3,
    /// The choices of training shaping (where a training game starts).
    Shaping = 4,
}

/// Largest move number a rollout stream can name: 26 bits of the last counter word.
/// A 2048 game cannot last longer (every move spawns at least a 2, and the board holds at most
/// 16 x 32768), so this is never reached by a real game.
pub const MAX_MOVE_NUMBER: u32 = (1 << 26) - 1;

/// The identity of a rollout's random stream: the last three Philox counter words.
/// Shared by the CPU engine and the GPU kernel's input records.
#[inline]
pub fn rollout_counter(game: u32, move_number: u32, candidate: u32, rollout: u32) -> [u32; 3] {
    debug_assert!(move_number <= MAX_MOVE_NUMBER && candidate < 4);
    [
        rollout,
        game,
        (StreamKind::Rollout as u32) << 28 | move_number << 2 | candidate,
    ]
}

/// A sequential stream of random words: Philox blocks at counters `[0, id..]`, `[1, id..]`, ...
/// The first counter word numbers the block; the other three name the stream.
#[derive(Clone, Debug)]
pub struct Stream {
    key: [u32; 2],
    id: [u32; 3],
    block: u32,
    buf: [u32; 4],
    pos: usize,
}

impl Stream {
    /// The stream named `id` under `seed`.
    #[inline]
    pub fn new(seed: u64, id: [u32; 3]) -> Self {
        Stream {
            key: [seed as u32, (seed >> 32) as u32],
            id,
            block: 0,
            buf: [0; 4],
            pos: 4,
        }
    }

    /// The stream of one real game: its spawns and, for the random player, its moves.
    pub fn game(seed: u64, game: u32) -> Self {
        Stream::new(seed, [0, game, (StreamKind::Game as u32) << 28])
    }

    /// The stream of a training game's shaping choices (its spawns keep [`Stream::game`]).
    pub fn shaping(seed: u64, game: u32) -> Self {
        Stream::new(seed, [0, game, (StreamKind::Shaping as u32) << 28])
    }

    /// The stream of one rollout, named by everything that identifies it and nothing about how
    /// the work was scheduled.
    #[inline]
    pub fn rollout(seed: u64, game: u32, move_number: u32, candidate: u32, rollout: u32) -> Self {
        Stream::new(seed, rollout_counter(game, move_number, candidate, rollout))
    }

    /// The next random word.
    #[inline(always)]
    pub fn next_u32(&mut self) -> u32 {
        if self.pos == 4 {
            let [a, b, c] = self.id;
            self.buf = philox4x32_10([self.block, a, b, c], self.key);
            self.block = self.block.wrapping_add(1);
            self.pos = 0;
        }
        let x = self.buf[self.pos];
        self.pos += 1;
        x
    }

    /// A uniformly distributed integer in `0..n`, exactly, for `n >= 1`.
    #[inline(always)]
    pub fn below(&mut self, n: u32) -> u32 {
        below(n, || self.next_u32())
    }
}

/// Lemire's multiply-shift with rejection: exact and unbiased, usually one word per draw.
/// `x * n` splits `2^32` words into `n` buckets; the `2^32 mod n` words whose low half falls
/// below that threshold would make some buckets larger, so they are rejected and redrawn.
#[inline(always)]
pub fn below(n: u32, mut word: impl FnMut() -> u32) -> u32 {
    debug_assert!(n > 0);
    let mut m = u64::from(word()) * u64::from(n);
    let mut low = m as u32;
    if low < n {
        let threshold = n.wrapping_neg() % n;
        while low < threshold {
            m = u64::from(word()) * u64::from(n);
            low = m as u32;
        }
    }
    (m >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known answers, also in shared/reference/random-numbers.md.
    #[test]
    fn philox_known_answers() {
        assert_eq!(
            philox4x32_10([0; 4], [0; 2]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    fn stream_walks_blocks_in_order() {
        let seed = 0x0123_4567_89ab_cdef;
        let mut s = Stream::new(seed, [7, 8, 9]);
        let key = [0x89ab_cdef, 0x0123_4567];
        let mut expected = Vec::new();
        for block in 0..3 {
            expected.extend(philox4x32_10([block, 7, 8, 9], key));
        }
        let got: Vec<u32> = (0..12).map(|_| s.next_u32()).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn streams_of_different_purpose_differ() {
        let mut game = Stream::game(1, 0);
        let mut rollout = Stream::rollout(1, 0, 0, 0, 0);
        assert_ne!(game.next_u32(), rollout.next_u32());
        assert_ne!(
            rollout_counter(3, 5, 1, 9),
            rollout_counter(3, 5, 2, 9),
            "candidates must have their own streams"
        );
    }

    #[test]
    fn below_rejects_exactly_the_biased_words() {
        // n = 10: 2^32 mod 10 = 6 words are biased; x = 0 gives x*10 mod 2^32 = 0 < 6.
        let mut words = [0u32, 0x8000_0001].into_iter();
        assert_eq!(below(10, || words.next().unwrap()), 5);
        assert_eq!(
            words.next(),
            None,
            "word 0 must be rejected, the next one used"
        );
        // A word whose low product is at or above the threshold is kept.
        let mut words = [u32::MAX].into_iter();
        assert_eq!(below(10, || words.next().unwrap()), 9);
        // n = 1 never rejects and always gives 0.
        assert_eq!(below(1, || 0), 0);
    }

    #[test]
    fn below_is_exactly_uniform_on_a_reduced_word_size() {
        // The same algorithm on 8-bit words, checked over every word: every bucket is hit by
        // exactly floor(256 / n) accepted words.
        for n in 1u32..=40 {
            let threshold = (256 - n) % n;
            let mut counts = vec![0u32; n as usize];
            for x in 0u32..256 {
                let m = x * n;
                if (m & 0xff) >= threshold {
                    counts[(m >> 8) as usize] += 1;
                }
            }
            assert!(counts.iter().all(|&c| c == 256 / n), "n = {n}: {counts:?}");
        }
    }

    #[test]
    fn below_statistics() {
        let mut s = Stream::new(42, [1, 2, 3]);
        let n = 6;
        let draws = 600_000;
        let mut counts = [0u32; 6];
        for _ in 0..draws {
            counts[s.below(n) as usize] += 1;
        }
        // Chi-square with 5 degrees of freedom; 20.5 is the 0.999 quantile.
        let e = f64::from(draws) / 6.0;
        let chi2: f64 = counts.iter().map(|&c| (f64::from(c) - e).powi(2) / e).sum();
        assert!(chi2 < 20.5, "chi2 = {chi2}, counts {counts:?}");
    }
}
