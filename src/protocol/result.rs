//! What every result shares: `resultType`, `_meta` with `serverInfo`, and caching fields.

use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::JsonObject;
use super::capabilities::Implementation;
use super::keys::SERVER_INFO_KEY;

/// The discriminator every result carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResultType {
    /// The final result.
    #[default]
    Complete,
    /// The server needs input from the client before it can finish (MRTR).
    InputRequired,
}

/// Who may reuse a cached result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// No user-specific data: any cache may serve it to anyone.
    #[default]
    Public,
    /// Reusable only within the same authorization context.
    Private,
}

/// `ttlMs` and `cacheScope`, required on cacheable complete results.
///
/// ```
/// use stateless_mcp::protocol::{CachePolicy, CacheScope, ResourceContents};
/// use stateless_mcp::{RequestContext, ResourceDef, Server};
///
/// // Lists cacheable by anyone for 5 minutes; one resource for 10 s, per caller.
/// let server = Server::builder()
///     .list_cache(CachePolicy::new(300_000, CacheScope::Public))
///     .resource(
///         ResourceDef::new("app://me/profile", "profile")
///             .cache(CachePolicy::new(10_000, CacheScope::Private))
///             .handler(|_ctx: RequestContext, uri: String| async move {
///                 Ok(ResourceContents::text(uri, "{}"))
///             }),
///     )
///     .build()
///     .unwrap();
/// # drop(server);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachePolicy {
    /// Freshness lifetime in milliseconds.
    #[serde(rename = "ttlMs")]
    pub ttl_ms: u64,
    /// Cache scope.
    #[serde(rename = "cacheScope")]
    pub cache_scope: CacheScope,
}

impl CachePolicy {
    /// A policy with the given lifetime and scope.
    pub const fn new(ttl_ms: u64, cache_scope: CacheScope) -> Self {
        CachePolicy {
            ttl_ms,
            cache_scope,
        }
    }
}

impl Default for CachePolicy {
    fn default() -> Self {
        CachePolicy::new(60_000, CacheScope::Public)
    }
}

/// A result's `_meta`: the server's `serverInfo` (filled in by the server) and any other keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultMeta {
    /// `io.modelcontextprotocol/serverInfo`.
    pub server_info: Option<Arc<Implementation>>,
    /// Other keys set by the handler.
    pub extra: JsonObject,
}

impl ResultMeta {
    /// Whether there is nothing to serialize.
    pub fn is_empty(&self) -> bool {
        self.server_info.is_none() && self.extra.is_empty()
    }
}

impl Serialize for ResultMeta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        if let Some(info) = &self.server_info {
            map.serialize_entry(SERVER_INFO_KEY, info.as_ref())?;
        }
        for (k, v) in &self.extra {
            if self.server_info.is_none() || k != SERVER_INFO_KEY {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ResultMeta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut extra = JsonObject::deserialize(d)?;
        let server_info = match extra.remove(SERVER_INFO_KEY) {
            Some(v) => Some(Arc::new(
                Implementation::deserialize(v).map_err(serde::de::Error::custom)?,
            )),
            None => None,
        };
        Ok(ResultMeta { server_info, extra })
    }
}

impl From<JsonObject> for ResultMeta {
    /// Keys of a `_meta` object; a valid `serverInfo` among them becomes `server_info`.
    fn from(mut extra: JsonObject) -> Self {
        let server_info = match extra.get(SERVER_INFO_KEY) {
            Some(v) => match Implementation::deserialize(v) {
                Ok(info) => {
                    extra.remove(SERVER_INFO_KEY);
                    Some(Arc::new(info))
                }
                Err(_) => None,
            },
            None => None,
        };
        ResultMeta { server_info, extra }
    }
}

/// A result the server can stamp with its `serverInfo` before sending.
pub(crate) trait StampResult {
    /// Gives access to the result's `_meta`.
    fn meta_mut(&mut self) -> &mut ResultMeta;

    /// About how many bytes of bulky content (text, base64 data) the result carries, so
    /// its encoder can size the buffer once instead of growing it; `0` when small or
    /// unknown.
    fn content_size_hint(&self) -> usize {
        0
    }

    /// Writes the result as serde would, but without `_meta`, when its shape allows a
    /// direct encoding (no serde machinery for the constant keys); `false` (nothing written)
    /// otherwise. Only called when `_meta` is empty.
    fn encode_plain(&self, _out: &mut Vec<u8>) -> bool {
        false
    }
}
