//! One level of the retrograde step: the decisions of distance d handed to their
//! predecessors with compare-and-swap updates of their states.

use super::*;

/// Per-task buffers of [`propagate`], reused from event to event.
#[derive(Default)]
pub(super) struct Scratch {
    found: Vec<(u32, u32)>,
    slow: Vec<u64>,
    pending: Vec<(u64, u32)>,
}

impl Scratch {
    /// Propagate one decision and queue what it decides in `out`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn propagate(
        &mut self,
        geom: &Geometry,
        group: &Group<'_>,
        states: &[AtomicU32],
        g: u64,
        class: u32,
        d: u32,
        out: &mut Vec<Bucket>,
    ) {
        self.found.clear();
        propagate(geom, group, states, g, class, d, &mut self.found, &mut self.slow, &mut self.pending);
        for &(dd, e) in &self.found {
            push_event(out, dd, e);
        }
    }
}

/// Propagate the decision of class `class` of position `g` (distance `d`) to the
/// predecessors inside the group.
#[allow(clippy::too_many_arguments)]
pub(super) fn propagate(
    geom: &Geometry,
    group: &Group<'_>,
    states: &[AtomicU32],
    g: u64,
    class: u32,
    d: u32,
    out: &mut Vec<(u32, u32)>,
    slow: &mut Vec<u64>,
    pending: &mut Vec<(u64, u32)>,
) {
    let st = State(states[g as usize].load(Ordering::Relaxed));
    let s = st.s();
    debug_assert!(st.decided(class), "event of distance {d} of an undecided node");
    let child_wins = st.won(class);
    let pos = group.position(g);
    let pred_phase = pos.phase().swapped();
    let pslot = group.slot_of(pred_phase);
    let pidx = group.phases[pslot];
    let poff = group.offsets[pslot];
    // The predecessors whose node forbids the special move `s` are the images of the
    // result of move `s`, unless an earlier move also reaches an image of it (then the
    // node index names that earlier move and no node forbids `s`).
    let special_target =
        if s != 0 { forbidding_predecessors(geom, &pos, s as usize).map(|(_, inv, code)| (inv, code)) } else { None };
    if class == SPC && special_target.is_none() {
        return;
    }
    let mut stab = 0u8;
    let (_, set_syms) = group.phases[group.slot_of(pos.phase())].sets().lookup(pos.player);
    if set_syms != 1 {
        for k in 1..8 {
            if set_syms >> k & 1 != 0 && pos.transformed(geom, k) == pos {
                stab |= 1 << k;
            }
        }
    }
    slow.clear();
    pending.clear();
    let level = d + 1;
    let mut reached = false;
    unmoves(geom, &pos, |u| {
        if let Some((inv, code)) = special_target {
            let p = &u.pred;
            let special =
                geom.symmetry_invariant(p.player, p.opponent, p.hole()) == inv && canonical_code(geom, p) == code;
            reached |= special;
            if special != (class == SPC) {
                return;
            }
        }
        // A predecessor won at once by the rules is decided for good at init (its
        // generic `Win(1)`, no special move): every update of it is a no-op, so it is
        // neither located nor read (over half of (4,4)'s positions, each a cache miss).
        if is_immediate_win(geom, &u.pred) {
            return;
        }
        // A symmetric child: keep one unmove per image of the predecessor.
        let mut fixed = false;
        if stab != 0 {
            let code = u.pred.code();
            let mut t = stab;
            while t != 0 {
                let k = t.trailing_zeros() as usize;
                t &= t - 1;
                let c = u.pred.transformed(geom, k).code();
                if c < code {
                    return;
                }
                fixed |= c == code;
            }
        }
        let at = pidx.locate(&u.pred);
        let q = poff + at.index;
        if at.symmetric || fixed {
            slow.push(q);
            return;
        }
        let i = move_index(geom, &at.canonical, transform_move(geom, at.sym, u.mv)) as u32;
        crate::sys::prefetch(&states[q as usize]);
        pending.push((q, i));
    });
    // Every position with a special move has a decision propagated, so by the end of the
    // group each special node that some predecessor reaches is marked (see the record).
    if reached && st.0 & SPECIAL_REACHED == 0 {
        states[g as usize].fetch_or(SPECIAL_REACHED, Ordering::Relaxed);
    }
    for &(q, i) in pending.iter() {
        update(states, q, i, child_wins, level, out);
    }
    if !slow.is_empty() {
        slow.sort_unstable();
        slow.dedup();
        let code = pos.code();
        for &q in slow.iter() {
            let qpos = group.position(q);
            for (i, &m) in moves(geom, &qpos).iter().enumerate() {
                let r = play(geom, &qpos, m).expect("listed moves are legal");
                if r.removal == Removal::None && canonical_code(geom, &r.child) == code {
                    update(states, q, i as u32 + 1, child_wins, level, out);
                }
            }
        }
    }
}

#[inline]
pub(super) fn update(states: &[AtomicU32], q: u64, i: u32, child_wins: bool, level: u32, out: &mut Vec<(u32, u32)>) {
    let cell = &states[q as usize];
    let st = State(cell.load(Ordering::Relaxed));
    if st.decided(GEN) && (st.s() == 0 || st.decided(SPC)) {
        return; // every node of the parent is decided
    }
    let mut emits: Emits = [None, None];
    let _ = cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
        let (st, e) = if child_wins { on_losing_move(State(v), i, level) } else { on_winning_move(State(v), i, level) };
        emits = e;
        Some(st.0)
    });
    for (class, d) in emits.into_iter().flatten() {
        out.push((d, event(q, class)));
    }
}

pub(super) fn into_atomic(v: Vec<u32>) -> Vec<AtomicU32> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: AtomicU32 has the same size, alignment and bit validity as u32.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut AtomicU32, v.len(), v.capacity()) }
}
