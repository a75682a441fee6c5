//! A measurement: would a Syzygy-style layout of a phase's value records (a global Re-Pair
//! grammar, canonical Huffman codes of the final symbols, the bit stream cut into small
//! fixed-size blocks holding whole symbols, a sparse index of each block's first position)
//! beat the zstd blocks of value file v3 on both size and random-access decode time?
//! (docs/measurements.md, "Value blocks": it does not on size; it decodes one position in
//! about 0.3-3 us.)
//!
//! The grammar is built on a training sample (stretches of STRETCH runs of 65,536 records
//! every EVERY runs) and applied, rounds replayed in order, to a disjoint test sample (the
//! stretches half way between): sizes and times are those of the test sample, as if the
//! grammar had been built once per phase on a sample and applied to the whole phase.
//!
//! ```text
//! cargo run --release --example repair_layout -- DB 5,5 EVERY STRETCH full|split \
//!     [BUDGET=4096] [MINCOUNT=1000] [PER_ROUND=64] [BLOCKS=64,256,1024]
//! ```
use ostledb::game::Phase;
use ostledb::record::Packed;
use ostledb::store::cache::encode_block;
use ostledb::store::values::fill_immediate_wins;
use rayon::prelude::*;
use std::collections::HashMap;
use std::time::Instant;

const RUN: usize = 1 << 16;
const LUT_BITS: u32 = 12;
const MAX_LEN: u32 = 30;

// ---------------------------------------------------------------------------------------
// Re-Pair

struct Grammar {
    t: usize,       // terminals: ids 0..t
    budget: usize,  // symbol ids < budget
    left: Vec<u32>, // per rule (id - t)
    right: Vec<u32>,
    explen: Vec<u64>,                  // per symbol
    rounds: Vec<Vec<(u32, u32, u32)>>, // (a, b, new) replaced in one pass, all symbols distinct
}

impl Grammar {
    fn symbols(&self) -> usize {
        self.t + self.left.len()
    }
}

/// Replace, left to right, every occurrence of a pair of `map` (first symbol -> (second,
/// new), all symbols of the round distinct) in each sequence.
fn replace(seqs: &mut [Vec<u32>], map: &[(u32, u32)]) {
    seqs.par_iter_mut().for_each(|s| {
        let n = s.len();
        let (mut i, mut w) = (0, 0);
        while i < n {
            let a = s[i];
            let (b, new) = map[a as usize];
            if new != u32::MAX && i + 1 < n && s[i + 1] == b {
                s[w] = new;
                i += 2;
            } else {
                s[w] = a;
                i += 1;
            }
            w += 1;
        }
        s.truncate(w);
    });
}

fn round_map(budget: usize, round: &[(u32, u32, u32)]) -> Vec<(u32, u32)> {
    let mut map = vec![(0u32, u32::MAX); budget];
    for &(a, b, new) in round {
        map[a as usize] = (b, new);
    }
    map
}

fn repair(seqs: &mut [Vec<u32>], t: usize, budget: usize, min_count: u32, per_round: usize) -> Grammar {
    assert!(t < budget);
    let mut g = Grammar { t, budget, left: vec![], right: vec![], explen: vec![1; t], rounds: vec![] };
    let mut counts = vec![0u32; budget * budget];
    loop {
        let next = g.symbols();
        if next >= budget {
            break;
        }
        counts.fill(0);
        for s in seqs.iter() {
            for w in s.windows(2) {
                let c = &mut counts[w[0] as usize * budget + w[1] as usize];
                *c = c.saturating_add(1);
            }
        }
        let mut cand: Vec<(u32, u32)> =
            counts.iter().enumerate().filter(|(_, c)| **c >= min_count).map(|(i, &c)| (c, i as u32)).collect();
        if cand.is_empty() {
            break;
        }
        cand.sort_unstable_by(|x, y| y.cmp(x));
        let mut used = vec![false; budget];
        let mut round = vec![];
        let mut id = next as u32;
        for &(_, i) in &cand {
            if round.len() >= per_round || id as usize >= budget {
                break;
            }
            let (a, b) = (i / budget as u32, i % budget as u32);
            if used[a as usize] || used[b as usize] {
                continue;
            }
            used[a as usize] = true;
            used[b as usize] = true;
            round.push((a, b, id));
            g.left.push(a);
            g.right.push(b);
            g.explen.push(g.explen[a as usize] + g.explen[b as usize]);
            id += 1;
        }
        replace(seqs, &round_map(budget, &round));
        g.rounds.push(round);
    }
    g
}

fn apply(g: &Grammar, seqs: &mut [Vec<u32>]) {
    for round in &g.rounds {
        replace(seqs, &round_map(g.budget, round));
    }
}

// ---------------------------------------------------------------------------------------
// Canonical Huffman

fn huff_lengths(freq: &[u64]) -> Vec<u8> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut f: Vec<u64> = freq.to_vec();
    loop {
        let n = f.len();
        let mut heap = BinaryHeap::new();
        for (i, &w) in f.iter().enumerate() {
            if w > 0 {
                heap.push(Reverse((w, i)));
            }
        }
        let mut len = vec![0u8; n];
        if heap.len() == 1 {
            let Reverse((_, i)) = heap.pop().unwrap();
            len[i] = 1;
            return len;
        }
        let mut parent = vec![usize::MAX; n];
        while heap.len() > 1 {
            let Reverse((w1, i1)) = heap.pop().unwrap();
            let Reverse((w2, i2)) = heap.pop().unwrap();
            let p = parent.len();
            parent.push(usize::MAX);
            parent[i1] = p;
            parent[i2] = p;
            heap.push(Reverse((w1 + w2, p)));
        }
        let mut depth = vec![0u32; parent.len()];
        for i in (0..parent.len()).rev() {
            if parent[i] != usize::MAX {
                depth[i] = depth[parent[i]] + 1;
            }
        }
        let maxd = (0..n).filter(|&i| f[i] > 0).map(|i| depth[i]).max().unwrap();
        if maxd <= MAX_LEN {
            for i in 0..n {
                if f[i] > 0 {
                    len[i] = depth[i] as u8;
                }
            }
            return len;
        }
        for w in f.iter_mut() {
            if *w > 0 {
                *w = *w / 2 + 1;
            }
        }
    }
}

struct Huffman {
    len: Vec<u8>,
    code: Vec<u32>,
    first: [u64; 33],
    count: [u64; 33],
    off: [usize; 33],
    sorted: Vec<u32>,
    lut: Vec<(u16, u8)>, // (symbol, length), length 0: longer than LUT_BITS
    maxlen: u32,
}

impl Huffman {
    fn new(len: Vec<u8>) -> Huffman {
        let mut count = [0u64; 33];
        for &l in &len {
            if l > 0 {
                count[l as usize] += 1;
            }
        }
        let maxlen = (1..33).rev().find(|&l| count[l] > 0).unwrap() as u32;
        let mut first = [0u64; 33];
        let mut code = 0u64;
        for l in 1..33 {
            code = (code + count[l - 1]) << 1;
            first[l] = code;
        }
        let mut off = [0usize; 33];
        let mut o = 0;
        for l in 1..33 {
            off[l] = o;
            o += count[l] as usize;
        }
        let mut sorted: Vec<u32> = (0..len.len() as u32).filter(|&s| len[s as usize] > 0).collect();
        sorted.sort_by_key(|&s| (len[s as usize], s));
        let mut codes = vec![0u32; len.len()];
        let mut next = first;
        for &s in &sorted {
            let l = len[s as usize] as usize;
            codes[s as usize] = next[l] as u32;
            next[l] += 1;
        }
        let mut lut = vec![(0u16, 0u8); 1 << LUT_BITS];
        for &s in &sorted {
            let l = len[s as usize] as u32;
            if l <= LUT_BITS {
                let c = codes[s as usize] as usize;
                let lo = c << (LUT_BITS - l);
                let hi = (c + 1) << (LUT_BITS - l);
                for e in &mut lut[lo..hi] {
                    *e = (s as u16, l as u8);
                }
            }
        }
        Huffman { len, code: codes, first, count, off, sorted, lut, maxlen }
    }

    /// Decode one symbol from a left-justified window of at least MAX_LEN valid bits.
    #[inline]
    fn decode(&self, window: u64) -> (u32, u32) {
        let (s, l) = self.lut[(window >> (64 - LUT_BITS)) as usize];
        if l != 0 {
            return (s as u32, l as u32);
        }
        for l in (LUT_BITS + 1)..=self.maxlen {
            let v = window >> (64 - l);
            let l = l as usize;
            if v < self.first[l] + self.count[l] {
                return (self.sorted[self.off[l] + (v - self.first[l]) as usize], l as u32);
            }
        }
        unreachable!()
    }
}

// ---------------------------------------------------------------------------------------
// Blocks

struct Blocked {
    bytes: usize,     // block size in bytes
    data: Vec<u8>,    // blocks * bytes + 8 bytes of padding
    starts: Vec<u64>, // first position of each block
}

fn pack(seqs: &[Vec<u32>], g: &Grammar, h: &Huffman, bytes: usize) -> Blocked {
    let cap = bytes as u64 * 8;
    let mut data: Vec<u8> = Vec::new();
    let mut starts = Vec::new();
    let mut used = cap; // force a first block
    let mut pos = 0u64;
    let mut acc = 0u64; // pending bits, left-justified
    let mut nacc = 0u32;
    let mut block_base = 0usize;
    let finish = |data: &mut Vec<u8>, acc: &mut u64, nacc: &mut u32, block_base: usize| {
        while *nacc > 0 {
            data.push((*acc >> 56) as u8);
            *acc <<= 8;
            *nacc = nacc.saturating_sub(8);
        }
        *acc = 0;
        data.resize(block_base + bytes, 0);
    };
    for s in seqs.iter().flatten() {
        let l = h.len[*s as usize] as u64;
        assert!(l > 0);
        if used + l > cap {
            if !starts.is_empty() {
                finish(&mut data, &mut acc, &mut nacc, block_base);
            }
            block_base = data.len();
            starts.push(pos);
            used = 0;
        }
        acc |= (h.code[*s as usize] as u64) << (64 - nacc as u64 - l);
        nacc += l as u32;
        used += l;
        while nacc >= 8 {
            data.push((acc >> 56) as u8);
            acc <<= 8;
            nacc -= 8;
        }
        pos += g.explen[*s as usize];
    }
    finish(&mut data, &mut acc, &mut nacc, block_base);
    data.extend_from_slice(&[0; 8]);
    Blocked { bytes, data, starts }
}

#[inline]
fn window(data: &[u8], bit: u64) -> u64 {
    let i = (bit >> 3) as usize;
    let w = u64::from_be_bytes(data[i..i + 8].try_into().unwrap());
    w << (bit & 7)
}

/// The terminal of position `pos` (of the concatenated sample).
#[inline]
fn lookup(b: &Blocked, g: &Grammar, h: &Huffman, pos: u64) -> u32 {
    let k = b.starts.partition_point(|&s| s <= pos) - 1;
    let mut bit = (k * b.bytes * 8) as u64;
    let mut cur = b.starts[k];
    let (mut s, mut off);
    loop {
        let (sym, l) = h.decode(window(&b.data, bit));
        let e = g.explen[sym as usize];
        if pos < cur + e {
            s = sym;
            off = pos - cur;
            break;
        }
        cur += e;
        bit += l as u64;
    }
    let t = g.t as u32;
    while s >= t {
        let r = (s - t) as usize;
        let a = g.left[r];
        let ea = g.explen[a as usize];
        if off < ea {
            s = a;
        } else {
            off -= ea;
            s = g.right[r];
        }
    }
    s
}

// ---------------------------------------------------------------------------------------

fn load(vf: &ostledb::store::values::ValueFile, stretches: &[(usize, usize)]) -> Vec<Vec<u64>> {
    let k0 = vf.block_positions() as usize;
    assert!(RUN.is_multiple_of(k0));
    stretches
        .par_iter()
        .map(|&(r0, r1)| {
            let mut recs = Vec::with_capacity((r1 - r0) * RUN);
            for b in (r0 * RUN / k0)..(r1 * RUN / k0).min(vf.blocks() as usize) {
                recs.extend(vf.block(b as u32).unwrap());
            }
            fill_immediate_wins(&mut recs);
            recs.iter().map(|&r| Packed(r).elided().0).collect()
        })
        .collect()
}

fn main() {
    rayon::ThreadPoolBuilder::new().num_threads(2).build_global().unwrap();
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let (a, b) = args[2].split_once(',').unwrap();
    let phase = Phase::new(a.parse().unwrap(), b.parse().unwrap());
    let every: usize = args[3].parse().unwrap();
    let stretch: usize = args[4].parse().unwrap();
    // full: a terminal per (base, move, special) tuple; split: per (base, special flag),
    // the specials in a second stream; hybridH: the H most frequent tuples are terminals
    // of their own, every other record is (base, flag) with its special in the second
    // stream.
    let mode = args[5].clone();
    let (split, hybrid) = match mode.as_str() {
        "full" => (false, 0),
        "split" => (true, 0),
        m if m.starts_with("hybrid") => (true, m[6..].parse::<usize>().unwrap()),
        m => panic!("mode {m}"),
    };
    let arg = |i: usize, d: usize| args.get(i).map(|s| s.parse().unwrap()).unwrap_or(d);
    let budget = arg(6, 4096);
    let min_count = arg(7, 1000) as u32;
    let per_round = arg(8, 64);
    let block_sizes: Vec<usize> =
        args.get(9).map(|s| s.split(',').map(|x| x.parse().unwrap()).collect()).unwrap_or(vec![64, 256, 1024]);
    assert!(2 * stretch <= every);

    let db = ostledb::store::Store::open(dir).unwrap();
    let vf = db.values(phase).unwrap();
    let runs = (vf.len() as usize).div_ceil(RUN);
    let half = every / 2;
    let train_st: Vec<(usize, usize)> = (0..runs).step_by(every).map(|r| (r, (r + stretch).min(runs))).collect();
    let test_st: Vec<(usize, usize)> = (half..runs).step_by(every).map(|r| (r, (r + stretch).min(runs))).collect();
    let t = Instant::now();
    let train = load(vf, &train_st);
    let test = load(vf, &test_st);
    let n_train: usize = train.iter().map(|r| r.len()).sum();
    let n_test: usize = test.iter().map(|r| r.len()).sum();
    let specials = test.iter().flatten().filter(|&&r| Packed(r).special_move() != 0).count();
    eprintln!(
        "{phase:?}: {} positions in the phase, {runs} runs; train {} stretches {n_train} positions, test {} stretches {n_test} positions, {:.2}% of test with a special move; loaded in {:?}",
        vf.len(),
        train.len(),
        test.len(),
        100.0 * specials as f64 / n_test as f64,
        t.elapsed()
    );

    // Terminals: the whole tuple, or the base code with a special flag.
    let own: std::collections::HashSet<u64> = if hybrid > 0 {
        let mut f: HashMap<u64, u64> = HashMap::new();
        for &r in train.iter().chain(&test).flatten() {
            *f.entry(r).or_default() += 1;
        }
        let mut v: Vec<(u64, u64)> = f.into_iter().collect();
        v.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        v.iter().take(hybrid).map(|x| x.0).collect()
    } else {
        Default::default()
    };
    let escaped = |r: u64| split && !own.contains(&r);
    let key = |r: u64| -> u64 {
        if own.contains(&r) {
            r
        } else if split {
            let p = Packed(r);
            p.base() as u64 | ((p.special_move() != 0) as u64) << 16
        } else {
            r
        }
    };
    let mut tf: HashMap<u64, u64> = HashMap::new();
    for &r in train.iter().chain(&test).flatten() {
        *tf.entry(key(r)).or_default() += 1;
    }
    let mut terms: Vec<(u64, u64)> = tf.into_iter().collect();
    terms.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    let tid: HashMap<u64, u32> = terms.iter().enumerate().map(|(i, &(k, _))| (k, i as u32)).collect();
    let t_count = terms.len();
    let distinct_tuples = {
        let mut s: std::collections::HashSet<u64> = std::collections::HashSet::new();
        for &r in train.iter().chain(&test).flatten() {
            s.insert(r);
        }
        s.len()
    };
    eprintln!("distinct (base, move, special) tuples: {distinct_tuples}; terminals used: {t_count}");
    if t_count >= budget {
        eprintln!("too many terminals for the symbol budget {budget}; use split mode");
        return;
    }
    let to_seq =
        |v: &Vec<Vec<u64>>| -> Vec<Vec<u32>> { v.iter().map(|s| s.iter().map(|&r| tid[&key(r)]).collect()).collect() };
    let mut train_seq = to_seq(&train);
    let test_terms = to_seq(&test);
    let mut test_seq = test_terms.clone();

    let t = Instant::now();
    let g = repair(&mut train_seq, t_count, budget, min_count, per_round);
    let build_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    apply(&g, &mut test_seq);
    let apply_s = t.elapsed().as_secs_f64();
    let train_syms: usize = train_seq.iter().map(|s| s.len()).sum();
    let test_syms: usize = test_seq.iter().map(|s| s.len()).sum();
    eprintln!(
        "Re-Pair: {} rules in {} rounds, built on train in {build_s:.2} s ({train_syms} symbols left, {:.3} pos/symbol), applied to test in {apply_s:.2} s ({test_syms} symbols, {:.3} pos/symbol)",
        g.left.len(),
        g.rounds.len(),
        n_train as f64 / train_syms as f64,
        n_test as f64 / test_syms as f64
    );

    // Huffman from the training frequencies (+1 so every symbol has a code).
    let mut freq = vec![1u64; g.symbols()];
    for &s in train_seq.iter().flatten() {
        freq[s as usize] += 1;
    }
    let h = Huffman::new(huff_lengths(&freq));
    let test_bits: u64 = test_seq.iter().flatten().map(|&s| h.len[s as usize] as u64).sum();
    let train_bits: u64 = train_seq.iter().flatten().map(|&s| h.len[s as usize] as u64).sum();
    // Order-0 entropy of the test symbols under their own counts (the best any code of them
    // could do).
    let mut tcount = vec![0u64; g.symbols()];
    for &s in test_seq.iter().flatten() {
        tcount[s as usize] += 1;
    }
    let ent: f64 = tcount.iter().filter(|&&c| c > 0).map(|&c| -(c as f64) * (c as f64 / test_syms as f64).log2()).sum();
    eprintln!(
        "Huffman: max length {}, test stream {:.4} bits/pos (entropy {:.4}), train stream {:.4} bits/pos",
        h.maxlen,
        test_bits as f64 / n_test as f64,
        ent / n_test as f64,
        train_bits as f64 / n_train as f64
    );

    // The grammar's cost: two symbol ids per rule, a code length per symbol, the terminal
    // table (the tuple, or base + flag).
    let idbits = (usize::BITS - (budget - 1).leading_zeros()) as u64;
    let grammar_bits = g.left.len() as u64 * 2 * idbits
        + g.symbols() as u64 * 5
        + own.len() as u64 * (16 + 5 + 16)
        + (t_count - own.len()) as u64 * if split { 17 } else { 37 };
    let phase_n = vf.len() as f64;

    // Split mode: the specials as a second stream, (move, special code) symbols, order-0
    // Huffman (code from train+test counts), with a per-block special rank (32 bits).
    let mut spec_bits_test = 0u64;
    let mut spec_table_bits = 0u64;
    if split {
        let mut sf: HashMap<u64, u64> = HashMap::new();
        for &r in train.iter().chain(&test).flatten() {
            let p = Packed(r);
            if p.special_move() != 0 && escaped(r) {
                *sf.entry((p.special_move() as u64) << 16 | p.special() as u64).or_default() += 1;
            }
        }
        let keys: Vec<u64> = sf.keys().copied().collect();
        let freqs: Vec<u64> = keys.iter().map(|k| sf[k]).collect();
        let lens = huff_lengths(&freqs);
        let idx: HashMap<u64, usize> = keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        for &r in test.iter().flatten() {
            let p = Packed(r);
            if p.special_move() != 0 && escaped(r) {
                spec_bits_test += lens[idx[&((p.special_move() as u64) << 16 | p.special() as u64)]] as u64;
            }
        }
        spec_table_bits = keys.len() as u64 * (5 + 16 + 5);
        eprintln!(
            "specials stream: {} distinct (move, special) symbols, {:.4} bits/pos of test",
            keys.len(),
            spec_bits_test as f64 / n_test as f64
        );
    }

    println!(
        "phase {phase:?} mode {} | phase positions {} | train {n_train} test {n_test} | terminals {t_count} (distinct tuples {distinct_tuples}) | rules {} | build {build_s:.1} s on train (whole phase by Re-Pair ~{:.0} s), apply {apply_s:.2} s on test (whole phase ~{:.0} s)",
        mode,
        vf.len(),
        g.left.len(),
        build_s * phase_n / n_train as f64,
        apply_s * phase_n / n_test as f64,
    );
    println!(
        "grammar+tables {:.1} KiB: {:.5} bits/pos over the test sample, {:.6} over the whole phase",
        grammar_bits as f64 / 8192.0,
        grammar_bits as f64 / n_test as f64,
        grammar_bits as f64 / phase_n
    );
    println!(
        "layout            block   huff b/pos  pad b/pos  index b/pos  spec b/pos  total b/pos  total+gram(phase)  us/pos  us/pos(seq)"
    );
    let mut rng = 0x9E3779B97F4A7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let flat_terms: Vec<u32> = test_terms.iter().flatten().copied().collect();
    let queries: Vec<u64> = (0..100_000).map(|_| next() % n_test as u64).collect();
    for &bs in &block_sizes {
        let blk = pack(&test_seq, &g, &h, bs);
        let nblocks = blk.starts.len() as u64;
        let stream_bits = nblocks * bs as u64 * 8;
        // Verify: every position of the first 1,000,000+ positions.
        let nv = n_test.min(1_200_000);
        let t = Instant::now();
        for (i, &want) in flat_terms[..nv].iter().enumerate() {
            assert_eq!(lookup(&blk, &g, &h, i as u64), want, "position {i}");
        }
        let seq_us = t.elapsed().as_secs_f64() * 1e6 / nv as f64;
        let t = Instant::now();
        let mut acc = 0u64;
        for &q in &queries {
            acc = acc.wrapping_add(lookup(&blk, &g, &h, q) as u64);
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / queries.len() as f64;
        let want: u64 = queries.iter().map(|&q| flat_terms[q as usize] as u64).sum();
        assert_eq!(acc, want);
        let n = n_test as f64;
        let index_bits = nblocks as f64 * 32.0 + if split { nblocks as f64 * 32.0 } else { 0.0 };
        let spec = if split { (spec_bits_test as f64) / n } else { 0.0 };
        let total = stream_bits as f64 / n + index_bits / n + spec;
        println!(
            "re-pair+huffman {:>7} {:12.4} {:10.4} {:12.4} {:11.4} {:12.4} {:18.4} {:7.3} {:11.3}",
            bs,
            test_bits as f64 / n,
            (stream_bits - test_bits) as f64 / n,
            index_bits / n,
            spec,
            total,
            total + (grammar_bits + spec_table_bits) as f64 / phase_n,
            us,
            seq_us
        );
    }

    // zstd on the same (test) sample, blocks of value file v4 (planes).
    let bases: Vec<Vec<u64>> =
        test.iter().map(|s| s.iter().map(|&r| Packed(r).without_special().0).collect()).collect();
    for (what, k, level) in [
        ("", 1024usize, 19),
        ("", 4096, 19),
        ("", 8192, 19),
        ("", 32768, 15),
        ("", 65536, 19),
        ("base only ", 32768, 15),
        ("base only ", 65536, 19),
    ] {
        let src = if what.is_empty() { &test } else { &bases };
        let raws: Vec<Vec<u8>> = src.iter().flat_map(|s| s.chunks(k)).map(encode_block).collect();
        let frames: Vec<Vec<u8>> = raws.par_iter().map(|r| zstd::bulk::compress(r, level).unwrap()).collect();
        let bytes: usize = frames.iter().map(|f| f.len()).sum();
        let mut d = zstd::bulk::Decompressor::new().unwrap();
        let mut out = vec![0u8; raws.iter().map(|r| r.len()).max().unwrap()];
        let t = Instant::now();
        for (f, r) in frames.iter().zip(&raws) {
            let got = d.decompress_to_buffer(f, &mut out[..]).unwrap();
            assert_eq!(got, r.len());
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / frames.len() as f64;
        println!(
            "zstd {what}L{level:<2}  {:>7} {:12} {:10} {:12} {:11} {:12.4} {:18} {:7.2}",
            k,
            "",
            "",
            "",
            "",
            8.0 * bytes as f64 / n_test as f64,
            "",
            us
        );
    }
}
