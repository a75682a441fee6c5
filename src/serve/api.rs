//! The routes of `ostledb serve`: the JSON API under `/api/v1/` (`schema/API.md`) and the
//! explorer's files. Every answer is JSON, errors included (`{"error": "..."}`), with a
//! status that says whose fault it is: 400 a bad request (board, move, parameter), 404
//! a phase the database does not hold or a path that does not exist, 405 a method other
//! than GET, 414 a query string too long, 500 a damaged database, 503 too busy, 504 a
//! probe over its time.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::serve::Limits;
use crate::serve::{assets, page, query_string};
use crate::{DEFAULT_LINE_PLIES, Database, Error, Level, MAX_LINE_PLIES, MoveLine, choose_move, split_moves};

/// The version of the API, the first part of its paths.
pub const VERSION: &str = "v1";

/// The greatest `seed` of `/api/v1/play`, given or drawn: 2^53 - 1, JavaScript's
/// `Number.MAX_SAFE_INTEGER`, the greatest integer a JSON reader that keeps numbers as
/// doubles reads back exactly (2098135176025516879 reads as 2098135176025516800, and
/// that seed plays another move).
pub const MAX_SEED: u64 = (1 << 53) - 1;

/// What every handler shares.
struct App {
    db: Arc<Database>,
    /// The database's identity, in hex (`stats`, `health`).
    identity: String,
    /// The ETag of every cacheable answer: `"v1-<identity>"`.
    etag: HeaderValue,
    probes: Arc<Semaphore>,
    /// The bytes of long answers (`line`'s) being made or not yet written
    /// ([`Limits::max_held_answer_bytes`]), one permit a byte.
    held: Arc<Semaphore>,
    limits: Limits,
    started: Instant,
    requests: AtomicU64,
    client_errors: AtomicU64,
    server_errors: AtomicU64,
}

type Shared = State<Arc<App>>;

/// The router of `ostledb serve` over `db`: the API, the explorer and JSON for every
/// path and method it does not serve. An answer is gzipped when the request says
/// `Accept-Encoding: gzip` (a position's answer of about 4.2 KB becomes about 0.6 KB),
/// and left as it is otherwise.
pub fn router(db: Arc<Database>, limits: &Limits) -> Router {
    let app = Arc::new(App::new(db, limits));
    Router::new()
        .route("/api/v1/position", get(position))
        .route("/api/v1/line", get(line))
        .route("/api/v1/play", get(play))
        .route("/api/v1/review", get(review))
        .route("/api/v1/stats", get(stats))
        .route("/api/v1/health", get(health))
        .route("/", get(page))
        .route("/explorer.js", get(assets::script))
        .route("/explorer.css", get(assets::style))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(app.clone(), count))
        .layer(tower_http::compression::CompressionLayer::new().gzip(true))
        .with_state(app)
}

/// `app` answering cross-origin requests from `origin` (`serve --cors ORIGIN`): every
/// answer carries `Access-Control-Allow-Origin` for a request from that origin (or for
/// any, with `*`), `ETag` is exposed to the page's script, and an `OPTIONS` preflight is
/// answered (GET and HEAD, the header `If-None-Match`, cached a day). Without this layer
/// (the default) no answer has CORS headers and `OPTIONS` gets 405. `origin` is `*` or
/// `scheme://host[:port]` with the scheme http or https and nothing after the host
/// ([`Error::InvalidArgument`] otherwise).
pub fn allow_origin(app: Router, origin: &str) -> Result<Router, Error> {
    use tower_http::cors::{AllowOrigin, CorsLayer};
    let allow = if origin == "*" { AllowOrigin::any() } else { AllowOrigin::exact(check_origin(origin)?) };
    let layer = CorsLayer::new()
        .allow_origin(allow)
        .allow_methods([Method::GET, Method::HEAD])
        .allow_headers([header::IF_NONE_MATCH])
        .expose_headers([header::ETAG])
        .max_age(std::time::Duration::from_secs(86_400));
    Ok(app.layer(layer))
}

/// An origin as a browser sends it: `http://` or `https://`, a host of letters, digits,
/// `.`, `-` (or an IPv6 address in brackets), and an optional port; nothing else.
fn check_origin(origin: &str) -> Result<HeaderValue, Error> {
    let bad = |why: &str| {
        Error::InvalidArgument(format!(
            "--cors `{}`: {why}; give an origin as a browser sends it, e.g. https://example.org or http://localhost:3000, or * for any",
            crate::shown_input(origin, origin.len())
        ))
    };
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .ok_or_else(|| bad("it does not start with http:// or https://"))?;
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && !p.contains(']') => (h, Some(p)),
        _ => (rest, None),
    };
    let host_ok = !host.is_empty()
        && (host.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            || (host.starts_with('[')
                && host.ends_with(']')
                && host[1..host.len() - 1].chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')));
    if !host_ok {
        return Err(bad("the host has a character a host cannot have (an origin has no path, not even `/`)"));
    }
    if let Some(p) = port
        && p.parse::<u16>().is_err()
    {
        return Err(bad("the port is not a number from 0 to 65535"));
    }
    HeaderValue::from_str(origin).map_err(|_| bad("it is not a header value"))
}

/// An answer that is not a success: its status and its message.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }

    fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_string(&ErrorBody { error: &self.message }).expect("a string serialises");
        let mut r = json(self.status, body);
        r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        r
    }
}

/// The status of a library error: the client's fault (400), a phase the database lacks
/// (404), the server's want of memory (503), or a damaged database or failed read (500).
pub fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::Notation(_)
        | Error::InvalidPosition(_)
        | Error::NotAPredecessor
        | Error::InvalidArgument(_)
        | Error::OutOfRange { .. } => StatusCode::BAD_REQUEST,
        Error::MissingDatabase { .. } => StatusCode::NOT_FOUND,
        Error::OutOfMemory { .. } => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl App {
    fn new(db: Arc<Database>, limits: &Limits) -> App {
        let identity = format!("{:016x}", db.identity());
        let etag = HeaderValue::from_str(&format!("\"{VERSION}-{identity}\"")).expect("ASCII");
        App {
            db,
            identity,
            etag,
            probes: Arc::new(Semaphore::new(limits.max_probes.clamp(1, Semaphore::MAX_PERMITS))),
            held: Arc::new(Semaphore::new(limits.max_held_answer_bytes.min(Semaphore::MAX_PERMITS))),
            limits: limits.clone(),
            started: Instant::now(),
            requests: AtomicU64::new(0),
            client_errors: AtomicU64::new(0),
            server_errors: AtomicU64::new(0),
        }
    }

    fn error(&self, e: Error) -> ApiError {
        let status = status_of(&e);
        let message = match &e {
            Error::MissingDatabase { phase, .. } => {
                let held: Vec<String> = self.db.meta().phases.iter().map(|p| p.phase().to_string()).collect();
                format!(
                    "phase {phase} is not in this database, which holds {}; a board of it is answered by a database solved with more pieces",
                    held.join(", ")
                )
            }
            _ => e.to_string(),
        };
        ApiError::new(status, message)
    }

    /// Run `work` on a probe thread, holding one of the probe slots: 503 when none is
    /// free within the queue timeout, 504 when the work outlasts the probe timeout (it
    /// goes on to its end, holding its slot, so the bound on probes holds).
    async fn probe<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&Database) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, ApiError> {
        let permit = match tokio::time::timeout(self.limits.queue_timeout, self.probes.clone().acquire_owned()).await {
            Ok(Ok(p)) => p,
            _ => {
                return Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "the server is busy: all {} probe slots stayed taken for {} s; try again",
                        self.limits.max_probes,
                        self.limits.queue_timeout.as_secs_f64()
                    ),
                ));
            }
        };
        let db = self.db.clone();
        let task = tokio::task::spawn_blocking(move || {
            let _slot = permit;
            work(&db)
        });
        match tokio::time::timeout(self.limits.probe_timeout, task).await {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(e))) => Err(self.error(e)),
            Ok(Err(_)) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the probe failed (an internal error)")),
            Err(_) => Err(ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                format!("the answer took over {} s", self.limits.probe_timeout.as_secs_f64()),
            )),
        }
    }

    /// Reserve `bytes` of the budget of long answers ([`Limits::max_held_answer_bytes`]),
    /// what a long answer is thought to take at most, before it is made; 503 at once
    /// when the budget does not have them. Waiting for room would let a client that
    /// never reads hold its connection with requests that wait (a connection is closed
    /// for not reading only once an answer fills its socket), and the room frees only
    /// as the clients holding it read or are cut off.
    fn reserve(&self, bytes: usize) -> Result<OwnedSemaphorePermit, ApiError> {
        let budget = self.limits.max_held_answer_bytes;
        let n = u32::try_from(bytes).ok().filter(|&n| n as usize <= budget).ok_or_else(|| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the answer could take {} KB, over the {} KB this server holds of long answers at once; ask for fewer plies",
                    bytes.div_ceil(1 << 10),
                    budget >> 10
                ),
            )
        })?;
        self.held.clone().try_acquire_many_owned(n).map_err(|_| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the server is busy: it holds {} MB of long answers, its limit, for clients that have not taken them yet; try again, or ask for fewer plies",
                    budget >> 20
                ),
            )
        })
    }

    /// `body`, made under `reserved` bytes of the budget of long answers, as a body that
    /// keeps its bytes counted until it is dropped (written to the client, or its
    /// connection closed): the bytes reserved beyond its length are given back, and
    /// any it takes beyond them are taken as [`App::reserve`] does.
    fn held(&self, body: Vec<u8>, mut reserved: OwnedSemaphorePermit) -> Result<Body, ApiError> {
        let len = body.len();
        let have = reserved.num_permits();
        if len < have {
            // Keep `len` permits; the rest go back when `reserved` is replaced.
            if let Some(kept) = reserved.split(len) {
                reserved = kept;
            }
        } else if len > have {
            reserved.merge(self.reserve(len - have)?);
        }
        Ok(Body::from(bytes::Bytes::from_owner(Held { body, _permit: reserved })))
    }

    /// A cacheable JSON answer: immutable for this database, with its ETag.
    fn cacheable(&self, body: impl Into<Body>) -> Response {
        let mut r = json(StatusCode::OK, body);
        let h = r.headers_mut();
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400"));
        h.insert(header::ETAG, self.etag.clone());
        r
    }

    /// 304 when the request's `If-None-Match` names this database's ETag (or `*`).
    fn not_modified(&self, headers: &HeaderMap) -> Option<Response> {
        let tags = headers.get(header::IF_NONE_MATCH)?.to_str().ok()?;
        let ours = self.etag.to_str().ok()?;
        let hit = tags.split(',').map(|t| t.trim().trim_start_matches("W/")).any(|t| t == ours || t == "*");
        hit.then(|| {
            let mut r = StatusCode::NOT_MODIFIED.into_response();
            r.headers_mut().insert(header::ETAG, self.etag.clone());
            r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400"));
            r
        })
    }
}

fn json(status: StatusCode, body: impl Into<Body>) -> Response {
    let mut r = (status, body.into()).into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// The bytes of a long answer and its share of the budget of long answers, given back
/// when the bytes are dropped.
struct Held {
    body: Vec<u8>,
    _permit: OwnedSemaphorePermit,
}

impl AsRef<[u8]> for Held {
    fn as_ref(&self) -> &[u8] {
        &self.body
    }
}

/// The most bytes the answer of `/line` for `plies` plies takes on a board of `squares`
/// squares: the position object (at most 24 moves, under 16 KiB) and a step a ply (two
/// boards and about 230 bytes of names and values: 277 bytes a ply measured on 5x5).
pub fn line_bytes_at_most(squares: u32, plies: u32) -> usize {
    (16 << 10) + plies as usize * (256 + 4 * squares as usize)
}

fn to_json<T: Serialize>(v: &T) -> Result<String, Error> {
    serde_json::to_string(v).map_err(|e| Error::InvalidArgument(format!("the answer could not be written: {e}")))
}

/// The parameters of a request's query string, percent-decoded, each named once and
/// each one the endpoint takes (`allowed`).
#[derive(Debug)]
struct Params(Vec<(String, String)>);

impl Params {
    fn parse(uri: &Uri, allowed: &[&str], max_bytes: usize) -> Result<Params, ApiError> {
        let query = uri.query().unwrap_or("");
        if query.len() > max_bytes {
            return Err(ApiError::new(
                StatusCode::URI_TOO_LONG,
                format!(
                    "the query string is {} bytes, over the {max_bytes} this server reads (a board and its previous board take about 70, a game of 1,000 moves about 11,000)",
                    query.len()
                ),
            ));
        }
        let takes = match allowed {
            [] => "no parameters".to_string(),
            _ => allowed.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", "),
        };
        let unknown = |k: &str| format!("unknown parameter `{k}`; this endpoint takes {takes}");
        let out = query_string::parameters(query, allowed, unknown).map_err(ApiError::bad)?;
        Ok(Params(out))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// `board` (required) and `prev`, owned, for a probe thread.
    fn board_and_prev(&self) -> Result<(String, Option<String>), ApiError> {
        let board = self.get("board").ok_or_else(|| {
            ApiError::bad(
                "the parameter `board` is missing: give a board of 25 digits, e.g. board=22220-00000-00300-00000-11110",
            )
        })?;
        Ok((board.to_string(), self.get("prev").map(str::to_string)))
    }

    /// `moves`: the moves played from the board, comma separated as `query --play`
    /// takes them (none when absent or empty), at most [`MAX_LINE_PLIES`].
    fn moves(&self) -> Result<Vec<String>, ApiError> {
        split_moves("`moves`", self.get("moves").unwrap_or("")).map_err(|e| ApiError::bad(e.to_string()))
    }

    /// A whole number parameter in `range`, or `default`.
    fn number(&self, name: &str, range: std::ops::RangeInclusive<u64>, default: u64) -> Result<u64, ApiError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => match v.parse::<u64>() {
                Ok(n) if range.contains(&n) => Ok(n),
                _ => Err(ApiError::bad(format!(
                    "`{name}` must be a whole number from {} to {}, not `{}`",
                    range.start(),
                    range.end(),
                    crate::shown_input(v, v.len())
                ))),
            },
        }
    }
}

/// `GET /api/v1/position?board=B[&prev=P][&moves=M]`: what `ostledb query --json
/// [--play M]` prints.
async fn position(State(app): Shared, uri: Uri, headers: HeaderMap) -> Result<Response, ApiError> {
    let p = Params::parse(&uri, &["board", "prev", "moves"], app.limits.max_query_bytes)?;
    let (board, prev) = p.board_and_prev()?;
    let moves = p.moves()?;
    if let Some(r) = app.not_modified(&headers) {
        return Ok(r);
    }
    let body = app.probe(move |db| to_json(&db.answer(&board, prev.as_deref(), "prev", &moves, None)?)).await?;
    Ok(app.cacheable(body))
}

/// `GET /api/v1/line?board=B[&prev=P][&moves=M][&max_plies=N]`: the position and its
/// principal variation, as `ostledb query --json [--play M] --line --max-plies N`.
async fn line(State(app): Shared, uri: Uri, headers: HeaderMap) -> Result<Response, ApiError> {
    let p = Params::parse(&uri, &["board", "prev", "moves", "max_plies"], app.limits.max_query_bytes)?;
    let most = app.limits.max_line_plies.min(MAX_LINE_PLIES);
    let plies = p.number("max_plies", 1..=most as u64, DEFAULT_LINE_PLIES as u64)? as u32;
    let (board, prev) = p.board_and_prev()?;
    let moves = p.moves()?;
    if let Some(r) = app.not_modified(&headers) {
        return Ok(r);
    }
    // A line's answer grows with `max_plies` (277 KB for 1,000 on 5x5): its bytes are
    // counted from before it is made until its client has taken them, so that clients
    // that ask for long lines and do not read them hold a bounded amount between them.
    let most = line_bytes_at_most(app.db.geometry().squares(), plies);
    let reserved = app.reserve(most)?;
    let body = app
        .probe(move |db| {
            // Written into room for the most it takes: a growing buffer would double
            // (a line of 277 KB in a buffer of 512 KiB) and copy as it goes.
            let mut out = Vec::with_capacity(most);
            serde_json::to_writer(&mut out, &db.answer(&board, prev.as_deref(), "prev", &moves, Some(plies))?)
                .map_err(|e| Error::InvalidArgument(format!("the answer could not be written: {e}")))?;
            out.shrink_to_fit();
            Ok(out)
        })
        .await?;
    Ok(app.cacheable(app.held(body, reserved)?))
}

/// `GET /?board=...`: the explorer's page, rendered for the game the URL holds
/// ([`crate::serve::page`]): readable and playable by links without JavaScript. Its query
/// string may hold a game of up to [`page::MAX_GAME_PLIES`] moves, bounded by the head's
/// size rather than by `max_query_bytes`.
/// The page carries an ETag of its content, so a browser revalidates it cheaply.
async fn page(State(app): Shared, uri: Uri, headers: HeaderMap) -> Result<Response, ApiError> {
    let query = uri.query().unwrap_or("").to_string();
    let (status, html) = app.probe(move |db| Ok(page::render(db, &query))).await?;
    let tag = format!("\"{:016x}\"", crate::checksum(html.as_bytes()));
    let tag = HeaderValue::from_str(&tag).expect("ASCII");
    let hit = status == 200 && headers.get(header::IF_NONE_MATCH).is_some_and(|v| v.as_bytes() == tag.as_bytes());
    let mut r = if hit {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (StatusCode::from_u16(status).unwrap_or(StatusCode::OK), html).into_response()
    };
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(header::ETAG, tag);
    Ok(r)
}

/// The answer of `/api/v1/play`.
#[derive(Serialize)]
struct Played {
    level: &'static str,
    seed: u64,
    #[serde(rename = "move")]
    mv: MoveLine,
}

/// `GET /api/v1/play?board=B[&prev=P][&moves=M][&level=L][&seed=S]`: the computer's
/// move. Without a seed one is drawn (and returned); with one the answer is fixed and
/// cacheable. A seed is at most [`MAX_SEED`], so that a JavaScript client reads it back
/// exactly.
async fn play(State(app): Shared, uri: Uri, headers: HeaderMap) -> Result<Response, ApiError> {
    let p = Params::parse(&uri, &["board", "prev", "moves", "level", "seed"], app.limits.max_query_bytes)?;
    let level = Level::parse(p.get("level").unwrap_or("perfect")).map_err(|e| app.error(e))?;
    let seed = match p.get("seed") {
        Some(s) => Some(parse_seed(s)?),
        None => None,
    };
    let fixed = seed.is_some();
    let seed = seed.unwrap_or_else(fresh_seed);
    let (board, prev) = p.board_and_prev()?;
    let moves = p.moves()?;
    if fixed && let Some(r) = app.not_modified(&headers) {
        return Ok(r);
    }
    let body = app
        .probe(move |db| {
            let a = db.answer(&board, prev.as_deref(), "prev", &moves, None)?.analysis;
            let mv = choose_move(&a, level, seed)
                .cloned()
                .ok_or_else(|| Error::InvalidArgument(format!("{} has no allowed move", a.board)))?;
            to_json(&Played { level: level.name(), seed, mv })
        })
        .await?;
    if fixed {
        return Ok(app.cacheable(body));
    }
    let mut r = json(StatusCode::OK, body);
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(r)
}

/// The `seed` of `/play`: a whole number from 0 to [`MAX_SEED`].
fn parse_seed(s: &str) -> Result<u64, ApiError> {
    match s.parse::<u64>() {
        Ok(n) if n <= MAX_SEED => Ok(n),
        _ => Err(ApiError::bad(format!(
            "`seed` must be a whole number from 0 to {MAX_SEED} (2^53 - 1, the largest integer a JavaScript client reads exactly), not `{}`",
            crate::shown_input(s, s.len())
        ))),
    }
}

/// A seed for a request that gave none: the clock and a counter, mixed, and kept to
/// [`MAX_SEED`] (its low 53 bits).
fn fresh_seed() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    (t ^ COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15)) & MAX_SEED
}

/// `GET /api/v1/review?board=B[&prev=P]&moves=M`: the game of moves `M` played from `B`
/// reviewed ply by ply, as `ostledb review --json` prints it. At most
/// [`MAX_LINE_PLIES`] moves; its answer grows with them, so it is counted among the
/// long answers as `/line`'s is.
async fn review(State(app): Shared, uri: Uri, headers: HeaderMap) -> Result<Response, ApiError> {
    let p = Params::parse(&uri, &["board", "prev", "moves"], app.limits.max_query_bytes)?;
    let (board, prev) = p.board_and_prev()?;
    if p.get("moves").is_none() {
        return Err(ApiError::bad(
            "the parameter `moves` is missing: give the moves played from the board, comma separated, e.g. moves=c1-up,hole-left",
        ));
    }
    let moves = p.moves()?;
    if let Some(r) = app.not_modified(&headers) {
        return Ok(r);
    }
    let most = review_bytes_at_most(app.db.geometry().squares(), moves.len() as u32);
    let reserved = app.reserve(most)?;
    let body = app
        .probe(move |db| {
            let mut out = Vec::with_capacity(most);
            serde_json::to_writer(&mut out, &db.review_text(&board, prev.as_deref(), "prev", &moves)?)
                .map_err(|e| Error::InvalidArgument(format!("the answer could not be written: {e}")))?;
            out.shrink_to_fit();
            Ok(out)
        })
        .await?;
    Ok(app.cacheable(app.held(body, reserved)?))
}

/// The most bytes the answer of `/review` for `plies` plies takes on a board of
/// `squares` squares: a ply holds three boards and two moves (about 900 bytes on 5x5).
pub fn review_bytes_at_most(squares: u32, plies: u32) -> usize {
    (1 << 10) + plies as usize * (1024 + 8 * squares as usize)
}

#[derive(Serialize)]
struct PhaseCounts {
    phase: String,
    player: u8,
    opponent: u8,
    positions: u64,
    win: u64,
    loss: u64,
    draw: u64,
    value_bytes: u64,
}

#[derive(Serialize)]
struct Stats {
    api: &'static str,
    ostledb: &'static str,
    identity: String,
    side: u8,
    start_pieces: u8,
    max_pieces: u8,
    format: u32,
    generation: u64,
    writer: String,
    backend: String,
    phases: Vec<PhaseCounts>,
    bfs_stored: bool,
}

/// `GET /api/v1/stats`: what the database holds, per phase.
async fn stats(State(app): Shared, uri: Uri, headers: HeaderMap) -> Result<Response, ApiError> {
    Params::parse(&uri, &[], app.limits.max_query_bytes)?;
    if let Some(r) = app.not_modified(&headers) {
        return Ok(r);
    }
    let bfs_stored = app.probe(|db| db.has_search()).await?;
    let m = app.db.meta();
    let s = Stats {
        api: VERSION,
        ostledb: env!("CARGO_PKG_VERSION"),
        identity: app.identity.clone(),
        side: m.side,
        start_pieces: m.start_pieces,
        max_pieces: m.max_pieces,
        format: m.format,
        generation: m.generation,
        writer: m.writer.clone(),
        backend: app.db.backend().name().to_string(),
        phases: m
            .phases
            .iter()
            .map(|p| PhaseCounts {
                phase: p.phase().to_string(),
                player: p.player,
                opponent: p.opponent,
                positions: p.positions,
                win: p.win,
                loss: p.loss,
                draw: p.draw,
                value_bytes: p.value_bytes,
            })
            .collect(),
        bfs_stored,
    };
    Ok(app.cacheable(to_json(&s).map_err(|e| app.error(e))?))
}

#[derive(Serialize)]
struct Health {
    status: &'static str,
    identity: String,
    uptime_seconds: u64,
    requests: u64,
    client_errors: u64,
    server_errors: u64,
    probes_in_use: usize,
}

/// `GET /api/v1/health`: the server is up; its counters.
async fn health(State(app): Shared, uri: Uri) -> Result<Response, ApiError> {
    Params::parse(&uri, &[], app.limits.max_query_bytes)?;
    let h = Health {
        status: "ok",
        identity: app.identity.clone(),
        uptime_seconds: app.started.elapsed().as_secs(),
        requests: app.requests.load(Ordering::Relaxed),
        client_errors: app.client_errors.load(Ordering::Relaxed),
        server_errors: app.server_errors.load(Ordering::Relaxed),
        probes_in_use: app.limits.max_probes.max(1) - app.probes.available_permits(),
    };
    let mut r = json(StatusCode::OK, to_json(&h).map_err(|e| app.error(e))?);
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(r)
}

async fn not_found(uri: Uri) -> ApiError {
    let path = uri.path();
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!(
            "no such path: {}; the API is /api/{VERSION}/position, line, play, review, stats and health (schema/API.md), the explorer is /",
            crate::shown_input(path, path.len())
        ),
    )
}

async fn method_not_allowed(method: Method) -> Response {
    let mut r = ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("{method} is not served: the server is read-only and answers GET (and HEAD) only"),
    )
    .into_response();
    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    r
}

/// 413 for a `GET` or `HEAD` request that comes with a body (a `Content-Length` over 0,
/// or any `Transfer-Encoding`): the API takes its parameters in the query string and
/// reads no body, so one is a client's mistake, said as such rather than ignored. The
/// body is never read: hyper closes the connection after the answer, whatever its size.
/// (Other methods get 405 whatever they carry.)
fn body_refused(req: &Request) -> Option<ApiError> {
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        return None;
    }
    let h = req.headers();
    let length = h.get(header::CONTENT_LENGTH).map(|v| v.to_str().unwrap_or("?").trim());
    let chunked = h.contains_key(header::TRANSFER_ENCODING);
    let size = match length {
        Some("0") | None if !chunked => return None,
        Some(n) if !chunked => format!("a body of {} bytes", crate::shown_input(n, n.len())),
        _ => "a body".to_string(),
    };
    Some(ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "{} {} came with {size}: this server reads no request body (the API takes its parameters in the query string)",
            req.method(),
            crate::shown_input(req.uri().path(), req.uri().path().len())
        ),
    ))
}

/// Count every request by the class of its status, add `X-Content-Type-Options`, and
/// log it when asked.
async fn count(State(app): Shared, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let line = app.limits.log_requests.then(|| format!("{} {}", req.method(), req.uri()));
    let mut r = match body_refused(&req) {
        Some(e) => e.into_response(),
        None => next.run(req).await,
    };
    app.requests.fetch_add(1, Ordering::Relaxed);
    if r.status().is_client_error() {
        app.client_errors.fetch_add(1, Ordering::Relaxed);
    } else if r.status().is_server_error() {
        app.server_errors.fetch_add(1, Ordering::Relaxed);
    }
    r.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if let Some(line) = line {
        eprintln!("{line} {} {} us", r.status().as_u16(), start.elapsed().as_micros());
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The committed 3x3 database of format v2.
    fn golden() -> Arc<Database> {
        Arc::new(Database::open(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/golden-v2")).unwrap())
    }

    #[tokio::test]
    async fn a_full_probe_queue_gets_503_a_slow_probe_504_and_a_panic_500() {
        let limits = Limits {
            max_probes: 1,
            queue_timeout: Duration::from_millis(50),
            probe_timeout: Duration::from_millis(50),
            ..Limits::default()
        };
        let app = Arc::new(App::new(golden(), &limits));
        let held = app.probes.clone().acquire_owned().await.unwrap();
        let e = app.probe(|_| Ok(())).await.unwrap_err();
        assert_eq!(e.status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(e.message.contains("busy"), "{}", e.message);
        assert_eq!(e.into_response().headers()[header::RETRY_AFTER], "1");
        drop(held);
        let e = app
            .probe(|_| {
                std::thread::sleep(Duration::from_millis(300));
                Ok(())
            })
            .await
            .unwrap_err();
        assert_eq!(e.status, StatusCode::GATEWAY_TIMEOUT);
        // The slow probe keeps its slot to its end: the bound on probes holds.
        assert_eq!(app.probes.available_permits(), 0);
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(app.probes.available_permits(), 1);
        // (A panic prints its backtrace, which may take longer than 50 ms.)
        let app = Arc::new(App::new(golden(), &Limits { max_probes: 1, ..Limits::default() }));
        let e = app.probe(|_| -> Result<(), Error> { panic!("a bug") }).await.unwrap_err();
        assert_eq!(e.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(app.probe(|db| Ok(db.geometry().side())).await.unwrap(), 3);
    }

    #[test]
    fn an_origin_is_a_scheme_a_host_and_a_port_and_nothing_else() {
        for good in ["https://example.org", "http://localhost:3000", "http://127.0.0.1:8080", "http://[::1]:9000"] {
            assert!(check_origin(good).is_ok(), "{good}");
        }
        for bad in
            ["example.org", "ftp://x", "https://example.org/", "https://ex ample.org", "http://x:99999", "http://"]
        {
            let e = check_origin(bad).unwrap_err().to_string();
            assert!(e.starts_with("--cors"), "{bad}: {e}");
        }
    }

    #[test]
    fn seeds_are_within_2_to_the_53_given_or_drawn() {
        assert_eq!(parse_seed("9007199254740991").unwrap(), MAX_SEED);
        assert_eq!(parse_seed("0").unwrap(), 0);
        for bad in ["9007199254740992", "2098135176025516879", "18446744073709551616", "-1", "x"] {
            let e = parse_seed(bad).unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST);
            assert!(e.message.contains("from 0 to 9007199254740991 (2^53 - 1"), "{bad}: {}", e.message);
        }
        assert!((0..10_000).all(|_| fresh_seed() <= MAX_SEED));
    }

    #[test]
    fn parameters_are_known_named_once_and_bounded() {
        let uri = |q: &str| format!("/x?{q}").parse::<Uri>().unwrap();
        let p = Params::parse(&uri("board=1&prev=2"), &["board", "prev"], 100).unwrap();
        assert_eq!((p.get("board"), p.get("prev")), (Some("1"), Some("2")));
        assert!(Params::parse(&uri("baord=1"), &["board"], 100).unwrap_err().message.contains("unknown parameter"));
        assert!(Params::parse(&uri("board=1&board=2"), &["board"], 100).unwrap_err().message.contains("twice"));
        assert_eq!(
            Params::parse(&uri(&"b".repeat(101)), &["board"], 100).unwrap_err().status,
            StatusCode::URI_TOO_LONG
        );
    }
}
