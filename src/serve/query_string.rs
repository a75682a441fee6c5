//! The query strings of the server's URLs, for the API and the explorer's page alike:
//! percent-decoding, and the parameters, each one the URL takes and each named once.

/// Percent-decode one part of a query string (`+` is a space), as UTF-8.
pub(crate) fn decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => out.push(b),
                    None => return Err("a `%` in the query string is not followed by two hex digits".into()),
                }
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|e| {
        format!(
            "the query string is not UTF-8 once decoded (byte {} is not valid); a board is 25 digits",
            e.utf8_error().valid_up_to() + 1
        )
    })
}

/// The parameters of `query` (the part of a URL after `?`), percent-decoded, in order.
/// A parameter not in `allowed` is an error that `unknown` words, given the name as it
/// may be shown; a parameter given twice is an error.
pub(crate) fn parameters(
    query: &str,
    allowed: &[&str],
    unknown: impl Fn(&str) -> String,
) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        let k = decode(k)?;
        let v = decode(v)?;
        if !allowed.contains(&k.as_str()) {
            return Err(unknown(&crate::shown_input(&k, k.len())));
        }
        if out.iter().any(|(seen, _)| *seen == k) {
            return Err(format!("the parameter `{k}` is given twice"));
        }
        out.push((k, v));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding_takes_escapes_and_plus_and_refuses_bad_ones() {
        assert_eq!(decode("22220-00000%2D00300+x").unwrap(), "22220-00000-00300 x");
        assert!(decode("%G1").is_err());
        assert!(decode("%2").is_err());
        let e = decode("%FF%FE").unwrap_err();
        assert!(e.contains("not UTF-8"), "{e}");
    }

    #[test]
    fn parameters_are_decoded_known_and_given_once() {
        let unknown = |k: &str| format!("unknown `{k}`");
        let got = parameters("board=1%2D2&&prev=+", &["board", "prev"], unknown).unwrap();
        assert_eq!(got, vec![("board".into(), "1-2".into()), ("prev".into(), " ".into())]);
        assert_eq!(parameters("x=1", &["board"], unknown).unwrap_err(), "unknown `x`");
        assert!(parameters("board=1&board=2", &["board"], unknown).unwrap_err().contains("given twice"));
        assert!(parameters("board=%FF", &["board"], unknown).unwrap_err().contains("not UTF-8"));
    }
}
