//! Moves: piece moves with chain pushes, hole moves, the published move list, and the
//! move that would undo a move.

use crate::game::geometry::{Dir, Geometry, NO_SQUARE, squares_of};
use crate::game::position::Position;

/// A move of the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Move {
    /// The piece on `from` steps in `dir`, pushing the chain in front of it.
    Piece {
        /// The moving piece's square.
        from: u8,
        /// The direction of the step.
        dir: Dir,
    },
    /// The hole moves one square in `dir` onto an empty square.
    Hole {
        /// The direction the hole moves.
        dir: Dir,
    },
}

/// What a move removed from the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Removal {
    /// Nothing fell.
    None,
    /// A piece of the other side fell (off the edge or into the hole).
    Opponent,
    /// A piece of the mover fell.
    Own,
}

impl Removal {
    /// What it removes in words: `nothing`, `opponent` or `own`.
    pub fn name(self) -> &'static str {
        match self {
            Removal::None => "nothing",
            Removal::Opponent => "opponent",
            Removal::Own => "own",
        }
    }
}

/// The result of playing a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Played {
    /// The position after the move, seen from the new side to move.
    pub child: Position,
    /// What fell.
    pub removal: Removal,
    /// The new side to move's move that would restore the previous board, if any
    /// (expressed on `child`'s board).
    pub undo: Option<Move>,
}

/// The most moves a position has: 5 pieces, 4 directions each, and 4 hole moves.
pub const MAX_MOVES: usize = 24;

/// Up to [`MAX_MOVES`] items, one per move of a position, held in place (no allocation):
/// a move list, the moves played, or what each move is worth.
#[derive(Clone, Copy)]
pub struct PerMove<T: Copy> {
    items: [T; MAX_MOVES],
    len: u8,
}

impl<T: Copy> PerMove<T> {
    /// An empty list; `fill` stands in the unused places and is never read.
    #[inline]
    pub fn new(fill: T) -> PerMove<T> {
        PerMove { items: [fill; MAX_MOVES], len: 0 }
    }

    /// Add an item at the end. Panics past [`MAX_MOVES`] items, which no position has.
    #[inline]
    pub fn push(&mut self, item: T) {
        self.items[self.len as usize] = item;
        self.len += 1;
    }

    /// The items as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.items[..self.len as usize]
    }

    /// Number of items.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when there is no item (a move list is never empty for a live position).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Up to 24 moves in published order (own pieces ascending, each up/down/left/right;
/// then the legal hole moves up/down/left/right).
pub type MoveList = PerMove<Move>;

impl MoveList {
    /// The 1-based published index of a move, if it is in the list.
    pub fn index_of(&self, m: Move) -> Option<usize> {
        self.as_slice().iter().position(|&x| x == m).map(|i| i + 1)
    }
}

impl<T: Copy> std::ops::Deref for PerMove<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for PerMove<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// All moves of the side to move, in published order. Every piece has all four
/// directions (also those that drop it); hole moves only onto empty squares.
pub fn moves(geom: &Geometry, pos: &Position) -> MoveList {
    let mut list = MoveList::new(Move::Hole { dir: Dir::Up });
    for from in squares_of(pos.player) {
        for dir in Dir::ALL {
            list.push(Move::Piece { from: from as u8, dir });
        }
    }
    let occ = pos.occupied();
    for dir in Dir::ALL {
        let t = geom.step_raw(pos.hole(), dir);
        if t != NO_SQUARE && occ >> t & 1 == 0 {
            list.push(Move::Hole { dir });
        }
    }
    list
}

/// Play a move. Returns `None` for a hole move that is not legal (off the board or onto
/// a piece) or a piece move from a square without an own piece.
///
/// Always inlined: a caller that keeps the result then builds it in place, instead of
/// reading back whole what a call wrote a field at a time (stores the CPU cannot forward
/// to the wider load). [`play_piece`] stays a call here: forced inline into every caller,
/// it walked `verify --deep` of (5,4) 1.19x faster but took the solver's retrograde step
/// of (4,4) 7% longer. [`play_in_place`] inlines it too, for a caller that keeps every
/// result (ARCHITECTURE.md, Verification).
#[inline(always)]
pub fn play(geom: &Geometry, pos: &Position, m: Move) -> Option<Played> {
    play_with(geom, pos, m, play_piece)
}

/// [`play`] with the piece move built in place as well ([`play_piece`]'s body inlined):
/// for [`crate::probe::moves::play_all`], which keeps every move's result, where a call
/// stalls on reading back what it wrote. `verify --deep` of (4,4) walked 1.08x faster
/// with it there; in `node_exists` as well it measured slower (ARCHITECTURE.md,
/// Verification).
#[inline(always)]
pub fn play_in_place(geom: &Geometry, pos: &Position, m: Move) -> Option<Played> {
    play_with(geom, pos, m, piece_in_place)
}

/// [`play`], with `piece` playing a piece move.
#[inline(always)]
fn play_with(
    geom: &Geometry,
    pos: &Position,
    m: Move,
    piece: impl FnOnce(&Geometry, &Position, u32, Dir) -> Played,
) -> Option<Played> {
    match m {
        Move::Hole { dir } => {
            let t = geom.step_raw(pos.hole(), dir);
            if t == NO_SQUARE || pos.occupied() >> t & 1 != 0 {
                return None;
            }
            Some(Played {
                child: Position { player: pos.opponent, opponent: pos.player, hole: t },
                removal: Removal::None,
                undo: Some(Move::Hole { dir: dir.opposite() }),
            })
        }
        Move::Piece { from, dir } => {
            if pos.player >> from & 1 == 0 {
                return None;
            }
            Some(piece(geom, pos, from as u32, dir))
        }
    }
}

/// Play a piece move of the piece on `from` (which must hold an own piece).
#[inline]
pub fn play_piece(geom: &Geometry, pos: &Position, from: u32, dir: Dir) -> Played {
    piece_in_place(geom, pos, from, dir)
}

/// [`play_piece`], always inlined.
#[inline(always)]
fn piece_in_place(geom: &Geometry, pos: &Position, from: u32, dir: Dir) -> Played {
    let occ = pos.occupied();
    let hole = pos.hole();
    // Walk the chain: `last` is the last piece of the chain, `next` the square after it.
    let mut chain = 1u32 << from;
    let mut last = from;
    let mut len = 1u32;
    let mut next = geom.step_raw(from, dir);
    while next != NO_SQUARE && next as u32 != hole && occ >> next & 1 != 0 {
        last = next as u32;
        chain |= 1 << last;
        len += 1;
        next = geom.step_raw(last, dir);
    }
    let falls = next == NO_SQUARE || next as u32 == hole;
    let mut player = pos.player;
    let mut opponent = pos.opponent;
    let removal = if falls {
        if player >> last & 1 != 0 {
            player &= !(1 << last);
            Removal::Own
        } else {
            opponent &= !(1 << last);
            Removal::Opponent
        }
    } else {
        Removal::None
    };
    // Shift the remaining chain one square in `dir`.
    let moving = if falls { chain & !(1 << last) } else { chain };
    let shift = |set: u32| -> u32 {
        let part = set & moving;
        let stay = set & !moving;
        stay | shift_set(geom, part, dir)
    };
    player = shift(player);
    opponent = shift(opponent);
    // The opponent can push the chain back exactly when a chain was pushed, nothing fell
    // and the chain's last piece is the opponent's.
    let undo = if !falls && len >= 2 && pos.opponent >> last & 1 != 0 {
        Some(Move::Piece { from: next, dir: dir.opposite() })
    } else {
        None
    };
    Played { child: Position { player: opponent, opponent: player, hole: hole as u8 }, removal, undo }
}

/// Shift every square of `set` one step in `dir` (squares must not leave the board).
#[inline]
pub fn shift_set(geom: &Geometry, set: u32, dir: Dir) -> u32 {
    let n = geom.side();
    match dir {
        Dir::Up => set >> n,
        Dir::Down => set << n,
        Dir::Left => set >> 1,
        Dir::Right => set << 1,
    }
}

/// True when the side to move has a move that removes an opponent piece (an immediate
/// win when the opponent has `start - 1` pieces: a "checkmate position").
///
/// Bit-parallel: a push in direction `d` removes the opponent piece on `t` exactly when
/// `t`'s next square in `d` is off the board or the hole and the unbroken run of pieces
/// behind `t` (against `d`) contains a piece of the side to move, which then pushes.
#[inline]
pub fn can_capture(geom: &Geometry, pos: &Position) -> bool {
    let occ = pos.occupied();
    let hole = pos.hole();
    for d in Dir::ALL {
        let back = d.opposite();
        // Squares whose next square in `d` is the hole.
        let before_hole = match geom.step_raw(hole, back) {
            NO_SQUARE => 0,
            s => 1u32 << s,
        };
        let mut run = pos.opponent & (geom.edge(d) | before_hole);
        // Extend each run backwards through occupied squares until a piece of the side
        // to move joins one or no run grows (runs are short: usually a step or two).
        while run != 0 {
            if run & pos.player != 0 {
                return true;
            }
            let grown = run | shift_set(geom, run & !geom.edge(back), back) & occ;
            if grown == run {
                break;
            }
            run = grown;
        }
    }
    false
}

/// [`can_capture`] by walking every chain square by square (the reference it is tested against).
pub fn can_capture_by_walking(geom: &Geometry, pos: &Position) -> bool {
    let occ = pos.occupied();
    let hole = pos.hole();
    for from in squares_of(pos.player) {
        for dir in Dir::ALL {
            // Find the end of the chain; a capture needs its last piece to be the
            // opponent's and the next square to be off the board or the hole.
            let mut last = from;
            let mut next = geom.step_raw(from, dir);
            while next != NO_SQUARE && next as u32 != hole && occ >> next & 1 != 0 {
                last = next as u32;
                next = geom.step_raw(last, dir);
            }
            if (next == NO_SQUARE || next as u32 == hole) && pos.opponent >> last & 1 != 0 {
                return true;
            }
        }
    }
    false
}

/// True when this is an immediate win for the side to move: the opponent is one piece
/// from losing and the side to move can remove one.
#[inline]
pub fn is_immediate_win(geom: &Geometry, pos: &Position) -> bool {
    pos.opponent.count_ones() == geom.min_pieces() && can_capture(geom, pos)
}

/// The image of direction `d` under symmetry `k` (bit 0 mirrors columns, then bit 1
/// mirrors rows, then bit 2 transposes; see [`Geometry::sym_square`]).
#[inline]
pub fn transform_dir(k: usize, d: Dir) -> Dir {
    let mut d = d;
    if k & 1 != 0 {
        d = match d {
            Dir::Left => Dir::Right,
            Dir::Right => Dir::Left,
            x => x,
        };
    }
    if k & 2 != 0 {
        d = match d {
            Dir::Up => Dir::Down,
            Dir::Down => Dir::Up,
            x => x,
        };
    }
    if k & 4 != 0 {
        d = match d {
            Dir::Up => Dir::Left,
            Dir::Left => Dir::Up,
            Dir::Down => Dir::Right,
            Dir::Right => Dir::Down,
        };
    }
    d
}

/// The image of a move of `pos` under symmetry `k`: a move of `pos.transformed(k)`.
#[inline]
pub fn transform_move(geom: &Geometry, k: usize, m: Move) -> Move {
    match m {
        Move::Piece { from, dir } => {
            Move::Piece { from: geom.sym_square(k, from as u32) as u8, dir: transform_dir(k, dir) }
        }
        Move::Hole { dir } => Move::Hole { dir: transform_dir(k, dir) },
    }
}

/// The 1-based index of a legal move `m` in the published move list of `pos`, computed
/// without building the list.
#[inline]
pub fn move_index(geom: &Geometry, pos: &Position, m: Move) -> usize {
    match m {
        Move::Piece { from, dir } => 4 * (pos.player & ((1u32 << from) - 1)).count_ones() as usize + dir.index() + 1,
        Move::Hole { dir } => {
            let occ = pos.occupied();
            let before = Dir::ALL[..dir.index()]
                .iter()
                .filter(|&&d| {
                    let t = geom.step_raw(pos.hole(), d);
                    t != NO_SQUARE && occ >> t & 1 == 0
                })
                .count();
            4 * pos.player.count_ones() as usize + before + 1
        }
    }
}

/// An "unmove": a predecessor position and the move that leads from it to the given
/// position, without removal (so within the phase, colours swapped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unmove {
    /// The predecessor, seen from its side to move (the given position's opponent).
    pub pred: Position,
    /// The predecessor's move that produces the given position.
    pub mv: Move,
    /// The given position's move that would undo `mv`, if it can be undone.
    pub undo: Option<Move>,
}

/// Call `f` for every predecessor of `pos` reached by a move that removed nothing: hole
/// moves and piece moves with or without pushes. Every such move played from the
/// predecessor yields exactly `pos`.
#[inline]
pub fn unmoves(geom: &Geometry, pos: &Position, mut f: impl FnMut(Unmove)) {
    let occ = pos.occupied();
    let hole = pos.hole();
    // The hole came from an empty neighbour.
    for dir in Dir::ALL {
        let from = geom.step_raw(hole, dir);
        if from != NO_SQUARE && occ >> from & 1 == 0 {
            f(Unmove {
                pred: Position { player: pos.opponent, opponent: pos.player, hole: from },
                // The predecessor moved the hole from `from` towards `hole`.
                mv: Move::Hole { dir: dir.opposite() },
                undo: Some(Move::Hole { dir }),
            });
        }
    }
    // A piece of the previous mover (our opponent) stepped onto `q` from the empty square
    // behind it, having pushed the run of pieces in front of it by 0..=R squares.
    let empty = geom.all() & !occ & !(1u32 << hole);
    for q in squares_of(pos.opponent) {
        for dir in Dir::ALL {
            let back = geom.step_raw(q, dir.opposite());
            if back == NO_SQUARE || empty >> back & 1 == 0 {
                continue;
            }
            // L = 0: a plain step.
            let mut moved = 1u32 << q;
            let mut last = q;
            loop {
                let pred_player = (pos.opponent & !moved) | shift_set(geom, pos.opponent & moved, dir.opposite());
                let pred_opponent = (pos.player & !moved) | shift_set(geom, pos.player & moved, dir.opposite());
                let undo = if last != q && pos.player >> last & 1 != 0 {
                    Some(Move::Piece { from: last as u8, dir: dir.opposite() })
                } else {
                    None
                };
                f(Unmove {
                    pred: Position { player: pred_player, opponent: pred_opponent, hole: hole as u8 },
                    mv: Move::Piece { from: back, dir },
                    undo,
                });
                let next = geom.step_raw(last, dir);
                if next == NO_SQUARE || occ >> next & 1 == 0 {
                    break;
                }
                last = next as u32;
                moved |= 1 << last;
            }
        }
    }
}

/// Call `f` for every predecessor of `pos` reached by a move that removed a piece: a
/// chain pushed its last piece off the board or into the hole (a piece of either side), or
/// a lone piece stepped off the board or into the hole. The predecessor has one piece more
/// than `pos` on one side (it may be outside the game's phases); `undo` is always `None`.
/// Every such move played from the predecessor yields exactly `pos`, with a removal; with
/// [`unmoves`] these are all of `pos`'s predecessors.
pub fn unmoves_removing(geom: &Geometry, pos: &Position, mut f: impl FnMut(Unmove)) {
    let occ = pos.occupied();
    let hole = pos.hole();
    let empty = geom.all() & !occ & !(1u32 << hole);
    let falls = |sq: u8| sq == NO_SQUARE || sq as u32 == hole;
    for dir in Dir::ALL {
        // A lone piece of the previous mover (our opponent) left the now empty `from`.
        for from in squares_of(empty) {
            if falls(geom.step_raw(from, dir)) {
                f(Unmove {
                    pred: Position { player: pos.opponent | 1 << from, opponent: pos.player, hole: hole as u8 },
                    mv: Move::Piece { from: from as u8, dir },
                    undo: None,
                });
            }
        }
        // The mover's piece now on `q` came from the empty square behind it and pushed the
        // run in front of it one square; the run's last piece fell from `last`, the end of
        // the run of pieces from `q` (the square after it must be off the board or the hole).
        for q in squares_of(pos.opponent) {
            let from = geom.step_raw(q, dir.opposite());
            if from == NO_SQUARE || empty >> from & 1 == 0 {
                continue;
            }
            let mut run = 1u32 << q;
            let mut last = q;
            let mut next = geom.step_raw(q, dir);
            while next != NO_SQUARE && occ >> next & 1 != 0 {
                last = next as u32;
                run |= 1 << last;
                next = geom.step_raw(last, dir);
            }
            if !falls(next) {
                continue;
            }
            let back = |set: u32| (set & !run) | shift_set(geom, set & run, dir.opposite());
            let (mover, victim) = (back(pos.opponent), back(pos.player));
            let mv = Move::Piece { from, dir };
            let h = hole as u8;
            f(Unmove { pred: Position { player: mover, opponent: victim | 1 << last, hole: h }, mv, undo: None });
            f(Unmove { pred: Position { player: mover | 1 << last, opponent: victim, hole: h }, mv, undo: None });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_position_has_24_moves() {
        let g = Geometry::standard();
        assert_eq!(moves(g, &Position::initial(g)).len(), 24);
    }
}
