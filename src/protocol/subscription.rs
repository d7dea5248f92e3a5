//! `subscriptions/listen`: the filter a client sends, the acknowledgement, the change
//! notifications on the stream, and the result that closes it gracefully.

use serde::{Deserialize, Serialize};

use super::ids::RequestId;
use super::result::ResultType;

/// `notifications/subscriptions/acknowledged`.
pub(crate) const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// `notifications/tools/list_changed`.
pub(crate) const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/prompts/list_changed`.
pub(crate) const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `notifications/resources/list_changed`.
pub(crate) const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/resources/updated`.
pub(crate) const RESOURCES_UPDATED: &str = "notifications/resources/updated";

/// Which notifications a listen stream wants (each omitted or `false` field: not wanted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(
        default,
        rename = "toolsListChanged",
        skip_serializing_if = "Option::is_none"
    )]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(
        default,
        rename = "promptsListChanged",
        skip_serializing_if = "Option::is_none"
    )]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(
        default,
        rename = "resourcesListChanged",
        skip_serializing_if = "Option::is_none"
    )]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs (and their sub-resources).
    #[serde(
        default,
        rename = "resourceSubscriptions",
        skip_serializing_if = "Option::is_none"
    )]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these task ids (the Tasks extension).
    #[serde(default, rename = "taskIds", skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

/// `_meta` of a notification on a listen stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriptionMeta {
    /// The id of the `subscriptions/listen` request.
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub subscription_id: RequestId,
}

/// Params of `notifications/subscriptions/acknowledged`: the subset the server honours.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcknowledgedParams {
    /// Subscription id.
    #[serde(rename = "_meta")]
    pub meta: SubscriptionMeta,
    /// What will be delivered.
    pub notifications: SubscriptionFilter,
}

/// Params of a list-changed notification on a listen stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListChangedParams {
    /// Subscription id.
    #[serde(rename = "_meta")]
    pub meta: SubscriptionMeta,
}

/// Params of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceUpdatedParams {
    /// Subscription id.
    #[serde(rename = "_meta")]
    pub meta: SubscriptionMeta,
    /// The updated resource (may be a sub-resource of a subscribed URI).
    pub uri: String,
}

/// `_meta` of the result that closes a listen stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListenResultMeta {
    /// Subscription id (required).
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub subscription_id: RequestId,
    /// The server's implementation.
    #[serde(
        default,
        rename = "io.modelcontextprotocol/serverInfo",
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<super::capabilities::Implementation>,
}

/// The result that ends a listen stream gracefully (e.g. on server shutdown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsListenResult {
    #[serde(rename = "resultType")]
    result_type: ResultType,
    /// Subscription id and server info.
    #[serde(rename = "_meta")]
    pub meta: ListenResultMeta,
}

impl SubscriptionsListenResult {
    /// The closing result of subscription `id`.
    pub fn new(id: RequestId) -> Self {
        SubscriptionsListenResult {
            result_type: ResultType::Complete,
            meta: ListenResultMeta {
                subscription_id: id,
                server_info: None,
            },
        }
    }
}
