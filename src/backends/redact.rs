//! Backend addresses fit for logs, readiness reasons and `Debug` output: credentials
//! removed from a `scheme://user:password@host/path` URL.
//!
//! A leaf shared by every backend that takes a URL (the Redis and NATS buses, the Redis
//! stores); imports nothing.

/// A broker address fit for logs and readiness reasons: credentials removed.
pub(crate) fn redacted_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let authority_end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(authority_end);
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_logs() {
        assert_eq!(
            redacted_url("redis://user:secret@db.example:6379/2"),
            "redis://db.example:6379/2"
        );
        assert_eq!(
            redacted_url("nats://127.0.0.1:4222"),
            "nats://127.0.0.1:4222"
        );
        assert_eq!(redacted_url("redis://:pw@h"), "redis://h");
    }
}
