//! The working state of a position during a solve: one u32 per position, and what a
//! winning or losing move does to it.
//!
//! A value is decided once, at the level of its distance, so the state does not hold
//! distances: only what the update rules read (which nodes are decided, and whether won
//! or lost). The distance of each decision is the level that propagates it, kept in the
//! group's event log ([`super::log`]) and written back into the state when the group ends
//! ([`finished`]).

use super::*;

// ---------------------------------------------------------------------------------------
// The working state of a position, packed in a u32.

pub(super) const U_SHIFT: u32 = 0; // moves not yet known to lose (5 bits)
pub(super) const X_SHIFT: u32 = 5; // XOR of their indices (5 bits)
pub(super) const S_SHIFT: u32 = 10; // special move index, 0 = none (5 bits)
pub(super) const CAN_LOSE: u32 = 1 << 15; // no capture or draw option outside the group
pub(super) const GEN_DECIDED: u32 = 1 << 16;
pub(super) const GEN_WON: u32 = 1 << 17;
pub(super) const SPC_DECIDED: u32 = 1 << 18;
pub(super) const SPC_WON: u32 = 1 << 19;
// Options outside the group: with CAN_LOSE, the longest loss among them; without, the
// shortest win among them (0: none, the position has a draw outside instead). 8 bits: no
// distance in the game exceeds 255 plies (the longest is 147).
pub(super) const OUTSIDE_SHIFT: u32 = 20;
/// Won in 1 ply by the rules: decided at init, never propagated, so never in the log.
pub(super) const IMMEDIATE: u32 = 1 << 28;
/// Some predecessor forbids the special move: node (position, special move) exists. Set
/// when a decision of the position is propagated (its unmoves are walked then), so by the
/// end of the group for every position with a special move; a record drops the special
/// value of a node that does not exist (no game can ask for it), as packing used to.
pub(super) const SPECIAL_REACHED: u32 = 1 << 31;
/// The largest distance the state and the log can hold: every file's.
pub(super) const MAX_DIST: u32 = crate::record::value::MAX_DIST;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct State(pub(super) u32);

/// The flags of a class: (decided, won).
#[inline]
fn flags(class: u32) -> (u32, u32) {
    if class == GEN { (GEN_DECIDED, GEN_WON) } else { (SPC_DECIDED, SPC_WON) }
}

impl State {
    #[inline]
    pub(super) fn u(self) -> u32 {
        (self.0 >> U_SHIFT) & 31
    }
    #[inline]
    pub(super) fn x(self) -> u32 {
        (self.0 >> X_SHIFT) & 31
    }
    #[inline]
    pub(super) fn s(self) -> u32 {
        (self.0 >> S_SHIFT) & 31
    }
    #[inline]
    pub(super) fn can_lose(self) -> bool {
        self.0 & CAN_LOSE != 0
    }
    #[inline]
    pub(super) fn decided(self, class: u32) -> bool {
        self.0 & flags(class).0 != 0
    }
    #[inline]
    pub(super) fn won(self, class: u32) -> bool {
        self.0 & flags(class).1 != 0
    }
    #[inline]
    pub(super) fn extlose(self) -> u32 {
        debug_assert!(self.can_lose());
        (self.0 >> OUTSIDE_SHIFT) & 255
    }
    #[inline]
    pub(super) fn ext_win(self) -> u32 {
        debug_assert!(!self.can_lose());
        (self.0 >> OUTSIDE_SHIFT) & 255
    }
    #[inline]
    pub(super) fn with_ux(self, u: u32, x: u32) -> State {
        State(self.0 & !(0x3ff << U_SHIFT) | u << U_SHIFT | x << X_SHIFT)
    }
    #[inline]
    pub(super) fn with_s(self, s: u32) -> State {
        State(self.0 & !(31 << S_SHIFT) | s << S_SHIFT)
    }
    /// Decide the node class `class`: won or lost.
    #[inline]
    pub(super) fn decide(self, class: u32, won: bool) -> State {
        let (d, w) = flags(class);
        State(self.0 | d | if won { w } else { 0 })
    }
}

/// The initial state of a position: its in-group move count and XOR, and its options
/// outside the group (see the field comments).
pub(super) fn initial(u: u32, x: u32, can_lose: bool, outside: u32) -> State {
    assert!(outside <= MAX_DIST, "an outside option at distance {outside}: the state holds at most {MAX_DIST}");
    State(u << U_SHIFT | x << X_SHIFT | if can_lose { CAN_LOSE } else { 0 } | outside << OUTSIDE_SHIFT)
}

/// The state of a position won in 1 ply by the rules.
pub(super) fn immediate_win() -> State {
    State(IMMEDIATE | GEN_DECIDED | GEN_WON | 1 << OUTSIDE_SHIFT)
}

/// Which value class of a position an event propagates.
pub(super) const GEN: u32 = 0;
pub(super) const SPC: u32 = 1;

/// Decisions one update made: up to two `(class, distance)`.
pub(super) type Emits = [Option<(u32, u32)>; 2];

/// A move of the position whose child node was just decided `Loss` at distance `level - 1`.
#[inline]
pub(super) fn on_winning_move(st: State, i: u32, level: u32) -> (State, Emits) {
    let mut out: Emits = [None, None];
    if !st.decided(GEN) {
        let s = if st.s() == 0 { i } else { st.s() };
        out[0] = Some((GEN, level));
        return (st.decide(GEN, true).with_s(s), out);
    }
    if st.s() != 0 && st.s() != i && !st.decided(SPC) {
        out[0] = Some((SPC, level));
        return (st.decide(SPC, true), out);
    }
    (st, out)
}

/// A move of the position whose child node was just decided `Win` at distance `level - 1`.
#[inline]
pub(super) fn on_losing_move(st: State, i: u32, level: u32) -> (State, Emits) {
    let mut out: Emits = [None, None];
    let (u, x) = (st.u() - 1, st.x() ^ i);
    let mut st = st.with_ux(u, x);
    if !st.can_lose() {
        return (st, out);
    }
    let d = level.max(st.extlose());
    if u == 1 {
        if !st.decided(GEN) && st.s() == 0 {
            st = st.with_s(x).decide(SPC, false);
            out[0] = Some((SPC, d));
        } else if st.decided(GEN) && st.s() == x && !st.decided(SPC) {
            st = st.decide(SPC, false);
            out[0] = Some((SPC, d));
        }
    } else if u == 0 && !st.decided(GEN) {
        st = st.decide(GEN, false);
        out[0] = Some((GEN, d));
        if st.s() != 0 && !st.decided(SPC) {
            st = st.decide(SPC, false);
            out[1] = Some((SPC, d));
        }
    }
    (st, out)
}

// ---------------------------------------------------------------------------------------
// After the last level: the distances written back, then the records.

/// In the finished layout the fields only the levels read (U, X, can-lose, outside) give
/// way to the two distances; the special move and the flags stay where they were.
const GEN_DIST_SHIFT: u32 = 0; // 8 bits, over U and X
const SPC_DIST_SHIFT: u32 = 20; // 8 bits, over the outside field
/// Set when the log gives the class its distance (each decision is logged once).
const GEN_LOGGED: u32 = 1 << 29;
const SPC_LOGGED: u32 = 1 << 30;

/// The state of a finished group before its log is replayed: special move and flags; an
/// immediate win has its distance, 1, already.
#[inline]
pub(super) fn finished(st: u32) -> u32 {
    let keep = st & (31 << S_SHIFT | GEN_DECIDED | GEN_WON | SPC_DECIDED | SPC_WON | IMMEDIATE | SPECIAL_REACHED);
    if st & IMMEDIATE != 0 { keep | 1 << GEN_DIST_SHIFT | GEN_LOGGED } else { keep }
}

/// What replaying one logged decision of class `class` at distance `d` ORs into a
/// finished state.
#[inline]
pub(super) fn logged(class: u32, d: u32) -> u32 {
    debug_assert!(d <= MAX_DIST);
    if class == GEN { d << GEN_DIST_SHIFT | GEN_LOGGED } else { d << SPC_DIST_SHIFT | SPC_LOGGED }
}

/// True when a finished state already holds a logged distance of `class`.
#[inline]
pub(super) fn was_logged(st: u32, class: u32) -> bool {
    st & if class == GEN { GEN_LOGGED } else { SPC_LOGGED } != 0
}

/// The record of a finished state with its log replayed (undecided is a draw; a special
/// value equal to the generic one is no exception, and neither is that of a special node
/// no predecessor reaches), or `None` if a decided class has no logged distance or a
/// logged one is not decided (a damaged log).
#[inline]
pub(super) fn record(st: u32) -> Option<u64> {
    let s = State(st);
    let val = |class: u32, logged: u32, shift: u32| -> Option<Val> {
        if s.decided(class) != (st & logged != 0) {
            return None;
        }
        let d = (st >> shift) & 255;
        Some(if !s.decided(class) {
            0
        } else if s.won(class) {
            win(d)
        } else {
            loss(d)
        })
    };
    let g = val(GEN, GEN_LOGGED, GEN_DIST_SHIFT)?;
    let sp = val(SPC, SPC_LOGGED, SPC_DIST_SHIFT)?;
    Some(if sp == g || st & SPECIAL_REACHED == 0 { g as u64 } else { Packed::new(g, s.s(), sp).0 })
}
