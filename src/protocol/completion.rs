//! `completion/complete`: references, arguments and results.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::result::{ResultMeta, ResultType, StampResult};

/// The largest number of values a completion may return.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What is being completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionReference {
    /// An argument of a prompt.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt name.
        name: String,
    },
    /// A variable of a resource template.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The URI template.
        uri: String,
    },
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionArgument {
    /// Argument name.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

/// Already-resolved arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionContext {
    /// Other arguments' values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// The params of `completion/complete` (without `_meta`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteRequest {
    /// What is being completed.
    #[serde(rename = "ref", deserialize_with = "super::strict::object")]
    pub reference: CompletionReference,
    /// The argument.
    #[serde(deserialize_with = "super::strict::object")]
    pub argument: CompletionArgument,
    /// Context.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::strict::option_object"
    )]
    pub context: Option<CompletionContext>,
}

/// The completion values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// Total number of matches, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist than were returned.
    #[serde(default, rename = "hasMore", skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// The result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteResult {
    #[serde(rename = "resultType", default)]
    result_type: ResultType,
    /// The values.
    pub completion: Completion,
    /// Result metadata.
    #[serde(
        default,
        rename = "_meta",
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl CompleteResult {
    /// A result from any number of values: the first 100 are sent, with `total` and
    /// `hasMore` telling the rest.
    pub fn from_values(mut values: Vec<String>) -> Self {
        let total = values.len();
        let has_more = total > MAX_COMPLETION_VALUES;
        values.truncate(MAX_COMPLETION_VALUES);
        CompleteResult {
            result_type: ResultType::Complete,
            completion: Completion {
                values,
                total: Some(total as u64),
                has_more: Some(has_more),
            },
            meta: ResultMeta::default(),
        }
    }

    /// Caps the values at 100, marking `hasMore` if any were cut.
    pub(crate) fn enforce_limit(&mut self) {
        if self.completion.values.len() > MAX_COMPLETION_VALUES {
            self.completion.values.truncate(MAX_COMPLETION_VALUES);
            self.completion.has_more = Some(true);
        }
    }
}

impl StampResult for CompleteResult {
    fn meta_mut(&mut self) -> &mut ResultMeta {
        &mut self.meta
    }
}
