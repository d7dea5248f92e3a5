//! Content blocks, embedded resource contents, annotations and icons.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::JsonObject;

/// Who a piece of content is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Hints about how content is used or shown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Annotations {
    /// Intended audience.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of last modification.
    #[serde(
        default,
        rename = "lastModified",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_modified: Option<String>,
}

/// An icon for a tool, resource, prompt or implementation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Icon {
    /// URI of the icon (may be a `data:` URI).
    pub src: String,
    /// MIME type.
    #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon is drawn for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

/// `"light"` or `"dark"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
        }
    }
}

/// The contents of a resource: text or a base64 blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The resource URI.
        uri: String,
        /// MIME type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// Metadata.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
    /// Binary contents, base64-encoded.
    Blob {
        /// The resource URI.
        uri: String,
        /// MIME type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Base64 of the bytes.
        blob: String,
        /// Metadata.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
}

impl ResourceContents {
    /// The length of the text or base64 blob.
    pub(crate) fn payload_len(&self) -> usize {
        match self {
            ResourceContents::Text { text, .. } => text.len(),
            ResourceContents::Blob { blob, .. } => blob.len(),
        }
    }

    /// Text contents of `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
            meta: None,
        }
    }

    /// Binary contents of `uri`, base64-encoded here.
    pub fn blob(uri: impl Into<String>, bytes: &[u8]) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: None,
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
            meta: None,
        }
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime: impl Into<String>) -> Self {
        match &mut self {
            ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } => {
                *mime_type = Some(mime.into())
            }
        }
        self
    }

    /// The URI these contents belong to.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }
}

/// One block of content in a tool result or prompt message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum ContentBlock {
    /// `{"type":"text"}`.
    #[serde(rename = "text")]
    Text {
        /// The text.
        text: String,
        /// Annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Metadata.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
    /// `{"type":"image"}`, base64 data.
    #[serde(rename = "image")]
    Image {
        /// Base64 of the image bytes.
        data: String,
        /// MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Metadata.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
    /// `{"type":"audio"}`, base64 data.
    #[serde(rename = "audio")]
    Audio {
        /// Base64 of the audio bytes.
        data: String,
        /// MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Metadata.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
    /// `{"type":"resource_link"}`: a pointer to a resource.
    #[serde(rename = "resource_link")]
    ResourceLink(super::resource::Resource),
    /// `{"type":"resource"}`: an embedded resource.
    #[serde(rename = "resource")]
    Resource {
        /// The embedded contents.
        resource: ResourceContents,
        /// Annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Metadata.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
}

impl ContentBlock {
    /// The length of the block's bulky payload: its text, or its base64 data.
    pub(crate) fn payload_len(&self) -> usize {
        match self {
            ContentBlock::Text { text, .. } => text.len(),
            ContentBlock::Image { data, .. } | ContentBlock::Audio { data, .. } => data.len(),
            ContentBlock::Resource { resource, .. } => resource.payload_len(),
            ContentBlock::ResourceLink(_) => 0,
        }
    }

    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An image block from raw bytes (base64-encoded here).
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Self::image_base64(
            base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type,
        )
    }

    /// An image block from already base64-encoded data.
    pub fn image_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An audio block from raw bytes (base64-encoded here).
    pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Self::audio_base64(
            base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type,
        )
    }

    /// An audio block from already base64-encoded data.
    pub fn audio_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An embedded resource block.
    pub fn resource(contents: ResourceContents) -> Self {
        ContentBlock::Resource {
            resource: contents,
            annotations: None,
            meta: None,
        }
    }

    /// A resource link block.
    pub fn resource_link(resource: super::resource::Resource) -> Self {
        ContentBlock::ResourceLink(resource)
    }

    /// Sets the block's annotations (on a resource link: its resource's annotations).
    #[must_use]
    pub fn with_annotations(mut self, value: Annotations) -> Self {
        match &mut self {
            ContentBlock::Text { annotations, .. }
            | ContentBlock::Image { annotations, .. }
            | ContentBlock::Audio { annotations, .. }
            | ContentBlock::Resource { annotations, .. } => *annotations = Some(value),
            ContentBlock::ResourceLink(r) => r.annotations = Some(value),
        }
        self
    }

    /// Sets the block's `_meta`.
    #[must_use]
    pub fn with_meta(mut self, value: JsonObject) -> Self {
        match &mut self {
            ContentBlock::Text { meta, .. }
            | ContentBlock::Image { meta, .. }
            | ContentBlock::Audio { meta, .. }
            | ContentBlock::Resource { meta, .. } => *meta = Some(value),
            ContentBlock::ResourceLink(r) => r.meta = Some(value),
        }
        self
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}
