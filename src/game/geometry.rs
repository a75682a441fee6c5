//! Board geometry: squares, steps, the 8 symmetries of the square, and square orbits.
//!
//! One [`Geometry`] describes an `n x n` board (n = 3, 4 or 5) and how many pieces each
//! side starts with. The real game is [`Geometry::standard`] (5x5, 5 pieces a side); the
//! smaller boards exist so that tests can enumerate and solve them exhaustively with the
//! very same engine.

use std::sync::LazyLock;

use crate::error::Error;

/// Largest supported board side.
pub const MAX_SIDE: u32 = 5;
/// Largest number of squares (5x5).
pub const MAX_SQUARES: usize = 25;
/// Marker for "no square" (a step off the board).
pub const NO_SQUARE: u8 = u8::MAX;

/// A direction, in the published move-list order: up, down, left, right.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dir {
    /// Towards row 0 (square `s - n`).
    Up = 0,
    /// Towards the last row (square `s + n`).
    Down = 1,
    /// Towards column 0 (square `s - 1`).
    Left = 2,
    /// Towards the last column (square `s + 1`).
    Right = 3,
}

impl Dir {
    /// All directions in move-list order.
    pub const ALL: [Dir; 4] = [Dir::Up, Dir::Down, Dir::Left, Dir::Right];

    /// The direction as 0..4 (move-list order).
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The direction with the given index (0..4).
    #[inline]
    pub fn from_index(i: usize) -> Dir {
        Dir::ALL[i & 3]
    }

    /// The opposite direction.
    #[inline]
    pub fn opposite(self) -> Dir {
        match self {
            Dir::Up => Dir::Down,
            Dir::Down => Dir::Up,
            Dir::Left => Dir::Right,
            Dir::Right => Dir::Left,
        }
    }

    /// Lower-case English name (`up`, `down`, `left`, `right`).
    pub fn name(self) -> &'static str {
        match self {
            Dir::Up => "up",
            Dir::Down => "down",
            Dir::Left => "left",
            Dir::Right => "right",
        }
    }
}

/// An `n x n` Ostle board with `start` pieces per side; a side that is down to
/// `start - 2` pieces has lost.
#[derive(Clone)]
pub struct Geometry {
    n: u32,
    squares: u32,
    start: u32,
    all: u32,
    row_mask: u32,
    step: [[u8; 4]; MAX_SQUARES],
    /// `sym_sq[k][s]`: the image of square `s` under symmetry `k`.
    sym_sq: [[u8; MAX_SQUARES]; 8],
    /// `sym_rows[k][r][bits]`: the image under symmetry `k` of the squares of row `r`
    /// whose columns are the set bits of `bits`.
    sym_rows: [[[u32; 32]; MAX_SIDE as usize]; 8],
    sym_inverse: [u8; 8],
    /// `orbit_rep[s]`: the smallest square in the orbit of `s` under the 8 symmetries.
    orbit_rep: [u8; MAX_SQUARES],
    /// The squares of each orbit (at most 6 orbits on 5x5).
    orbit_masks: [u32; 6],
    /// `orbit_unit[s]`: [`Geometry::orbit_counts`] of square `s` alone.
    orbit_unit: [u64; MAX_SQUARES],
    /// `edge[d]`: the squares with no neighbour in direction `d`.
    edge: [u32; 4],
}

static STANDARD: LazyLock<Geometry> = LazyLock::new(|| Geometry::build(5, 5));

impl Geometry {
    /// The real game: 5x5, five pieces a side.
    pub fn standard() -> &'static Geometry {
        &STANDARD
    }

    /// A board of side `n` (3..=5) with `start` pieces per side (3..=n).
    pub fn new(n: u32, start: u32) -> Result<Geometry, Error> {
        if !(3..=MAX_SIDE).contains(&n) {
            return Err(Error::InvalidArgument(format!("board side {n} is not supported; use 3, 4 or 5")));
        }
        if !(3..=n).contains(&start) {
            return Err(Error::InvalidArgument(format!(
                "{start} pieces per side do not fit a {n}x{n} board; use 3..={n}"
            )));
        }
        Ok(Geometry::build(n, start))
    }

    fn build(n: u32, start: u32) -> Geometry {
        let squares = n * n;
        let mut step = [[NO_SQUARE; 4]; MAX_SQUARES];
        for s in 0..squares {
            let (r, c) = (s / n, s % n);
            if r > 0 {
                step[s as usize][Dir::Up.index()] = (s - n) as u8;
            }
            if r + 1 < n {
                step[s as usize][Dir::Down.index()] = (s + n) as u8;
            }
            if c > 0 {
                step[s as usize][Dir::Left.index()] = (s - 1) as u8;
            }
            if c + 1 < n {
                step[s as usize][Dir::Right.index()] = (s + 1) as u8;
            }
        }
        let mut sym_sq = [[0u8; MAX_SQUARES]; 8];
        for (k, map) in sym_sq.iter_mut().enumerate() {
            for s in 0..squares {
                let (mut r, mut c) = (s / n, s % n);
                if k & 1 != 0 {
                    c = n - 1 - c;
                }
                if k & 2 != 0 {
                    r = n - 1 - r;
                }
                if k & 4 != 0 {
                    std::mem::swap(&mut r, &mut c);
                }
                map[s as usize] = (r * n + c) as u8;
            }
        }
        let mut sym_rows = [[[0u32; 32]; MAX_SIDE as usize]; 8];
        for k in 0..8 {
            for r in 0..n {
                for bits in 0..(1u32 << n) {
                    let mut img = 0u32;
                    for c in 0..n {
                        if bits >> c & 1 != 0 {
                            img |= 1 << sym_sq[k][(r * n + c) as usize];
                        }
                    }
                    sym_rows[k][r as usize][bits as usize] = img;
                }
            }
        }
        let mut sym_inverse = [0u8; 8];
        for k in 0..8 {
            for j in 0..8 {
                if (0..squares as usize).all(|s| sym_sq[j][sym_sq[k][s] as usize] as usize == s) {
                    sym_inverse[k] = j as u8;
                }
            }
        }
        let mut orbit_rep = [0u8; MAX_SQUARES];
        for s in 0..squares as usize {
            orbit_rep[s] = (0..8).map(|k| sym_sq[k][s]).min().unwrap_or(s as u8);
        }
        let mut orbit_masks = [0u32; 6];
        let mut orbit_unit = [0u64; MAX_SQUARES];
        let mut reps: Vec<u8> = orbit_rep[..squares as usize].to_vec();
        reps.sort_unstable();
        reps.dedup();
        for s in 0..squares as usize {
            let o = reps.binary_search(&orbit_rep[s]).expect("rep listed");
            orbit_masks[o] |= 1 << s;
            orbit_unit[s] = 1 << (8 * o);
        }
        let mut edge = [0u32; 4];
        for s in 0..squares as usize {
            for d in 0..4 {
                if step[s][d] == NO_SQUARE {
                    edge[d] |= 1 << s;
                }
            }
        }
        Geometry {
            edge,
            orbit_masks,
            orbit_unit,
            n,
            squares,
            start,
            all: if squares == 32 { u32::MAX } else { (1u32 << squares) - 1 },
            row_mask: (1u32 << n) - 1,
            step,
            sym_sq,
            sym_rows,
            sym_inverse,
            orbit_rep,
        }
    }

    /// Side length of the board.
    #[inline]
    pub fn side(&self) -> u32 {
        self.n
    }

    /// Number of squares.
    #[inline]
    pub fn squares(&self) -> u32 {
        self.squares
    }

    /// Pieces per side at the start.
    #[inline]
    pub fn start_pieces(&self) -> u32 {
        self.start
    }

    /// A side with this many pieces has lost (`start - 2`).
    #[inline]
    pub fn losing_count(&self) -> u32 {
        self.start - 2
    }

    /// The fewest pieces a side can have in a live position (`start - 1`).
    #[inline]
    pub fn min_pieces(&self) -> u32 {
        self.start - 1
    }

    /// Bit mask of all squares.
    #[inline]
    pub fn all(&self) -> u32 {
        self.all
    }

    /// The square one step from `s` in direction `d`, or `None` off the board.
    #[inline]
    pub fn step(&self, s: u32, d: Dir) -> Option<u32> {
        let t = self.step[s as usize][d.index()];
        if t == NO_SQUARE { None } else { Some(t as u32) }
    }

    /// Raw step table entry ([`NO_SQUARE`] off the board).
    #[inline]
    pub fn step_raw(&self, s: u32, d: Dir) -> u8 {
        self.step[s as usize][d.index()]
    }

    /// The image of square `s` under symmetry `k` (0..8: bit 0 horizontal mirror, then
    /// bit 1 vertical mirror, then bit 2 transpose).
    #[inline]
    pub fn sym_square(&self, k: usize, s: u32) -> u32 {
        self.sym_sq[k][s as usize] as u32
    }

    /// The image of a set of squares under symmetry `k`.
    #[inline]
    pub fn sym_set(&self, k: usize, set: u32) -> u32 {
        let rows = &self.sym_rows[k];
        let n = self.n;
        let m = self.row_mask;
        let mut img = 0;
        for (r, table) in rows.iter().enumerate().take(n as usize) {
            img |= table[((set >> (r as u32 * n)) & m) as usize];
        }
        img
    }

    /// The squares with no neighbour in direction `d` (the edge a step in `d` falls off).
    #[inline]
    pub fn edge(&self, d: Dir) -> u32 {
        self.edge[d.index()]
    }

    /// The symmetry that undoes symmetry `k`.
    #[inline]
    pub fn sym_inverse(&self, k: usize) -> usize {
        self.sym_inverse[k] as usize
    }

    /// The smallest square in the orbit of `s` under the 8 symmetries (its orbit
    /// representative; for 5x5 one of 0, 1, 2, 6, 7, 12).
    #[inline]
    pub fn orbit_rep(&self, s: u32) -> u32 {
        self.orbit_rep[s as usize] as u32
    }

    /// A value that symmetric positions share: the hole's orbit and both sides' piece
    /// counts in each square orbit. Unequal invariants prove two positions are not
    /// symmetric images of each other; equal ones prove nothing.
    #[inline]
    pub fn symmetry_invariant(&self, player: u32, opponent: u32, hole: u32) -> u64 {
        self.invariant_of_counts(hole, self.orbit_counts(player), self.orbit_counts(opponent))
    }

    /// [`Geometry::symmetry_invariant`] from the sides' [`Geometry::orbit_counts`].
    #[inline]
    pub fn invariant_of_counts(&self, hole: u32, player_counts: u64, opponent_counts: u64) -> u64 {
        // An orbit holds at most 8 squares, so each count fits the 4 bits it is given.
        self.orbit_rep[hole as usize] as u64 | player_counts << 5 | opponent_counts << 9
    }

    /// A value that a set of squares and its symmetric images share: its number of
    /// squares in each square orbit (the per-set part of [`Geometry::symmetry_invariant`]).
    #[inline]
    pub fn orbit_counts(&self, set: u32) -> u64 {
        let mut inv = 0u64;
        for (i, m) in self.orbit_masks.iter().enumerate() {
            inv |= ((set & m).count_ones() as u64) << (8 * i);
        }
        inv
    }

    /// [`Geometry::orbit_counts`] of the one square `s`: what a set's counts gain when
    /// `s` joins it, so a set's counts can follow a move of one piece.
    #[inline]
    pub fn orbit_unit(&self, s: u32) -> u64 {
        self.orbit_unit[s as usize]
    }

    /// The orbit representatives of all squares, ascending.
    pub fn orbit_reps(&self) -> Vec<u32> {
        let mut reps: Vec<u32> = (0..self.squares).map(|s| self.orbit_rep(s)).collect();
        reps.sort_unstable();
        reps.dedup();
        reps
    }

    /// Row and column of a square.
    #[inline]
    pub fn row_col(&self, s: u32) -> (u32, u32) {
        (s / self.n, s % self.n)
    }

    /// The square where the hole starts: the centre (for an even side, the square just
    /// below and right of the centre point).
    pub fn start_hole(&self) -> u32 {
        (self.n / 2) * self.n + self.n / 2
    }
}

impl std::fmt::Debug for Geometry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Geometry({}x{}, {} pieces)", self.n, self.n, self.start)
    }
}

impl PartialEq for Geometry {
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n && self.start == other.start
    }
}

impl Eq for Geometry {}

/// Iterate over the set bits of a square set, ascending.
#[inline]
pub fn squares_of(mut set: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if set == 0 {
            None
        } else {
            let s = set.trailing_zeros();
            set &= set - 1;
            Some(s)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetries_are_distinct_permutations_with_inverses() {
        for g in [Geometry::standard().clone(), Geometry::new(4, 4).unwrap(), Geometry::new(3, 3).unwrap()] {
            let n = g.squares();
            let mut seen = std::collections::HashSet::new();
            for k in 0..8 {
                let img: Vec<u32> = (0..n).map(|s| g.sym_square(k, s)).collect();
                let mut sorted = img.clone();
                sorted.sort();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "sym {k} is a permutation");
                assert!(seen.insert(img), "sym {k} is distinct");
                let inv = g.sym_inverse(k);
                for s in 0..n {
                    assert_eq!(g.sym_square(inv, g.sym_square(k, s)), s);
                }
            }
        }
    }

    #[test]
    fn sym_set_matches_square_map() {
        let g = Geometry::standard();
        let set = 0b1_0110_0101_1000_0011_0101_1001u32 & g.all();
        for k in 0..8 {
            let expect = squares_of(set).fold(0u32, |acc, s| acc | 1 << g.sym_square(k, s));
            assert_eq!(g.sym_set(k, set), expect);
        }
    }

    #[test]
    fn standard_hole_orbits_match_the_spec() {
        assert_eq!(Geometry::standard().orbit_reps(), vec![0, 1, 2, 6, 7, 12]);
    }

    #[test]
    fn steps_stay_on_the_board() {
        let g = Geometry::standard();
        assert_eq!(g.step(0, Dir::Up), None);
        assert_eq!(g.step(0, Dir::Left), None);
        assert_eq!(g.step(0, Dir::Right), Some(1));
        assert_eq!(g.step(0, Dir::Down), Some(5));
        assert_eq!(g.step(4, Dir::Right), None);
        assert_eq!(g.step(24, Dir::Down), None);
        assert_eq!(g.step(12, Dir::Up), Some(7));
    }
}
