//! A `subscriptions/listen` client over a real socket: opens the stream and yields its
//! messages as they arrive, each checked against the schema.

use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::Eventsource as _;
use futures_util::{Stream, StreamExt as _};
use serde_json::{Value, json};

use super::{Client, schema, with_meta};

/// The SSE events of a response body as they arrive (listen and legacy streams).
pub type Events = Pin<Box<dyn Stream<Item = Result<eventsource_stream::Event, String>> + Send>>;

/// A sent request's status, headers and SSE events, read as they stream.
pub async fn sse_response(
    req: reqwest::RequestBuilder,
) -> (u16, reqwest::header::HeaderMap, Events) {
    let resp = req.send().await.expect("request sent");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let events = resp
        .bytes_stream()
        .eventsource()
        .map(|r| r.map_err(|e| e.to_string()));
    (status, headers, Box::pin(events))
}

/// An open listen stream.
pub struct Listener {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    events: Events,
}

/// The `_meta` subscription id of a notification.
pub fn subscription_id(message: &Value) -> &Value {
    &message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

impl Listener {
    /// Sends `subscriptions/listen` with `notifications` and returns the open stream.
    pub async fn open(client: &Client, id: Value, notifications: Value) -> Listener {
        Self::open_with(client, id, notifications, &[]).await
    }

    /// Like [`Listener::open`], with `extra` headers on the request.
    pub async fn open_with(
        client: &Client,
        id: Value,
        notifications: Value,
        extra: &[(&str, &str)],
    ) -> Listener {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                          "params": with_meta(json!({"notifications": notifications}))});
        let mut req = crate::support::http_request(
            &crate::support::http(),
            "POST",
            &client.url,
            &Client::headers("subscriptions/listen", None),
            body.to_string(),
        );
        for (k, v) in extra {
            req = req.header(*k, *v);
        }
        let (status, headers, events) = sse_response(req).await;
        Listener {
            status,
            headers,
            events,
        }
    }

    /// The next message, or `None` when the stream ended. Panics after 20 s of silence.
    pub async fn next(&mut self) -> Option<Value> {
        tokio::time::timeout(Duration::from_secs(20), self.next_message())
            .await
            .expect("a message on the listen stream within 20 s")
    }

    async fn next_message(&mut self) -> Option<Value> {
        let event = self.events.next().await?.expect("well-formed SSE");
        let message: Value = serde_json::from_str(&event.data)
            .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {}", event.data));
        schema::check_message(&message, Some("subscriptions/listen"));
        Some(message)
    }

    /// The next message's method (notifications) or `"result"` (the graceful close).
    pub async fn next_kind(&mut self) -> String {
        let m = self.next().await.expect("the stream is open");
        match m.get("method").and_then(Value::as_str) {
            Some(method) => method.to_owned(),
            None => "result".to_owned(),
        }
    }
}
