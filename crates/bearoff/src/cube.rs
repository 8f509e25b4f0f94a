//! gnubg's money-play cube decision, and the equities and actions a table reports with it.

use super::numeric::Real;

/// The money-play cube decision of the side on roll, as gnubg's makebearoff takes it: with
/// `no_double` its equity if it does not double and `owned_by_taker` its equity per unit of a
/// doubled cube that the opponent took (and so owns), it doubles when doubling is at least as
/// good, and the opponent then passes (1) or takes (2 x `owned_by_taker`), whichever is worse
/// for the doubler.
#[inline(always)]
pub fn cube_decision<W: Real>(no_double: W, owned_by_taker: W) -> W {
    let take = owned_by_taker.twice();
    // `&`, not `&&`: no branch, so that the rows vectorise.
    if (take >= no_double) & (no_double <= W::ONE) {
        take.min(W::ONE)
    } else {
        no_double
    }
}

/// The money equities of the side on roll before its cube decision.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Equities {
    /// It owns the cube.
    pub owned: f64,
    /// The cube is centred.
    pub centred: f64,
    /// Its opponent owns the cube.
    pub opponent_owns: f64,
}

/// The side on roll's cube decision, and the equity it leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CubeAction {
    NoDouble,
    DoubleTake,
    DoublePass,
}

impl CubeAction {
    pub fn as_str(self) -> &'static str {
        match self {
            CubeAction::NoDouble => "no double",
            CubeAction::DoubleTake => "double, take",
            CubeAction::DoublePass => "double, pass",
        }
    }
}

impl Equities {
    /// The decision of the side on roll when it may double (the cube centred, or its own when
    /// `owned`), as gnubg's makebearoff takes it, and the resulting equity.
    pub fn decision(&self, owned: bool) -> (CubeAction, f64) {
        let no_double = if owned { self.owned } else { self.centred };
        let equity = cube_decision(no_double, self.opponent_owns);
        let action = if equity == no_double {
            CubeAction::NoDouble
        } else if equity == 1.0 {
            CubeAction::DoublePass
        } else {
            CubeAction::DoubleTake
        };
        (action, equity)
    }
}

#[cfg(test)]
mod tests {
    use super::cube_decision;
    use crate::numeric::{Fixed, Real};

    #[test]
    fn cube_decisions() {
        // Double, pass: the taker would do worse than losing one unit.
        assert_eq!(cube_decision(0.8, 0.6), 1.0);
        // Double, take: twice the taker-owned equity.
        assert_eq!(cube_decision(0.3, 0.2), 0.4);
        // No double: doubling would give less.
        assert_eq!(cube_decision(0.3, 0.1), 0.3);
        // Exact in fixed point: a double the taker must pass is worth one unit.
        assert_eq!(cube_decision(Fixed::ONE, Fixed::ONE), Fixed::ONE);
    }
}
