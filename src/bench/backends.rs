//! The lookup backends compared on one phase of a database, measured in one run on the
//! same key sets: build time, bytes per key, resident memory of the opened index, and
//! nanoseconds per key -> index lookup for three access patterns, one lookup at a time
//! and batched. Every answer of every backend is checked against the `rank` backend's.
//! With [`BackendBenchOptions::queries`], also query latency ([`super::latency`]).
//! `ostledb bench` parses its arguments into [`BackendBenchOptions`], calls [`measure`] and
//! prints the [`BenchReport`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::error::Error;
use crate::index::PhaseIndex;
use crate::progress::{Reporter, thousands};
use crate::store::keys::workload::{self, Pattern};
use crate::store::keys::{self, Backend, KeyIndex};
use crate::store::{Store, db::backends_of};

/// What [`measure`] measures and how; the defaults are `ostledb bench`'s.
#[derive(Clone, Debug)]
pub struct BackendBenchOptions {
    /// Backend names (`all`: every compiled backend). Empty: every compiled backend (with
    /// `no_build`: those whose files the database has).
    pub backends: Vec<String>,
    /// Lookups per access pattern.
    pub lookups: usize,
    /// Codes per `index_of_batch` call.
    pub batch: usize,
    /// Timed rounds over all backends; each figure is the fastest round.
    pub rounds: usize,
    /// Do not build the indexes; open the database's own index files.
    pub no_build: bool,
    /// Where to build the indexes (`None`: a new directory in the system temp directory,
    /// removed at the end).
    pub scratch: Option<PathBuf>,
    /// Keys in the sled tree at most (a larger phase gets a subset).
    pub sled_keys: u64,
    /// Lookups per pattern for sled on a subset: the first this many of each key set.
    pub sled_lookups: usize,
    /// Seed of the key sets.
    pub seed: u64,
    /// Whole queries to time in the library (`Database::probe` and `Database::analyse`,
    /// each position twice). 0: none.
    pub queries: usize,
}

impl Default for BackendBenchOptions {
    fn default() -> BackendBenchOptions {
        BackendBenchOptions {
            backends: Vec::new(),
            lookups: 1_000_000,
            batch: 1024,
            rounds: 3,
            no_build: false,
            scratch: None,
            sled_keys: 1_000_000,
            sled_lookups: 100_000,
            seed: 1,
            queries: 20_000,
        }
    }
}

/// ns per lookup of one access pattern.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct PatternNs {
    /// One `index_of` at a time.
    pub single: f64,
    /// `index_of_batch`.
    pub batched: f64,
}

/// One backend's row.
#[derive(Debug, Serialize)]
pub struct BackendBench {
    /// Backend name.
    pub backend: String,
    /// What the row measured when not the whole phase (the sled subset), else empty.
    pub note: String,
    /// Keys in the index.
    pub keys: u64,
    /// Seconds to build its files from the phase's keys (`None`: not built; shared
    /// builds repeat the figure).
    pub build_seconds: Option<f64>,
    /// Seconds to open.
    pub open_seconds: f64,
    /// Bytes of index data on disk.
    pub index_bytes: u64,
    /// Bytes per key.
    pub bytes_per_key: f64,
    /// Resident bytes added by opening.
    pub rss_open_bytes: i64,
    /// Resident bytes added by opening and the warm-up pass.
    pub rss_warm_bytes: i64,
    /// ns per lookup of the warm-up pass (random keys, one at a time, right after open).
    pub cold_ns: f64,
    /// Uniformly random keys.
    pub random: PatternNs,
    /// Children of random positions.
    pub children: PatternNs,
    /// Keys in index order.
    pub in_order: PatternNs,
}

/// The report.
#[derive(Debug, Serialize)]
pub struct BenchReport {
    /// The phase measured.
    pub phase: String,
    /// Its keys.
    pub keys: u64,
    /// Lookups per pattern.
    pub lookups: usize,
    /// Codes per batch.
    pub batch: usize,
    /// Rounds (each figure is the fastest).
    pub rounds: usize,
    /// Logical CPUs of the machine.
    pub cpus: usize,
    /// Per backend.
    pub backends: Vec<BackendBench>,
    /// Query latency percentiles (with the database's default backend and a cache of up to
    /// 4 GiB, room for every block of (4,4)), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queries: Option<crate::bench::latency::Latency>,
}

/// A scratch directory removed on drop (unless the caller named it).
struct Scratch {
    path: PathBuf,
    remove: bool,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn rss_now() -> i64 {
    crate::sys::release_free_memory();
    crate::sys::rss().map(|r| r.0 as i64).unwrap_or(0)
}

/// The backends asked for.
fn selected(opts: &BackendBenchOptions, db_path: &Path, db: &Store) -> Result<Vec<Backend>, Error> {
    let has = backends_of(db.meta());
    let present = |b: &Backend| has.iter().any(|h| h == b.storage().name() || h == b.name());
    let mut out = Vec::new();
    if opts.backends.is_empty() {
        out = Backend::available().into_iter().filter(|b| !opts.no_build || present(b)).collect();
    }
    for name in &opts.backends {
        if name == "all" {
            out.extend(Backend::available());
        } else {
            out.push(Backend::parse(name)?.require()?);
        }
    }
    out.sort();
    out.dedup();
    if opts.no_build
        && let Some(b) = out.iter().find(|b| !present(b))
    {
        return Err(Error::BackendMissing {
            path: db_path.to_path_buf(),
            backend: b.name().into(),
            available: has.join(", "),
        });
    }
    Ok(out)
}

/// One access pattern's codes and the rank backend's answers.
type KeySet = (Pattern, Vec<u64>, Vec<Option<u64>>);

/// An opened index with its row's fixed figures.
struct Opened {
    keys: Arc<dyn KeyIndex>,
    /// Lookups per key set (a prefix for the sled subset).
    lookups: usize,
    row: BackendBench,
}

/// Time one pass of `codes` through `k` (single or batched) and check every answer.
fn pass(
    k: &dyn KeyIndex,
    codes: &[u64],
    want: &[Option<u64>],
    batched: Option<usize>,
    db: &Path,
    what: &str,
) -> Result<f64, Error> {
    let mut out = vec![None; codes.len()];
    let t = Instant::now();
    match batched {
        None => {
            for (o, &c) in out.iter_mut().zip(codes) {
                *o = k.index_of(c)?;
            }
        }
        Some(b) => {
            for (c, o) in codes.chunks(b.max(1)).zip(out.chunks_mut(b.max(1))) {
                k.index_of_batch(c, o)?;
            }
        }
    }
    let ns = t.elapsed().as_secs_f64() * 1e9 / codes.len().max(1) as f64;
    if let Some(i) = (0..codes.len()).find(|&i| out[i] != want[i]) {
        return Err(Error::Corrupt {
            path: db.to_path_buf(),
            reason: format!(
                "bench: the {} backend ({what}) maps code {} to {:?}, the rank backend to {:?}",
                k.backend(),
                codes[i],
                out[i],
                want[i]
            ),
        });
    }
    Ok(ns)
}

/// Bytes a lookup of `--lookups` costs: three key sets (a code, 8 bytes, and the rank
/// backend's answer, 16) and a pass's answers (16).
const LOOKUP_BYTES: u64 = 3 * 24 + 16;

/// Bytes a key of a sled tree holds resident while it is built (measured: about 3.6 KB).
const SLED_KEY_BYTES: u64 = 3_700;

/// Refuse counts whose memory this process cannot have, before any of it is allocated:
/// the key sets of `lookups`, the `queries`, a sled tree of `sled_keys` keys (at most the
/// phase's `n`) when sled is measured.
fn check_counts(opts: &BackendBenchOptions, n: u64, backends: &[Backend]) -> Result<(), Error> {
    let lookups = opts.lookups.max(1) as u64;
    crate::sys::check_memory(&format!("the key sets of --lookups {lookups}"), lookups, LOOKUP_BYTES, "lookups")?;
    let queries = opts.queries as u64;
    crate::sys::check_memory(&format!("--queries {queries}"), queries, super::latency::QUERY_BYTES, "queries")?;
    if backends.contains(&Backend::Sled) && !opts.no_build {
        let keys = opts.sled_keys.min(n);
        crate::sys::check_memory(&format!("a sled tree of {keys} keys (--sled-keys)"), keys, SLED_KEY_BYTES, "keys")?;
    }
    Ok(())
}

/// Measure the database at `db_path`: its largest phase, every backend `opts` selects, and
/// query latency when `opts.queries` > 0. Progress goes to `reporter` as notes. An answer
/// of any backend that differs from the `rank` backend's is [`Error::Corrupt`].
pub fn measure(db_path: &Path, opts: &BackendBenchOptions, reporter: &dyn Reporter) -> Result<BenchReport, Error> {
    let base = Store::open(db_path)?;
    let backends = selected(opts, db_path, &base)?;
    let g = base.geometry().clone();
    let index = base.index().clone();
    let phase: &PhaseIndex = index
        .phases()
        .iter()
        .max_by_key(|p| p.len())
        .ok_or_else(|| Error::InvalidArgument("the database has no phases".into()))?;
    let ph = phase.phase();
    let parents = index.phase(ph.swapped()).unwrap_or(phase);
    let n = phase.len();
    check_counts(opts, n, &backends)?;

    // The key sets and the rank backend's answers, shared by every backend.
    let t = Instant::now();
    let rank = keys::open(Backend::Rank, db_path, phase)?;
    let mut sets: Vec<KeySet> = Vec::new();
    for pattern in Pattern::ALL {
        let codes = workload::codes(&g, phase, parents, pattern, opts.lookups.max(1), opts.seed);
        let mut want = vec![None; codes.len()];
        rank.index_of_batch(&codes, &mut want)?;
        if let Some(c) = codes.iter().zip(&want).find(|(_, w)| w.is_none()) {
            return Err(Error::Corrupt {
                path: db_path.to_path_buf(),
                reason: format!("bench: the rank backend does not find key {}", c.0),
            });
        }
        sets.push((pattern, codes, want));
    }
    drop(rank);
    reporter.note(&format!(
        "phase {ph}: {} keys; key sets of {} lookups drawn in {:.1} s",
        thousands(n),
        thousands(opts.lookups as u64),
        t.elapsed().as_secs_f64()
    ));

    let scratch = match &opts.scratch {
        Some(p) => Scratch { path: p.clone(), remove: false },
        None => {
            Scratch { path: std::env::temp_dir().join(format!("ostledb-bench-{}", std::process::id())), remove: true }
        }
    };
    if !opts.no_build {
        std::fs::create_dir_all(&scratch.path).map_err(crate::error::io(&scratch.path))?;
    }

    // Build (timed), open (timed, RSS measured) and warm up each backend in turn; all stay
    // open for the interleaved rounds.
    let mut opened: Vec<Opened> = Vec::new();
    let mut sorted_build: Option<f64> = None;
    for &b in &backends {
        let dir: &Path = if opts.no_build { db_path } else { &scratch.path };
        let subset = b == Backend::Sled && !opts.no_build && n > opts.sled_keys;
        let mut build_seconds = None;
        let entries = if subset {
            sled_subset(phase, &sets, opts.sled_lookups.max(1), opts.sled_keys, opts.seed)
        } else {
            Vec::new()
        };
        // The sled subset is looked up with a prefix of each key set.
        let take = |v: usize| if subset { v.min(opts.sled_lookups.max(1)) } else { v };
        if !opts.no_build && !subset && b != Backend::Rank {
            build_seconds = match (b.storage(), sorted_build) {
                (Backend::Sorted, Some(s)) => Some(s),
                _ => {
                    reporter.note(&format!("{b}: building its index files in {}", dir.display()));
                    let t = Instant::now();
                    keys::build(b, dir, phase)?;
                    let s = t.elapsed().as_secs_f64();
                    if b.storage() == Backend::Sorted {
                        sorted_build = Some(s);
                    }
                    Some(s)
                }
            };
        }
        let before = rss_now();
        let t = Instant::now();
        let k: Arc<dyn KeyIndex> = if subset {
            reporter.note(&format!(
                "sled: building a tree of {} keys (a subset of the phase)",
                thousands(entries.len() as u64)
            ));
            Arc::from(build_subset(dir, phase, &entries)?)
        } else {
            Arc::from(keys::open(b, dir, phase)?)
        };
        // The sled subset is built and opened in one step: that time is its build time.
        let (open_seconds, build_seconds) =
            if subset { (0.0, Some(t.elapsed().as_secs_f64())) } else { (t.elapsed().as_secs_f64(), build_seconds) };
        let rss_open_bytes = rss_now() - before;
        let m = take(sets[0].1.len());
        let cold_ns = pass(&*k, &sets[0].1[..m], &sets[0].2[..m], None, db_path, "warm-up, random keys")?;
        let rss_warm_bytes = rss_now() - before;
        let index_bytes = k.key_bytes();
        let keys_in = if subset { entries.len() as u64 } else { n };
        let note = if subset {
            format!(
                "a subset of {} of the {} keys, looked up with the first {} keys of each set; built and opened in one step (RSS open includes the build)",
                thousands(keys_in),
                thousands(n),
                thousands(take(opts.lookups.max(1)) as u64)
            )
        } else {
            String::new()
        };
        reporter.note(&format!(
            "{b}: opened in {open_seconds:.2} s, {:.0} MB resident after warm-up, warm-up {cold_ns:.0} ns/lookup",
            rss_warm_bytes as f64 / 1e6
        ));
        opened.push(Opened {
            keys: k,
            lookups: take(usize::MAX),
            row: BackendBench {
                backend: b.name().into(),
                note,
                keys: keys_in,
                build_seconds,
                open_seconds,
                index_bytes,
                bytes_per_key: index_bytes as f64 / keys_in.max(1) as f64,
                rss_open_bytes,
                rss_warm_bytes,
                cold_ns,
                random: PatternNs { single: f64::INFINITY, batched: f64::INFINITY },
                children: PatternNs { single: f64::INFINITY, batched: f64::INFINITY },
                in_order: PatternNs { single: f64::INFINITY, batched: f64::INFINITY },
            },
        });
    }

    // The timed rounds: every backend, every pattern, single then batched; keep the fastest.
    for round in 0..opts.rounds.max(1) {
        reporter.note(&format!("round {} of {}", round + 1, opts.rounds.max(1)));
        for o in opened.iter_mut() {
            for (pattern, codes, want) in &sets {
                let m = codes.len().min(o.lookups);
                let (codes, want) = (&codes[..m], &want[..m]);
                let single = pass(&*o.keys, codes, want, None, db_path, pattern.name())?;
                let batched = pass(&*o.keys, codes, want, Some(opts.batch), db_path, pattern.name())?;
                let cell = match pattern {
                    Pattern::Random => &mut o.row.random,
                    Pattern::Children => &mut o.row.children,
                    Pattern::InOrder => &mut o.row.in_order,
                };
                cell.single = cell.single.min(single);
                cell.batched = cell.batched.min(batched);
            }
        }
    }
    let report = BenchReport {
        phase: ph.to_string(),
        keys: n,
        lookups: opts.lookups.max(1),
        batch: opts.batch.max(1),
        rounds: opts.rounds.max(1),
        cpus: std::thread::available_parallelism().map(|c| c.get()).unwrap_or(1),
        backends: opened.into_iter().map(|o| o.row).collect(),
        queries: None,
    };
    drop(base);
    let mut report = report;
    if opts.queries > 0 {
        reporter.note(&format!("{} queries, twice", thousands(opts.queries as u64)));
        let all: u64 = index.phases().iter().map(|p| p.len()).sum();
        // About 3 bytes per position decoded: room for every block, up to 4 GiB.
        let open = crate::store::OpenOptions {
            backend: None,
            cache_bytes: (all as usize * 4).clamp(64 << 20, 4 << 30),
            ..Default::default()
        };
        let db = Store::open_opts(db_path, &open)?;
        report.queries = Some(crate::bench::latency::measure(&db, opts.queries, opts.seed)?);
    }
    Ok(report)
}

/// The sled subset: the first `prefix` keys of every key set, then random keys of the
/// phase until `max` (or the phase) is reached; (code, index) pairs, distinct.
fn sled_subset(phase: &PhaseIndex, sets: &[KeySet], prefix: usize, max: u64, seed: u64) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> =
        sets.iter().flat_map(|s| s.1.iter().zip(&s.2).take(prefix).filter_map(|(&c, w)| w.map(|i| (c, i)))).collect();
    v.sort_unstable();
    v.dedup();
    let mut rng = seed ^ 0x736c_6564;
    let target = (max as usize).max(v.len()).min(phase.len() as usize);
    while v.len() < target {
        let missing = target - v.len();
        for _ in 0..missing {
            let i = workload::splitmix(&mut rng) % phase.len();
            v.push((phase.position_at(i).code(), i));
        }
        v.sort_unstable();
        v.dedup();
    }
    v
}

#[cfg(feature = "sled")]
fn build_subset(dir: &Path, phase: &PhaseIndex, entries: &[(u64, u64)]) -> Result<Box<dyn KeyIndex>, Error> {
    keys::build_sled_subset(dir, phase, entries)
}

#[cfg(not(feature = "sled"))]
fn build_subset(_: &Path, _: &PhaseIndex, _: &[(u64, u64)]) -> Result<Box<dyn KeyIndex>, Error> {
    Err(Error::BackendNotCompiled { backend: "sled".into(), feature: "sled".into() })
}
