//! The connection loop of `ostledb serve`: HTTP/1.1 with keep-alive on hyper, with the
//! bounds axum's own `serve` does not set. At most [`Limits::max_connections`] are open
//! (the rest wait in the listen backlog); a client has [`Limits::header_timeout`] to send
//! each request's head, which also closes an idle keep-alive connection; a head over
//! [`Limits::max_head_bytes`] gets 431. On shutdown the loop stops accepting, lets the
//! requests in progress finish (up to 5 s) and returns.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::serve::Limits;

/// How long a shutdown waits for the requests in progress.
const GRACE: Duration = Duration::from_secs(5);

/// Serve `app` on `listener` until `shutdown` completes.
pub async fn run(
    listener: TcpListener,
    app: Router,
    limits: &Limits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true)
        // A client may shut its write side once its request is sent (`nc -N`, some
        // scripts): it still gets its answer. Without this hyper drops the request at
        // the end of file and the client gets nothing.
        .half_close(true)
        .max_header_size(limits.max_head_bytes);
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            s = slots.clone().acquire_owned() => s.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                // Out of file descriptors, a connection reset before it was accepted...:
                // the listener is fine, so wait a moment and go on.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let conn = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            // A connection's end, clean or not (a client gone, a timeout), is its own
            // business: nothing to report.
            let _ = conn.await;
            drop(slot);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {},
        () = tokio::time::sleep(GRACE) => {},
    }
    Ok(())
}
