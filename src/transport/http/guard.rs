//! DNS-rebinding protection: the `Host` and `Origin` allowlists (403 when refused).

use http::HeaderValue;

/// Which `Host` or `Origin` values are accepted.
///
/// An entry with a scheme (`https://app.example.com`, or with a port) must match the whole
/// origin; an entry without one (`app.example.com`) matches that host name with any scheme
/// and port. `*` accepts anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AllowList {
    any: bool,
    /// Entries without a scheme: host names, lower-case.
    names: Vec<String>,
    /// Entries with a scheme: whole origins, lower-case.
    origins: Vec<String>,
}

/// Host names a local server answers to.
pub(crate) const LOCALHOST_NAMES: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

impl AllowList {
    pub(crate) fn any() -> Self {
        AllowList {
            any: true,
            names: Vec::new(),
            origins: Vec::new(),
        }
    }

    pub(crate) fn localhost() -> Self {
        Self::from_entries(LOCALHOST_NAMES.iter().map(|s| s.to_string()))
    }

    pub(crate) fn from_entries(entries: impl IntoIterator<Item = String>) -> Self {
        let (origins, names): (Vec<String>, Vec<String>) = entries
            .into_iter()
            .map(|e| e.trim().trim_end_matches('/').to_ascii_lowercase())
            .filter(|e| !e.is_empty())
            .partition(|e| e.contains("://"));
        AllowList {
            any: names.iter().any(|e| e == "*"),
            names,
            origins,
        }
    }

    /// `hostname` may be in any case.
    fn allows_host(&self, hostname: &[u8]) -> bool {
        self.any || any_equal(&self.names, hostname)
    }

    /// `origin` and `hostname` may be in any case.
    fn allows_origin(&self, origin: &[u8], hostname: &[u8]) -> bool {
        self.allows_host(hostname) || any_equal(&self.origins, origin)
    }
}

/// Whether `text` is one of `entries` (lower-case), ignoring ASCII case.
fn any_equal(entries: &[String], text: &[u8]) -> bool {
    // Most hosts are sent in lower case: compared as bytes first, the common case needs no
    // case folding.
    entries.iter().any(|e| e.as_bytes() == text)
        || entries
            .iter()
            .any(|e| e.as_bytes().eq_ignore_ascii_case(text))
}

/// The host name of an authority (`host[:port]`, `[v6]:port`), as written (compare it
/// ignoring ASCII case).
fn hostname(authority: &[u8]) -> &[u8] {
    // Header values hold no control characters but tabs, so ASCII whitespace is all there
    // is to trim.
    let a = authority.trim_ascii();
    if a.first() == Some(&b'[') {
        return match a.iter().position(|&b| b == b']') {
            Some(end) => &a[..=end],
            None => a,
        };
    }
    // A port: the digits after the last `:` (none is a port too, as in `host:`).
    let digits = a.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    match a.len() - digits {
        colon @ 1.. if a[colon - 1] == b':' => &a[..colon - 1],
        _ => a,
    }
}

/// Checks `Host` and `Origin` (the first value of each); `Err` carries the reason for the 403.
///
/// `authority` is the authority of the request target, which stands for `Host` when the
/// header is absent: HTTP/2 carries it as `:authority` instead.
pub(crate) fn check(
    host: Option<&HeaderValue>,
    origin: Option<&HeaderValue>,
    authority: Option<&str>,
    hosts: &AllowList,
    origins: &AllowList,
) -> Result<(), String> {
    // Compared as bytes; an allowed value must be ASCII (a header value holds no control
    // characters but tabs, so that is `to_str`'s rule), and only a refused one is read as
    // text, for its message.
    if !hosts.any {
        let unreadable = || "missing or unreadable Host header".to_owned();
        let bytes = match host {
            Some(h) => h.as_bytes(),
            None => authority.ok_or_else(unreadable)?.as_bytes(),
        };
        if !bytes.is_ascii() || !hosts.allows_host(hostname(bytes)) {
            let text = match host {
                Some(h) => h.to_str().ok(),
                None => authority,
            };
            return Err(format!(
                "Host {:?} is not allowed",
                text.ok_or_else(unreadable)?
            ));
        }
    }
    if let Some(value) = origin {
        let origin = value.as_bytes().trim_ascii();
        let authority = origin
            .windows(3)
            .position(|w| w == b"://")
            .map_or(&b""[..], |at| &origin[at + 3..]);
        if authority.is_empty()
            || !origin.is_ascii()
            || !origins.allows_origin(origin, hostname(authority))
        {
            let origin = value
                .to_str()
                .map_err(|_| "unreadable Origin header".to_owned())?
                .trim_ascii();
            return Err(format!(
                "Origin {:?} is not allowed",
                origin.to_ascii_lowercase()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderMap;
    use http::header::{HOST, ORIGIN};

    fn check(
        headers: &HeaderMap,
        authority: Option<&str>,
        hosts: &AllowList,
        origins: &AllowList,
    ) -> Result<(), String> {
        super::check(
            headers.get(HOST),
            headers.get(ORIGIN),
            authority,
            hosts,
            origins,
        )
    }

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        h
    }

    fn check_h(headers: &HeaderMap, hosts: &AllowList, origins: &AllowList) -> Result<(), String> {
        check(headers, None, hosts, origins)
    }

    #[test]
    fn http2_authority_stands_for_host() {
        let (h, o) = (AllowList::localhost(), AllowList::localhost());
        assert!(check(&HeaderMap::new(), Some("127.0.0.1:8080"), &h, &o).is_ok());
        assert!(check(&HeaderMap::new(), Some("evil.example.com"), &h, &o).is_err());
        let with_host = headers("evil.example.com", None);
        assert!(
            check(&with_host, Some("localhost"), &h, &o).is_err(),
            "Host wins"
        );
    }

    #[test]
    fn localhost_defaults() {
        let (h, o) = (AllowList::localhost(), AllowList::localhost());
        assert!(check_h(&headers("localhost:3000", None), &h, &o).is_ok());
        assert!(
            check_h(
                &headers("LocalHost:3000", Some("HTTP://LOCALHOST:3000")),
                &h,
                &o
            )
            .is_ok()
        );
        assert!(
            check_h(
                &headers("127.0.0.1:8080", Some("http://127.0.0.1:8080")),
                &h,
                &o
            )
            .is_ok()
        );
        assert!(check_h(&headers("[::1]:9", Some("http://[::1]:9")), &h, &o).is_ok());
        assert!(
            check_h(
                &headers("evil.example.com", Some("http://evil.example.com")),
                &h,
                &o
            )
            .is_err()
        );
        assert!(
            check_h(
                &headers("localhost", Some("http://evil.example.com")),
                &h,
                &o
            )
            .is_err()
        );
        assert!(check_h(&headers("localhost", Some("null")), &h, &o).is_err());
        assert!(check_h(&HeaderMap::new(), &h, &o).is_err());
    }

    #[test]
    fn host_names_without_ports() {
        for (authority, name) in [
            ("localhost", "localhost"),
            ("localhost:3000", "localhost"),
            (" localhost:3000\t", "localhost"),
            ("localhost:", "localhost"),
            ("a:b:80", "a:b"),
            ("a:8x0", "a:8x0"),
            ("a:80:", "a:80"),
            ("host80", "host80"),
            ("8080", "8080"),
            (":80", ""),
            ("[::1]:9", "[::1]"),
            ("[::1]", "[::1]"),
            ("[::1", "[::1"),
            ("", ""),
        ] {
            assert_eq!(
                hostname(authority.as_bytes()),
                name.as_bytes(),
                "{authority:?}"
            );
        }
    }

    #[test]
    fn unreadable_values_are_refused_and_named() {
        let (h, o) = (AllowList::localhost(), AllowList::localhost());
        let value = |b: &[u8]| HeaderValue::from_bytes(b).unwrap();
        let check_v = |host: Option<HeaderValue>, origin: Option<HeaderValue>| {
            super::check(host.as_ref(), origin.as_ref(), None, &h, &o)
        };
        // Bytes past ASCII after an allowed name (the old `to_str` refused the whole value).
        for host in [&b"localhost:80\xff"[..], b"[::1]\xe9", b"localhost\x80"] {
            assert_eq!(
                check_v(Some(value(host)), None).unwrap_err(),
                "missing or unreadable Host header"
            );
        }
        assert_eq!(
            check_v(
                Some(value(b"localhost")),
                Some(value(b"http://localhost\xff"))
            )
            .unwrap_err(),
            "unreadable Origin header"
        );
        assert_eq!(
            check_v(Some(value(b"evil.example:1")), None).unwrap_err(),
            "Host \"evil.example:1\" is not allowed"
        );
        assert_eq!(
            check_v(
                Some(value(b"localhost")),
                Some(value(b" HTTP://Evil.example\t"))
            )
            .unwrap_err(),
            "Origin \"http://evil.example\" is not allowed"
        );
        assert!(check_v(Some(value(b"LOCALHOST:1")), Some(value(b"http://[::1]:2"))).is_ok());
    }

    #[test]
    fn configured_origins() {
        let o = AllowList::from_entries([
            "https://app.example.com".to_owned(),
            "tools.example.org".to_owned(),
        ]);
        let h = AllowList::any();
        assert!(check_h(&headers("x", Some("https://app.example.com")), &h, &o).is_ok());
        assert!(check_h(&headers("x", Some("http://app.example.com")), &h, &o).is_err());
        assert!(check_h(&headers("x", Some("https://tools.example.org:444")), &h, &o).is_ok());
        assert!(check_h(&headers("anything", None), &h, &o).is_ok());
    }
}
