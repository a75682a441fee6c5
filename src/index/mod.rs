//! The dense position index: every canonical position of a phase gets a number
//! `0..N`, in ascending order of its published canonical code, and back.
//!
//! # How positions are numbered
//!
//! The canonical form is the symmetric image with the smallest published code (hole in
//! bits 0..4, opponent set in bits 5..29, player set in bits 30..54). The player set has
//! the highest bits, so a canonical position's player set is the smallest image of itself
//! ("a canonical player set"), and the opponent set and hole only break ties among the
//! symmetries that fix the player set (its *stabiliser*).
//!
//! The index is therefore two-level and stores no keys:
//!
//! * **outer**: the canonical player sets of `a` pieces, ascending (6,814 of them for five
//!   pieces on 5x5). A table over the colex rank of *any* `a`-subset gives its canonical
//!   slot and the symmetries that map it there ([`PlayerSets`]).
//! * **inner**: with the player set `P` fixed, the opponent set `O` (`b` of the free
//!   squares `F = ~P`) and the hole `h` (one of the remaining free squares). Ascending
//!   code order is ascending `O` then ascending `h`, which is the colex rank of `O` inside
//!   `F` times `|F| - b`, plus the rank of `h` among `F \ O`.
//!
//! When the stabiliser of `P` is trivial, every `(O, h)` is canonical and the inner rank
//! is dense. The few symmetric player sets (a stabiliser of order 2, 4 or 8) keep a bitmap
//! of their canonical `(O, h)` pairs with a cumulative-count directory, so the inner rank
//! stays dense there too. `index = offset[slot] + inner rank`.

mod numbering;
mod playersets;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

pub use numbering::GameNumbering;
pub use playersets::{PlayerSets, colex_rank, colex_unrank};

use crate::error::Error;
use crate::game::geometry::{Geometry, squares_of};
use crate::game::position::{Phase, Position};
use crate::game::symmetry::least_rest;

/// Binomial coefficients `C(n, k)` for `n, k <= 32`.
pub const BINOMIAL: [[u64; 33]; 33] = {
    let mut t = [[0u64; 33]; 33];
    let mut n = 0;
    while n <= 32 {
        t[n][0] = 1;
        let mut k = 1;
        while k <= n {
            t[n][k] = t[n - 1][k - 1] + if k < n { t[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    t
};

/// `C(n, k)`, zero when `k > n`.
#[inline]
pub fn binomial(n: u32, k: u32) -> u64 {
    if k > n { 0 } else { BINOMIAL[n as usize][k as usize] }
}

/// Dense bitmap of canonical inner ranks of one symmetric player set, with a cumulative
/// count per 64-bit word for rank and select.
#[derive(Clone, Debug)]
struct InnerBitmap {
    words: Vec<u64>,
    /// `cum[w]` = number of set bits in `words[..w]`.
    cum: Vec<u32>,
}

impl InnerBitmap {
    #[inline]
    fn rank(&self, i: u64) -> Option<u64> {
        let w = (i >> 6) as usize;
        let bit = i & 63;
        let word = self.words[w];
        if word >> bit & 1 == 0 {
            return None;
        }
        Some(self.cum[w] as u64 + (word & ((1u64 << bit) - 1)).count_ones() as u64)
    }

    #[inline]
    fn select(&self, r: u64) -> u64 {
        // Largest w with cum[w] <= r.
        let w = self.cum.partition_point(|&c| c as u64 <= r) - 1;
        let mut word = self.words[w];
        let mut left = r - self.cum[w] as u64;
        while left > 0 {
            word &= word - 1;
            left -= 1;
        }
        ((w as u64) << 6) + word.trailing_zeros() as u64
    }
}

/// The dense index of one phase `(a, b)`.
#[derive(Clone, Debug)]
pub struct PhaseIndex {
    geom: Geometry,
    phase: Phase,
    sets: Arc<PlayerSets>,
    /// `offsets[slot]` = index of the first position with canonical player set `slot`;
    /// one extra entry holds the phase's size.
    offsets: Vec<u64>,
    /// Free squares left for the hole once both sides are placed.
    holes: u32,
    /// `bitmap_of[slot]` = index into `bitmaps`, or `u32::MAX` for a trivial stabiliser.
    bitmap_of: Vec<u32>,
    /// Built on first use, so that opening an index for one query costs microseconds;
    /// the sizes come from [`canonical_inner_count`] without building them.
    bitmaps: Vec<OnceLock<InnerBitmap>>,
    /// `slot_hint[j]` = the slot holding index `j << hint_shift`: where
    /// [`PhaseIndex::slot_of`] starts its walk (a bucket about as large as a slot, so
    /// the walk is a step or two, not the 13 dependent loads of a binary search).
    slot_hint: Vec<u32>,
    hint_shift: u32,
    /// The opponent's `b`-subsets of `0..free` in colex order, as [`colex_unrank`] gives
    /// them one by one (C(20, 5) = 15,504 of them for (5,5), 62 KB): unranking by a table
    /// instead of a step-down search with a branch per step.
    colex_sets: Vec<u32>,
}

impl PhaseIndex {
    /// Build the index of `phase` on `geom`. `sets` must be the player sets of
    /// `phase.player` pieces on the same geometry.
    pub fn build(geom: &Geometry, phase: Phase, sets: Arc<PlayerSets>) -> PhaseIndex {
        assert_eq!(sets.size(), phase.player, "player sets of the wrong size");
        let free = geom.squares() - phase.player;
        let holes = free - phase.opponent;
        let inner_size = binomial(free, phase.opponent) * holes as u64;
        let mut offsets = Vec::with_capacity(sets.len() + 1);
        let mut bitmap_of = vec![u32::MAX; sets.len()];
        let mut bitmaps = Vec::new();
        let mut total = 0u64;
        for slot in 0..sets.len() {
            offsets.push(total);
            let stab = sets.stabiliser(slot);
            total += if stab == 1 {
                inner_size
            } else {
                bitmap_of[slot] = bitmaps.len() as u32;
                bitmaps.push(OnceLock::new());
                canonical_inner_count(geom, sets.set(slot), stab, phase.opponent)
            };
        }
        offsets.push(total);
        // Buckets of a power of two at least as large as the mean slot.
        let hint_shift = (total / sets.len().max(1) as u64).max(1).ilog2();
        let slot_hint = (0..total.div_ceil(1 << hint_shift))
            .map(|j| (offsets.partition_point(|&o| o <= j << hint_shift) - 1) as u32)
            .collect();
        let colex_sets = (0..binomial(free, phase.opponent)).map(|r| colex_unrank(r, phase.opponent, free)).collect();
        PhaseIndex {
            geom: geom.clone(),
            phase,
            sets,
            offsets,
            holes,
            bitmap_of,
            bitmaps,
            slot_hint,
            hint_shift,
            colex_sets,
        }
    }

    /// The slot (canonical player set) of index `idx < len()`: the largest `slot` with
    /// `offsets[slot] <= idx`, found from [`PhaseIndex::slot_hint`].
    #[inline]
    fn slot_of(&self, idx: u64) -> usize {
        let mut slot = self.slot_hint[(idx >> self.hint_shift) as usize] as usize;
        while self.offsets[slot + 1] <= idx {
            slot += 1;
        }
        slot
    }

    /// The bitmap of symmetric slot `b` (built on first use).
    #[inline]
    fn bitmap(&self, b: u32) -> &InnerBitmap {
        self.bitmaps[b as usize].get_or_init(|| {
            let slot = self.bitmap_of.iter().position(|&x| x == b).expect("slot of bitmap");
            let free = self.geom.squares() - self.phase.player;
            let inner_size = binomial(free, self.phase.opponent) * self.holes as u64;
            symmetric_bitmap(&self.geom, self.phase, self.sets.set(slot), self.sets.stabiliser(slot), inner_size)
        })
    }

    /// Build every bitmap now, which [`PhaseIndex::index_of`] otherwise builds on first
    /// use (a server does this at start, so that no request waits for one).
    pub fn build_bitmaps(&self) {
        for b in 0..self.bitmaps.len() {
            self.bitmap(b as u32);
        }
    }

    /// The phase this index numbers.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// Number of canonical positions in the phase.
    #[inline]
    pub fn len(&self) -> u64 {
        self.offsets[self.offsets.len() - 1]
    }

    /// True for an empty phase (never for a real one).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The canonical form of `pos` (which must be a valid position of this phase).
    #[inline]
    pub fn canonical(&self, pos: &Position) -> Position {
        let (slot, _, o, h, _) = self.canonical_parts(pos);
        Position::new(self.sets.set(slot), o, h)
    }

    /// The canonical slot, a symmetry `k` mapping `pos` to its canonical form, the canonical
    /// opponent set and hole, and whether the canonical form has a non-trivial stabiliser.
    #[inline]
    fn canonical_parts(&self, pos: &Position) -> (usize, usize, u32, u32, bool) {
        let (slot, syms) = self.sets.lookup(pos.player);
        let g = &self.geom;
        if syms & (syms - 1) == 0 {
            let k = syms.trailing_zeros() as usize;
            return (slot, k, g.sym_set(k, pos.opponent), g.sym_square(k, pos.hole()), false);
        }
        let (best_k, best, tied) = least_rest(g, pos, syms as u32);
        (slot, best_k, (best >> 5) as u32, (best & 31) as u32, tied)
    }

    /// Where `pos` (any symmetric image of a position of this phase) is: its index, a
    /// symmetry that makes it canonical, and its canonical form, which the search for
    /// the index finds anyway (so a caller need not transform `pos` again).
    #[inline]
    pub fn locate(&self, pos: &Position) -> Located {
        let (slot, sym, o, h, symmetric) = self.canonical_parts(pos);
        let p = self.sets.set(slot);
        let inner = inner_rank(self.geom.all() & !p, o, h, self.holes);
        let index = match self.bitmap_of[slot] {
            u32::MAX => self.offsets[slot] + inner,
            b => self.offsets[slot] + self.bitmap(b).rank(inner).expect("canonical inner pair"),
        };
        Located { index, sym, canonical: Position::new(p, o, h), symmetric }
    }

    /// The index of `pos` (any symmetric image of a position of this phase).
    #[inline]
    pub fn index_of(&self, pos: &Position) -> u64 {
        debug_assert_eq!(pos.phase(), self.phase);
        self.locate(pos).index
    }

    /// The canonical position with index `idx` (`idx < len()`).
    pub fn position_at(&self, idx: u64) -> Position {
        debug_assert!(idx < self.len());
        let slot = self.slot_of(idx);
        let mut inner = idx - self.offsets[slot];
        let b = self.bitmap_of[slot];
        if b != u32::MAX {
            inner = self.bitmap(b).select(inner);
        }
        let p = self.sets.set(slot);
        let (o, h) = self.inner_at(self.geom.all() & !p, inner);
        Position::new(p, o, h)
    }

    /// The opponent set and hole of inner rank `inner` among the free squares `free`
    /// (the inverse of [`inner_rank`]), the opponent's squares taken from `colex_sets`.
    #[inline]
    fn inner_at(&self, free: u32, inner: u64) -> (u32, u32) {
        let o = deposit(self.colex_sets[(inner / self.holes as u64) as usize], free);
        (o, nth_square(free & !o, (inner % self.holes as u64) as u32))
    }

    /// The canonical positions with indices in `range` (cut at `len()`), in order: what
    /// `range.map(|i| self.position_at(i))` gives, at a fraction of the cost, since
    /// each position is a step from the one before (the hole to the next free square,
    /// after the last one the opponent's next set of squares) instead of unranked anew.
    pub fn positions(&self, range: std::ops::Range<u64>) -> Positions<'_> {
        Positions { index: self, next: range.start, end: range.end.min(self.len()), step: None }
    }

    /// The canonical positions with indices in `range` (cut at `len()`) with their
    /// indices, in parallel: runs of 4,096 positions (`RUN`), each made by [`Self::positions`];
    /// collected, they come in index order.
    pub fn par_positions(
        &self,
        range: std::ops::Range<u64>,
    ) -> impl rayon::iter::ParallelIterator<Item = (u64, Position)> + '_ {
        use rayon::prelude::*;
        let end = range.end.min(self.len());
        (range.start..end)
            .step_by(RUN as usize)
            .collect::<Vec<u64>>()
            .into_par_iter()
            .flat_map_iter(move |a| (a..).zip(self.positions(a..(a + RUN).min(end))))
    }
}

/// Where [`PhaseIndex::locate`] found a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    /// The position's index in its phase.
    pub index: u64,
    /// A symmetry `k` with `pos.transformed(k) == canonical`; one of several when
    /// `symmetric`.
    pub sym: usize,
    /// The canonical form, the position numbered `index`.
    pub canonical: Position,
    /// Whether the canonical form is fixed by some symmetry other than the identity.
    pub symmetric: bool,
}

/// Positions per work item of [`PhaseIndex::par_positions`].
const RUN: u64 = 1 << 12;

/// The iterator of [`PhaseIndex::positions`].
pub struct Positions<'a> {
    index: &'a PhaseIndex,
    next: u64,
    end: u64,
    step: Option<Step>,
}

/// Where [`Positions`] stands inside a player set without symmetries (whose inner ranks
/// are all used, so the next index is the next inner rank).
struct Step {
    /// The first index past this player set.
    slot_end: u64,
    free: u32,
    /// The opponent's squares as a subset of `0..free.count_ones()`.
    compressed: u32,
    hole_rank: u32,
    pos: Position,
}

impl Iterator for Positions<'_> {
    type Item = Position;

    #[inline]
    fn next(&mut self) -> Option<Position> {
        if self.next >= self.end {
            return None;
        }
        let idx = self.next;
        self.next += 1;
        let ix = self.index;
        if let Some(st) = &mut self.step
            && idx < st.slot_end
        {
            let o = st.pos.opponent;
            if st.hole_rank + 1 < ix.holes {
                st.hole_rank += 1;
                let above = st.free & !o & !(u32::MAX >> (31 - st.pos.hole()));
                st.pos = Position::new(st.pos.player, o, above.trailing_zeros());
            } else {
                st.hole_rank = 0;
                st.compressed = next_combination(st.compressed);
                let o = deposit(st.compressed, st.free);
                st.pos = Position::new(st.pos.player, o, (st.free & !o).trailing_zeros());
            }
            return Some(st.pos);
        }
        self.step = None;
        let slot = ix.slot_of(idx);
        if ix.bitmap_of[slot] != u32::MAX {
            return Some(ix.position_at(idx));
        }
        let inner = idx - ix.offsets[slot];
        let p = ix.sets.set(slot);
        let free = ix.geom.all() & !p;
        let compressed = colex_unrank(inner / ix.holes as u64, ix.phase.opponent, free.count_ones());
        let o = deposit(compressed, free);
        let hole_rank = (inner % ix.holes as u64) as u32;
        let pos = Position::new(p, o, nth_square(free & !o, hole_rank));
        self.step = Some(Step { slot_end: ix.offsets[slot + 1], free, compressed, hole_rank, pos });
        Some(pos)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end.saturating_sub(self.next) as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Positions<'_> {}

/// The next set of as many bits in ascending integer (colex) order.
#[inline]
fn next_combination(x: u32) -> u32 {
    let t = x | (x - 1);
    (t + 1) | ((!t & (t + 1)) - 1) >> (x.trailing_zeros() + 1)
}

impl PhaseIndex {
    /// Count positions per hole orbit representative (for 5x5: squares 0, 1, 2, 6, 7, 12).
    pub fn count_by_hole(&self) -> BTreeMap<u32, u64> {
        let g = &self.geom;
        let mut counts: BTreeMap<u32, u64> = g.orbit_reps().into_iter().map(|r| (r, 0)).collect();
        let free_n = g.squares() - self.phase.player;
        let per_hole = binomial(free_n - 1, self.phase.opponent);
        for slot in 0..self.sets.len() {
            let p = self.sets.set(slot);
            let free = g.all() & !p;
            match self.bitmap_of[slot] {
                u32::MAX => {
                    for h in squares_of(free) {
                        *counts.entry(g.orbit_rep(h)).or_default() += per_hole;
                    }
                }
                b => {
                    let bm = self.bitmap(b);
                    for (w, &word) in bm.words.iter().enumerate() {
                        let mut word = word;
                        while word != 0 {
                            let inner = ((w as u64) << 6) + word.trailing_zeros() as u64;
                            word &= word - 1;
                            let (_, h) = self.inner_at(free, inner);
                            *counts.entry(g.orbit_rep(h)).or_default() += 1;
                        }
                    }
                }
            }
        }
        counts
    }

    /// Number of canonical player sets (outer slots).
    pub fn player_sets(&self) -> usize {
        self.sets.len()
    }

    /// Number of symmetric player sets (slots with a bitmap).
    pub fn symmetric_player_sets(&self) -> usize {
        self.bitmaps.len()
    }

    /// Bytes of memory the index tables use.
    pub fn heap_bytes(&self) -> usize {
        self.offsets.len() * 8
            + self.bitmap_of.len() * 4
            + self.slot_hint.len() * 4
            + self.colex_sets.len() * 4
            + self.bitmaps.iter().filter_map(|b| b.get()).map(|b| b.words.len() * 8 + b.cum.len() * 4).sum::<usize>()
    }

    /// The player set tables shared with other phases.
    pub fn sets(&self) -> &Arc<PlayerSets> {
        &self.sets
    }
}

/// Inner rank of `(o, h)` among the free squares `free`: colex rank of `o` within `free`
/// times `holes`, plus the rank of `h` among `free \ o`.
#[inline]
fn inner_rank(free: u32, o: u32, h: u32, holes: u32) -> u64 {
    let mut r = 0u64;
    for (i, s) in squares_of(o).enumerate() {
        let c = (free & ((1u32 << s) - 1)).count_ones();
        r += binomial(c, i as u32 + 1);
    }
    let hr = (free & !o & ((1u32 << h) - 1)).count_ones();
    r * holes as u64 + hr as u64
}

/// Inverse of [`inner_rank`] by definition, a step-down colex unrank
/// ([`PhaseIndex::inner_at`] reads the opponent's set from a table): the tests' oracle.
#[cfg(test)]
fn inner_unrank(free: u32, inner: u64, b: u32, holes: u32) -> (u32, u32) {
    let colex = inner / holes as u64;
    let hr = (inner % holes as u64) as u32;
    let compressed = colex_unrank(colex, b, free.count_ones());
    let o = deposit(compressed, free);
    let h = nth_square(free & !o, hr);
    (o, h)
}

/// Scatter the low bits of `bits` onto the set bits of `mask` (like `pdep`).
#[inline]
pub fn deposit(mut bits: u32, mask: u32) -> u32 {
    let mut out = 0u32;
    let mut m = mask;
    while bits != 0 && m != 0 {
        let low = m & m.wrapping_neg();
        if bits & 1 != 0 {
            out |= low;
        }
        bits >>= 1;
        m &= m - 1;
    }
    out
}

/// The `n`-th (0-based) set bit of `set`.
#[inline]
fn nth_square(mut set: u32, n: u32) -> u32 {
    for _ in 0..n {
        set &= set - 1;
    }
    set.trailing_zeros()
}

fn symmetric_bitmap(geom: &Geometry, phase: Phase, p: u32, stab: u8, inner_size: u64) -> InnerBitmap {
    let free = geom.all() & !p;
    let b = phase.opponent;
    let holes = free.count_ones() - b;
    let sets = binomial(free.count_ones(), b);
    debug_assert_eq!(sets * holes as u64, inner_size);
    let syms: Vec<usize> = squares_of(stab as u32 & !1).map(|k| k as usize).collect();
    let mut words = vec![0u64; inner_size.div_ceil(64) as usize];
    // The opponent sets in inner order: colex order of the `b`-subsets of the free
    // squares, which is the numeric order of the sets themselves. Gosper's step taken
    // within the free squares gives the next: the lowest run of the set's squares (in
    // the free squares' order) carries into the next free square, and all but one of
    // the run go back to the lowest free squares. (Spreading a compressed mask onto the
    // free squares for every set, one bit at a time, took 40% of this function.)
    let lowest: Vec<u32> = (0..=b).map(|k| deposit((1u32 << k) - 1, free)).collect();
    let mut o = lowest[b as usize];
    let mut fixing = Vec::with_capacity(syms.len());
    let mut inner = 0u64;
    for n in 0..sets {
        // A symmetry that maps `o` below itself makes every hole non-canonical, one that
        // maps it above leaves every hole canonical; one that fixes `o` decides by the hole.
        fixing.clear();
        let mut below = false;
        for &k in &syms {
            let img = geom.sym_set(k, o);
            if img < o {
                below = true;
                break;
            }
            if img == o {
                fixing.push(k);
            }
        }
        if !below {
            for (hr, h) in squares_of(free & !o).enumerate() {
                if fixing.iter().all(|&k| geom.sym_square(k, h) >= h) {
                    let i = inner + hr as u64;
                    words[(i >> 6) as usize] |= 1 << (i & 63);
                }
            }
        }
        inner += holes as u64;
        if n + 1 < sets {
            // The carry runs through the squares outside `free` as through the run.
            let r = (o | !free).wrapping_add(o & o.wrapping_neg()) & free;
            o = r | lowest[((o & !r).count_ones() - 1) as usize];
        }
    }
    let mut cum = Vec::with_capacity(words.len() + 1);
    let mut total = 0u32;
    for w in &words {
        cum.push(total);
        total += w.count_ones();
    }
    cum.push(total);
    InnerBitmap { words, cum }
}

/// [`symmetric_bitmap`] by definition: every inner rank unranked and tested against
/// every symmetry of the stabiliser (the oracle of the tests).
#[cfg(test)]
fn symmetric_bitmap_naive(geom: &Geometry, phase: Phase, p: u32, stab: u8, inner_size: u64) -> Vec<u64> {
    let free = geom.all() & !p;
    let holes = free.count_ones() - phase.opponent;
    let mut words = vec![0u64; inner_size.div_ceil(64) as usize];
    for inner in 0..inner_size {
        let (o, h) = inner_unrank(free, inner, phase.opponent, holes);
        let mine = (o as u64) << 5 | h as u64;
        let canonical = squares_of(stab as u32 & !1).all(|k| {
            let k = k as usize;
            (geom.sym_set(k, o) as u64) << 5 | geom.sym_square(k, h) as u64 >= mine
        });
        if canonical {
            words[(inner >> 6) as usize] |= 1 << (inner & 63);
        }
    }
    words
}

/// The number of canonical `(opponent set, hole)` pairs for a player set `p` with
/// stabiliser `stab` (a mask of symmetries): the number of orbits of the stabiliser on
/// the pairs, by Burnside's lemma (the average number of pairs each symmetry fixes). A
/// symmetry fixes a pair when the opponent set is a union of its cycles on the free
/// squares and the hole is one of its fixed points outside that set.
pub fn canonical_inner_count(geom: &Geometry, p: u32, stab: u8, b: u32) -> u64 {
    let free = geom.all() & !p;
    let mut sum = 0u64;
    for k in squares_of(stab as u32) {
        let k = k as usize;
        // Cycles of symmetry k on the free squares.
        let mut seen = 0u32;
        let mut cycles: Vec<u32> = Vec::new();
        for s in squares_of(free) {
            if seen >> s & 1 != 0 {
                continue;
            }
            let mut len = 0;
            let mut t = s;
            while seen >> t & 1 == 0 {
                seen |= 1 << t;
                len += 1;
                t = geom.sym_square(k, t);
            }
            cycles.push(len);
        }
        // For each fixed point as the hole: ways to pick other cycles of total size b.
        for i in (0..cycles.len()).filter(|&i| cycles[i] == 1) {
            let mut ways = vec![0u64; b as usize + 1];
            ways[0] = 1;
            for (j, &c) in cycles.iter().enumerate() {
                if j == i {
                    continue;
                }
                for size in (c as usize..=b as usize).rev() {
                    ways[size] += ways[size - c as usize];
                }
            }
            sum += ways[b as usize];
        }
    }
    sum / stab.count_ones() as u64
}

/// The indexes of every phase of a game with at most `max_pieces` pieces.
#[derive(Clone, Debug)]
pub struct GameIndex {
    geom: Geometry,
    phases: Vec<PhaseIndex>,
}

impl GameIndex {
    /// Build the indexes of all phases with at most `max_pieces` pieces on the board.
    pub fn build(geom: &Geometry, max_pieces: u32) -> Result<GameIndex, Error> {
        let phases = Phase::all(geom, max_pieces);
        if phases.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "max pieces {max_pieces} leaves no phase; use {}..={}",
                2 * geom.min_pieces(),
                2 * geom.start_pieces()
            )));
        }
        let mut sets: BTreeMap<u32, Arc<PlayerSets>> = BTreeMap::new();
        let mut out = Vec::new();
        for ph in phases {
            let s = sets.entry(ph.player).or_insert_with(|| Arc::new(PlayerSets::build(geom, ph.player))).clone();
            out.push(PhaseIndex::build(geom, ph, s));
        }
        Ok(GameIndex { geom: geom.clone(), phases: out })
    }

    /// The phases, in solving order.
    pub fn phases(&self) -> &[PhaseIndex] {
        &self.phases
    }

    /// The piece counts of its phase groups (phases with equal piece counts are solved
    /// together), in solving order: `[8, 9, 10]` for the whole standard game.
    pub fn group_pieces(&self) -> Vec<u32> {
        let mut totals: Vec<u32> = self.phases.iter().map(|p| p.phase().pieces()).collect();
        totals.dedup();
        totals
    }

    /// The index of one phase, if present.
    pub fn phase(&self, phase: Phase) -> Option<&PhaseIndex> {
        self.phases.iter().find(|p| p.phase() == phase)
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// Total positions over all phases.
    pub fn len(&self) -> u64 {
        self.phases.iter().map(|p| p.len()).sum()
    }

    /// True when there is no position (never).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::symmetry::canonical;

    #[test]
    fn binomials() {
        assert_eq!(binomial(25, 5), 53_130);
        assert_eq!(binomial(24, 5), 42_504);
        assert_eq!(binomial(19, 5), 11_628);
        assert_eq!(binomial(3, 5), 0);
    }

    #[test]
    fn deposit_scatters_bits() {
        assert_eq!(deposit(0b101, 0b1101_0000), 0b1001_0000);
        assert_eq!(deposit(0, 0xff), 0);
    }

    #[test]
    fn positions_step_through_the_index_as_position_at_does() {
        // Whole phases of 3x3 and 4x4, and windows of 5x5 (4,4) and (5,4) that start
        // anywhere: inside a player set, on a symmetric one, at the end.
        for (g, max) in [(Geometry::new(3, 3).unwrap(), 6), (Geometry::new(4, 4).unwrap(), 7)] {
            let idx = GameIndex::build(&g, max).unwrap();
            for ph in idx.phases() {
                assert!(ph.positions(0..ph.len()).eq((0..ph.len()).map(|i| ph.position_at(i))), "{:?}", ph.phase());
            }
        }
        let idx = GameIndex::build(Geometry::standard(), 9).unwrap();
        for ph in idx.phases().iter().filter(|p| p.phase().pieces() >= 8) {
            let n = ph.len();
            for start in [0, 1, 16, 99_999, n / 3, n / 2 + 12_345, n - 70_000, n - 1] {
                let end = (start + 70_000).min(n + 5);
                let got: Vec<Position> = ph.positions(start..end).collect();
                let want: Vec<Position> = (start..end.min(n)).map(|i| ph.position_at(i)).collect();
                assert_eq!(got, want, "{:?} from {start}", ph.phase());
                // In parallel runs, with their indices, collected in index order.
                use rayon::prelude::*;
                let par: Vec<(u64, Position)> = ph.par_positions(start..end).collect();
                assert!(par.iter().map(|x| x.0).eq(start..end.min(n)), "{:?} from {start}", ph.phase());
                assert!(par.iter().map(|x| x.1).eq(want.iter().copied()), "{:?} from {start}", ph.phase());
            }
        }
    }

    /// [`PhaseIndex::position_at`] as it was before its tables: a binary search over the
    /// offsets and a step-down colex unrank.
    fn position_at_naive(ph: &PhaseIndex, idx: u64) -> Position {
        let slot = ph.offsets.partition_point(|&o| o <= idx) - 1;
        let mut inner = idx - ph.offsets[slot];
        if ph.bitmap_of[slot] != u32::MAX {
            inner = ph.bitmap(ph.bitmap_of[slot]).select(inner);
        }
        let p = ph.sets.set(slot);
        let (o, h) = inner_unrank(ph.geom.all() & !p, inner, ph.phase.opponent, ph.holes);
        Position::new(p, o, h)
    }

    #[test]
    fn position_at_by_its_tables_equals_the_naive_search() {
        // Every index of 3x3 and 4x4; on 5x5, both sides of every slot boundary (where
        // the walk from the hint stops) and 100,000 indices spread over each phase.
        for (g, max) in [(Geometry::new(3, 3).unwrap(), 6), (Geometry::new(4, 4).unwrap(), 8)] {
            for ph in GameIndex::build(&g, max).unwrap().phases() {
                for i in 0..ph.len() {
                    assert_eq!(ph.position_at(i), position_at_naive(ph, i), "{:?} {i}", ph.phase());
                }
            }
        }
        for ph in GameIndex::build(Geometry::standard(), 10).unwrap().phases() {
            let n = ph.len();
            let edges = ph.offsets[1..].iter().flat_map(|&o| [o - 1, o]).filter(|&i| i < n);
            let spread = (0..100_000u64).map(|i| i.wrapping_mul(2_654_435_761) % n);
            for i in edges.chain(spread).chain([0, n - 1]) {
                assert_eq!(ph.position_at(i), position_at_naive(ph, i), "{:?} {i}", ph.phase());
            }
            assert_eq!(ph.slot_hint.len() as u64, ((n - 1) >> ph.hint_shift) + 1, "{:?}", ph.phase());
        }
    }

    #[test]
    fn small_board_index_is_a_bijection_onto_canonical_positions() {
        let g = Geometry::new(3, 3).unwrap();
        let idx = GameIndex::build(&g, 6).unwrap();
        for ph in idx.phases() {
            let mut seen = std::collections::HashSet::new();
            for i in 0..ph.len() {
                let p = ph.position_at(i);
                assert_eq!(canonical(&g, &p).0, p, "{p:?} canonical");
                assert_eq!(ph.index_of(&p), i);
                assert!(seen.insert(p));
            }
        }
    }

    #[test]
    fn locate_finds_every_image_with_its_canonical_form_and_symmetry() {
        // Every image of every position on 3x3, and of every 97th on 4x4, located and
        // compared with the naive canonical form (`symmetry::canonical`).
        for (g, step) in [(Geometry::new(3, 3).unwrap(), 1), (Geometry::new(4, 4).unwrap(), 97)] {
            let idx = GameIndex::build(&g, 2 * g.start_pieces()).unwrap();
            for ph in idx.phases() {
                for i in (0..ph.len()).step_by(step) {
                    let p = ph.position_at(i);
                    let fixed = (1..8).any(|k| p.transformed(&g, k) == p);
                    for k in 0..8 {
                        let image = p.transformed(&g, k);
                        let at = ph.locate(&image);
                        assert_eq!(at.index, i, "{image:?}");
                        assert_eq!(at.canonical, p, "{image:?}");
                        assert_eq!(at.canonical, canonical(&g, &image).0, "{image:?}");
                        assert_eq!(image.transformed(&g, at.sym), p, "{image:?} by {}", at.sym);
                        assert_eq!(at.symmetric, fixed, "{p:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn symmetric_bitmaps_equal_the_naive_enumeration() {
        // Every symmetric slot of every phase on 3x3 and 4x4, every 5th on 5x5.
        for (g, step) in
            [(Geometry::new(3, 3).unwrap(), 1), (Geometry::new(4, 4).unwrap(), 1), (Geometry::standard().clone(), 5)]
        {
            for ph in Phase::all(&g, 2 * g.start_pieces()) {
                let sets = PlayerSets::build(&g, ph.player);
                let free = g.squares() - ph.player;
                let inner_size = binomial(free, ph.opponent) * (free - ph.opponent) as u64;
                let symmetric: Vec<usize> = (0..sets.len()).filter(|&s| sets.stabiliser(s) != 1).collect();
                assert!(!symmetric.is_empty());
                for &slot in symmetric.iter().step_by(step) {
                    let (p, stab) = (sets.set(slot), sets.stabiliser(slot));
                    let fast = symmetric_bitmap(&g, ph, p, stab, inner_size);
                    assert_eq!(fast.words, symmetric_bitmap_naive(&g, ph, p, stab, inner_size), "{ph:?} slot {slot}");
                }
            }
        }
    }

    #[test]
    fn burnside_counts_equal_the_enumerated_bitmaps() {
        for g in [Geometry::standard().clone(), Geometry::new(4, 4).unwrap(), Geometry::new(3, 3).unwrap()] {
            for ph in Phase::all(&g, 2 * g.start_pieces()) {
                let sets = PlayerSets::build(&g, ph.player);
                let free = g.squares() - ph.player;
                let inner_size = binomial(free, ph.opponent) * (free - ph.opponent) as u64;
                let mut checked = 0;
                for slot in (0..sets.len()).filter(|&s| sets.stabiliser(s) != 1) {
                    let bm = symmetric_bitmap(&g, ph, sets.set(slot), sets.stabiliser(slot), inner_size);
                    let want = bm.cum[bm.cum.len() - 1] as u64;
                    assert_eq!(canonical_inner_count(&g, sets.set(slot), sets.stabiliser(slot), ph.opponent), want);
                    checked += 1;
                }
                assert!(checked > 0);
            }
        }
    }
}
