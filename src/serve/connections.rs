//! The connection loop of `ostledb serve`: HTTP/1.1 with keep-alive on hyper, with the
//! bounds axum's own `serve` does not set.
//!
//! - At most [`Limits::max_connections`] are open. When all are and another client
//!   connects, the open connection that has been quiet longest (no byte either way for
//!   [`EVICT_AFTER`] or more, and no request being answered: a client that does not read
//!   its answers, or an idle one) is reset to make room; else the newcomer waits until
//!   one closes (and the rest in the listen backlog). So clients that hold connections
//!   without reading cannot keep others out.
//! - A client has [`Limits::header_timeout`] to send each request's head, which also
//!   closes an idle keep-alive connection (reset if it still holds answers the client
//!   has not taken); a head over [`Limits::max_head_bytes`] gets 431.
//! - A connection whose writes make no progress for [`Limits::write_timeout`] (a client
//!   that does not read its answers) is reset, and what such a client makes the server
//!   hold is bounded: at most [`Limits::max_pipelined_bytes`] of requests read ahead,
//!   the answer being written and [`Limits::max_unsent_bytes`] in the socket.
//!
//! On shutdown the loop stops accepting, lets the requests in progress finish (up to
//! 5 s) and returns.
//!
//! Why a client that never reads holds so little: hyper answers a connection's requests
//! one at a time, and with vectored writes (which the connection's wrapper keeps) it
//! takes the next answer only once the body of the last one is wholly in the socket. So
//! a pipelining client has one answer in the server's memory at a time; the socket holds
//! what its window and the unsent bound let it, and then nothing more is computed for
//! that client until it reads, or the write timeout closes it.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::time::{Instant, Sleep};

use crate::serve::Limits;

/// How long a shutdown waits for the requests in progress.
const GRACE: Duration = Duration::from_secs(5);

/// The least time a connection must have been quiet (no byte read or written, no
/// request being answered) to be closed for a newcomer when every slot is taken.
pub const EVICT_AFTER: Duration = Duration::from_millis(250);

/// What the loop knows of an open connection, to choose one to close when every slot
/// is taken.
struct Tracked {
    /// When a byte last moved either way (or the connection was opened), in
    /// milliseconds since the loop started.
    last_progress: AtomicU64,
    /// Requests of it being answered (handed to the router, no answer yet).
    busy: AtomicUsize,
    /// Chosen to be closed (it is then not chosen again).
    evicted: AtomicBool,
    /// Closed by hyper for want of a request head within the header timeout.
    idle_timeout: AtomicBool,
    /// Wakes its task to close it.
    close: Notify,
}

/// The open connections, by number.
struct Registry {
    start: Instant,
    open: Mutex<HashMap<u64, Arc<Tracked>>>,
}

impl Registry {
    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// A new connection, numbered `id`, quiet from now.
    fn add(&self, id: u64) -> Arc<Tracked> {
        let t = Arc::new(Tracked {
            last_progress: AtomicU64::new(self.now_ms()),
            busy: AtomicUsize::new(0),
            evicted: AtomicBool::new(false),
            idle_timeout: AtomicBool::new(false),
            close: Notify::new(),
        });
        self.open.lock().unwrap_or_else(|e| e.into_inner()).insert(id, t.clone());
        t
    }

    fn remove(&self, id: u64) {
        self.open.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
    }

    /// Close the connection that has been quiet longest, if one has been for
    /// [`EVICT_AFTER`] with no request being answered; whether one was.
    fn evict_quietest(&self) -> bool {
        let now = self.now_ms();
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let quietest = open
            .values()
            .filter(|t| !t.evicted.load(Ordering::Relaxed) && t.busy.load(Ordering::Relaxed) == 0)
            .map(|t| (t.last_progress.load(Ordering::Relaxed), t))
            .filter(|(last, _)| now.saturating_sub(*last) >= EVICT_AFTER.as_millis() as u64)
            .min_by_key(|(last, _)| *last);
        match quietest {
            Some((_, t)) => {
                t.evicted.store(true, Ordering::Relaxed);
                t.close.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Counts a request of a connection as being answered while it lives.
struct Busy(Arc<Tracked>);

impl Busy {
    fn enter(t: &Arc<Tracked>) -> Busy {
        t.busy.fetch_add(1, Ordering::Relaxed);
        Busy(t.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Serve `app` on `listener` until `shutdown` completes.
pub async fn run(
    listener: TcpListener,
    app: Router,
    limits: &Limits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.clamp(1, Semaphore::MAX_PERMITS)));
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
        .max_header_size(limits.max_head_bytes)
        // The read buffer, which holds the pipelined requests read ahead, and the write
        // buffer; hyper needs room for a whole head and at least 8 KiB.
        .max_buf_size(limits.read_buffer_bytes());
    let registry = Arc::new(Registry { start: Instant::now(), open: Mutex::new(HashMap::new()) });
    let mut next_id = 0u64;
    tokio::pin!(shutdown);
    'accept: loop {
        // A slot is free: accept. All are taken: accept when one frees, or when a
        // client is waiting and an open connection can be closed for it.
        let first = tokio::select! {
            // A free slot first: a newcomer found waiting then takes it.
            biased;
            s = slots.clone().acquire_owned() => Ok(s.expect("the semaphore is never closed")),
            r = listener.accept() => Err(r),
            () = &mut shutdown => break,
        };
        let (slot, accepted) = match first {
            Ok(slot) => {
                let r = tokio::select! {
                    r = listener.accept() => r,
                    () = &mut shutdown => break,
                };
                (slot, r)
            }
            Err(r) => {
                // Every slot is taken and a client is waiting (it holds the one socket
                // beyond the limit): close the quietest connection, looking again while
                // none has been quiet long enough, until a slot frees.
                let slot = loop {
                    if let Ok(s) = slots.clone().try_acquire_owned() {
                        break s;
                    }
                    registry.evict_quietest();
                    tokio::select! {
                        s = slots.clone().acquire_owned() => break s.expect("the semaphore is never closed"),
                        () = tokio::time::sleep(EVICT_AFTER / 2) => {},
                        () = &mut shutdown => break 'accept,
                    }
                };
                (slot, r)
            }
        };
        let stream = match accepted {
            Ok((s, _)) => s,
            // Out of file descriptors, a connection reset before it was accepted...:
            // the listener is fine, so wait a moment and go on.
            Err(_) => {
                drop(slot);
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        limit_unsent(&stream, limits.max_unsent_bytes);
        let id = next_id;
        next_id += 1;
        let tracked = registry.add(id);
        let io = TokioIo::new(WriteDeadline::new(stream, limits.write_timeout, registry.clone(), tracked.clone()));
        let service = TowerToHyperService::new(app.clone());
        let counted = tracked.clone();
        let service = hyper::service::service_fn(move |req| {
            use hyper::service::Service;
            let busy = Busy::enter(&counted);
            let answer = service.call(req);
            async move {
                let r = answer.await;
                drop(busy);
                r
            }
        });
        let conn = graceful.watch(builder.serve_connection(io, service));
        let registry = registry.clone();
        tokio::spawn(async move {
            // A connection's end, clean or not (a client gone, a timeout), is its own
            // business: nothing to report. One closed for a newcomer is reset (its
            // socket may hold an answer the client never takes), and so is one closed
            // idle that still holds answers the client has not taken ([`WriteDeadline`]
            // does it as the connection is dropped, at the end of this block).
            tokio::pin!(conn);
            tokio::select! {
                r = &mut conn => {
                    if r.is_err_and(|e| e.is_timeout()) {
                        tracked.idle_timeout.store(true, Ordering::Relaxed);
                    }
                }
                () = tracked.close.notified() => {},
            }
            registry.remove(id);
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

/// Ask the socket to take no more than `bytes` of answers not yet sent to the client
/// (Linux: `TCP_NOTSENT_LOWAT`; a write waits while more are queued). Without it the
/// kernel takes as much as the send buffer holds, on loopback some megabytes: a client
/// that never reads had 1,252 answers of 2 KB made for it before its writes stalled.
/// Elsewhere the send buffer is the bound.
fn limit_unsent(stream: &TcpStream, bytes: usize) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    set_int_option(stream, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, bytes);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = (stream, bytes);
}

/// Set socket option `name` of `level` to the C int `value` (capped at `i32::MAX`); a
/// failure leaves the kernel's default.
#[cfg(unix)]
#[cfg_attr(not(any(target_os = "linux", target_os = "android", test)), allow(dead_code))]
fn set_int_option(stream: &impl std::os::fd::AsRawFd, level: libc::c_int, name: libc::c_int, value: usize) {
    let v = value.min(i32::MAX as usize) as libc::c_int;
    // SAFETY: the descriptor is open while `stream` is borrowed; the option's value is a
    // C int of the size given.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            level,
            name,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// A connection whose writes fail with [`io::ErrorKind::TimedOut`] once one has waited
/// `timeout` without the socket taking a byte: the client is not reading its answers.
/// hyper then drops the connection, which frees its slot, and the socket is reset rather
/// than closed: a close would leave the kernel holding the unsent answer and a FIN that
/// a client with its window shut never takes (FIN-WAIT-1, for minutes), and the client
/// would not see the end. The clock starts when a write (or flush) finds the socket full
/// and stops at the next one that makes progress, so a slow reader that keeps reading
/// keeps its connection, as with nginx's `send_timeout`.
///
/// It also tells the loop's [`Registry`] when a byte last moved either way, and resets
/// the socket when the connection is dropped after the loop chose to close it.
struct WriteDeadline {
    io: TcpStream,
    timeout: Duration,
    /// Set while the socket is full: when the connection gives up.
    stalled: Option<Pin<Box<Sleep>>>,
    registry: Arc<Registry>,
    tracked: Arc<Tracked>,
}

impl WriteDeadline {
    /// `io` with writes that give up after `timeout` without progress, its progress
    /// told to `registry` as `tracked`.
    fn new(io: TcpStream, timeout: Duration, registry: Arc<Registry>, tracked: Arc<Tracked>) -> WriteDeadline {
        WriteDeadline { io, timeout, stalled: None, registry, tracked }
    }

    /// A byte moved.
    fn progress(&self) {
        self.tracked.last_progress.store(self.registry.now_ms(), Ordering::Relaxed);
    }

    /// The outcome of a write that returned `r`: progress stops the clock; a full
    /// socket starts it, or, once it has run out, is the error that closes the
    /// connection.
    fn watch<R>(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<R>>) -> Poll<io::Result<R>> {
        if r.is_ready() {
            self.stalled = None;
            self.progress();
            return r;
        }
        let timeout = self.timeout;
        let deadline = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + timeout)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => {
                // Reset when dropped, whatever is queued. A failure leaves a plain close.
                let _ = self.io.set_zero_linger();
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("the client took no bytes of its answer for {} s", timeout.as_secs_f64()),
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for WriteDeadline {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.progress();
        }
        r
    }
}

impl Drop for WriteDeadline {
    fn drop(&mut self) {
        // Closed for a newcomer, or idle for the header timeout with answers still in
        // the socket that the client has not taken (a client that pipelined short
        // requests and never reads: its answers fit in the socket, so no write waited):
        // reset, as a timed-out write is. A plain close would leave the kernel holding
        // the answers and a FIN that a client with its window shut never takes
        // (FIN-WAIT-1, for minutes), and the client would not see the end.
        let idle_with_answers =
            self.tracked.idle_timeout.load(Ordering::Relaxed) && unacknowledged_bytes(&self.io).is_some_and(|n| n > 0);
        if self.tracked.evicted.load(Ordering::Relaxed) || idle_with_answers {
            let _ = self.io.set_zero_linger();
        }
    }
}

/// Bytes written to `stream` that its client has not acknowledged (Linux `TIOCOUTQ`),
/// `None` elsewhere or on failure.
fn unacknowledged_bytes(stream: &TcpStream) -> Option<u64> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::AsRawFd;
        let mut n: libc::c_int = 0;
        // SAFETY: the descriptor is open while `stream` is borrowed; TIOCOUTQ writes one
        // C int to the pointer given.
        let r = unsafe { libc::ioctl(stream.as_raw_fd(), libc::TIOCOUTQ, &mut n) };
        (r == 0).then_some(n.max(0) as u64)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = stream;
        None
    }
}

impl AsyncWrite for WriteDeadline {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, buf);
        self.watch(cx, r)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.watch(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        // hyper queues an answer's body without copying it, and takes no next answer
        // until it is written, only when the socket takes vectored writes.
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.io).poll_flush(cx);
        self.watch(cx, r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.io).poll_shutdown(cx);
        self.watch(cx, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Write all of `data` through `w`, as hyper does: poll by poll.
    async fn write_all(w: &mut WriteDeadline, data: &[u8]) -> io::Result<()> {
        let mut off = 0;
        while off < data.len() {
            off += std::future::poll_fn(|cx| Pin::new(&mut *w).poll_write(cx, &data[off..])).await?;
        }
        Ok(())
    }

    /// Read what `s` has, waiting for something: the bytes read, 0 at the end.
    async fn read(s: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            s.readable().await?;
            match s.try_read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                r => return r,
            }
        }
    }

    /// A loopback connection: the server's end behind a [`WriteDeadline`] of `timeout`,
    /// and the client's end; both with small buffers so that writes wait on the reader.
    async fn pair(timeout: Duration) -> (WriteDeadline, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(16 * 1024).unwrap();
        let client = socket.connect(listener.local_addr().unwrap()).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let server = with_send_buffer(server, 16 * 1024);
        let registry = Arc::new(Registry { start: Instant::now(), open: Mutex::new(HashMap::new()) });
        let tracked = registry.add(0);
        (WriteDeadline::new(server, timeout, registry, tracked), client)
    }

    /// `s` with a send buffer of `bytes` (the kernel doubles it).
    fn with_send_buffer(s: TcpStream, bytes: usize) -> TcpStream {
        super::set_int_option(&s, libc::SOL_SOCKET, libc::SO_SNDBUF, bytes);
        s
    }

    #[tokio::test]
    async fn a_reader_that_keeps_reading_is_served_one_that_stops_is_cut_off_and_reset() {
        let timeout = Duration::from_millis(300);
        // 1 MB to a client that takes 32 KiB every 50 ms: about 1.6 s in all, over five
        // times the timeout, but never 300 ms without progress.
        let (mut server, client) = pair(timeout).await;
        let reader = tokio::spawn(async move {
            let mut got = 0;
            let mut buf = vec![0; 32 * 1024];
            while got < 1 << 20 {
                tokio::time::sleep(Duration::from_millis(50)).await;
                got += read(&client, &mut buf).await.unwrap();
            }
            got
        });
        let t = std::time::Instant::now();
        write_all(&mut server, &vec![7; 1 << 20]).await.expect("a slow reader keeps its connection");
        assert!(t.elapsed() > timeout * 2, "the writes waited on the reader: {:?}", t.elapsed());
        assert_eq!(reader.await.unwrap(), 1 << 20);
        // A client that reads nothing: the write fails after the timeout, not before,
        // and the client sees a reset once the server's end is dropped.
        let (mut server, client) = pair(timeout).await;
        let t = std::time::Instant::now();
        let e = write_all(&mut server, &vec![7; 1 << 20]).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(t.elapsed() >= timeout && t.elapsed() < timeout * 10, "{:?}", t.elapsed());
        drop(server);
        let mut buf = vec![0; 64 * 1024];
        let mut got = 0;
        let end = loop {
            match tokio::time::timeout(Duration::from_secs(5), read(&client, &mut buf)).await {
                Ok(Ok(n)) if n > 0 => got += n,
                other => break other,
            }
        };
        match end {
            Ok(Err(e)) => assert_eq!(e.kind(), io::ErrorKind::ConnectionReset, "{e}"),
            other => panic!("the client saw {other:?} after {got} bytes, not a reset"),
        }
    }
}
