//! Which URLs the resource server may fetch keys, metadata and introspection answers from:
//! `https://` always; `http://` only on a loopback host (a local authorization server in
//! development or tests) unless plain HTTP is explicitly allowed. Keys or introspection
//! answers fetched in clear over a network could be replaced by anyone on the path, and a
//! forged key makes every forged token valid.
//!
//! Applied to the configured issuer, JWKS and introspection URLs when the resource server is
//! built, and to the URLs the issuer's discovery document names when it is fetched.

use std::net::IpAddr;

use oauth2::url::{Host, Url};

/// Whether `url`'s host is a loopback address or `localhost` (RFC 6761: `localhost` and
/// `*.localhost` name the loopback interface).
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        None => false,
    }
}

/// Checks that the resource server may talk to `url` (named `what` in the error).
pub(crate) fn check(what: &str, url: &Url, allow_http: bool) -> Result<(), String> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if allow_http || is_loopback(url) => Ok(()),
        "http" => Err(format!(
            "{what} {:?} must be an https URL: plain http is accepted only on a loopback host \
             (localhost, 127.0.0.0/8, ::1) unless explicitly allowed (--auth-allow-http, \
             ResourceServerBuilder::allow_http)",
            url.as_str()
        )),
        other => Err(format!(
            "{what} {:?} must be an https URL, not {other}",
            url.as_str()
        )),
    }
}

/// Like [`check`] for a URL given as text.
pub(crate) fn check_str(what: &str, url: &str, allow_http: bool) -> Result<(), String> {
    let parsed = Url::parse(url).map_err(|e| format!("{what} {url:?} is not a URL: {e}"))?;
    check(what, &parsed, allow_http)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(url: &str, allow_http: bool) -> bool {
        check_str("the issuer", url, allow_http).is_ok()
    }

    #[test]
    fn https_is_always_accepted() {
        assert!(ok("https://auth.example.com", false));
        assert!(ok("https://10.0.0.1:8443/realm", false));
    }

    #[test]
    fn http_only_on_loopback_unless_allowed() {
        for url in [
            "http://127.0.0.1:9000",
            "http://127.1.2.3",
            "http://[::1]:8080/as",
            "http://localhost:8080",
            "http://LOCALHOST.",
            "http://auth.localhost",
        ] {
            assert!(ok(url, false), "{url}");
        }
        for url in [
            "http://auth.example.com",
            "http://10.0.0.1",
            "http://[::ffff:7f00:1]",
            "http://localhost.example.com",
            "http://0.0.0.0",
        ] {
            assert!(!ok(url, false), "{url}");
            assert!(ok(url, true), "{url}");
        }
        let e = check_str("the issuer", "http://auth.example.com", false).unwrap_err();
        assert!(e.contains("must be an https URL"), "{e}");
        assert!(e.contains("--auth-allow-http"), "{e}");
    }

    #[test]
    fn other_schemes_are_refused_even_when_http_is_allowed() {
        assert!(!ok("ftp://auth.example.com", true));
        assert!(!ok("file:///etc/keys", true));
        assert!(check_str("the issuer", "not a url", true).is_err());
    }
}
