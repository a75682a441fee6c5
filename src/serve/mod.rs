//! `ostledb serve`'s library half: the solved game over HTTP. A versioned JSON API
//! ([`api`], documented in `schema/API.md`) and the web explorer ([`assets`]) on one
//! [`axum::Router`], served by a connection loop ([`connections`]) that bounds what
//! clients can hold: open connections, the time to send a request's headers, the bytes of
//! a request, the probes in flight and the time of each.
//!
//! The server is read-only: it opens the database once and answers `GET` (and `HEAD`)
//! requests. Answers under one database [`identity`](crate::store::Database::identity)
//! never change, so they carry that identity as their `ETag` and may be cached.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use std::sync::Arc;
//! let db = Arc::new(ostledb::store::Database::open("ostle.db").expect("a database"));
//! let limits = ostledb::serve::Limits::default();
//! let app = ostledb::serve::router(db, &limits);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! ostledb::serve::run(listener, app, &limits, std::future::pending()).await
//! # }
//! ```

pub mod api;
pub mod assets;
pub mod connections;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::error::Error;
use crate::store::Database;

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
    /// The longest query string answered (the part of the URL after `?`); longer gets 414.
    pub max_query_bytes: usize,
    /// The most bytes of a request's head (request line and headers); more gets 431 and
    /// the connection is closed.
    pub max_head_bytes: usize,
    /// The longest principal variation `/api/v1/line` computes (`max_plies`); at most
    /// [`MAX_LINE_PLIES`](crate::analysis::query::MAX_LINE_PLIES), its default: a
    /// greater value is taken as that.
    pub max_line_plies: u32,
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
            max_query_bytes: 1024,
            max_head_bytes: 16 * 1024,
            max_line_plies: crate::analysis::query::MAX_LINE_PLIES,
            log_requests: false,
        }
    }
}

/// Make the database ready before clients ask. First each phase's key index builds what
/// it would otherwise build on first use ([`crate::store::keys::KeyIndex::prepare`]: the
/// `rank` backend's bitmaps), then the value files' pages are mapped
/// ([`Database::map_value_pages`]), then the block cache is filled: the value blocks of each
/// phase in turn, in solving order, until the cache is nine-tenths full, every block is
/// in, or `stop` is set. Returns the blocks decoded. A database whose blocks all fit
/// in the cache (phase (4,4) in the default 512 MB) then answers every probe from memory;
/// without this the first seconds of a server pay for bitmaps, page faults and decoding
/// (a read and a decompression per block). `ostledb serve` runs it before it accepts
/// connections.
pub fn warm(db: &Database, stop: &AtomicBool) -> Result<u64, Error> {
    let cache = db.cache();
    for phase in db.index().phases().iter().map(|p| p.phase()) {
        if stop.load(Ordering::Relaxed) {
            return Ok(0);
        }
        db.keys(phase)?.prepare();
    }
    db.map_value_pages();
    let mut decoded = 0;
    for phase in db.index().phases().iter().map(|p| p.phase()) {
        let Some(values) = db.values(phase) else { continue };
        for b in 0..values.blocks() as u64 {
            if stop.load(Ordering::Relaxed) {
                return Ok(decoded);
            }
            // Stop before the cache would evict what it holds: a block takes at most
            // the average so far (plus room while none is in).
            let per_block = if decoded > 0 { cache.bytes() / decoded as usize } else { 0 };
            if cache.bytes() + per_block > cache.budget() / 10 * 9 {
                return Ok(decoded);
            }
            // The block itself: a record read could be answered without it (an
            // immediate win in a file that fills them).
            values.decoded(b as u32)?;
            decoded += 1;
        }
    }
    Ok(decoded)
}
