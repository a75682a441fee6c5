//! A computer opponent: one move for the side to move of an analysed position, at a
//! level of play from perfect to random, so that a person can play the solved game and
//! win at the lower levels.
//!
//! Every level chooses among the allowed moves of the [`Analysis`] (never the forbidden
//! one), with a pseudo-random generator seeded by the caller and the position, so the
//! same seed and position always give the same move.

use crate::analysis::query::{Analysis, MoveLine, Verdict};
use crate::error::Error;

/// How well the computer plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// The first best move: the fastest win, the slowest loss, a draw kept a draw (the
    /// move the principal variation plays).
    Perfect,
    /// Never gives a result away: wins by a fastest route, keeps a draw a draw with any
    /// drawing move, and when lost plays any losing move that does not lose at once
    /// (chosen at random), so a person who is winning must still find the win.
    Strong,
    /// Plays as `strong`, but one move in three is a random allowed move (not one that
    /// loses at once, when another exists).
    Medium,
    /// As `medium`, with two moves in three random.
    Easy,
    /// Any allowed move, each as likely.
    Random,
}

impl Level {
    /// Every level, strongest first.
    pub const ALL: [Level; 5] = [Level::Perfect, Level::Strong, Level::Medium, Level::Easy, Level::Random];

    /// Its name in the API and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Level::Perfect => "perfect",
            Level::Strong => "strong",
            Level::Medium => "medium",
            Level::Easy => "easy",
            Level::Random => "random",
        }
    }

    /// The level named `name`, or an error listing the names.
    pub fn parse(name: &str) -> Result<Level, Error> {
        Level::ALL.into_iter().find(|l| l.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Level::ALL.iter().map(|l| l.name()).collect();
            Error::InvalidArgument(format!(
                "unknown level `{}`; the levels are {}",
                crate::error::shown_input(name, name.len()),
                names.join(", ")
            ))
        })
    }

    /// The chance in three of a random move.
    fn random_in_three(self) -> u64 {
        match self {
            Level::Perfect | Level::Strong => 0,
            Level::Medium => 1,
            Level::Easy => 2,
            Level::Random => 3,
        }
    }
}

/// SplitMix64: a small, well-mixed generator; enough for choosing moves.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// One of `items` (not empty), each as likely.
    fn pick<'a, T>(&mut self, items: &[&'a T]) -> &'a T {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// The outcome class of a move for its player: 2 win, 1 draw, 0 loss.
fn class(m: &MoveLine) -> u8 {
    match m.verdict {
        Verdict::Win | Verdict::ImmediateWin => 2,
        Verdict::Draw => 1,
        Verdict::Loss => 0,
    }
}

/// A move that loses at once (drops the mover's own second piece).
fn loses_at_once(m: &MoveLine) -> bool {
    m.verdict == Verdict::Loss && m.plies == Some(1)
}

/// The move the computer plays at `level` in the analysed position `a`, with the
/// generator seeded by `seed` and the position (`None` when no move is allowed).
pub fn choose(a: &Analysis, level: Level, seed: u64) -> Option<&MoveLine> {
    let allowed: Vec<&MoveLine> = a.moves.iter().filter(|m| !m.forbidden).collect();
    let best = *allowed.iter().find(|m| m.best)?;
    let mut rng = SplitMix(seed ^ a.code.rotate_left(7) ^ (a.node_index as u64).rotate_left(59));
    if level == Level::Perfect {
        return Some(best);
    }
    if rng.next() % 3 < level.random_in_three() {
        let sane: Vec<&MoveLine> = allowed.iter().copied().filter(|m| !loses_at_once(m)).collect();
        return Some(rng.pick(if sane.is_empty() { &allowed } else { &sane }));
    }
    // As strong: the best move's class; a win only by a fastest move, a loss not at once.
    let pool: Vec<&MoveLine> = match class(best) {
        2 => allowed.iter().copied().filter(|m| m.best).collect(),
        c => allowed.iter().copied().filter(|m| class(m) == c && !(c == 0 && loses_at_once(m))).collect(),
    };
    Some(if pool.is_empty() { best } else { rng.pick(&pool) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_by_name_and_unknown_names_list_them() {
        for l in Level::ALL {
            assert_eq!(Level::parse(l.name()).unwrap(), l);
        }
        let e = Level::parse("grandmaster").unwrap_err().to_string();
        assert!(e.contains("perfect, strong, medium, easy, random"), "{e}");
    }

    #[test]
    fn splitmix_picks_every_item_of_a_small_list() {
        let mut rng = SplitMix(1);
        let items = [0u8, 1, 2, 3];
        let refs: Vec<&u8> = items.iter().collect();
        let mut seen = [false; 4];
        for _ in 0..200 {
            seen[*rng.pick(&refs) as usize] = true;
        }
        assert_eq!(seen, [true; 4]);
    }
}
