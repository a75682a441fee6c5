//! The value of a node: win, loss or draw, with the distance in plies.

/// The game-theoretic value of a node for the side to move, with the number of plies
/// until the game ends under optimal play (the winner hurries, the loser delays),
/// counting the move that ends it. A capture that wins at once is `Win(1)`; a move that
/// leaves the mover lost (a "suicide") is `Loss(1)`; a node with no move at all is `Loss(0)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Outcome {
    /// The side to move wins in this many plies.
    Win(u32),
    /// The side to move loses in this many plies.
    Loss(u32),
    /// Neither side can force a win: infinite play.
    Draw,
}

impl Outcome {
    /// The value of the parent of a node with this value, reached by one more ply.
    #[inline]
    pub fn parent(self) -> Outcome {
        match self {
            Outcome::Win(n) => Outcome::Loss(n + 1),
            Outcome::Loss(n) => Outcome::Win(n + 1),
            Outcome::Draw => Outcome::Draw,
        }
    }

    /// True when `self` is better than `other` for the side choosing between them:
    /// a win beats a draw beats a loss; a faster win and a slower loss are better.
    #[inline]
    pub fn better_than(self, other: Outcome) -> bool {
        self.rank() > other.rank()
    }

    fn rank(self) -> i64 {
        match self {
            Outcome::Win(n) => i64::MAX / 2 - n as i64,
            Outcome::Draw => 0,
            Outcome::Loss(n) => -(i64::MAX / 2) + n as i64,
        }
    }

    /// The value in words: "player wins in N plies", "player loses in N plies" ("1
    /// ply"), "draw". The published tool says "moves" for these plies; ostledb says
    /// plies everywhere, as its numbers are (issue 63).
    pub fn describe(self) -> String {
        match self {
            Outcome::Win(n) => format!("player wins in {}", plies_text(n)),
            Outcome::Loss(n) => format!("player loses in {}", plies_text(n)),
            Outcome::Draw => "draw".to_string(),
        }
    }
}

/// `n` plies in words: "1 ply", "7 plies".
pub fn plies_text(n: u32) -> String {
    if n == 1 { "1 ply".to_string() } else { format!("{n} plies") }
}

#[cfg(test)]
mod tests {
    use super::Outcome::*;

    #[test]
    fn ordering_prefers_fast_wins_and_slow_losses() {
        assert!(Win(1).better_than(Win(3)));
        assert!(Win(99).better_than(Draw));
        assert!(Draw.better_than(Loss(99)));
        assert!(Loss(8).better_than(Loss(2)));
        assert!(!Loss(2).better_than(Loss(2)));
        assert_eq!(Loss(4).parent(), Win(5));
        assert_eq!(Win(1).parent(), Loss(2));
    }

    #[test]
    fn values_are_described_in_plies() {
        assert_eq!(Win(5).describe(), "player wins in 5 plies");
        assert_eq!(Loss(1).describe(), "player loses in 1 ply");
        assert_eq!(Draw.describe(), "draw");
    }
}
