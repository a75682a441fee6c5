//! The working state of a position during a solve: one u64 per position, and what a
//! winning or losing move does to it.

use super::*;

// ---------------------------------------------------------------------------------------
// The working state of a position, packed in a u64.

pub(super) const U_SHIFT: u32 = 0; // moves not yet known to lose (5 bits)
pub(super) const X_SHIFT: u32 = 5; // XOR of their indices (5 bits)
pub(super) const S_SHIFT: u32 = 10; // special move index, 0 = none (5 bits)
pub(super) const CAN_LOSE: u64 = 1 << 15; // no capture or draw option outside the group
pub(super) const GEN_SHIFT: u32 = 16;
pub(super) const SPC_SHIFT: u32 = 32;
// Options outside the group: with CAN_LOSE, the longest loss among them; without, the
// shortest win among them (0: none, the position has a draw outside instead).
pub(super) const OUTSIDE_SHIFT: u32 = 48;

#[derive(Clone, Copy)]
pub(super) struct State(pub(super) u64);

impl State {
    #[inline]
    pub(super) fn u(self) -> u32 {
        (self.0 >> U_SHIFT) as u32 & 31
    }
    #[inline]
    pub(super) fn x(self) -> u32 {
        (self.0 >> X_SHIFT) as u32 & 31
    }
    #[inline]
    pub(super) fn s(self) -> u32 {
        (self.0 >> S_SHIFT) as u32 & 31
    }
    #[inline]
    pub(super) fn can_lose(self) -> bool {
        self.0 & CAN_LOSE != 0
    }
    #[inline]
    pub(super) fn gen_val(self) -> Val {
        (self.0 >> GEN_SHIFT) as Val
    }
    #[inline]
    pub(super) fn spc(self) -> Val {
        (self.0 >> SPC_SHIFT) as Val
    }
    #[inline]
    pub(super) fn extlose(self) -> u32 {
        debug_assert!(self.can_lose());
        (self.0 >> OUTSIDE_SHIFT) as u32
    }
    #[inline]
    pub(super) fn ext_win(self) -> u32 {
        debug_assert!(!self.can_lose());
        (self.0 >> OUTSIDE_SHIFT) as u32
    }
    #[inline]
    pub(super) fn with_ux(self, u: u32, x: u32) -> State {
        State(self.0 & !(0x3ff << U_SHIFT) | (u as u64) << U_SHIFT | (x as u64) << X_SHIFT)
    }
    #[inline]
    pub(super) fn with_s(self, s: u32) -> State {
        State(self.0 & !(31 << S_SHIFT) | (s as u64) << S_SHIFT)
    }
    #[inline]
    pub(super) fn with_gen(self, v: Val) -> State {
        State(self.0 & !(0xffff << GEN_SHIFT) | (v as u64) << GEN_SHIFT)
    }
    #[inline]
    pub(super) fn with_spc(self, v: Val) -> State {
        State(self.0 & !(0xffff << SPC_SHIFT) | (v as u64) << SPC_SHIFT)
    }
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
    if st.gen_val() == 0 {
        let s = if st.s() == 0 { i } else { st.s() };
        out[0] = Some((GEN, level));
        return (st.with_gen(win(level)).with_s(s), out);
    }
    if st.s() != 0 && st.s() != i && st.spc() == 0 {
        out[0] = Some((SPC, level));
        return (st.with_spc(win(level)), out);
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
        if st.gen_val() == 0 && st.s() == 0 {
            st = st.with_s(x).with_spc(loss(d));
            out[0] = Some((SPC, d));
        } else if st.gen_val() != 0 && st.s() == x && st.spc() == 0 {
            st = st.with_spc(loss(d));
            out[0] = Some((SPC, d));
        }
    } else if u == 0 && st.gen_val() == 0 {
        st = st.with_gen(loss(d));
        out[0] = Some((GEN, d));
        if st.s() != 0 && st.spc() == 0 {
            st = st.with_spc(loss(d));
            out[1] = Some((SPC, d));
        }
    }
    (st, out)
}
