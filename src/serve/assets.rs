//! The web explorer's script and style, embedded in the binary (plain CSS and JavaScript,
//! no build step); the page itself is rendered per URL ([`crate::serve::page`]). Each is
//! served with an ETag of its content, so a browser revalidates it cheaply.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

const SCRIPT: &str = include_str!("assets/explorer.js");
const STYLE: &str = include_str!("assets/explorer.css");

/// An embedded file with its content type, revalidated by its ETag.
fn asset(headers: &HeaderMap, body: &'static str, content_type: &'static str) -> Response {
    let tag = format!("\"{:016x}\"", crate::checksum(body.as_bytes()));
    let tag = HeaderValue::from_str(&tag).expect("ASCII");
    let hit = headers.get(header::IF_NONE_MATCH).is_some_and(|v| v.as_bytes() == tag.as_bytes());
    let mut r = if hit { StatusCode::NOT_MODIFIED.into_response() } else { body.into_response() };
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(header::ETAG, tag);
    r
}

/// `GET /explorer.js`.
pub async fn script(headers: HeaderMap) -> Response {
    asset(&headers, SCRIPT, "text/javascript; charset=utf-8")
}

/// `GET /explorer.css`.
pub async fn style(headers: HeaderMap) -> Response {
    asset(&headers, STYLE, "text/css; charset=utf-8")
}
