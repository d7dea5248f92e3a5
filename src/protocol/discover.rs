//! `server/discover`.

use serde::{Deserialize, Serialize};

use super::capabilities::ServerCapabilities;
use super::result::{CachePolicy, ResultMeta, ResultType, StampResult};

/// The result of `server/discover`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DiscoverResult {
    #[serde(rename = "resultType", default)]
    result_type: ResultType,
    /// Protocol versions the server accepts.
    #[serde(rename = "supportedVersions")]
    pub supported_versions: Vec<String>,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Caching.
    #[serde(flatten)]
    pub cache: CachePolicy,
    /// Result metadata.
    #[serde(
        default,
        rename = "_meta",
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl DiscoverResult {
    /// A discover result.
    pub fn new(
        supported_versions: Vec<String>,
        capabilities: ServerCapabilities,
        cache: CachePolicy,
    ) -> Self {
        DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions,
            capabilities,
            instructions: None,
            cache,
            meta: ResultMeta::default(),
        }
    }
}

impl StampResult for DiscoverResult {
    fn meta_mut(&mut self) -> &mut ResultMeta {
        &mut self.meta
    }
}
