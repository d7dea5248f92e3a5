//! Listen-stream notifications encoded once per event: the JSON text around the subscription
//! id, into which each stream splices its own (pre-encoded) listen request id.
//!
//! A notification is serialized once with a sentinel id; the text before and after the
//! sentinel's encoding is kept. A stream's message is then `before + id + after`, byte for
//! byte what serde would write for that stream's id (the rest of the message does not depend
//! on the id). Should the sentinel's encoding appear more than once (a string elsewhere in the
//! message containing it), the split would be ambiguous: such a notification is encoded per
//! stream instead.

use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;

use crate::protocol::{Notification, RequestId, SubscriptionMeta};

/// The id serialized in place of a stream's own: control characters make serde escape it
/// (`"\u0000…\u0000"`), text no ordinary message contains.
const SENTINEL: &str = "\u{0}stateless-mcp subscription id\u{0}";

/// A listen request id, encoded once when its stream opens.
#[derive(Debug, Clone)]
pub(crate) struct EncodedId {
    id: RequestId,
    json: Box<[u8]>,
}

impl EncodedId {
    /// `id` and its JSON text.
    pub(crate) fn new(id: RequestId) -> Self {
        let json = serde_json::to_vec(&id)
            .unwrap_or_else(|_| b"null".to_vec())
            .into_boxed_slice();
        EncodedId { id, json }
    }

    /// The id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }
}

/// Builds a notification's params for a stream's subscription id.
type Build = dyn Fn(SubscriptionMeta) -> Bytes + Send + Sync;

/// One notification for every stream: encoded once, the id spliced in per stream.
#[derive(Clone)]
pub(crate) enum Spliced {
    /// The text around the id.
    Split {
        /// Everything before the id.
        before: Bytes,
        /// Everything after it.
        after: Bytes,
    },
    /// The sentinel was ambiguous: encode for each stream.
    PerStream(Arc<Build>),
}

impl std::fmt::Debug for Spliced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Spliced::Split { before, after } => f
                .debug_struct("Split")
                .field("before", before)
                .field("after", after)
                .finish(),
            Spliced::PerStream(_) => f.write_str("PerStream"),
        }
    }
}

/// `method` with the params `params` builds for a subscription, encoded as JSON text.
pub(crate) fn encode<P: Serialize>(method: &'static str, params: P) -> Bytes {
    match serde_json::to_vec(&Notification::new(method, params)) {
        Ok(v) => Bytes::from(v),
        Err(e) => {
            tracing::error!(error = %e, "a notification failed to serialize");
            Bytes::new()
        }
    }
}

fn meta(id: RequestId) -> SubscriptionMeta {
    SubscriptionMeta {
        subscription_id: id,
    }
}

impl Spliced {
    /// The notification `method` whose params `params` builds from a stream's
    /// [`SubscriptionMeta`].
    pub(crate) fn new<P, F>(method: &'static str, params: F) -> Self
    where
        P: Serialize,
        F: Fn(SubscriptionMeta) -> P + Send + Sync + 'static,
    {
        let sentinel = RequestId::String(SENTINEL.into());
        let marker = serde_json::to_vec(&sentinel).unwrap_or_default();
        let whole = encode(method, params(meta(sentinel)));
        let mut at = memchr_all(&whole, &marker);
        match (at.next(), at.next()) {
            (Some(start), None) if !marker.is_empty() => Spliced::Split {
                before: whole.slice(..start),
                after: whole.slice(start + marker.len()..),
            },
            _ => Spliced::PerStream(Arc::new(move |m| encode(method, params(m)))),
        }
    }

    /// The message for the stream with the listen request id `id`.
    pub(crate) fn to(&self, id: &EncodedId) -> Bytes {
        match self {
            Spliced::Split { before, after } => {
                let mut out = Vec::with_capacity(before.len() + id.json.len() + after.len());
                out.extend_from_slice(before);
                out.extend_from_slice(&id.json);
                out.extend_from_slice(after);
                Bytes::from(out)
            }
            Spliced::PerStream(build) => build(meta(id.id.clone())),
        }
    }
}

/// Every position where `needle` starts in `haystack`.
fn memchr_all<'a>(haystack: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    haystack
        .windows(needle.len().max(1))
        .enumerate()
        .filter(move |(_, w)| *w == needle)
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ListChangedParams, ResourceUpdatedParams};

    fn ids() -> Vec<RequestId> {
        vec![
            RequestId::Number(0),
            RequestId::Number(-17),
            RequestId::Number(i64::MAX),
            RequestId::String("".into()),
            RequestId::String(r#"he said "hi" \ back"#.into()),
            RequestId::String("ünïcødé ✓ 🦀 \u{2028}".into()),
            RequestId::String("tab\tnewline\n\u{1}".into()),
            RequestId::String(SENTINEL.into()),
        ]
    }

    #[test]
    fn spliced_bytes_equal_serde_for_tricky_ids() {
        let uri = "file:///a \"quoted\" ✓.txt";
        let updated = Spliced::new(crate::protocol::RESOURCES_UPDATED, move |meta| {
            ResourceUpdatedParams {
                meta,
                uri: uri.to_owned(),
            }
        });
        let changed = Spliced::new(crate::protocol::TOOLS_LIST_CHANGED, |meta| {
            ListChangedParams { meta }
        });
        assert!(matches!(updated, Spliced::Split { .. }));
        assert!(matches!(changed, Spliced::Split { .. }));
        for id in ids() {
            let encoded = EncodedId::new(id.clone());
            let want = serde_json::to_vec(&Notification::new(
                crate::protocol::RESOURCES_UPDATED,
                ResourceUpdatedParams {
                    meta: meta(id.clone()),
                    uri: uri.to_owned(),
                },
            ))
            .unwrap();
            assert_eq!(updated.to(&encoded), want, "{id:?}");
            let want = serde_json::to_vec(&Notification::new(
                crate::protocol::TOOLS_LIST_CHANGED,
                ListChangedParams {
                    meta: meta(id.clone()),
                },
            ))
            .unwrap();
            assert_eq!(changed.to(&encoded), want, "{id:?}");
        }
    }

    #[test]
    fn an_ambiguous_sentinel_is_encoded_per_stream() {
        // A URI holding the sentinel itself: the split would be ambiguous.
        let updated = Spliced::new(crate::protocol::RESOURCES_UPDATED, |meta| {
            ResourceUpdatedParams {
                meta,
                uri: SENTINEL.to_owned(),
            }
        });
        assert!(matches!(updated, Spliced::PerStream(_)));
        for id in ids() {
            let want = serde_json::to_vec(&Notification::new(
                crate::protocol::RESOURCES_UPDATED,
                ResourceUpdatedParams {
                    meta: meta(id.clone()),
                    uri: SENTINEL.to_owned(),
                },
            ))
            .unwrap();
            assert_eq!(updated.to(&EncodedId::new(id.clone())), want, "{id:?}");
        }
    }
}
