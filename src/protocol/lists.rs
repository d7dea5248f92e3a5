//! The four paginated, cacheable list results.

use serde::{Deserialize, Serialize};

use super::prompt::Prompt;
use super::resource::{Resource, ResourceTemplate};
use super::result::{CachePolicy, ResultMeta, ResultType, StampResult};
use super::tool::Tool;

macro_rules! list_result {
    ($(#[$doc:meta])* $name:ident, $field:ident, $wire:literal, $item:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[non_exhaustive]
        pub struct $name {
            #[serde(rename = "resultType", default)]
            result_type: ResultType,
            /// The items of this page.
            #[serde(rename = $wire)]
            pub $field: Vec<$item>,
            /// Opaque cursor of the next page; absent on the last page.
            #[serde(default, rename = "nextCursor", skip_serializing_if = "Option::is_none")]
            pub next_cursor: Option<String>,
            /// Caching.
            #[serde(flatten)]
            pub cache: CachePolicy,
            /// Result metadata.
            #[serde(default, rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
            pub meta: ResultMeta,
        }

        impl $name {
            /// One page of the list.
            pub fn new($field: Vec<$item>, next_cursor: Option<String>, cache: CachePolicy) -> Self {
                $name {
                    result_type: ResultType::Complete,
                    $field,
                    next_cursor,
                    cache,
                    meta: ResultMeta::default(),
                }
            }
        }

        impl StampResult for $name {
            fn meta_mut(&mut self) -> &mut ResultMeta {
                &mut self.meta
            }
        }
    };
}

list_result!(
    /// The result of `tools/list`.
    ListToolsResult, tools, "tools", Tool
);
list_result!(
    /// The result of `resources/list`.
    ListResourcesResult, resources, "resources", Resource
);
list_result!(
    /// The result of `resources/templates/list`.
    ListResourceTemplatesResult, resource_templates, "resourceTemplates", ResourceTemplate
);
list_result!(
    /// The result of `prompts/list`.
    ListPromptsResult, prompts, "prompts", Prompt
);
