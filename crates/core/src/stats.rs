//! Statistics of samples, written once for every report: mean and sample standard deviation
//! from exact integer sums, integer samples kept as a histogram (the median of a billion games
//! without holding them), and 95% intervals.

use std::collections::BTreeMap;

/// The two-sided 95% point of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A two-sided interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

/// The Wilson score interval of a proportion `k / n` (`n` > 0) at normal point `z`.
pub fn wilson(k: u64, n: u64, z: f64) -> Interval {
    let n = n as f64;
    let p = k as f64 / n;
    let z2 = z * z;
    let d = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / d;
    let half = z / d * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // The bounds are exactly 0 at k = 0 and 1 at k = n; rounding would miss them by an ulp.
    Interval {
        lo: if k == 0 {
            0.0
        } else {
            (centre - half).max(0.0)
        },
        hi: if k as f64 == n {
            1.0
        } else {
            (centre + half).min(1.0)
        },
    }
}

/// Mean and sample standard deviation of `n` samples from their exact sums (NaN for no
/// samples, a standard deviation of 0 for one). The integer numerator `n Σx² - (Σx)²` keeps
/// the variance free of cancellation.
pub fn mean_sd(n: u64, sum: u128, sum_sq: u128) -> (f64, f64) {
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let nf = n as f64;
    let mean = sum as f64 / nf;
    if n < 2 {
        return (mean, 0.0);
    }
    let num = u128::from(n) * sum_sq - sum * sum;
    (mean, (num as f64 / (nf * (nf - 1.0))).sqrt())
}

/// The median of real samples (the mean of the two middle ones for an even count; NaN for
/// none), sorting them in place.
pub fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    match xs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => xs[m],
        _ => (xs[m - 1] + xs[m]) / 2.0,
    }
}

/// Integer samples by value: distinct values (scores, say) are far fewer than samples.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    counts: BTreeMap<u64, u64>,
    n: u64,
    sum: u128,
    sum_sq: u128,
}

/// What reports give of a sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub mean: f64,
    /// Sample standard deviation.
    pub sd: f64,
    /// The middle value, or the mean of the two middle values (NaN for no samples).
    pub median: f64,
    pub min: u64,
    pub max: u64,
    pub n: u64,
}

impl Summary {
    /// The normal-approximation interval of the mean, `mean ± z sd / sqrt(n)` (a single
    /// value's interval is the value itself).
    pub fn mean_interval(&self, z: f64) -> Interval {
        let half = z * self.sd / (self.n as f64).sqrt();
        Interval {
            lo: self.mean - half,
            hi: self.mean + half,
        }
    }
}

impl Histogram {
    pub fn add(&mut self, x: u64) {
        *self.counts.entry(x).or_default() += 1;
        self.n += 1;
        self.sum += u128::from(x);
        self.sum_sq += u128::from(x) * u128::from(x);
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The `k`-th value in ascending order, from 0.
    fn kth(&self, k: u64) -> u64 {
        let mut seen = 0;
        for (&x, &c) in &self.counts {
            seen += c;
            if seen > k {
                return x;
            }
        }
        0
    }

    pub fn summary(&self) -> Summary {
        let (mean, sd) = mean_sd(self.n, self.sum, self.sum_sq);
        let median = match self.n {
            0 => f64::NAN,
            n if n % 2 == 1 => self.kth(n / 2) as f64,
            n => (self.kth(n / 2 - 1) + self.kth(n / 2)) as f64 / 2.0,
        };
        Summary {
            mean,
            sd,
            median,
            min: self.counts.keys().next().copied().unwrap_or(0),
            max: self.counts.keys().next_back().copied().unwrap_or(0),
            n: self.n,
        }
    }
}

impl FromIterator<u64> for Histogram {
    fn from_iter<I: IntoIterator<Item = u64>>(xs: I) -> Histogram {
        let mut h = Histogram::default();
        for x in xs {
            h.add(x);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_known_values() {
        let close = |i: Interval, lo: f64, hi: f64| {
            assert!(
                (i.lo - lo).abs() < 1e-4 && (i.hi - hi).abs() < 1e-4,
                "{i:?}"
            );
        };
        close(wilson(5, 10, Z95), 0.2366, 0.7634);
        // Newcombe (1998) and the usual tables.
        close(wilson(0, 10, Z95), 0.0, 0.2775);
        assert_eq!(wilson(0, 10, Z95).lo, 0.0);
        close(wilson(10, 10, Z95), 0.7225, 1.0);
        assert_eq!(wilson(10, 10, Z95).hi, 1.0);
        close(wilson(81, 263, Z95), 0.2553, 0.3662);
    }

    #[test]
    fn summaries_of_samples() {
        let h: Histogram = [2, 4, 4, 4, 5, 5, 7, 9].into_iter().collect();
        let s = h.summary();
        assert_eq!((s.mean, s.median, s.min, s.max, s.n), (5.0, 4.5, 2, 9, 8));
        let sd = (32.0f64 / 7.0).sqrt();
        assert!((s.sd - sd).abs() < 1e-12);
        let i = s.mean_interval(Z95);
        let half = Z95 * sd / 8f64.sqrt();
        assert!((i.lo - (5.0 - half)).abs() < 1e-12 && (i.hi - (5.0 + half)).abs() < 1e-12);
        let one: Histogram = [3].into_iter().collect();
        let s = one.summary();
        assert_eq!((s.mean, s.sd, s.median), (3.0, 0.0, 3.0));
        assert_eq!(s.mean_interval(Z95), Interval { lo: 3.0, hi: 3.0 });
        assert_eq!(
            [1, 2, 10]
                .into_iter()
                .collect::<Histogram>()
                .summary()
                .median,
            2.0
        );
        assert!(Histogram::default().summary().median.is_nan());
        assert!(mean_sd(0, 0, 0).0.is_nan());
        assert_eq!(median(&mut [10.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [20.0, 1.0, 10.0, 2.0]), 6.0);
        assert!(median(&mut []).is_nan());
    }

    /// Large, nearly equal values: the two-pass formula in f64 and the exact numerator agree,
    /// where the naive `Σx²/n - mean²` in f64 would cancel to nonsense.
    #[test]
    fn the_variance_of_large_values_keeps_its_digits() {
        let h: Histogram = [1_000_000_001, 1_000_000_003, 1_000_000_005]
            .into_iter()
            .collect();
        assert_eq!(h.summary().sd, 2.0);
    }
}
