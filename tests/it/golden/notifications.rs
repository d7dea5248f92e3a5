//! Progress and log-message notifications.

use serde_json::json;
use stateless_mcp::protocol::{
    LogMessageParams, LoggingLevel, Notification, ProgressParams, RequestId,
};

use super::golden;
use crate::support::schema::assert_valid;

#[test]
fn progress_notifications() {
    for (token, token_json) in [
        (RequestId::from("abc123"), json!("abc123")),
        (RequestId::Number(1 << 53), json!(9_007_199_254_740_992_i64)),
    ] {
        let params = ProgressParams::new(token.clone(), 50.0, Some(100.0), Some("halfway".into()));
        let n = Notification::new("notifications/progress", params.clone());
        let wire = serde_json::to_value(&n).unwrap();
        let expected = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token_json, "progress": 50.0, "total": 100.0,
                       "message": "halfway"}});
        assert_eq!(wire, expected);
        assert_valid("ProgressNotification", &wire);
        assert_valid("ProgressNotificationParams", &wire["params"]);
        let back: ProgressParams = serde_json::from_value(wire["params"].clone()).unwrap();
        assert_eq!(back, params);

        // Fractional progress without a total or message.
        let bare = ProgressParams::new(token, 0.25, None, None);
        let wire = serde_json::to_value(Notification::new("notifications/progress", bare.clone()))
            .unwrap();
        assert_eq!(
            wire,
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": token_json, "progress": 0.25}})
        );
        assert_valid("ProgressNotification", &wire);
        let back: ProgressParams = serde_json::from_value(wire["params"].clone()).unwrap();
        assert_eq!(back, bare);
    }
}

#[test]
fn log_message_notifications() {
    let cases = [
        (
            LogMessageParams::new(
                LoggingLevel::Error,
                Some("db".into()),
                json!({"error": "Connection failed", "retry": 3}),
            ),
            json!({"level": "error", "logger": "db",
                   "data": {"error": "Connection failed", "retry": 3}}),
        ),
        (
            LogMessageParams::new(LoggingLevel::Debug, None, json!("plain text")),
            json!({"level": "debug", "data": "plain text"}),
        ),
        (
            LogMessageParams::new(LoggingLevel::Emergency, None, json!([1, "two"])),
            json!({"level": "emergency", "data": [1, "two"]}),
        ),
    ];
    for (params, params_json) in cases {
        golden("LoggingMessageNotificationParams", &params, &params_json);
        let wire =
            serde_json::to_value(Notification::new("notifications/message", params)).unwrap();
        assert_eq!(
            wire,
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": params_json})
        );
        assert_valid("LoggingMessageNotification", &wire);
    }
}
