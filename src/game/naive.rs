//! Naive, obviously-correct reference implementations: an array board, move generation by
//! walking squares one by one, and canonical form by building all 8 images from row and
//! column arithmetic. They share nothing with the fast engine but [`Position`]'s fields and
//! exist only to be compared against it in tests.

use crate::game::position::Position;

/// What a square holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Nothing.
    Empty,
    /// A piece of the side to move.
    Player,
    /// A piece of the other side.
    Opponent,
    /// The hole.
    Hole,
}

/// A board as an array of cells, side `n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayBoard {
    /// Side length.
    pub n: usize,
    /// Cells, row-major.
    pub cells: Vec<Cell>,
}

/// A naive move: `Some((row, col))` for a piece, `None` for the hole; direction as
/// (drow, dcol).
pub type NaiveMove = (Option<(usize, usize)>, (i32, i32));

/// Directions in published order: up, down, left, right.
pub const NAIVE_DIRS: [(i32, i32); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];

impl ArrayBoard {
    /// From a bit-set position.
    pub fn from_position(n: usize, p: &Position) -> ArrayBoard {
        let mut cells = vec![Cell::Empty; n * n];
        for (s, cell) in cells.iter_mut().enumerate() {
            if p.player >> s & 1 == 1 {
                *cell = Cell::Player;
            } else if p.opponent >> s & 1 == 1 {
                *cell = Cell::Opponent;
            }
        }
        cells[p.hole as usize] = Cell::Hole;
        ArrayBoard { n, cells }
    }

    /// To a bit-set position.
    pub fn to_position(&self) -> Position {
        let mut p = Position::new(0, 0, 0);
        for (s, c) in self.cells.iter().enumerate() {
            match c {
                Cell::Player => p.player |= 1 << s,
                Cell::Opponent => p.opponent |= 1 << s,
                Cell::Hole => p.hole = s as u8,
                Cell::Empty => {}
            }
        }
        p
    }

    fn at(&self, r: i32, c: i32) -> Option<Cell> {
        let n = self.n as i32;
        if r < 0 || c < 0 || r >= n || c >= n { None } else { Some(self.cells[(r * n + c) as usize]) }
    }

    fn set(&mut self, r: i32, c: i32, v: Cell) {
        let n = self.n as i32;
        self.cells[(r * n + c) as usize] = v;
    }

    /// Moves in published order.
    pub fn moves(&self) -> Vec<NaiveMove> {
        let n = self.n;
        let mut out = Vec::new();
        for r in 0..n {
            for c in 0..n {
                if self.cells[r * n + c] == Cell::Player {
                    for d in NAIVE_DIRS {
                        out.push((Some((r, c)), d));
                    }
                }
            }
        }
        let h = self.cells.iter().position(|&c| c == Cell::Hole).expect("a hole");
        let (hr, hc) = ((h / n) as i32, (h % n) as i32);
        for d in NAIVE_DIRS {
            if self.at(hr + d.0, hc + d.1) == Some(Cell::Empty) {
                out.push((None, d));
            }
        }
        out
    }

    /// Play a move; returns the board after it (colours swapped) and the number of
    /// (own, opponent) pieces that fell.
    pub fn play(&self, m: NaiveMove) -> (ArrayBoard, usize, usize) {
        let mut b = self.clone();
        let (mut own_lost, mut opp_lost) = (0, 0);
        let (dr, dc) = m.1;
        match m.0 {
            None => {
                let n = self.n;
                let h = self.cells.iter().position(|&c| c == Cell::Hole).expect("a hole");
                let (hr, hc) = ((h / n) as i32, (h % n) as i32);
                b.set(hr, hc, Cell::Empty);
                b.set(hr + dr, hc + dc, Cell::Hole);
            }
            Some((r, c)) => {
                // Collect the chain: the mover and every piece directly in front of it.
                let (mut r, mut c) = (r as i32, c as i32);
                let mut chain = vec![(r, c)];
                loop {
                    let (nr, nc) = (r + dr, c + dc);
                    match self.at(nr, nc) {
                        Some(Cell::Player) | Some(Cell::Opponent) => {
                            chain.push((nr, nc));
                            r = nr;
                            c = nc;
                        }
                        _ => break,
                    }
                }
                // Move pieces from the front of the chain backwards.
                for &(r, c) in chain.iter().rev() {
                    let piece = self.at(r, c).expect("on board");
                    b.set(r, c, Cell::Empty);
                    match self.at(r + dr, c + dc) {
                        None | Some(Cell::Hole) => {
                            if piece == Cell::Player {
                                own_lost += 1;
                            } else {
                                opp_lost += 1;
                            }
                        }
                        Some(_) => b.set(r + dr, c + dc, piece),
                    }
                }
            }
        }
        for cell in b.cells.iter_mut() {
            *cell = match *cell {
                Cell::Player => Cell::Opponent,
                Cell::Opponent => Cell::Player,
                x => x,
            };
        }
        (b, own_lost, opp_lost)
    }

    /// The image under symmetry `k` (bit 0: mirror columns, then bit 1: mirror rows, then
    /// bit 2: transpose), computed cell by cell.
    pub fn image(&self, k: usize) -> ArrayBoard {
        let n = self.n;
        let mut out = vec![Cell::Empty; n * n];
        for r in 0..n {
            for c in 0..n {
                let (mut r2, mut c2) = (r, c);
                if k & 1 != 0 {
                    c2 = n - 1 - c2;
                }
                if k & 2 != 0 {
                    r2 = n - 1 - r2;
                }
                if k & 4 != 0 {
                    std::mem::swap(&mut r2, &mut c2);
                }
                out[r2 * n + c2] = self.cells[r * n + c];
            }
        }
        ArrayBoard { n, cells: out }
    }

    /// The published code, computed from the cells.
    pub fn code(&self) -> u64 {
        let mut code = 0u64;
        for (s, c) in self.cells.iter().enumerate() {
            match c {
                Cell::Hole => code |= s as u64,
                Cell::Opponent => code |= 1 << (5 + s),
                Cell::Player => code |= 1 << (30 + s),
                Cell::Empty => {}
            }
        }
        code
    }

    /// The canonical code: the smallest code over all 8 images.
    pub fn canonical_code(&self) -> u64 {
        (0..8).map(|k| self.image(k).code()).min().expect("8 images")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naive_initial_position_moves() {
        let p = Position::new(0b11111 << 20, 0b11111, 12);
        let b = ArrayBoard::from_position(5, &p);
        assert_eq!(b.moves().len(), 24);
        assert_eq!(b.image(2).code(), 34_326_183_948);
        assert_eq!(b.canonical_code(), 34_326_183_948);
    }
}
