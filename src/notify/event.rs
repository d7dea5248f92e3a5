//! The events that travel on a bus.

use serde::{Deserialize, Serialize};

/// A change worth telling listening clients about.
///
/// Serialized as JSON with a `type` tag, e.g. `{"type":"tools_list_changed"}` or
/// `{"type":"resource_updated","uri":"file:///a.txt"}`; that is the format on a
/// cross-replica bus, so other programs can publish changes too.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeEvent {
    /// The tool list changed (`notifications/tools/list_changed`).
    ToolsListChanged,
    /// The prompt list changed (`notifications/prompts/list_changed`).
    PromptsListChanged,
    /// The resource list changed (`notifications/resources/list_changed`).
    ResourcesListChanged,
    /// A resource's content changed (`notifications/resources/updated`); streams subscribed
    /// to this URI or to a parent of it hear about it.
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_format_is_documented_json() {
        let e = ChangeEvent::ResourceUpdated {
            uri: "file:///a".into(),
        };
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(text, r#"{"type":"resource_updated","uri":"file:///a"}"#);
        assert_eq!(serde_json::from_str::<ChangeEvent>(&text).unwrap(), e);
        assert_eq!(
            serde_json::to_string(&ChangeEvent::ToolsListChanged).unwrap(),
            r#"{"type":"tools_list_changed"}"#
        );
        assert!(serde_json::from_str::<ChangeEvent>(r#"{"type":"nope"}"#).is_err());
    }
}
