//! `ostledb serve`: the database over HTTP, a JSON API and the web explorer, until Ctrl-C
//! or SIGTERM.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::cli::db::{BackendArgs, open};
use crate::cli::{CommonArgs, MAX_CONNECTIONS, MAX_THREADS, one_to};
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
  /api/v1/position?board=B[&prev=P]              what `ostledb query --json` prints
  /api/v1/line?board=B[&prev=P][&max_plies=N]    the same with the principal variation
  /api/v1/play?board=B[&prev=P][&level=L][&seed=S]
                                                 the computer's move: perfect, strong,
                                                 medium, easy or random
  /api/v1/stats                                  what the database holds, per phase
  /api/v1/health                                 up, and request counters
Errors are JSON {\"error\": \"...\"}: 400 a bad board or parameter, 404 a phase the
database does not hold, 414 a query string over 1,024 bytes, 500 a damaged database,
503 busy, 504 a probe over its time. Answers carry an ETag (the database's identity)
and Cache-Control: they never change for one database.

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
    /// Connections open at once, 1 to 65,536; more wait until one closes.
    #[arg(long, default_value_t = 1024, value_name = "N", value_parser = one_to(MAX_CONNECTIONS))]
    pub max_connections: usize,
    /// Seconds a client has to send a request's headers; an idle keep-alive connection
    /// is closed after as long.
    #[arg(long, default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
    /// Print one line per request on stderr: method, path, status, microseconds.
    #[arg(long)]
    pub log: bool,
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
    let db = Arc::new(open(&args.common, &args.backend)?);
    let mut limits = Limits {
        max_connections: args.max_connections,
        header_timeout: Duration::from_secs(args.header_timeout),
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
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .max_blocking_threads(limits.max_probes + 4)
        .thread_name("ostledb-serve")
        .enable_all()
        .build()
        .map_err(|e| Error::InvalidArgument(format!("cannot start the server's threads: {e}")))?;
    let app = crate::serve::router(db.clone(), &limits);
    let phases: Vec<String> = db.meta().phases.iter().map(|p| p.phase().to_string()).collect();
    // Ready the database before the first request: connections made meanwhile wait in
    // the listen backlog, and scripts wait for the line below.
    if !args.no_warm {
        let t = std::time::Instant::now();
        let n = crate::serve::warm(&db, &std::sync::atomic::AtomicBool::new(false))?;
        if !args.common.quiet {
            eprintln!(
                "ostledb serve: key indexes prepared and {n} value blocks decoded into the cache ({} MB) in {:.1} s",
                db.cache().bytes() >> 20,
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
