//! `_meta` on results and requests, client capabilities and request ids.

use std::sync::Arc;

use serde_json::{Value, json};
use stateless_mcp::protocol::{
    ClientCapabilities, ElicitationCapability, Implementation, LoggingLevel, RequestId,
    RequestMeta, ResultMeta, SERVER_INFO_KEY,
};

use super::{golden, icon, icon_json, parse_meta};
use crate::support::schema::assert_valid;

#[test]
fn result_meta_carries_server_info() {
    let mut info = Implementation::new("golden-server", "1.2.3").with_title("Golden Server");
    info.website_url = Some("https://example.com".into());
    info.icons = Some(vec![icon()]);
    let info_json = json!({"name": "golden-server", "version": "1.2.3", "title": "Golden Server",
                           "websiteUrl": "https://example.com", "icons": [icon_json()]});
    golden("Implementation", &info, &info_json);

    let mut meta = ResultMeta {
        server_info: Some(Arc::new(info)),
        extra: Default::default(),
    };
    assert!(!meta.is_empty());
    meta.extra.insert("com.example/trace".into(), json!("abc"));
    golden(
        "ResultMetaObject",
        &meta,
        &json!({"io.modelcontextprotocol/serverInfo": info_json, "com.example/trace": "abc"}),
    );

    // A serverInfo key left in `extra` never doubles the typed one.
    meta.extra.insert(
        SERVER_INFO_KEY.into(),
        json!({"name": "stale", "version": "0"}),
    );
    let text = serde_json::to_string(&meta).unwrap();
    assert_eq!(text.matches(SERVER_INFO_KEY).count(), 1, "{text}");
    assert!(
        text.contains("golden-server") && !text.contains("stale"),
        "{text}"
    );

    assert!(ResultMeta::default().is_empty());
    let empty = serde_json::to_value(ResultMeta::default()).unwrap();
    assert_eq!(empty, json!({}));
}

/// A `_meta` with every field a request may carry.
fn full_request_meta(progress_token: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "roots": {},
            "extensions": {"io.modelcontextprotocol/ui": {}}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "ExampleClient", "version": "1.0.0"},
        "io.modelcontextprotocol/logLevel": "warning",
        "progressToken": progress_token,
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "tracestate": "rojo=00f067aa0ba902b7",
        "baggage": "userId=alice"
    })
}

#[test]
fn request_meta_parses_every_field() {
    for (token, expected) in [
        (json!(7), RequestId::Number(7)),
        (json!("tok-1"), RequestId::from("tok-1")),
        (json!(9_007_199_254_740_992_i64), RequestId::Number(1 << 53)),
    ] {
        let wire = full_request_meta(token);
        assert_valid("RequestMetaObject", &wire);
        let meta = parse_meta(&json!({"name": "echo", "_meta": wire})).unwrap();
        assert_eq!(meta.protocol_version, "2026-07-28");
        assert_eq!(meta.progress_token, Some(expected));
        assert_eq!(meta.log_level, Some(LoggingLevel::Warning));
        assert_eq!(
            meta.traceparent.as_deref(),
            Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        );
        assert_eq!(meta.tracestate.as_deref(), Some("rojo=00f067aa0ba902b7"));
        assert_eq!(meta.baggage.as_deref(), Some("userId=alice"));
        let info = meta.client_info.as_ref().unwrap();
        assert_eq!(
            (info.name.as_str(), info.version.as_str()),
            ("ExampleClient", "1.0.0")
        );
        let caps = &meta.client_capabilities;
        assert!(caps.supports_form_elicitation() && caps.supports_url_elicitation());
        assert!(caps.sampling.as_ref().unwrap().tools.is_some());
        assert!(caps.roots.is_some());
        // Serializing the parsed value gives back the very same `_meta`.
        let again = serde_json::to_value(&meta).unwrap();
        assert_eq!(again, wire);
        assert_valid("RequestMetaObject", &again);
    }
}

#[test]
fn request_meta_minimal_and_levels() {
    let meta = RequestMeta::new("2026-07-28", ClientCapabilities::default());
    let wire = serde_json::to_value(&meta).unwrap();
    assert_eq!(
        wire,
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}})
    );
    assert_valid("RequestMetaObject", &wire);
    assert_eq!(parse_meta(&json!({"_meta": wire})).unwrap(), meta);

    let levels = [
        (LoggingLevel::Debug, "debug"),
        (LoggingLevel::Info, "info"),
        (LoggingLevel::Notice, "notice"),
        (LoggingLevel::Warning, "warning"),
        (LoggingLevel::Error, "error"),
        (LoggingLevel::Critical, "critical"),
        (LoggingLevel::Alert, "alert"),
        (LoggingLevel::Emergency, "emergency"),
    ];
    for (i, (level, name)) in levels.iter().enumerate() {
        golden("LoggingLevel", level, &json!(name));
        if let Some((next, _)) = levels.get(i + 1) {
            assert!(level < next, "{name} sorts below the next level");
        }
        let mut wire = full_request_meta(json!(1));
        wire["io.modelcontextprotocol/logLevel"] = json!(name);
        assert_eq!(
            parse_meta(&json!({"_meta": wire})).unwrap().log_level,
            Some(*level)
        );
    }
}

#[test]
fn client_capabilities() {
    let form = ClientCapabilities::elicitation_form();
    golden("ClientCapabilities", &form, &json!({"elicitation": {}}));
    golden(
        "ClientCapabilities",
        &ClientCapabilities::sampling(),
        &json!({"sampling": {}}),
    );
    golden(
        "ClientCapabilities",
        &ClientCapabilities::roots(),
        &json!({"roots": {}}),
    );
    let mut url = ClientCapabilities::default();
    let mut e = ElicitationCapability::default();
    e.url = Some(Default::default());
    url.elicitation = Some(e);
    golden(
        "ClientCapabilities",
        &url,
        &json!({"elicitation": {"url": {}}}),
    );
    assert!(!url.supports_form_elicitation() && url.supports_url_elicitation());
}

#[test]
fn request_ids_round_trip() {
    let max = 1_i64 << 53;
    for n in [0, 1, -1, 42, max - 1, max, -max, i64::MAX, i64::MIN] {
        let id = RequestId::Number(n);
        golden("RequestId", &id, &json!(n));
        assert_eq!(serde_json::to_string(&id).unwrap(), n.to_string());
        assert_eq!(id.to_string(), n.to_string());
    }
    // From the wire text, not through a `Value`.
    let parsed: RequestId = serde_json::from_str("9007199254740992").unwrap();
    assert_eq!(parsed, RequestId::Number(9_007_199_254_740_992));
    for s in ["", "abc", "42", "ünïcødé", "with \"quotes\"", "a/b:c"] {
        let id = RequestId::from(s);
        golden("RequestId", &id, &json!(s));
        assert_eq!(id.to_string(), s);
    }
    // A numeric-looking string stays a string.
    assert_eq!(
        serde_json::from_str::<RequestId>("\"42\"").unwrap(),
        RequestId::from("42")
    );
    for bad in ["null", "1.5", "true", "[1]", "{}", "18446744073709551615"] {
        assert!(
            serde_json::from_str::<RequestId>(bad).is_err(),
            "{bad} is not a request id"
        );
    }
}
