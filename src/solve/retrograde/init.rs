//! The start of a phase group: every position's initial state, the decisions known at
//! once and the wins through a capture, kept per chunk for the levels to consume.

use super::*;

/// Step 1 of a group: the initial state of every position (in-group moves counted,
/// captures and suicides summarised). What is already decided, and the wins through a
/// capture, wait in per-chunk queues. Returns the states, the queues and the largest
/// distance in them.
pub(super) fn init_group(
    geom: &Geometry,
    index: &GameIndex,
    group: &Group<'_>,
    done: &[Finished],
    rep: &dyn Reporter,
    label: &str,
) -> (Vec<AtomicU32>, Vec<ChunkQueue>, usize) {
    let n = group.len();
    rep.begin(&format!("{label} init"), n);
    let mut states: Vec<u32> = vec![0; n as usize];
    crate::sys::advise_huge_pages(&states);
    let (queues, last): (Vec<ChunkQueue>, Vec<u32>) = states
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(c, slice)| {
            let lo = (c * CHUNK) as u64;
            let mut decided: Vec<(u32, u16)> = Vec::new();
            let mut ext: Vec<(u32, u16)> = Vec::new();
            let positions = group.positions(lo..lo + slice.len() as u64);
            for ((k, cell), pos) in slice.iter_mut().enumerate().zip(positions) {
                let (st, ev, w) = initial_state(geom, index, done, &pos);
                *cell = st.0;
                for (class, d) in ev {
                    decided.push((d, (k as u16) << 1 | class as u16));
                }
                if let Some(w) = w {
                    ext.push((w, k as u16));
                }
            }
            rep.advance(slice.len() as u64);
            decided.sort_by_key(|&(d, _)| d);
            ext.sort_by_key(|&(w, _)| w);
            let last = decided.iter().chain(&ext).map(|&(d, _)| d).max().unwrap_or(0);
            let mut runs: Vec<(u32, u32)> = Vec::new();
            for (k, &(d, _)) in decided.iter().enumerate() {
                match runs.last_mut() {
                    Some(r) if r.0 == d => r.1 = k as u32 + 1,
                    _ => runs.push((d, k as u32 + 1)),
                }
            }
            let q = ChunkQueue {
                decided: decided.into_iter().map(|(_, e)| e).collect(),
                runs: runs.into(),
                ext: ext.into_iter().map(|(_, k)| k).collect(),
                next: (0, 0),
            };
            (q, last)
        })
        .unzip();
    rep.end();
    let last = last.into_iter().max().unwrap_or(0) as usize;
    let states = into_atomic(states);
    crate::sys::release_free_memory();
    let queued: usize = queues.iter().map(|q| q.decided.len() + q.ext.len()).sum();
    rep.note(&format!("{label} init: {queued} decisions and capture wins queued; {}", crate::sys::rss_summary()));

    (states, queues, last)
}

/// Positions per init chunk: an offset in the chunk shifted left once (for the value
/// class) fits in a `u16`.
pub(super) const CHUNK: usize = 1 << 15;

/// Apply the win through a capture of position `g` if its distance is `level`; false if
/// its distance is larger (the chunk queue waits for that level).
#[inline]
pub(super) fn apply_capture_win(cell: &AtomicU32, g: u64, level: u32, out: &mut Vec<Bucket>) -> bool {
    let st = State(cell.load(Ordering::Relaxed));
    debug_assert!(!st.can_lose() && st.ext_win() >= level);
    if st.ext_win() != level {
        return false;
    }
    let mut emits: Emits = [None, None];
    let _ = cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
        let mut st = State(v);
        emits = [None, None];
        if !st.decided(GEN) {
            st = st.decide(GEN, true);
            emits[0] = Some((GEN, level));
        }
        if st.s() != 0 && !st.decided(SPC) {
            st = st.decide(SPC, true);
            emits[1] = Some((SPC, level));
        }
        Some(st.0)
    });
    for (class, dd) in emits.into_iter().flatten() {
        push_event(out, dd, event(g, class));
    }
    true
}

/// Append per-chunk buckets to `buckets`, reserving each bucket's growth once.
pub(super) fn append_buckets(buckets: &mut Vec<Bucket>, parts: Vec<Vec<Bucket>>) {
    let levels = parts.iter().map(|p| p.len()).max().unwrap_or(0);
    if buckets.len() < levels {
        buckets.resize_with(levels, Vec::new);
    }
    let mut sizes = vec![0usize; levels];
    for p in &parts {
        for (d, b) in p.iter().enumerate() {
            sizes[d] += b.len();
        }
    }
    for (d, &n) in sizes.iter().enumerate() {
        buckets[d].reserve_exact(n);
    }
    for p in parts {
        for (d, b) in p.into_iter().enumerate() {
            buckets[d].extend_from_slice(&b);
        }
    }
}

/// The initial state of a position, the decisions it already allows, and the distance of
/// its best win through a capture (when above 1; a win in 1 is decided at once).
pub(super) fn initial_state(
    geom: &Geometry,
    index: &GameIndex,
    done: &[Finished],
    pos: &Position,
) -> (State, Vec<(u32, u32)>, Option<u32>) {
    let losing = geom.losing_count();
    if is_immediate_win(geom, pos) {
        // Won in 1 ply by the rules (53% of (4,4)). Nothing else of the state is ever
        // read: a decided generic value without a special move makes every later update
        // a no-op (see `update`), and every parent applies this win itself through
        // `into_mate`. So its moves are not even played.
        debug_assert!(moves(geom, pos).iter().any(|&m| {
            let r = play(geom, pos, m).expect("listed moves are legal");
            r.removal == Removal::Opponent && r.child.player.count_ones() == losing
        }));
        return (immediate_win(), Vec::new(), None);
    }
    let list = moves(geom, pos);
    let (mut u, mut x) = (0u32, 0u32);
    // In-group moves into an immediate win of the opponent: their child is decided
    // `Win(1)` without any search, so they are applied here instead of propagated.
    let mut into_mate = 0u32;
    let mut ext_win: Option<u32> = None;
    let mut ext_draw = false;
    let mut extlose = 0u32;
    let mut take = |opt: Outcome| match opt {
        Outcome::Win(k) => ext_win = Some(ext_win.map_or(k, |w| w.min(k))),
        Outcome::Draw => ext_draw = true,
        Outcome::Loss(k) => extlose = extlose.max(k),
    };
    // The values of children in a finished phase are read at random (2 GB of them for
    // (5,5)): each is asked for when its move is played and read after the last move, so
    // that a position's misses overlap.
    let mut finished: [&Val; MAX_MOVES] = [&0; MAX_MOVES];
    let mut n_finished = 0;
    for (i, &m) in list.iter().enumerate() {
        let r = play(geom, pos, m).expect("listed moves are legal");
        take(match r.removal {
            Removal::None => {
                u += 1;
                x ^= i as u32 + 1;
                if is_immediate_win(geom, &r.child) {
                    into_mate |= 1 << i;
                }
                continue;
            }
            // The child is seen from the other side: its player is the side that lost a piece.
            Removal::Opponent if r.child.player.count_ones() == losing => Outcome::Win(1),
            Removal::Own if r.child.opponent.count_ones() == losing => Outcome::Loss(1),
            _ => {
                let v = finished_value(index, done, &r.child);
                crate::sys::prefetch(v);
                finished[n_finished] = v;
                n_finished += 1;
                continue;
            }
        });
    }
    for &v in &finished[..n_finished] {
        take(val_outcome(*v).parent());
    }
    let can_lose = ext_win.is_none() && !ext_draw;
    let mut st = initial(u, x, can_lose, if can_lose { extlose } else { ext_win.unwrap_or(0) });
    let mut emits = Vec::new();
    debug_assert_ne!(ext_win, Some(1), "a win in 1 is an immediate win");
    if can_lose {
        if u == 0 {
            st = st.decide(GEN, false);
            emits.push((GEN, extlose));
        } else if u == 1 {
            st = st.with_s(x).decide(SPC, false);
            emits.push((SPC, extlose));
        }
    }
    while into_mate != 0 {
        let i = into_mate.trailing_zeros() + 1;
        into_mate &= into_mate - 1;
        let (next, e) = on_losing_move(st, i, 2);
        st = next;
        emits.extend(e.into_iter().flatten());
    }
    (st, emits, ext_win)
}
