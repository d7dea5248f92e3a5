//! Where a token may come from: the `Authorization` header (`Bearer`, or `DPoP` with a
//! proof), and nowhere else.

use http::{HeaderMap, Uri, header};

use super::challenge::{Rejection, Scheme};

/// The bearer token of a request, or why there is none.
#[cfg(test)]
pub(crate) fn token<'a>(headers: &'a HeaderMap, uri: &Uri) -> Result<&'a str, Rejection> {
    match credential(headers, uri)? {
        (Scheme::Bearer, token) => Ok(token),
        (Scheme::Dpop, _) => Err(Rejection::missing()),
    }
}

/// The access token of a request and the scheme it came in, or why there is none.
pub(crate) fn credential<'a>(
    headers: &'a HeaderMap,
    uri: &Uri,
) -> Result<(Scheme, &'a str), Rejection> {
    if query_has_token(uri) {
        return Err(Rejection::invalid_request(
            "Access tokens are not accepted in the query string; send them in the Authorization header",
        ));
    }
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(Rejection::missing());
    };
    if values.next().is_some() {
        return Err(Rejection::invalid_request(
            "The Authorization header is repeated",
        ));
    }
    let value = value
        .to_str()
        .map_err(|_| Rejection::invalid_request("The Authorization header is not visible ASCII"))?;
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    let scheme = if scheme.eq_ignore_ascii_case("bearer") {
        Scheme::Bearer
    } else if scheme.eq_ignore_ascii_case("dpop") {
        Scheme::Dpop
    } else {
        // Another scheme (Basic, …) carries no access token.
        return Err(Rejection::missing());
    };
    let token = rest.trim_matches(' ');
    if token.is_empty() || !token.bytes().all(is_token68) {
        let form = match scheme {
            Scheme::Bearer => "The Authorization header is not of the form `Bearer <token>`",
            Scheme::Dpop => "The Authorization header is not of the form `DPoP <token>`",
        };
        return Err(Rejection::invalid_request(form).in_scheme(scheme));
    }
    Ok((scheme, token))
}

/// RFC 6750 §2.1 `b64token` characters.
fn is_token68(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

/// Whether the query carries an `access_token` parameter (in any percent-encoding).
fn query_has_token(uri: &Uri) -> bool {
    let Some(query) = uri.query() else {
        return false;
    };
    query.split('&').any(|pair| {
        let key = pair.split('=').next().unwrap_or("");
        percent_encoding::percent_decode_str(&key.replace('+', " "))
            .decode_utf8_lossy()
            .trim()
            == "access_token"
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn with_auth(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn uri(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn reads_bearer_tokens_only_from_the_header() {
        let plain = uri("/mcp");
        assert_eq!(
            token(&with_auth(&["Bearer abc.def-_~+/="]), &plain).unwrap(),
            "abc.def-_~+/="
        );
        assert_eq!(token(&with_auth(&["bearer  abc"]), &plain).unwrap(), "abc");
        assert!(token(&with_auth(&[]), &plain).unwrap_err().is_missing());
        assert!(
            token(&with_auth(&["Basic Zm9vOmJhcg=="]), &plain)
                .unwrap_err()
                .is_missing()
        );
        for bad in ["Bearer", "Bearer ", "Bearer a b", "Bearer a,b"] {
            let e = token(&with_auth(&[bad]), &plain).unwrap_err();
            assert!(!e.is_missing(), "{bad:?}");
        }
        assert!(
            !token(&with_auth(&["Bearer a", "Bearer b"]), &plain)
                .unwrap_err()
                .is_missing()
        );
    }

    #[test]
    fn refuses_query_tokens() {
        let h = with_auth(&["Bearer abc"]);
        for q in [
            "/mcp?access_token=x",
            "/mcp?a=1&access_token=x",
            "/mcp?access%5Ftoken=x",
        ] {
            assert!(token(&h, &uri(q)).is_err(), "{q}");
        }
        assert!(token(&h, &uri("/mcp?token=x")).is_ok());
    }
}
