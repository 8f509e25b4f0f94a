//! The number types of the sweeps: the two-sided sweep's working types ([`Real`]: f32, f64,
//! [`Fixed`], [`Q16`]) and stored cells ([`Cell`], [`CellKind`]), the one-sided sweep's
//! probabilities ([`Prob`]: f64, [`Fixed31`]), and gnubg's 16-bit [`quantize`].

use std::ops::Neg;

/// The working type of a cell: f32, [`Fixed`], or f64 for the exact reference.
pub trait Real: Copy + Send + Sync + PartialOrd + Neg<Output = Self> + 'static {
    const NEG_INFINITY: Self;
    const ONE: Self;
    fn max(self, other: Self) -> Self;
    /// IEEE maxNum: the same as `max` here, where there are no NaNs.
    fn maxnum(self, other: Self) -> Self;
    fn min(self, other: Self) -> Self;
    fn twice(self) -> Self;
    /// The value is `raw() * UNIT`; raw() is exact. The sweep sums raw values and scales once.
    const UNIT: f64;
    fn raw(self) -> f64;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self.raw() * Self::UNIT
    }
    fn from_f64(v: f64) -> Self;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                // Not `<$t>::max`: its NaN handling keeps LLVM from a plain vector max.
                if other > self { other } else { self }
            }
            #[inline(always)]
            fn maxnum(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                if other < self { other } else { self }
            }
            #[inline(always)]
            fn twice(self) -> Self {
                self + self
            }
            const UNIT: f64 = 1.0;
            #[inline(always)]
            fn raw(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
        }
    };
}
real!(f32);
real!(f64);

/// A value in fixed point, `raw / 2^29`: every value of a bearoff table lies in [-1, 1], and
/// twice that still fits. The sweep's operations on it are exact integer ones, and its sum over
/// the rolls is exact in f64, so a value is the exact recurrence rounded once to 2^-29 (1.9e-9):
/// the same bits on every backend, GPU kernels included, which have no f64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Fixed(pub i32);

impl Fixed {
    pub const FRACTION_BITS: u32 = 29;
    const SCALE: f64 = (1u64 << Self::FRACTION_BITS) as f64;
}

impl Neg for Fixed {
    type Output = Fixed;
    #[inline(always)]
    fn neg(self) -> Fixed {
        Fixed(-self.0)
    }
}

impl Real for Fixed {
    // Not i32::MIN, whose negation overflows.
    const NEG_INFINITY: Self = Fixed(-i32::MAX);
    const ONE: Self = Fixed(1 << Self::FRACTION_BITS);
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        Fixed(self.0.max(other.0))
    }
    #[inline(always)]
    fn maxnum(self, other: Self) -> Self {
        Fixed(self.0.max(other.0))
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        Fixed(self.0.min(other.0))
    }
    #[inline(always)]
    fn twice(self) -> Self {
        Fixed(self.0 << 1)
    }
    /// Exact: a power-of-two scale.
    const UNIT: f64 = 1.0 / Self::SCALE;
    #[inline(always)]
    fn raw(self) -> f64 {
        f64::from(self.0)
    }
    /// Rounded half up to the nearest 2^-29, `floor(v 2^29 + 1/2)`: exact in f64 for the
    /// sweep's `OFFSET + sum / 36`, whose exact value is either a multiple of 2^-29 / 36 at
    /// least 1/36 of a step from a rounding boundary or exactly on one (and then representable).
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        Fixed((v * Self::SCALE + 0.5).floor() as i32)
    }
}

/// A value in gnubg's 16-bit steps, `raw / 65535`, `raw` a whole number: the working type of
/// u16 cells. Loading a cell, negating, doubling and comparing are exact (whole numbers below
/// 2^24 in f32; i32 on the GPU), and the sum over the rolls in f64 is within 1e-14 of exact, far
/// inside the 1/72 of a step to which [`Cell::store`] for u16 snaps it, so a cell is the exact
/// recurrence over its successors' cells rounded once: the same bits on every backend.
/// f32, not i32: the u16 sweep keeps the vector code of f32 cells.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Q16(pub f32);

impl Q16 {
    pub const STEPS: i32 = 65535;

    /// The whole number of steps.
    pub fn steps(self) -> i32 {
        self.0 as i32
    }
}

impl Neg for Q16 {
    type Output = Q16;
    #[inline(always)]
    fn neg(self) -> Q16 {
        Q16(-self.0)
    }
}

impl Real for Q16 {
    const NEG_INFINITY: Self = Q16(f32::NEG_INFINITY);
    const ONE: Self = Q16(Self::STEPS as f32);
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        Q16(Real::max(self.0, other.0))
    }
    #[inline(always)]
    fn maxnum(self, other: Self) -> Self {
        Q16(f32::max(self.0, other.0))
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        Q16(Real::min(self.0, other.0))
    }
    #[inline(always)]
    fn twice(self) -> Self {
        Q16(self.0 + self.0)
    }
    const UNIT: f64 = 1.0 / Self::STEPS as f64;
    #[inline(always)]
    fn raw(self) -> f64 {
        f64::from(self.0)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        Q16((v * f64::from(Self::STEPS) + 0.5).floor() as f32)
    }
}

/// How values are stored, in memory and in rollsim's file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CellKind {
    /// 16-bit fixed point over the value's range (gnubg's own precision).
    U16,
    F32,
    /// [`Fixed`]: 32-bit fixed point, 2^-29; the GPU's cell.
    Fixed32,
    F64,
}

impl CellKind {
    pub const fn bytes(self) -> usize {
        match self {
            CellKind::U16 => 2,
            CellKind::F32 | CellKind::Fixed32 => 4,
            CellKind::F64 => 8,
        }
    }

    /// The code in rollsim's file header.
    pub const fn code(self) -> u32 {
        match self {
            CellKind::F32 => 1,
            CellKind::F64 => 2,
            CellKind::U16 => 3,
            CellKind::Fixed32 => 4,
        }
    }

    pub fn from_code(code: u32) -> Option<CellKind> {
        [
            CellKind::F32,
            CellKind::F64,
            CellKind::U16,
            CellKind::Fixed32,
        ]
        .into_iter()
        .find(|k| k.code() == code)
    }

    pub const fn name(self) -> &'static str {
        match self {
            CellKind::U16 => "u16",
            CellKind::F32 => "f32",
            CellKind::Fixed32 => "fixed32",
            CellKind::F64 => "f64",
        }
    }

    /// Half the step between neighbouring values near the top of `range`: the most one
    /// rounding to this cell moves a value.
    pub fn half_step(self, range: (f64, f64)) -> f64 {
        let top = range.1.abs().max(range.0.abs());
        match self {
            CellKind::U16 => (range.1 - range.0) / 65535.0 / 2.0,
            CellKind::F32 => top * f64::from(f32::EPSILON) / 2.0,
            CellKind::Fixed32 => 0.5 / Fixed::SCALE,
            CellKind::F64 => top * f64::EPSILON / 2.0,
        }
    }
}

/// A stored value.
pub trait Cell: bytemuck::Pod + Send + Sync {
    type Work: Real;
    const KIND: CellKind;
    fn load(self, range: (f64, f64)) -> Self::Work;
    fn store(v: f64, range: (f64, f64)) -> Self;
}

impl Cell for f64 {
    type Work = f64;
    const KIND: CellKind = CellKind::F64;
    #[inline(always)]
    fn load(self, _: (f64, f64)) -> f64 {
        self
    }
    #[inline(always)]
    fn store(v: f64, _: (f64, f64)) -> f64 {
        v
    }
}

impl Cell for f32 {
    type Work = f32;
    const KIND: CellKind = CellKind::F32;
    #[inline(always)]
    fn load(self, _: (f64, f64)) -> f32 {
        self
    }
    #[inline(always)]
    fn store(v: f64, _: (f64, f64)) -> f32 {
        v as f32
    }
}

impl Cell for Fixed {
    type Work = Fixed;
    const KIND: CellKind = CellKind::Fixed32;
    #[inline(always)]
    fn load(self, _: (f64, f64)) -> Fixed {
        self
    }
    #[inline(always)]
    fn store(v: f64, _: (f64, f64)) -> Fixed {
        Fixed::from_f64(v)
    }
}

impl Cell for u16 {
    type Work = Q16;
    const KIND: CellKind = CellKind::U16;
    #[inline(always)]
    fn load(self, (lo, hi): (f64, f64)) -> Q16 {
        // Ranges have integer ends ([0, 1] or [-1, 1]), so a cell is a whole number of steps.
        Q16(f32::from(self) * (hi - lo) as f32 + (lo * f64::from(Q16::STEPS)) as f32)
    }
    #[inline(always)]
    fn store(v: f64, (lo, hi): (f64, f64)) -> u16 {
        // gnubg's rounding, `floor(x 65535 + 1/2)` for x = (v - lo) / (hi - lo), made exact: the
        // sweep's v is OFFSET + (a whole number of steps) / 36, so x 65535 is a multiple of
        // 1 / (36 span), and a quarter of that added to the half puts an exact tie above its
        // boundary and leaves everything else on its side, whatever the sum's rounding error.
        // (Snapping with a division instead is 7% slower.)
        let span = hi - lo;
        // `as` saturates to 0 ..= 65535.
        ((v - lo) * (f64::from(Q16::STEPS) / span) + (0.5 + 0.25 / (36.0 * span))).floor() as u16
    }
}

/// A probability as the sweep keeps it for the levels above: exact `f64`, or [`Fixed31`].
pub trait Prob: Copy + Default + Send + Sync + 'static {
    /// A sum of probabilities weighted in 36ths, as the sweep adds a distribution's successors.
    type Sum: Copy + Default;
    fn load(self) -> f64;
    fn store(p: f64) -> Self;
    fn is_zero(self) -> bool;
    fn add_weighted(sum: &mut Self::Sum, w: u32, p: Self);
    /// The stored probability of `sum / 36`.
    fn of_36ths(sum: Self::Sum) -> Self;
    /// gnubg's 16 bits, [`quantize`]`(self.load())`.
    #[inline(always)]
    fn quantized(self) -> u16 {
        quantize(self.load())
    }
}

impl Prob for f64 {
    #[inline(always)]
    fn load(self) -> f64 {
        self
    }
    #[inline(always)]
    fn store(p: f64) -> f64 {
        p
    }
    #[inline(always)]
    fn is_zero(self) -> bool {
        self == 0.0
    }
    type Sum = f64;
    #[inline(always)]
    fn add_weighted(sum: &mut f64, w: u32, p: f64) {
        *sum += f64::from(w) * p;
    }
    #[inline(always)]
    fn of_36ths(sum: f64) -> f64 {
        sum / 36.0
    }
}

/// A probability in units of 2^-31, rounded to nearest: half the bytes of `f64`, and entries
/// under 2^-32 drop out of the support (15x10: 14.4 stored entries a position instead of 21.2).
/// A distribution is a weighted mean of its successors' plus one rounding, so its error is at
/// most half a unit per roll of depth, 31 x 2^-32 = 7.2e-9 over gnubg's 32 entries: 1/2100
/// of gnubg's 16-bit step. What it is for is a table written in gnubg's 16 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fixed31(pub u32);

impl Fixed31 {
    const SCALE: f64 = (1u64 << 31) as f64;
}

impl Prob for Fixed31 {
    #[inline(always)]
    fn load(self) -> f64 {
        f64::from(self.0) * (1.0 / Fixed31::SCALE)
    }
    #[inline(always)]
    fn store(p: f64) -> Fixed31 {
        Fixed31((p * Fixed31::SCALE).round() as u32)
    }
    #[inline(always)]
    fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// Summed in whole units, exactly (36 x 2^32 < 2^64), and rounded half up once: the same
    /// bits as the f64 sum, which is exact, divided by 36 and rounded (a quotient lies at least
    /// 1/36 of a unit from a half, far beyond f64's error), without a conversion per entry.
    type Sum = u64;
    #[inline(always)]
    fn add_weighted(sum: &mut u64, w: u32, p: Fixed31) {
        *sum += u64::from(w) * u64::from(p.0);
    }
    #[inline(always)]
    fn of_36ths(sum: u64) -> Fixed31 {
        Fixed31(((sum + 18) / 36) as u32)
    }
    /// In integers: `x / 2^31 × 65535 + 1/2` is exact in f64 (under 2^47 units of 2^-31), so
    /// its floor is the same shift.
    #[inline(always)]
    fn quantized(self) -> u16 {
        ((u64::from(self.0) * 65535 + (1 << 30)) >> 31).min(0xFFFF) as u16
    }
}

/// A probability as gnubg's `uint16` fixed point (0xFFFF = 1): `p·65535` rounded half up,
/// clamped to 0..=0xFFFF (NaN gives 0). makebearoff sums the 36 rolls' weighted successor
/// values and divides with `(sum + 18) / 36`, rounding half up; this is that rule applied to
/// the exact probability. (makebearoff then also subtracts the distribution's rounding
/// residual from its mode; rollsim rounds each exact entry on its own, which is closer.)
pub fn quantize(p: f64) -> u16 {
    // `as` saturates, and maps NaN to 0.
    (p * 65535.0 + 0.5).floor() as u16
}

#[cfg(test)]
mod tests {
    use super::{Fixed, Fixed31, Prob, Real, quantize};

    #[test]
    fn quantize_rounds_half_up_and_clamps() {
        assert_eq!(quantize(0.0), 0);
        assert_eq!(quantize(1.0), 0xFFFF);
        assert_eq!(quantize(0.5), 32768); // 32767.5 rounds up, like (sum + 18) / 36
        assert_eq!(quantize(1.0 / 9.0), 7282);
        assert_eq!(quantize(-0.25), 0);
        assert_eq!(quantize(1.5), 0xFFFF);
        assert_eq!(quantize(f64::NAN), 0);
    }

    #[test]
    fn fixed_point_rounds_half_up_exactly() {
        let step = 1.0 / Fixed::SCALE;
        assert_eq!(Fixed::from_f64(1.0), Fixed::ONE);
        assert_eq!(Fixed::from_f64(-1.0), -Fixed::ONE);
        assert_eq!(Fixed::from_f64(0.5 * step), Fixed(1));
        assert_eq!(Fixed::from_f64(-0.5 * step), Fixed(0));
        assert_eq!(Fixed::from_f64(0.49 * step), Fixed(0));
        // The sweep's form: OFFSET + m 2^-29 / 36 rounds as floor((m + 18) / 36) + OFFSET.
        for m in [
            -36 * 5 - 18,
            -19,
            -18,
            -17,
            0,
            17,
            18,
            19,
            36 * 1000 + 18,
            35 << 29,
        ] {
            for offset in [0.0, 1.0] {
                let v = offset + (f64::from(m) * step) / 36.0;
                let want = (i64::from(m) + 18).div_euclid(36) + ((offset as i64) << 29);
                assert_eq!(i64::from(Fixed::from_f64(v).0), want, "{m} {offset}");
            }
        }
    }

    #[test]
    fn fixed31_quantizes_as_its_f64_value_does() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let edges = [
            0,
            1,
            1 << 14,
            32767,
            32768,
            1 << 30,
            (1 << 31) - 1,
            1 << 31,
            u32::MAX,
        ];
        // Around half a 16-bit step above a few steps, where the rounding turns.
        let halves = (0..65535u64)
            .step_by(4099)
            .flat_map(|k| {
                let h = ((2 * k + 1) << 30) / 65535;
                [h - 1, h, h + 1]
            })
            .map(|h| h as u32);
        let random = (0..100_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 33) as u32
        });
        for v in edges.into_iter().chain(halves).chain(random) {
            let p = Fixed31(v);
            assert_eq!(p.quantized(), quantize(p.load()), "{v}");
        }
    }
}
