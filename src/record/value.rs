//! Value codes: an [`Outcome`] in 16 bits, as the solver's working state, its records and
//! every file store it. 0 = undecided (in the working state) or draw (once finished),
//! `2n` = `Win(n)`, `2n + 1` = `Loss(n)`.

use crate::record::Outcome;

/// A value in 16 bits: 0 draw/undecided, `2n` win in `n`, `2n + 1` loss in `n`.
pub type Val = u16;

/// The longest win or loss, in plies, that the solver, its records and every file hold
/// (the whole game's longest is 147). A value beyond it is refused where it is read.
pub const MAX_DIST: u32 = 255;

/// The code of `Win(n)`.
#[inline]
pub fn win(n: u32) -> Val {
    debug_assert!(n < 1 << 15);
    (2 * n) as Val
}

/// The code of `Loss(n)`.
#[inline]
pub fn loss(n: u32) -> Val {
    debug_assert!(n < 1 << 15);
    (2 * n + 1) as Val
}

/// The distance of a win or loss code.
#[inline]
pub fn dist(v: Val) -> u32 {
    v as u32 / 2
}

/// True for the code of a loss (`Loss(n)`, elided or not).
#[inline]
pub fn is_loss(v: Val) -> bool {
    v & 1 == 1
}

/// The [`Outcome`] of a finished value.
#[inline]
pub fn val_outcome(v: Val) -> Outcome {
    match v {
        0 => Outcome::Draw,
        v if v & 1 == 0 => Outcome::Win(v as u32 / 2),
        v => Outcome::Loss(v as u32 / 2),
    }
}

/// How many of the finished values `vals` are wins, losses and draws.
pub fn tally(vals: impl Iterator<Item = Val>) -> (u64, u64, u64) {
    vals.fold((0, 0, 0), |(w, l, d), v| match v {
        0 => (w, l, d + 1),
        v if is_loss(v) => (w, l + 1, d),
        _ => (w + 1, l, d),
    })
}

/// The 16-bit code of an outcome.
#[inline]
pub fn outcome_val(o: Outcome) -> Val {
    match o {
        Outcome::Draw => 0,
        Outcome::Win(n) => win(n),
        Outcome::Loss(n) => loss(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_every_outcome() {
        for o in [Outcome::Draw, Outcome::Win(1), Outcome::Win(147), Outcome::Loss(0), Outcome::Loss(146)] {
            assert_eq!(val_outcome(outcome_val(o)), o);
        }
        assert_eq!((win(3), loss(3), dist(loss(3))), (6, 7, 3));
        assert!(is_loss(loss(0)) && !is_loss(win(1)) && !is_loss(0));
        assert_eq!(tally([0, win(1), loss(0), loss(9), win(147), 0, 0].into_iter()), (2, 2, 3));
    }
}
