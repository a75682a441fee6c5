//! `ostledb serve`'s library half: the solved game over HTTP. A versioned JSON API
//! ([`api`], documented in `schema/API.md`) and the web explorer ([`assets`]) on one
//! [`axum::Router`], served by a connection loop ([`connections`]) that bounds what
//! clients can hold: open connections, the time to send a request's headers and to take
//! an answer, the bytes of a request, what a connection holds of pipelined requests and
//! of answers not yet sent, the probes in flight and the time of each.
//!
//! The server is read-only: it opens the database once and answers `GET` (and `HEAD`)
//! requests. Answers under one database [`identity`](crate::Database::identity)
//! never change, so they carry that identity as their `ETag` and may be cached.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use std::sync::Arc;
//! let db = Arc::new(ostledb::Database::open("ostle.db").expect("a database"));
//! let limits = ostledb::serve::Limits::default();
//! let app = ostledb::serve::router(db, &limits);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! ostledb::serve::run(listener, app, &limits, std::future::pending()).await
//! # }
//! ```

pub mod api;
pub mod assets;
pub mod connections;
pub mod page;
pub(crate) mod query_string;

use std::time::Duration;

pub use api::router;
pub use connections::run;

/// What one client, or all of them together, can hold of the server.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Connections open at once; more wait in the listen backlog until one closes.
    pub max_connections: usize,
    /// Probes (database work) running at once, on threads off the async ones; a request
    /// waits for one at most `queue_timeout`, then gets 503.
    pub max_probes: usize,
    /// The longest a request waits for a probe slot.
    pub queue_timeout: Duration,
    /// The longest a probe may run before its request gets 504.
    pub probe_timeout: Duration,
    /// The longest a client may take to send a request's headers, and the longest an
    /// idle keep-alive connection stays open.
    pub header_timeout: Duration,
    /// The longest a connection's writes may wait without the client taking a byte of
    /// its answer (it does not read, or its window stays shut); then the connection is
    /// closed. The clock restarts at every write that makes progress, so a slow reader
    /// that keeps reading is not cut off.
    pub write_timeout: Duration,
    /// The most bytes of answers a connection's socket holds not yet sent to the client
    /// (Linux `TCP_NOTSENT_LOWAT`); beyond them and the client's window, the server holds
    /// one answer of a connection in memory and computes no next one until the client
    /// reads. Elsewhere than Linux the socket's send buffer is the bound.
    pub max_unsent_bytes: usize,
    /// The most bytes of a connection's requests read ahead of the one being answered
    /// (pipelined requests; at least `max_head_bytes` and 8 KiB). The rest wait in the
    /// client's socket: TCP stops it sending.
    pub max_pipelined_bytes: usize,
    /// The longest query string answered (the part of the URL after `?`); longer gets 414.
    /// The default, 12 KiB, holds a game of
    /// [`MAX_LINE_PLIES`](crate::MAX_LINE_PLIES) moves in `moves`
    /// (`hole-right,` is the longest move, 11 bytes) beside two boards.
    pub max_query_bytes: usize,
    /// The most bytes of a request's head (request line and headers); more gets 431 and
    /// the connection is closed.
    pub max_head_bytes: usize,
    /// The longest principal variation `/api/v1/line` computes (`max_plies`); at most
    /// [`MAX_LINE_PLIES`](crate::MAX_LINE_PLIES), its default: a
    /// greater value is taken as that.
    pub max_line_plies: u32,
    /// The most bytes of long answers (`/api/v1/line`'s, which grow with `max_plies`:
    /// 277 KB for 1,000 plies on 5x5) being made or not yet taken by their clients, all
    /// connections together. A line's bytes are counted from before it is made (at most
    /// [`api::line_bytes_at_most`]) until its client has taken them or its connection is
    /// closed; a request that finds no room gets 503 at once.
    /// Other answers are short (a position's under 16 KiB) and are not counted here.
    pub max_held_answer_bytes: usize,
    /// Print one line per request on stderr (method, path, status, microseconds).
    pub log_requests: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Limits {
            max_connections: 1024,
            max_probes: 2 * cores,
            queue_timeout: Duration::from_secs(5),
            probe_timeout: Duration::from_secs(10),
            header_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            max_unsent_bytes: 64 * 1024,
            max_pipelined_bytes: 64 * 1024,
            max_query_bytes: 12 << 10,
            max_head_bytes: 16 * 1024,
            max_line_plies: crate::MAX_LINE_PLIES,
            max_held_answer_bytes: 64 << 20,
            log_requests: false,
        }
    }
}

/// The address space each thread of the server reserves for its stack: tokio's default
/// of 2 MiB, and a guard page.
pub const THREAD_STACK_BYTES: u64 = (2 << 20) + 4096;

/// The most memory a probe works in besides its answer's JSON: a line of 1,000 plies
/// holds its steps (the position object of each, about 0.4 KB) until it is written.
pub const PROBE_BYTES: u64 = 2 << 20;

/// What an open connection holds besides its read buffer and the long answers: its
/// task, hyper's state and write buffer of heads, and a short answer being written
/// (under 16 KiB).
pub const CONNECTION_OVERHEAD_BYTES: u64 = 32 << 10;

impl Limits {
    /// The most memory one open connection holds, besides the long answers counted by
    /// [`Limits::max_held_answer_bytes`]: its read buffer of pipelined requests (hyper
    /// takes at least the head limit and 8 KiB) and [`CONNECTION_OVERHEAD_BYTES`].
    pub fn connection_bytes(&self) -> u64 {
        self.read_buffer_bytes() as u64 + CONNECTION_OVERHEAD_BYTES
    }

    /// The size of a connection's read buffer (hyper's `max_buf_size`).
    pub fn read_buffer_bytes(&self) -> usize {
        self.max_pipelined_bytes.max(self.max_head_bytes).max(8192)
    }

    /// The threads that run probes at most: one per probe slot and a few spare.
    pub fn probe_threads(&self) -> usize {
        self.max_probes.saturating_add(4)
    }

    /// The most memory serving takes with these limits, besides the database, its cache
    /// and the threads started with the runtime: every connection open at once
    /// ([`Limits::connection_bytes`]), the long answers held, the probes' work and the
    /// stacks of their threads.
    pub fn serving_bytes(&self) -> u64 {
        (self.max_connections as u64).saturating_mul(self.connection_bytes())
            + self.max_held_answer_bytes as u64
            + (self.max_probes as u64).saturating_mul(PROBE_BYTES)
            + (self.probe_threads() as u64).saturating_mul(THREAD_STACK_BYTES)
    }
}
