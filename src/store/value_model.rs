//! The block coder of value files v4 and v5: a static context model of one phase's
//! records, trained on the whole phase before it is written, and a range asymmetric
//! numeral system (rANS) coding each small block of records with it (v5: each stream of
//! a block, coded lean, [`Model::encode_lean`]).
//!
//! A block of zstd needs tens of thousands of positions to find its matches; a static
//! model carries what a phase's values have in common across every block, so a block of
//! a thousand positions codes almost as well as the whole phase and decodes in a few
//! microseconds (`schema/FORMAT.md`, "Value file v4"; the measurement is in
//! ARCHITECTURE.md).
//!
//! Each position of a block is three symbols at most, coded in order, each under a
//! context of symbols coded before it:
//!
//! | symbol | context |
//! |---|---|
//! | base value code and whether there is a special move: "as the previous position", "as the one `d` before", or the two themselves | those of the previous position and of the position `d` before (long wins bucketed), and four bits of agreement among the positions before |
//! | special move (1..=31), when the base symbol says there is one | the base code, the block's last special move so far, the special move of the one `d` before |
//! | special value code | the base code |
//!
//! where `d` is the number of squares a hole can take (`side² - A - B`), so the position
//! `d` before has the same hole rank and the previous opponent set. A context reaching
//! before the block's first position uses a sentinel instead, so a block decodes alone.
//! The model's probabilities are counts quantised to [`SCALE`] bits.

use crate::record::{Packed, Val};

/// Probabilities are in units of `2^-SCALE`.
pub const SCALE: u32 = 15;
const TOTAL: u32 = 1 << SCALE;
/// The rANS state stays in `[LOW, LOW << 8)`; one byte moves at a time.
const LOW: u32 = 1 << 23;
/// Keys of value codes a model can hold: `0..KEYS` (a code's key: draw 0, elided loss
/// 1, `Win(n)` `n + 1`, so wins up to `Win(158)`; a longer win, and a loss with its
/// distance, is coded apart).
pub const KEYS: usize = 160;
/// Contexts see a key through `min(key, BUCKETS - 1)`: long wins are rare and alike (and
/// a base symbol says "as the previous" or "as the one `d` before" exactly).
const BUCKETS: usize = 24;
/// A context's view of a position: `2 * bucket + has a special move`, or [`NONE`] before
/// the block.
const VIEWS: usize = 2 * BUCKETS + 1;
const NONE: usize = 2 * BUCKETS;
/// Base contexts: four bits of agreement among the positions before (see
/// [`base_context`]), the view of the previous position, of the one `d` before.
const BASE_CONTEXTS: usize = 16 * VIEWS * VIEWS;
/// Base symbols: [`SAME_AS_PREVIOUS`], [`SAME_AS_BACK`], or `2 + joint` (`joint = 2 *
/// key + has a special move`).
const BASE_SYMBOLS: usize = 2 + 2 * KEYS;
/// The base symbol of a position whose joint value is the previous position's.
const SAME_AS_PREVIOUS: usize = 0;
/// ... is the one `d` before's, and not the previous one's.
const SAME_AS_BACK: usize = 1;
/// Special moves are `1..MOVES` (0 = none); `MOVES` is the sentinel in a context.
const MOVES: usize = 32;
/// Move contexts: (bucket of the base, the block's last special move so far, the move of
/// the position `d` before).
const MOVE_CONTEXTS: usize = BUCKETS * (MOVES + 1) * (MOVES + 1);

/// The key of a value code, `Err(code)` for a loss with its distance or a win too long.
fn key(v: Val) -> Result<usize, Val> {
    match v {
        0 | 1 => Ok(v as usize),
        v if v & 1 == 0 && (v as usize / 2 + 1) < KEYS => Ok(v as usize / 2 + 1),
        v => Err(v),
    }
}

/// The value code of a key.
fn code_of(key: usize) -> Val {
    if key <= 1 { key as Val } else { 2 * (key as Val - 1) }
}

fn bucket(key: usize) -> usize {
    key.min(BUCKETS - 1)
}

/// A context's view of the position of joint value `j` (`2 * key + has a special move`):
/// `2 * bucket(key) + has a special move`.
#[inline(always)]
fn view_of(j: usize) -> usize {
    2 * bucket(j >> 1) + (j & 1)
}

/// Positions kept before a block's first in the histories a context reads (see
/// [`start_history`]), so that reading them needs no test of where a position is: more
/// than `d + 1` of any board (at most 25 squares).
const PAD: usize = 32;

/// Start the histories of joint values and views of a block: [`PAD`] positions before
/// its first, whose joint values equal no value and no other (so that every agreement
/// with one is false) and whose views are [`NONE`]; position `i` of the block is at
/// `PAD + i`.
fn start_history(joint: &mut Vec<u16>, views: &mut Vec<u8>) {
    joint.clear();
    joint.extend((0..PAD).map(|k| u16::MAX - k as u16));
    views.clear();
    views.resize(PAD, NONE as u8);
}

/// The base context of the position at `p` in a block's histories (`p = PAD + i`), from
/// the joint values and views of the positions before it, with the joint values of the
/// previous position and of the one `d` before, which a base symbol may name (before
/// the block, values no position has). The four bits: the previous two positions agree;
/// the previous agrees with the one `d` before it; so do the one before that and its
/// own; the positions `d` and `d - 1` before agree.
#[inline(always)]
fn base_context(joint: &[u16], views: &[u8], p: usize, d: usize) -> (usize, u16, u16) {
    let (prev, back) = (joint[p - 1], joint[p - d]);
    let alike = joint[p - 2] == prev;
    let copying = prev == joint[p - 1 - d];
    let copying2 = joint[p - 2] == joint[p - 2 - d];
    let ahead = d >= 2 && joint[p + 1 - d] == back;
    let bits = (alike as usize) << 3 | (copying as usize) << 2 | (copying2 as usize) << 1 | ahead as usize;
    ((bits * VIEWS + views[p - 1] as usize) * VIEWS + views[p - d] as usize, prev, back)
}

/// The base symbol of joint value `j` after `prev` and `back`.
fn base_symbol(j: usize, prev: u16, back: u16) -> usize {
    if j == prev as usize {
        SAME_AS_PREVIOUS
    } else if j == back as usize {
        SAME_AS_BACK
    } else {
        2 + j
    }
}

fn move_context(bucket: usize, prev: usize, back: usize) -> usize {
    (bucket * (MOVES + 1) + prev) * (MOVES + 1) + back
}

/// Which of the three symbol kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `2 * key + has a special move`, under a base context.
    Base,
    /// The special move, under a move context.
    Move,
    /// The special value's key, under the base's key.
    Special,
}

/// Walk the symbols of one block of records in coding order, in key space:
/// `f(kind, context, symbol)`. `Err(code)` for a code no model holds.
fn walk(records: &[u64], d: usize, mut f: impl FnMut(Kind, usize, usize)) -> Result<(), Val> {
    let m = records.len();
    let (mut joint, mut views, mut moves) =
        (Vec::with_capacity(PAD + m), Vec::with_capacity(PAD + m), Vec::with_capacity(m));
    start_history(&mut joint, &mut views);
    // The last special move of the block so far ([`MOVES`] before the first).
    let mut last = MOVES;
    for (i, &r) in records.iter().enumerate() {
        let r = Packed(r);
        let k = key(r.base())?;
        let mv = r.special_move() as usize;
        let j = 2 * k + (mv != 0) as usize;
        let (ctx, prev, back) = base_context(&joint, &views, PAD + i, d);
        f(Kind::Base, ctx, base_symbol(j, prev, back));
        if mv != 0 {
            let mprev = last;
            let mback = if i >= d { moves[i - d] } else { MOVES };
            f(Kind::Move, move_context(bucket(k), mprev, mback), mv);
            last = mv;
            f(Kind::Special, k, key(r.special())?);
        }
        joint.push(j as u16);
        views.push(view_of(j) as u8);
        moves.push(mv);
    }
    Ok(())
}

/// Occurrences of every (context, symbol) of the three kinds over some blocks, in key
/// space (about 45 MB: one per thread while a phase is written).
pub struct Counts {
    d: usize,
    base: Vec<u32>,
    moves: Vec<u32>,
    special: Vec<u32>,
}

impl Counts {
    /// Empty counts for blocks of a phase with context distance `d`.
    ///
    /// # Panics
    /// If `d` is 0 or longer than any board's (more than 30).
    pub fn new(d: usize) -> Counts {
        assert!((1..=PAD - 2).contains(&d), "context distance {d} out of range");
        Counts {
            d,
            base: vec![0; BASE_CONTEXTS * BASE_SYMBOLS],
            moves: vec![0; MOVE_CONTEXTS * MOVES],
            special: vec![0; KEYS * KEYS],
        }
    }

    /// Count the symbols of one block. `Err(code)`: a value code no model holds.
    pub fn add_block(&mut self, records: &[u64]) -> Result<(), Val> {
        let (base, moves, special) = (&mut self.base, &mut self.moves, &mut self.special);
        walk(records, self.d, |kind, ctx, sym| match kind {
            Kind::Base => base[ctx * BASE_SYMBOLS + sym] += 1,
            Kind::Move => moves[ctx * MOVES + sym] += 1,
            Kind::Special => special[ctx * KEYS + sym] += 1,
        })
    }

    /// Add another's counts (saturating: only their proportions matter).
    pub fn merge(&mut self, other: &Counts) {
        for (a, b) in
            [(&mut self.base, &other.base), (&mut self.moves, &other.moves), (&mut self.special, &other.special)]
        {
            for (x, &y) in a.iter_mut().zip(b) {
                *x = x.saturating_add(y);
            }
        }
    }
}

/// One (symbol, probability) of a context: the symbol is taken when the state's low
/// [`SCALE`] bits fall in `cum..cum + freq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    cum: u16,
    freq: u16,
    sym: u16,
}

/// Where a context's slots start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Head {
    start: u32,
}

/// Slots of a context a decoder finds in its [`Line`]: the most probable ones.
const LINE: usize = 16;
/// A [`Line`]'s symbol for none: past the context's slots, or a context with none.
const NO_SYMBOL: u16 = u16::MAX;

/// A context's first [`LINE`] slots in one cache line, for the decoder: each slot's last
/// state (`cum + freq - 1`, ascending; `TOTAL - 1` past the context's slots, where no
/// state is below it) and symbol. The slot of a state is the number of lasts below it:
/// sixteen comparisons with no branch, and one read of memory for the whole context,
/// which is what decoding a cold block waits on (a model's tables are megabytes; a
/// table of jumps, a head and a slot apart cost three reads and measured slower).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
struct Line {
    last: [u16; LINE],
    sym: [u16; LINE],
}

impl Default for Line {
    fn default() -> Line {
        Line { last: [(TOTAL - 1) as u16; LINE], sym: [NO_SYMBOL; LINE] }
    }
}

/// The distributions of one kind: context `c` owns `slots[heads[c].start..heads[c +
/// 1].start]`, most probable first; its first [`LINE`] are `lines[c]` too, and the
/// next ones, [`LINE`] a line, `more[more_at[c]..more_at[c + 1]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Table {
    heads: Vec<Head>,
    slots: Vec<Slot>,
    lines: Vec<Line>,
    more: Vec<Line>,
    more_at: Vec<u32>,
}

impl Table {
    #[inline]
    fn context(&self, c: usize) -> &[Slot] {
        &self.slots[self.heads[c].start as usize..self.heads[c + 1].start as usize]
    }

    /// Set every context's lines from its slots (each context's start in place).
    fn set_lines(&mut self) {
        let line = |slots: &[Slot]| {
            let mut line = Line::default();
            for (k, s) in slots.iter().enumerate() {
                line.last[k] = (s.cum as u32 + s.freq as u32 - 1) as u16;
                line.sym[k] = s.sym;
            }
            line
        };
        let contexts = self.heads.len() - 1;
        let (mut lines, mut more, mut more_at) = (Vec::with_capacity(contexts), Vec::new(), Vec::new());
        for c in 0..contexts {
            let mut chunks = self.context(c).chunks(LINE);
            lines.push(chunks.next().map_or_else(Line::default, line));
            more_at.push(more.len() as u32);
            more.extend(chunks.map(line));
        }
        more_at.push(more.len() as u32);
        (self.lines, self.more, self.more_at) = (lines, more, more_at);
    }

    /// The slot of context `c` that holds `slot` (a state's low [`SCALE`] bits), `None`
    /// if the context has none.
    #[inline(always)]
    fn find(&self, c: usize, slot: u32) -> Option<Slot> {
        // The slots below `slot` in a line; `before`: the first state of the line.
        #[inline(always)]
        fn within(line: &Line, slot: u32, before: u32) -> Result<Option<Slot>, u32> {
            // Lasts are at most TOTAL - 1 < 2^15, so they compare as i16 (which
            // vectorises).
            let k = line.last.iter().map(|&l| ((l as i16) < slot as i16) as usize).sum::<usize>();
            if k == LINE {
                return Err(line.last[LINE - 1] as u32 + 1);
            }
            let cum = if k == 0 { before } else { line.last[k - 1] as u32 + 1 };
            let sym = line.sym[k];
            Ok((sym != NO_SYMBOL).then(|| Slot { cum: cum as u16, freq: (line.last[k] as u32 + 1 - cum) as u16, sym }))
        }
        let mut before = match within(&self.lines[c], slot, 0) {
            Ok(s) => return s,
            Err(next) => next,
        };
        for line in &self.more[self.more_at[c] as usize..self.more_at[c + 1] as usize] {
            match within(line, slot, before) {
                Ok(s) => return s,
                Err(next) => before = next,
            }
        }
        None
    }

    /// Build from each context's counts (`row(c)`: counts indexed by symbol).
    fn from_counts<'a>(contexts: usize, row: impl Fn(usize) -> &'a [u32]) -> Table {
        let mut t = Table { heads: Vec::with_capacity(contexts + 1), ..Table::default() };
        for c in 0..contexts {
            t.heads.push(Head { start: t.slots.len() as u32 });
            let counts: Vec<(u16, u64)> =
                row(c).iter().enumerate().filter(|x| *x.1 != 0).map(|(k, &x)| (k as u16, x as u64)).collect();
            if counts.is_empty() {
                continue;
            }
            let mut cum = 0u32;
            for (sym, freq) in quantise(&counts) {
                t.slots.push(Slot { cum: cum as u16, freq, sym });
                cum += freq as u32;
            }
        }
        t.heads.push(Head { start: t.slots.len() as u32 });
        t.set_lines();
        t
    }

    fn write(&self, out: &mut Vec<u8>) {
        let used: Vec<usize> = (0..self.heads.len() - 1).filter(|&c| !self.context(c).is_empty()).collect();
        out.extend_from_slice(&(used.len() as u32).to_le_bytes());
        for c in used {
            let slots = self.context(c);
            out.extend_from_slice(&(c as u32).to_le_bytes());
            out.extend_from_slice(&(slots.len() as u16 - 1).to_le_bytes());
            for s in slots {
                out.extend_from_slice(&s.sym.to_le_bytes());
                out.extend_from_slice(&s.freq.to_le_bytes());
            }
        }
    }

    fn read(r: &mut Reader, contexts: usize, symbols: usize) -> Result<Table, Damage> {
        let used = r.u32()? as usize;
        if used > contexts {
            return Err("the value model has more contexts than it can");
        }
        let mut t = Table { heads: vec![Head::default(); contexts + 1], ..Table::default() };
        let mut next = 0usize;
        for _ in 0..used {
            let c = r.u32()? as usize;
            if c < next || c >= contexts {
                return Err("the value model's contexts are not ascending and in range");
            }
            for e in &mut t.heads[next..=c] {
                e.start = t.slots.len() as u32;
            }
            next = c + 1;
            let k = r.u16()? as usize + 1;
            let mut cum = 0u32;
            let mut seen = vec![false; symbols];
            for _ in 0..k {
                let (sym, freq) = (r.u16()?, r.u16()?);
                if sym as usize >= symbols || seen[sym as usize] || freq == 0 {
                    return Err("the value model has a symbol out of range, twice, or never");
                }
                seen[sym as usize] = true;
                t.slots.push(Slot { cum: cum as u16, freq, sym });
                cum += freq as u32;
            }
            if cum != TOTAL {
                return Err("the value model has a distribution that does not sum to one");
            }
        }
        for e in &mut t.heads[next..] {
            e.start = t.slots.len() as u32;
        }
        t.set_lines();
        Ok(t)
    }
}

/// Little-endian reads from a model's bytes.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Damage> {
        let s = self.b.get(self.at..self.at + n).ok_or("the value model is truncated")?;
        self.at += n;
        Ok(s)
    }
    fn u16(&mut self) -> Result<u16, Damage> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u32(&mut self) -> Result<u32, Damage> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
}

/// A phase's model, as stored in a v4 value file and used to code its blocks. Tables
/// are indexed in key space (symbols are keys, `2 * key + has` for the base), so that
/// the writer's counts and the reader's tables number everything alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    d: usize,
    base: Table,
    moves: Table,
    special: Table,
}

/// Quantise counts (any number of them non-zero) to frequencies summing to [`TOTAL`],
/// each non-zero count keeping at least 1; `(symbol, freq)` most probable first.
fn quantise(counts: &[(u16, u64)]) -> Vec<(u16, u16)> {
    let total: u64 = counts.iter().map(|c| c.1).sum();
    let mut f: Vec<(u16, u32)> = counts
        .iter()
        .map(|&(s, c)| (s, ((c as u128 * TOTAL as u128 + total as u128 / 2) / total as u128).max(1) as u32))
        .collect();
    f.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut sum: u32 = f.iter().map(|x| x.1).sum();
    // Take the excess from the largest frequencies that can spare it, or give the
    // shortfall to the largest.
    let mut k = 0;
    while sum > TOTAL {
        if f[k].1 > 1 {
            let take = (sum - TOTAL).min(f[k].1 - 1).min((f[k].1 / 8).max(1));
            f[k].1 -= take;
            sum -= take;
        }
        k = (k + 1) % f.len();
    }
    f[0].1 += TOTAL - sum;
    f.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    f.into_iter().map(|(s, x)| (s, x as u16)).collect()
}

/// What [`Model::shape`] reports of one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableShape {
    /// Contexts with at least one symbol.
    pub contexts: usize,
    /// (context, symbol) pairs.
    pub slots: usize,
    /// Bytes of the decoder's tables in memory.
    pub bytes: usize,
}

/// Why a model or a block cannot be read.
pub type Damage = &'static str;

impl Model {
    /// The model of a phase from its counts.
    pub fn from_counts(c: &Counts) -> Model {
        Model {
            d: c.d,
            base: Table::from_counts(BASE_CONTEXTS, |ctx| &c.base[ctx * BASE_SYMBOLS..(ctx + 1) * BASE_SYMBOLS]),
            moves: Table::from_counts(MOVE_CONTEXTS, |ctx| &c.moves[ctx * MOVES..(ctx + 1) * MOVES]),
            special: Table::from_counts(KEYS, |ctx| &c.special[ctx * KEYS..(ctx + 1) * KEYS]),
        }
    }

    /// The model's bytes (`schema/FORMAT.md`, "Value file v4").
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.d as u32).to_le_bytes());
        for t in [&self.base, &self.moves, &self.special] {
            t.write(&mut out);
        }
        out
    }

    /// Read a model from its bytes, checking everything a decoder relies on: every
    /// context's frequencies are positive and sum to `2^SCALE`, symbols are in range and
    /// distinct, contexts ascend.
    pub fn from_bytes(b: &[u8]) -> Result<Model, Damage> {
        let mut r = Reader { b, at: 0 };
        let d = r.u32()? as usize;
        if d == 0 {
            return Err("the value model's context distance is zero");
        }
        if d + 2 > PAD {
            return Err("the value model's context distance is longer than any board's");
        }
        let base = Table::read(&mut r, BASE_CONTEXTS, BASE_SYMBOLS)?;
        let moves = Table::read(&mut r, MOVE_CONTEXTS, MOVES)?;
        let special = Table::read(&mut r, KEYS, KEYS)?;
        if r.at != b.len() {
            return Err("the value model is followed by stray bytes");
        }
        Ok(Model { d, base, moves, special })
    }

    /// The ideal code length in bits of each kind of symbol (base, special move,
    /// special value) of a block under this model: what a measurement splits the coded
    /// size by.
    pub fn cost(&self, records: &[u64]) -> [f64; 3] {
        let mut bits = [0f64; 3];
        walk(records, self.d, |kind, ctx, s| {
            let (t, k) = match kind {
                Kind::Base => (&self.base, 0),
                Kind::Move => (&self.moves, 1),
                Kind::Special => (&self.special, 2),
            };
            let slot = t.context(ctx).iter().find(|x| x.sym as usize == s).expect("counted");
            bits[k] -= (slot.freq as f64 / TOTAL as f64).log2();
        })
        .expect("the model counted every code");
        bits
    }

    /// The shape of each table (base values, special moves, special values): contexts
    /// used, slots, and the bytes of the decoder's tables.
    pub fn shape(&self) -> [TableShape; 3] {
        [&self.base, &self.moves, &self.special].map(|t| TableShape {
            contexts: (0..t.heads.len() - 1).filter(|&c| !t.context(c).is_empty()).count(),
            slots: t.slots.len(),
            bytes: std::mem::size_of_val(&t.heads[..])
                + std::mem::size_of_val(&t.slots[..])
                + std::mem::size_of_val(&t.lines[..])
                + std::mem::size_of_val(&t.more[..])
                + std::mem::size_of_val(&t.more_at[..]),
        })
    }

    /// The context distance `d`.
    pub fn distance(&self) -> usize {
        self.d
    }

    /// Code one block of records (which the counts of this model included) as a stream
    /// of value file v4: the coder starts from 2^23 and its last state takes 4 bytes.
    ///
    /// # Panics
    /// If a record holds a (context, symbol) the model never counted: the writer builds
    /// the model from every block it then codes.
    pub fn encode(&self, records: &[u64]) -> Vec<u8> {
        self.encode_with(records, Stream::Full)
    }

    /// Code one block of records as a *lean* stream (value file v5): the coder starts
    /// from state 1 instead of 2^23, so the 23 bits a v4 stream spends on its starting
    /// state are not written, and its last state is written without its leading zero
    /// bytes (`schema/FORMAT.md`, "Value file v5"). About 2 bytes fewer a stream (1.6 to
    /// 2.0 on the blocks of the tests).
    ///
    /// # Panics
    /// As [`Model::encode`].
    pub fn encode_lean(&self, records: &[u64]) -> Vec<u8> {
        self.encode_with(records, Stream::Lean)
    }

    fn encode_with(&self, records: &[u64], stream: Stream) -> Vec<u8> {
        let mut slots: Vec<Slot> = Vec::with_capacity(records.len() + records.len() / 2);
        walk(records, self.d, |kind, ctx, s| {
            let t = match kind {
                Kind::Base => &self.base,
                Kind::Move => &self.moves,
                Kind::Special => &self.special,
            };
            let slot = t.context(ctx).iter().find(|x| x.sym as usize == s);
            slots.push(*slot.expect("the model counted every symbol it codes"));
        })
        .expect("the model counted every code");
        let mut x = stream.first_state();
        let mut out = Vec::with_capacity(records.len() / 2 + 8);
        for s in slots.iter().rev() {
            let freq = s.freq as u32;
            let limit = ((LOW >> SCALE) << 8) * freq;
            while x >= limit {
                out.push(x as u8);
                x >>= 8;
            }
            x = ((x / freq) << SCALE) + x % freq + s.cum as u32;
        }
        let last = x.to_le_bytes();
        match stream {
            Stream::Full => out.extend_from_slice(&last),
            // Without the leading zero bytes: a reader takes bytes until the state is
            // at least LOW or the stream has none left.
            Stream::Lean => out.extend_from_slice(&last[..(4 - x.leading_zeros() as usize / 8)]),
        }
        out.reverse();
        out
    }

    /// Decode a block of `m` records into the planes of value file v3 (`schema/FORMAT.md`:
    /// base code low bytes, high bytes, special moves, then the special values' low and
    /// high bytes), checking that the stream begins in a coder's state, is used up
    /// exactly and ends in the state the writer began with. That catches most damage,
    /// not all (see the test `damage_is_refused_not_decoded`): the file checksums blocks.
    pub fn decode_planes(&self, bytes: &[u8], m: usize) -> Result<Vec<u8>, Damage> {
        self.decode_prefix(bytes, m, m)
    }

    /// Decode the first `n` records (`n <= m`) of a block of `m`, into planes of `n`
    /// positions: a reader that needs position `i` decodes `i + 1`, half a block on
    /// average. The stream's end is checked only when `n == m` (the file's block
    /// checksum covers every byte either way).
    pub fn decode_prefix(&self, bytes: &[u8], m: usize, n: usize) -> Result<Vec<u8>, Damage> {
        self.decode_stream(bytes, m, n, Stream::Full)
    }

    /// [`Model::decode_prefix`] of a lean stream ([`Model::encode_lean`]): `bytes` are
    /// the stream's own, no more.
    pub fn decode_lean(&self, bytes: &[u8], m: usize, n: usize) -> Result<Vec<u8>, Damage> {
        self.decode_stream(bytes, m, n, Stream::Lean)
    }

    fn decode_stream(&self, bytes: &[u8], m: usize, n: usize, stream: Stream) -> Result<Vec<u8>, Damage> {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::new());
        }
        SCRATCH.with(|scratch| decode(self, bytes, (m, n), stream, &mut scratch.borrow_mut()))
    }
}

/// How a block's rANS stream begins and ends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stream {
    /// Value file v4: the writer starts from [`LOW`] and writes its last state in 4
    /// bytes; a reader starts from those 4 bytes.
    Full,
    /// Value file v5: the writer starts from 1 and writes its last state without leading
    /// zero bytes; a reader starts from 0 and takes bytes while its state is below
    /// [`LOW`] and the stream has bytes left (so while the writer's state was below
    /// [`LOW`], at its start, no byte moved either way).
    Lean,
}

impl Stream {
    /// The writer's first state, which a whole stream decodes back to.
    fn first_state(self) -> u32 {
        match self {
            Stream::Full => LOW,
            Stream::Lean => 1,
        }
    }
}

/// Positions a decoder's history holds: [`PAD`] before a stream and the stream's own, a
/// power of two, so that an index masked by `HIST - 1` needs no bounds check.
const HIST: usize = 1 << 14;
/// The most positions a coded stream may hold: value files v4 and v5 write at most
/// 8,192; a longer one is refused as damage.
const MAX_STREAM: usize = HIST - PAD;

/// A position's entry in a decoder's history: its joint value (bits 0..16), its view
/// (bits 16..24), whether its joint value is the previous position's ([`AS_PREVIOUS`])
/// and whether it is that of the one `d` before ([`AS_BACK`]). The four agreement bits of
/// a base context ([`base_context`]) are such bits of the positions 1, 2 and `d - 1`
/// before, computed once when each position is decoded.
const AS_PREVIOUS: u32 = 1 << 24;
const AS_BACK: u32 = 1 << 25;

/// The history entry of joint value `j` after `prev` and `back`.
#[inline(always)]
fn entry(j: usize, prev: u16, back: u16) -> u32 {
    let view = view_of(j);
    let (as_prev, as_back) =
        (if j == prev as usize { AS_PREVIOUS } else { 0 }, if j == back as usize { AS_BACK } else { 0 });
    j as u32 | (view as u32) << 16 | as_prev | as_back
}

/// What a decoder needs besides its output, kept from block to block by each thread
/// (a cold query decodes dozens of blocks, and allocating costs as much as a few
/// positions' decoding).
struct Scratch {
    /// History entries ([`entry`]); position `i` of the stream at `PAD + i`.
    hist: Box<[u32; HIST]>,
    /// The stream's bytes and two zero bytes, so that the next two are always there.
    input: Vec<u8>,
    /// The special values decoded, in order.
    specials: Vec<Val>,
}

impl Scratch {
    fn new() -> Scratch {
        let mut hist = Box::new([0u32; HIST]);
        // Before the stream, the writer's histories ([`start_history`]): every agreement
        // with those positions is false, so their entries have no agreement bit.
        let (mut joint, mut views) = (Vec::with_capacity(PAD), Vec::with_capacity(PAD));
        start_history(&mut joint, &mut views);
        for (h, (&j, &v)) in hist[..PAD].iter_mut().zip(joint.iter().zip(&views)) {
            *h = j as u32 | (v as u32) << 16;
        }
        Scratch { hist, input: Vec::new(), specials: Vec::new() }
    }
}

const SHORT: Damage = "its coded stream ends early";

impl Table {
    /// Decode one symbol under context `c` from rANS state `x`: the symbol and the state
    /// after it (before bytes come in).
    #[inline(always)]
    fn decode(&self, c: usize, x: u32) -> Result<(usize, u32), Damage> {
        let slot = x & (TOTAL - 1);
        let s = self.find(c, slot).ok_or("it codes a value its model does not have")?;
        Ok((s.sym as usize, (s.freq as u32).wrapping_mul(x >> SCALE).wrapping_add(slot).wrapping_sub(s.cum as u32)))
    }
}

/// Bring bytes into state `x` after a symbol: at most two (`x >= 2^8` after any
/// symbol), while it is below [`LOW`], and none the stream does not have (a lean
/// stream's last positions take none), without a branch. `input` is the stream (of
/// `len` bytes) and two zero bytes.
#[inline(always)]
fn refill(x: u32, input: &[u8], len: usize, at: &mut usize) -> u32 {
    let n = ((x < LOW) as usize + (x < LOW >> 8) as usize).min(len - *at);
    let two = u16::from_be_bytes([input[*at], input[*at + 1]]) as u32;
    *at += n;
    x << (8 * n) | two >> (8 * (2 - n))
}

/// Decode the first `n` positions of a stream of `m` into the planes of value file v3
/// (`schema/FORMAT.md`): base code low bytes, high bytes, special moves, then the
/// special values' low and high bytes; for a whole stream, after checking that it is used
/// up exactly and ends in the state its writer began with. The symbols and contexts are
/// those of [`walk`], which the writer codes with, the context's agreement bits taken
/// from the history's entries ([`entry`]).
fn decode(
    model: &Model,
    bytes: &[u8],
    (m, n): (usize, usize),
    stream: Stream,
    scratch: &mut Scratch,
) -> Result<Vec<u8>, Damage> {
    if m > MAX_STREAM {
        return Err("it is longer than a coded stream may be");
    }
    let (n, len) = (n.min(m), bytes.len());
    let (mut x, mut at) = match stream {
        Stream::Full => {
            if len < 4 {
                return Err(SHORT);
            }
            let x = u32::from_be_bytes(bytes[..4].try_into().expect("4 bytes"));
            if !(LOW..LOW << 8).contains(&x) {
                return Err("its coded stream does not begin in a coder's state");
            }
            (x, 4)
        }
        Stream::Lean => {
            let (mut x, mut at) = (0u32, 0);
            while x < LOW && at < len {
                x = x << 8 | bytes[at] as u32;
                at += 1;
            }
            // The writer writes no leading zero byte.
            if bytes.first().is_none_or(|&b| b == 0) {
                return Err("its coded stream does not begin in a coder's state");
            }
            (x, at)
        }
    };
    let Scratch { hist, input, specials } = scratch;
    input.clear();
    input.extend_from_slice(bytes);
    input.extend_from_slice(&[0, 0]);
    specials.clear();
    let mut planes = Vec::with_capacity(3 * n + n / 2);
    planes.resize(3 * n, 0u8);
    let (lo, rest) = planes.split_at_mut(n);
    let (hi, mv) = rest.split_at_mut(n);
    let d = model.d;
    // The position `d - 1` before is one decoded already only when d >= 2.
    let ahead = if d >= 2 { AS_PREVIOUS } else { 0 };
    let (mut h1, mut h2) = (hist[PAD - 1], hist[PAD - 2]);
    // The stream's last special move so far ([`MOVES`] before the first).
    let mut last = MOVES;
    for i in 0..n {
        let p = PAD + i;
        let (hb, ha) = (hist[(p - d) & (HIST - 1)], hist[(p + 1 - d) & (HIST - 1)]);
        let (prev, back) = (h1 as u16, hb as u16);
        let bits = (h1 & AS_PREVIOUS != 0) as usize * 8
            + (h1 & AS_BACK != 0) as usize * 4
            + (h2 & AS_BACK != 0) as usize * 2
            + (ha & ahead != 0) as usize;
        let ctx = (bits * VIEWS + (h1 >> 16 & 0xff) as usize) * VIEWS + (hb >> 16 & 0xff) as usize;
        let (r, y) = model.base.decode(ctx, x)?;
        x = refill(y, input, len, &mut at);
        // A select, not a branch: which of the three is the hardest thing to predict.
        let j = if r == SAME_AS_PREVIOUS {
            prev
        } else if r == SAME_AS_BACK {
            back
        } else {
            (r - 2) as u16
        } as usize;
        if j >= 2 * KEYS {
            return Err("it codes a value its model does not have");
        }
        let h = entry(j, prev, back);
        hist[p & (HIST - 1)] = h;
        (h2, h1) = (h1, h);
        let k = j >> 1;
        [lo[i], hi[i]] = code_of(k).to_le_bytes();
        if j & 1 != 0 {
            let mback = if i >= d { mv[i - d] as usize } else { MOVES };
            let (s, y) = model.moves.decode(move_context(bucket(k), last, mback), x)?;
            x = refill(y, input, len, &mut at);
            if s == 0 {
                return Err("it codes a special move 0");
            }
            mv[i] = s as u8;
            last = s;
            let (s, y) = model.special.decode(k, x)?;
            x = refill(y, input, len, &mut at);
            specials.push(code_of(s));
        }
    }
    if n == m && (at != len || x != stream.first_state()) {
        return Err("its coded stream does not end where it should");
    }
    planes.reserve_exact(2 * specials.len());
    planes.extend(specials.iter().map(|v| v.to_le_bytes()[0]));
    planes.extend(specials.iter().map(|v| v.to_le_bytes()[1]));
    Ok(planes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::cache::{decode_block, encode_block};

    /// Records like a phase's: runs of equal values, a few special moves.
    fn records(n: usize, seed: u64) -> Vec<u64> {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut out = Vec::with_capacity(n);
        let mut base: Val = 4;
        for _ in 0..n {
            let r = next();
            if r % 5 == 0 {
                base = [0, 1, 2, 4, 6, 8, 30, 296][(r >> 8) as usize % 8];
            }
            let (s, special) =
                if r % 7 == 0 { (1 + (r >> 20) as u32 % 31, [0, 1, 6][(r >> 30) as usize % 3]) } else { (0, 0) };
            out.push(Packed::new(base, s, special).0);
        }
        out
    }

    #[test]
    fn blocks_decode_to_the_planes_they_were_coded_from() {
        let recs = records(20_000, 7);
        for (d, k) in [(15usize, 1024usize), (17, 1000), (3, 1), (16, 4096)] {
            let mut c = Counts::new(d);
            for b in recs.chunks(k) {
                c.add_block(b).unwrap();
            }
            let model = Model::from_bytes(&Model::from_counts(&c).to_bytes()).unwrap();
            assert_eq!(model, Model::from_counts(&c));
            let (mut lean_bytes, mut full_bytes) = (0, 0);
            for b in recs.chunks(k) {
                let coded = model.encode(b);
                let planes = model.decode_planes(&coded, b.len()).unwrap();
                assert_eq!(planes, encode_block(b));
                assert_eq!(decode_block(&planes, b.len()).unwrap(), b);
                // Any prefix decodes to the planes of those records alone.
                for n in [0, 1, b.len() / 3, b.len().saturating_sub(1)] {
                    assert_eq!(model.decode_prefix(&coded, b.len(), n).unwrap(), encode_block(&b[..n]));
                }
                // And the same of a lean stream, which is shorter by the writer's first
                // state (23 bits of a full stream's 4-byte last one).
                let lean = model.encode_lean(b);
                (lean_bytes, full_bytes) = (lean_bytes + lean.len(), full_bytes + coded.len());
                assert_eq!(model.decode_lean(&lean, b.len(), b.len()).unwrap(), planes);
                for n in [0, 1, b.len() / 3, b.len().saturating_sub(1)] {
                    assert_eq!(model.decode_lean(&lean, b.len(), n).unwrap(), encode_block(&b[..n]));
                }
            }
            // Lean streams save most of the 23 bits of a full stream's first state (the
            // first symbols they code, at a small state, cost a few bits more): measured
            // 1.6 to 2.0 bytes a block here.
            let blocks = recs.len().div_ceil(k);
            assert!(lean_bytes + blocks * 3 / 2 <= full_bytes, "k {k}: lean {lean_bytes}, full {full_bytes}");
        }
    }

    #[test]
    fn lean_streams_of_every_length_decode_and_end_where_they_should() {
        // Short blocks, where a lean writer's state may never reach LOW, and blocks of
        // one certain value (the state stays 1): each decodes whole, and one byte more
        // or less is refused.
        let recs = records(3_000, 11);
        let same = vec![Packed::new(4, 0, 0).0; 600];
        for (d, k) in [(15usize, 1usize), (15, 2), (15, 3), (15, 7), (20, 64), (20, 300)] {
            let mut c = Counts::new(d);
            for b in recs.chunks(k).chain(same.chunks(k)) {
                c.add_block(b).unwrap();
            }
            let model = Model::from_counts(&c);
            for b in recs.chunks(k).take(200).chain(same.chunks(k).take(3)) {
                let lean = model.encode_lean(b);
                assert_ne!(lean.first(), Some(&0), "a lean stream has no leading zero byte");
                assert_eq!(model.decode_lean(&lean, b.len(), b.len()).unwrap(), encode_block(b));
                assert!(model.decode_lean(&lean[..lean.len() - 1], b.len(), b.len()).is_err());
                let mut longer = lean.clone();
                longer.push(0x5a);
                assert!(model.decode_lean(&longer, b.len(), b.len()).is_err());
            }
        }
        assert!(Model::from_counts(&Counts::new(15)).decode_lean(&[], 0, 0).is_err());
    }

    #[test]
    fn a_stream_longer_than_the_format_allows_is_refused() {
        let recs = records(300, 5);
        let mut c = Counts::new(3);
        c.add_block(&recs).unwrap();
        let model = Model::from_counts(&c);
        let lean = model.encode_lean(&recs);
        assert_eq!(model.decode_lean(&lean, recs.len(), recs.len()).unwrap(), encode_block(&recs));
        // The same bytes said to be a stream longer than any writer writes: refused, not
        // decoded with a history too short for it.
        assert!(model.decode_lean(&lean, MAX_STREAM + 1, 10).is_err());
        assert!(model.decode_lean(&lean, MAX_STREAM, 10).is_ok());
    }

    #[test]
    fn a_line_finds_the_slot_a_scan_finds() {
        // Contexts of 0, 1, 2, 15, 16, 17 and 200 symbols with uneven counts: every
        // state of each against a scan of the context's slots.
        let sizes = [0usize, 1, 2, 15, 16, 17, 200];
        let rows: Vec<Vec<u32>> = sizes
            .iter()
            .enumerate()
            .map(|(c, &k)| {
                (0..256)
                    .map(|s| if s < k { 1 + ((s * 7919 + c) % 97) as u32 * (s as u32 % 5 + 1) } else { 0 })
                    .collect()
            })
            .collect();
        let t = Table::from_counts(sizes.len(), |c| &rows[c]);
        for c in 0..sizes.len() {
            assert_eq!(t.context(c).len(), sizes[c]);
            for slot in 0..TOTAL {
                let naive = t.context(c).iter().find(|s| slot < s.cum as u32 + s.freq as u32).copied();
                assert_eq!(t.find(c, slot), naive, "context {c}, state {slot}");
            }
        }
    }

    #[test]
    fn damage_is_refused_not_decoded() {
        let recs = records(4096, 3);
        let mut c = Counts::new(15);
        for b in recs.chunks(1024) {
            c.add_block(b).unwrap();
        }
        let model = Model::from_counts(&c);
        let coded = model.encode(&recs[..1024]);
        let right = encode_block(&recs[..1024]);
        // Truncated, extended, or one bit flipped: an error or other planes, never a
        // panic (the file's block checksum catches what decodes to something else).
        assert!(model.decode_planes(&coded[..coded.len() - 1], 1024).is_err());
        let mut longer = coded.clone();
        longer.push(0);
        assert!(model.decode_planes(&longer, 1024).is_err());
        let mut refused = 0;
        for bit in 0..coded.len() * 8 {
            let mut bad = coded.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            match model.decode_planes(&bad, 1024) {
                Err(_) => refused += 1,
                Ok(p) => assert_ne!(p, right, "bit {bit}"),
            }
        }
        // Not all: a flip that moves the state between two symbols of equal frequency
        // whose ranges lie that far apart decodes to the other symbol and nothing else
        // changes (one in 1,400 here), so value file v4 checksums every block.
        assert!(refused * 100 > coded.len() * 8 * 99, "{refused} of {} flips refused", coded.len() * 8);
        // The same of a lean stream (v5).
        let lean = model.encode_lean(&recs[..1024]);
        assert!(model.decode_lean(&lean[..lean.len() - 1], 1024, 1024).is_err());
        let mut refused = 0;
        for bit in 0..lean.len() * 8 {
            let mut bad = lean.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            match model.decode_lean(&bad, 1024, 1024) {
                Err(_) => refused += 1,
                Ok(p) => assert_ne!(p, right, "bit {bit}"),
            }
        }
        assert!(refused * 100 > lean.len() * 8 * 99, "{refused} of {} flips refused", lean.len() * 8);
        // A model's bytes with any byte changed are refused or read as another model.
        let bytes = model.to_bytes();
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x41;
            if let Ok(m) = Model::from_bytes(&bad) {
                assert_ne!(m, model);
            }
        }
        assert!(Model::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        // A win too long or a loss with its distance is said.
        let mut c = Counts::new(15);
        assert_eq!(c.add_block(&[Packed::new(600, 0, 0).0]), Err(600));
        assert_eq!(c.add_block(&[Packed::new(2, 5, 3).0]), Err(3));
        c.add_block(&[Packed::new(296, 5, 1).0]).unwrap();
    }

    #[test]
    fn quantised_frequencies_sum_to_one_and_keep_every_symbol() {
        for counts in
            [vec![(0u16, 1u64)], vec![(3, 1), (4, 1_000_000_000)], (0..500).map(|k| (k as u16, 1 + k as u64)).collect()]
        {
            let q = quantise(&counts);
            assert_eq!(q.iter().map(|x| x.1 as u32).sum::<u32>(), TOTAL);
            assert!(q.iter().all(|x| x.1 >= 1));
            assert_eq!(q.len(), counts.len());
        }
    }
}
