//! `ostledb serve`: the database over HTTP, a JSON API and the web explorer, until Ctrl-C
//! or SIGTERM.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::cli::CommonArgs;
use crate::cli::db::{BackendArgs, open};
use crate::cli::{MAX_CONNECTIONS, MAX_THREADS, one_to};
use crate::error::Error;
use crate::serve::Limits;

/// Arguments of `ostledb serve`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  ostledb serve                                  # http://127.0.0.1:8080/ on ./ostle.db
  ostledb serve --db /data/ostle.db --bind 127.0.0.1:9000
  curl 'http://127.0.0.1:8080/api/v1/position?board=22220-00000-00300-00000-11110'

The server is read-only and answers GET (and HEAD): the explorer at /, and the JSON API
(schema/API.md):
  /api/v1/position?board=B[&prev=P][&moves=M]    what `ostledb query --json [--play M]` prints
  /api/v1/line?board=B[&prev=P][&moves=M][&max_plies=N]
                                                 the same with the principal variation
                                                 (40 plies by default, at most 1,000)
  /api/v1/play?board=B[&prev=P][&moves=M][&level=L][&seed=S]
                                                 the computer's move: perfect, strong,
                                                 medium, easy or random; seed 0 to 2^53-1
  /api/v1/review?board=B[&prev=P]&moves=M        the game M played from B, ply by ply,
                                                 as `ostledb review --json` prints it
  /api/v1/stats                                  what the database holds, per phase
  /api/v1/health                                 up, and request counters
moves=M is a list of moves as `query --play` takes them (c1-up,hole-left), at most
1,000; a board may use _ instead of - (board=22220_00000_00300_00000_11110).
Errors are JSON {\"error\": \"...\"}: 400 a bad board or parameter, 404 a phase the
database does not hold, 413 a request with a body, 414 a query string over 12,288
bytes, 500 a damaged database, 503 busy, 504 a probe over its time. Answers carry an
ETag (the database's identity) and Cache-Control: they never change for one database;
they are gzipped for a client that sends Accept-Encoding: gzip. With --cors ORIGIN a
page of that origin may read them (CORS); without it no CORS header is sent.

When every connection is taken, a newcomer takes the place of the one quiet longest (a
client that does not read its answers, or an idle one). Under a memory limit
(ulimit -v) the server fits itself to it: fewer connections at once if need be, and a
cache of what serving leaves.

It listens on loopback unless --bind names another address; the first line on stdout
says where (`listening on http://ADDR/`), so --bind 127.0.0.1:0 (a free port) can be
used by scripts. Ctrl-C or SIGTERM stops it after the requests in progress.")]
pub struct ServeArgs {
    /// Address and port to listen on. Any address other than loopback (127.0.0.1, ::1)
    /// makes the database reachable from other machines.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR:PORT")]
    pub bind: SocketAddr,
    /// Threads answering connections, 1 to 1,024 (default: one per core).
    #[arg(long, value_name = "N", value_parser = one_to(MAX_THREADS))]
    pub threads: Option<usize>,
    /// Probes (database lookups) running at once, 1 to 1,024 (a thread each); requests
    /// beyond wait up to 5 s, then get 503 (default: two per core).
    #[arg(long, value_name = "N", value_parser = one_to(MAX_THREADS))]
    pub max_probes: Option<usize>,
    /// Connections open at once, 1 to 65,536; more wait until one closes (default:
    /// 1,024, or as many as fit under a memory limit: `ulimit -v`).
    #[arg(long, value_name = "N", value_parser = one_to(MAX_CONNECTIONS))]
    pub max_connections: Option<usize>,
    /// Seconds a client has to send a request's headers; an idle keep-alive connection
    /// is closed after as long.
    #[arg(long, default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
    /// Seconds a connection's answer may wait without the client taking any of it (a
    /// client that does not read); then the connection is closed. The clock restarts
    /// whenever the client takes some.
    #[arg(long, default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub write_timeout: u64,
    /// Print one line per request on stderr: method, path, status, microseconds.
    #[arg(long)]
    pub log: bool,
    /// Let the scripts of pages from ORIGIN (e.g. https://example.org, http://localhost:3000,
    /// or * for any) read the API's answers: they carry Access-Control-Allow-Origin and
    /// OPTIONS preflights are answered. Off by default: no CORS headers at all.
    // The origins are shown as typed in `--help`; rustdoc's link syntax would show there too.
    #[allow(rustdoc::bare_urls)]
    #[arg(long, value_name = "ORIGIN")]
    pub cors: Option<String>,
    /// Start answering at once, without readying the database first. By default the key
    /// indexes build their tables and value blocks are decoded, phase by phase, until the
    /// cache (--cache-mb) is nine-tenths full, before the server says it is listening, so
    /// that no request waits on them (all of (4,4) fits in the default cache: 1.5 s).
    #[arg(long)]
    pub no_warm: bool,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// Run `ostledb serve`.
pub fn run(args: ServeArgs) -> Result<(), Error> {
    let db = Arc::new(crate::Database::from_store(open(&args.common, &args.backend)?));
    let mut limits = Limits {
        max_connections: args.max_connections.unwrap_or(Limits::default().max_connections),
        header_timeout: Duration::from_secs(args.header_timeout),
        write_timeout: Duration::from_secs(args.write_timeout),
        log_requests: args.log,
        ..Limits::default()
    };
    if let Some(n) = args.max_probes {
        limits.max_probes = n;
    }
    let listener = TcpListener::bind(args.bind).map_err(|e| {
        Error::InvalidArgument(format!("cannot listen on {}: {e}; choose another address with --bind", args.bind))
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|e| Error::InvalidArgument(format!("cannot listen on {}: {e}", args.bind)))?;
    let addr = listener.local_addr().map_err(|e| Error::InvalidArgument(format!("cannot listen: {e}")))?;
    // One thread per core, but under a memory limit (`ulimit -v`) no more than one per
    // 64 MiB of it (each reserves a stack of 2 MiB and more as it works).
    let threads = args.threads.unwrap_or_else(|| {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        crate::sys::address_space_limit().map_or(cores, |limit| cores.min((limit >> 26).max(1) as usize))
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .max_blocking_threads(limits.probe_threads())
        .thread_name("ostledb-serve")
        .enable_all()
        .build()
        .map_err(|e| Error::InvalidArgument(format!("cannot start the server's threads: {e}")))?;
    let mut app = crate::serve::router(db.clone(), &limits);
    if let Some(origin) = &args.cors {
        app = crate::serve::api::allow_origin(app, origin)?;
    }
    let phases: Vec<String> = db.meta().phases.iter().map(|p| p.phase().to_string()).collect();
    // Ready the database before the first request: connections made meanwhile wait in
    // the listen backlog, and scripts wait for the line below. Under a memory limit the
    // cache gets what serving leaves, measured once the index is ready.
    let t = std::time::Instant::now();
    let go_on = std::sync::atomic::AtomicBool::new(false);
    if !args.no_warm {
        db.prepare(&go_on)?;
    }
    if let Some(room) = crate::sys::address_space_left() {
        // What `--cache-mb` asked for, as the database took it.
        let asked = args.backend.cache_mb.map(|_| db.store().cache().budget() as u64);
        let given = Given { connections: args.max_connections.is_some(), probes: args.max_probes.is_some() };
        let fit = fit_memory(&mut limits, room, asked, db.store().cache().budget(), given, db.geometry().squares())?;
        db.store().cache().set_budget(fit);
        if !args.common.quiet {
            eprintln!(
                "ostledb serve: under the memory limit (ulimit -v, {} MB left): up to {} connections, {} probes, {} MB of long answers, a cache of {} MB",
                room >> 20,
                limits.max_connections,
                limits.max_probes,
                limits.max_held_answer_bytes >> 20,
                fit >> 20
            );
        }
    }
    if !args.no_warm {
        let n = db.fill_cache(&go_on)?;
        if !args.common.quiet {
            eprintln!(
                "ostledb serve: key indexes prepared and {n} value blocks decoded into the cache ({} MB) in {:.1} s",
                db.store().cache().bytes() >> 20,
                t.elapsed().as_secs_f64()
            );
        }
    }
    // The first line is for scripts (a free port with --bind ADDR:0), the rest for people.
    println!("listening on http://{addr}/");
    if !args.common.quiet {
        eprintln!(
            "ostledb serve: {} ({}), the explorer at http://{addr}/ and the API under /api/v1/; Ctrl-C stops",
            db.path().display(),
            phases.join(", ")
        );
        if !addr.ip().is_loopback() {
            eprintln!("ostledb serve: listening on {}, reachable from other machines", addr.ip());
        }
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let quiet = args.common.quiet;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|e| Error::InvalidArgument(format!("cannot listen on {addr}: {e}")))?;
        crate::serve::run(listener, app, &limits, stop_signal())
            .await
            .map_err(|e| Error::InvalidArgument(format!("the server stopped: {e}")))?;
        if !quiet {
            eprintln!("ostledb serve: stopped");
        }
        Ok(())
    })
}

/// Memory kept free of every bound below, in bytes: the allocator's slack, decoding a
/// block (zstd's context and buffers), the table of resolved records (1 MiB).
const SLACK_BYTES: u64 = 32 << 20;

/// The memory a cache of `budget` bytes takes with its bookkeeping (its map, the
/// allocator's headers): a fifth more. Measured under `ulimit -v 200000` on (4,4), whose
/// v5 blocks are small (about 1 KB): 8.7 MiB over 47 MB of blocks.
fn cache_memory(budget: u64) -> u64 {
    budget + budget / 5
}

/// The fewest connections the server is started with when it lowers the number to fit
/// a memory limit.
const MIN_CONNECTIONS: usize = 16;

/// The fewest probes at once the server is started with when it lowers the number to
/// fit a memory limit.
const MIN_PROBES: usize = 2;

/// Which of the counts [`fit_memory`] may lower were given on the command line (and so
/// are kept).
#[derive(Clone, Copy, Debug)]
struct Given {
    /// `--max-connections`.
    connections: bool,
    /// `--max-probes`.
    probes: bool,
}

/// Fit serving and the block cache into `room` bytes, what this process may still map
/// under its memory limit (`ulimit -v`). Serving takes at most half the room: the bytes
/// of long answers held at once are lowered to fit (to an eighth of the room, but room
/// for one line of the longest), and so are the probes at once (their work and threads
/// to a quarter) and the connections, unless `given` on the command line. The cache gets what is left, its bookkeeping
/// counted ([`cache_memory`]), up to `default_cache` (`--cache-mb` not given), or must
/// fit there (`asked`, bytes). Returns the cache's budget; an error (one sentence naming
/// `--cache-mb`) when nothing fits.
fn fit_memory(
    limits: &mut Limits,
    room: u64,
    asked: Option<u64>,
    default_cache: usize,
    given: Given,
    squares: u32,
) -> Result<usize, Error> {
    let usable = room.saturating_sub(SLACK_BYTES);
    let one_line = crate::serve::api::line_bytes_at_most(squares, limits.max_line_plies) as u64;
    let held = (usable / 8).max(one_line).min(limits.max_held_answer_bytes as u64);
    limits.max_held_answer_bytes = held as usize;
    if !given.probes {
        let probe = crate::serve::PROBE_BYTES + crate::serve::THREAD_STACK_BYTES;
        let spare = (limits.probe_threads() - limits.max_probes) as u64 * crate::serve::THREAD_STACK_BYTES;
        let fit = (usable / 4).saturating_sub(spare) / probe;
        limits.max_probes = limits.max_probes.min(fit as usize).max(MIN_PROBES);
    }
    if !given.connections {
        let fixed = Limits { max_connections: 0, ..limits.clone() }.serving_bytes();
        let fit = (usable / 2).saturating_sub(fixed) / limits.connection_bytes();
        limits.max_connections = limits.max_connections.min(fit as usize).max(MIN_CONNECTIONS);
    }
    let serving = limits.serving_bytes();
    let mb = |b: u64| b >> 20;
    if serving > usable {
        return Err(Error::InvalidArgument(format!(
            "the memory limit of this process (ulimit -v) leaves {} MB, and serving {} connections takes up to {} MB with {} MB to spare: raise the limit, or give fewer --max-connections and --cache-mb 0",
            mb(room),
            limits.max_connections,
            mb(serving),
            mb(SLACK_BYTES)
        )));
    }
    // The most the cache may count, its bookkeeping beside it.
    let cache_room = (usable - serving) / 6 * 5;
    match asked {
        Some(bytes) if cache_memory(bytes) > usable - serving => Err(Error::InvalidArgument(format!(
            "--cache-mb {}: the memory limit of this process (ulimit -v) leaves {} MB, of which serving {} connections takes up to {} MB; give --cache-mb {} or less, or raise the limit",
            mb(bytes),
            mb(room),
            limits.max_connections,
            mb(serving + SLACK_BYTES),
            mb(cache_room)
        ))),
        Some(bytes) => Ok(bytes as usize),
        None => Ok((default_cache as u64).min(cache_room) as usize),
    }
}

/// Completes at the first Ctrl-C or SIGTERM.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {},
                    _ = term.recv() => {},
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;
    const NONE: Given = Given { connections: false, probes: false };
    const BOTH: Given = Given { connections: true, probes: true };

    #[test]
    fn serving_and_the_cache_fit_the_room_a_memory_limit_leaves() {
        // What `ulimit -v 200000` left on (4,4), on 2 cores and on 32: fewer connections,
        // probes, long answers and cache, all within the room.
        for probes in [4, 64] {
            let mut limits = Limits { max_probes: probes, ..Limits::default() };
            let cache = fit_memory(&mut limits, 129 * MB, None, 512 << 20, NONE, 25).unwrap() as u64;
            assert!((MIN_CONNECTIONS..1024).contains(&limits.max_connections), "{}", limits.max_connections);
            assert!((MIN_PROBES..=4).contains(&limits.max_probes), "{}", limits.max_probes);
            assert!(limits.max_held_answer_bytes < 64 << 20);
            assert!(cache > 10 * MB && cache < 64 * MB, "{cache}");
            assert!(limits.serving_bytes() + cache_memory(cache) + SLACK_BYTES <= 129 * MB);
        }
        // Plenty of room: nothing changes.
        let mut roomy = Limits { max_probes: 4, ..Limits::default() };
        assert_eq!(fit_memory(&mut roomy, 64 << 30, None, 512 << 20, NONE, 25).unwrap(), 512 << 20);
        assert_eq!((roomy.max_connections, roomy.max_probes, roomy.max_held_answer_bytes), (1024, 4, 64 << 20));
        // Counts given are kept; a cache asked for that does not fit, an error naming
        // --cache-mb.
        let mut given = Limits { max_connections: 100, max_probes: 4, ..Limits::default() };
        let e = fit_memory(&mut given, 129 * MB, Some(90 * MB), 90 << 20, BOTH, 25).unwrap_err().to_string();
        assert!(e.starts_with("--cache-mb 90: ") && e.contains("give --cache-mb "), "{e}");
        assert_eq!((given.max_connections, given.max_probes), (100, 4));
        assert!(fit_memory(&mut given, 129 * MB, Some(10 * MB), 10 << 20, BOTH, 25).is_ok());
        let mut many = Limits { max_connections: 100_000, max_probes: 4, ..Limits::default() };
        let e = fit_memory(&mut many, 129 * MB, None, 512 << 20, BOTH, 25).unwrap_err().to_string();
        assert!(e.contains("serving 100000 connections") && e.contains("--cache-mb 0"), "{e}");
        // Next to nothing left: refused, not started to abort later.
        let e = fit_memory(&mut Limits::default(), 40 * MB, None, 512 << 20, NONE, 25).unwrap_err().to_string();
        assert!(e.contains("--cache-mb"), "{e}");
    }
}
