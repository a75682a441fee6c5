//! A computer opponent: one move for the side to move of an analysed position, at a
//! level of play from perfect to random, so that a person can play the solved game and
//! win at the lower levels.
//!
//! Every level chooses among the allowed moves of the [`Analysis`] (never the forbidden
//! one), with a pseudo-random generator seeded by the caller and the position, so the
//! same seed and position always give the same move.

use crate::analysis::query::{Analysis, MoveLine, Verdict};
use crate::error::Error;

/// How well the computer plays. Every level but `random` keeps a won result (it only
/// ever plays a winning move from a won position) and, when lost, resists longest (a
/// move with the longest loss); the levels differ in how fast they win and in how they
/// play a drawn position, where the weaker ones may give the draw away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// The first best move: the fastest win, the slowest loss, a draw kept a draw (the
    /// move the principal variation plays).
    Perfect,
    /// A best move chosen at random among the best: a fastest win, a longest loss; a
    /// draw kept a draw with any drawing move.
    Strong,
    /// As `strong`, but one move in three is chosen at random among the moves that keep
    /// a win (when won), or among all allowed moves but those that lose at once (when
    /// drawn: it may give the draw away). When lost it resists longest, as `strong`.
    Medium,
    /// As `medium`, with two moves in three chosen at random.
    Easy,
    /// Any allowed move, each as likely: it may throw a win away and lose at once.
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
///
/// From a won position every level but `random` plays a winning move; from a lost one
/// it plays a move of the longest loss (the best moves, as `a` marks them).
pub fn choose(a: &Analysis, level: Level, seed: u64) -> Option<&MoveLine> {
    let allowed: Vec<&MoveLine> = a.moves.iter().filter(|m| !m.forbidden).collect();
    let best = *allowed.iter().find(|m| m.best)?;
    let mut rng = SplitMix(seed ^ a.code.rotate_left(7) ^ (a.node_index as u64).rotate_left(59));
    if level == Level::Perfect {
        return Some(best);
    }
    let outcome = class(best);
    if rng.next() % 3 < level.random_in_three() {
        let pool: Vec<&MoveLine> = match (level, outcome) {
            (Level::Random, _) => allowed.clone(),
            // A win is kept: any winning move, the slower ones too.
            (_, 2) => allowed.iter().copied().filter(|m| class(m) == 2).collect(),
            // A draw may be given away, but not by a move that loses at once.
            (_, 1) => allowed.iter().copied().filter(|m| !loses_at_once(m)).collect(),
            // Lost: resist longest, below.
            _ => Vec::new(),
        };
        if !pool.is_empty() {
            return Some(rng.pick(&pool));
        }
    }
    // A best move: a fastest win, a longest loss; in a draw, any drawing move.
    let pool: Vec<&MoveLine> = match outcome {
        1 => allowed.iter().copied().filter(|m| class(m) == 1).collect(),
        _ => allowed.iter().copied().filter(|m| m.best).collect(),
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

    /// Every level but `random` keeps a won result and, lost, plays a longest loss; strong
    /// keeps a draw a draw. Over every node reached from the start of the committed 3x3
    /// database (a breadth-first walk), with several seeds each.
    #[test]
    fn every_level_but_random_keeps_a_win_and_resists_longest_when_lost() {
        use crate::game::Position;
        use crate::game::notation::parse_board;
        use std::collections::{HashSet, VecDeque};
        let db = crate::store::Store::open(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/golden-v2")).unwrap();
        let g = db.geometry().clone();
        let start = Position::initial(&g);
        let mut seen: HashSet<(Position, Option<Position>)> = HashSet::new();
        let mut queue = VecDeque::from([(start, None::<Position>)]);
        let (mut won, mut lost, mut drawn, mut won_with_a_losing_move, mut lost_with_a_quicker_loss) = (0, 0, 0, 0, 0);
        while let Some((pos, prev)) = queue.pop_front() {
            if !seen.insert((pos, prev)) || seen.len() > 20_000 {
                continue;
            }
            let a = crate::analysis::query::analyse(&db, &pos, prev.as_ref()).unwrap();
            let allowed: Vec<&MoveLine> = a.moves.iter().filter(|m| !m.forbidden).collect();
            let Some(best) = allowed.iter().find(|m| m.best) else { continue };
            match class(best) {
                2 => won += 1,
                1 => drawn += 1,
                _ => lost += 1,
            }
            won_with_a_losing_move += usize::from(class(best) == 2 && allowed.iter().any(|m| class(m) < 2));
            lost_with_a_quicker_loss +=
                usize::from(class(best) == 0 && allowed.iter().any(|m| m.outcome != best.outcome));
            for level in [Level::Perfect, Level::Strong, Level::Medium, Level::Easy] {
                for seed in 0..12 {
                    let m = choose(&a, level, seed).unwrap();
                    assert!(!m.forbidden, "{}: {level:?} played the forbidden move", a.board);
                    match class(best) {
                        2 => assert_eq!(
                            class(m),
                            2,
                            "{}: {level:?} (seed {seed}) threw a win away with {}",
                            a.board,
                            m.notation
                        ),
                        0 => assert_eq!(
                            m.outcome, best.outcome,
                            "{}: {level:?} (seed {seed}) lost faster than it must with {}",
                            a.board, m.notation
                        ),
                        _ if level == Level::Strong => {
                            assert_eq!(class(m), 1, "{}: strong gave a draw away with {}", a.board, m.notation)
                        }
                        _ => {}
                    }
                }
            }
            for m in allowed {
                if m.plies != Some(1) {
                    queue.push_back((parse_board(&g, &m.child).unwrap(), Some(pos)));
                }
            }
        }
        // The walk met what the levels are tested on.
        assert!(won > 100 && lost > 100 && drawn > 0, "{won} won, {lost} lost, {drawn} drawn");
        assert!(
            won_with_a_losing_move > 0 && lost_with_a_quicker_loss > 0,
            "{won_with_a_losing_move} {lost_with_a_quicker_loss}"
        );
    }
}
