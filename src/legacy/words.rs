//! The 2025-11-25 era in its own words: what the core answers a legacy client, without what
//! only 2026-07-28 defines.
//!
//! The methods both revisions share run the core's code, whose results speak 2026-07-28:
//! `resultType`, the caching fields `ttlMs` and `cacheScope`, and `serverInfo` in `_meta`
//! (a 2025-11-25 client learns it from `initialize`). Each result a legacy request gets is
//! rewritten here without them: its members are read as raw JSON (nothing below them is
//! parsed into values or copied twice) and written again without the 2026-only ones. What
//! `initialize` advertises drops the 2026-only capabilities too: of the `extensions`, only
//! those that define themselves for 2025-11-25 stay (Skills, whose backport reads its
//! declaration there).

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use futures_util::FutureExt as _;
use memchr::memmem;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::protocol::{JsonObject, SKILLS_EXTENSION, ServerCapabilities};
use crate::server::{Outcome, Reply, Running};

/// Members of a result that only 2026-07-28 defines.
const MODERN_ONLY: [&str; 3] = ["resultType", "ttlMs", "cacheScope"];
/// The `_meta` key of 2026-07-28 results that names the server.
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// Extensions a 2025-11-25 `initialize` may advertise.
const LEGACY_EXTENSIONS: [&str; 1] = [SKILLS_EXTENSION];

/// The members of a JSON object, in order, their values as raw JSON.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Object)
    }
}

/// Writes `{…}` of `members` (values as encoded JSON) to `out`.
fn write_object<'a>(members: impl Iterator<Item = (&'a str, &'a [u8])>, out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (key, value)) in members.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, key).expect("a string serializes");
        out.push(b':');
        out.extend_from_slice(value);
    }
    out.push(b'}');
}

/// A success response, as far as it needs reading here.
#[derive(serde::Deserialize)]
struct Success<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    result: Members<'a>,
}

/// Whether the member `key` of a result is one only 2026-07-28 defines. A `resultType` other
/// than `complete` (a task, an input request) has no 2025-11-25 form: it is kept rather than
/// made into a result it is not.
fn modern_only(key: &str, value: &RawValue) -> bool {
    MODERN_ONLY.contains(&key) && (key != "resultType" || value.get() == "\"complete\"")
}

/// `_meta` without `serverInfo`: `None` when it has no `serverInfo` (it stays as it is),
/// `Some(None)` when nothing else is left (it goes), else its new encoding.
fn meta_without_server_info(meta: &RawValue) -> Option<Option<Vec<u8>>> {
    let Members(mut members) = serde_json::from_str(meta.get()).ok()?;
    let before = members.len();
    members.retain(|(k, _)| k != SERVER_INFO_KEY);
    if members.len() == before {
        return None;
    }
    if members.is_empty() {
        return Some(None);
    }
    let mut text = Vec::with_capacity(meta.get().len());
    let iter = members
        .iter()
        .map(|(k, v)| (k.as_str(), v.get().as_bytes()));
    write_object(iter, &mut text);
    Some(Some(text))
}

/// Where a success response's result opens (no JSON string holds it: a `"` inside one is
/// escaped).
const RESULT_OPEN: &[u8] = br#","result":{"#;
/// The first member of a result the core encodes plainly (`StampResult::encode_plain`).
const PLAIN_FIRST: &[u8] = br#""resultType":"complete","#;

/// The common case without reading the result: `body` (a success response) whose result
/// opens with `"resultType":"complete"` and ends with `_meta` exactly as the server stamps it
/// (`stamp`, the `_meta` member with `serverInfo` alone), with neither dropped member name
/// anywhere else in it, written without those two; `None` for any other (the general path
/// reads it).
fn plain_cleaned(body: &[u8], stamp: &[u8]) -> Option<Vec<u8>> {
    static OPEN: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(RESULT_OPEN));
    static TTL: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(br#""ttlMs""#));
    static SCOPE: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(br#""cacheScope""#));
    let open = OPEN.find(body)? + RESULT_OPEN.len();
    let members = body[open..].strip_prefix(PLAIN_FIRST)?;
    let middle = members
        .strip_suffix(b"}}")?
        .strip_suffix(stamp)?
        .strip_suffix(b",")?;
    if TTL.find(middle).is_some() || SCOPE.find(middle).is_some() {
        return None;
    }
    let mut out = Vec::with_capacity(open + middle.len() + 2);
    out.extend_from_slice(&body[..open]);
    out.extend_from_slice(middle);
    out.extend_from_slice(b"}}");
    Some(out)
}

/// `reply` in the 2025-11-25 era's words: a success response whose result carries none of
/// the members only 2026-07-28 defines, nor `serverInfo` in its `_meta` (dropped when that
/// leaves it empty). Errors, and results without such members, go unchanged. `stamp` is the
/// server's `_meta` member ([`Stamp::member`](crate::server::reply::Stamp::member)): a
/// result the core encoded plainly and stamped is cut without being read.
pub(super) fn reply(reply: Reply, stamp: &[u8]) -> Reply {
    if reply.error_code.is_some() {
        return reply;
    }
    let bytes = reply.to_bytes();
    if let Some(out) = plain_cleaned(&bytes, stamp) {
        let mut cleaned = Reply::from_json(Bytes::from(out));
        cleaned.retry_after_secs = reply.retry_after_secs;
        return cleaned;
    }
    let Ok(Success { id, result }) = serde_json::from_slice::<Success<'_>>(&bytes) else {
        return reply;
    };
    let mut changed = false;
    let mut kept: Vec<(String, Cow<'_, [u8]>)> = Vec::with_capacity(result.0.len());
    for (key, value) in result.0 {
        if modern_only(&key, value) {
            changed = true;
            continue;
        }
        if key == "_meta" {
            if let Some(meta) = meta_without_server_info(value) {
                changed = true;
                if let Some(text) = meta {
                    kept.push((key, Cow::Owned(text)));
                }
                continue;
            }
        }
        kept.push((key, Cow::Borrowed(value.get().as_bytes())));
    }
    if !changed {
        return reply;
    }
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(br#","result":"#);
    write_object(kept.iter().map(|(k, v)| (k.as_str(), &**v)), &mut out);
    out.push(b'}');
    let mut cleaned = Reply::from_json(Bytes::from(out));
    cleaned.retry_after_secs = reply.retry_after_secs;
    cleaned
}

/// `outcome` in the 2025-11-25 era's words: its reply, now or when the handler is done
/// (see [`reply`]; `stamp` as there).
pub(super) fn outcome(outcome: Outcome, stamp: Arc<[u8]>) -> Outcome {
    match outcome {
        Outcome::Ready(r) => Outcome::Ready(reply(r, &stamp)),
        Outcome::Running(Running { reply: r, events }) => Outcome::Running(Running {
            reply: r.map(move |r| reply(r, &stamp)).boxed(),
            events,
        }),
        other => other,
    }
}

/// What `initialize` advertises: `capabilities` without the extensions 2025-11-25 does not
/// carry (`extensions` is dropped when none is left).
pub(super) fn capabilities(mut capabilities: ServerCapabilities) -> ServerCapabilities {
    capabilities.extensions = capabilities.extensions.and_then(|all| {
        let kept: JsonObject = all
            .into_iter()
            .filter(|(id, _)| LEGACY_EXTENSIONS.contains(&id.as_str()))
            .collect();
        (!kept.is_empty()).then_some(kept)
    });
    capabilities
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RequestId;
    use serde_json::{Value, json};

    fn cleaned(result: Value) -> Value {
        let r = reply(Reply::result(&RequestId::from(7), &result), b"");
        serde_json::from_slice(&r.to_bytes()).unwrap()
    }

    fn stamp() -> crate::server::reply::Stamp {
        crate::server::reply::Stamp::new(Arc::new(crate::protocol::Implementation::new("s", "1")))
    }

    /// A tool result as the core encodes and stamps it, cleaned: by the fast path, and by
    /// the general one (given no stamp to recognise).
    fn both_paths(text: &str) -> (Option<Vec<u8>>, Vec<u8>) {
        let mut result = crate::protocol::CallToolResult::text(text);
        let stamp = stamp();
        let stamped = Reply::stamped(&RequestId::from("x\",y"), &mut result, &stamp);
        let bytes = stamped.to_bytes();
        let fast = plain_cleaned(&bytes, stamp.member());
        let general = reply(stamped, b"").to_bytes().to_vec();
        (fast, general)
    }

    #[test]
    fn a_plainly_encoded_stamped_result_is_cut_without_reading_it_as_the_general_path_would() {
        let (fast, general) = both_paths("hi \"there\" ,\"result\":{");
        let fast = fast.expect("the fast path takes it");
        assert_eq!(fast, general);
        let v: Value = serde_json::from_slice(&fast).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc": "2.0", "id": "x\",y", "result": {
                "content": [{"type": "text", "text": "hi \"there\" ,\"result\":{"}]}})
        );
        // A dropped member's name inside a string is escaped: still the fast path.
        let (fast, general) = both_paths("\"ttlMs\": 5");
        assert_eq!(fast.as_ref(), Some(&general));
        let v: Value = serde_json::from_slice(&general).unwrap();
        assert_eq!(v["result"]["content"][0]["text"], "\"ttlMs\": 5");
        // A member only 2026-07-28 defines between them: the general path decides.
        let stamp = stamp();
        let mut body =
            br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":5,"#.to_vec();
        body.extend_from_slice(stamp.member());
        body.extend_from_slice(b"}}");
        assert_eq!(plain_cleaned(&body, stamp.member()), None);
        // Another `_meta` than the stamp alone: the same.
        let other = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[],"_meta":{"x":1}}}"#;
        assert_eq!(plain_cleaned(other, stamp.member()), None);
    }

    #[test]
    fn modern_members_and_server_info_go() {
        let v = cleaned(json!({
            "resultType": "complete", "tools": [{"name": "a", "ttlMs": 1}],
            "nextCursor": "c", "ttlMs": 60000, "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
        }));
        assert_eq!(
            v,
            json!({"jsonrpc": "2.0", "id": 7,
                "result": {"tools": [{"name": "a", "ttlMs": 1}], "nextCursor": "c"}})
        );
    }

    #[test]
    fn other_meta_keys_stay() {
        let v = cleaned(json!({
            "content": [],
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}, "x/y": 1}
        }));
        assert_eq!(v["result"], json!({"content": [], "_meta": {"x/y": 1}}));
        let v = cleaned(json!({"resultType": "complete", "_meta": {"x/y": 1}}));
        assert_eq!(v["result"], json!({"_meta": {"x/y": 1}}));
    }

    #[test]
    fn what_has_no_legacy_form_and_errors_are_unchanged() {
        let v = cleaned(json!({"resultType": "task", "task": {}}));
        assert_eq!(v["result"], json!({"resultType": "task", "task": {}}));
        assert_eq!(cleaned(json!({}))["result"], json!({}));
        let error = Reply::error(
            Some(RequestId::from(1)),
            crate::protocol::ErrorObject::invalid_params("x"),
        );
        assert_eq!(reply(error.clone(), b""), error);
    }

    #[test]
    fn only_legacy_extensions_are_advertised() {
        let mut caps = ServerCapabilities::default();
        let mut ext = JsonObject::new();
        ext.insert("io.modelcontextprotocol/tasks".into(), json!({}));
        caps.extensions = Some(ext.clone());
        assert_eq!(capabilities(caps.clone()).extensions, None);
        ext.insert(SKILLS_EXTENSION.into(), json!({}));
        caps.extensions = Some(ext);
        let kept = capabilities(caps).extensions.unwrap();
        assert_eq!(kept.keys().collect::<Vec<_>>(), [SKILLS_EXTENSION]);
    }
}
