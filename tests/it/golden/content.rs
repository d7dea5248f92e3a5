//! Content blocks and embedded resource contents.

use serde_json::json;
use stateless_mcp::protocol::{ContentBlock, Resource, ResourceContents};

use super::{annotations, annotations_json, full_resource, full_resource_json, golden, object};

#[test]
fn content_blocks() {
    let mut text = ContentBlock::text("hello");
    golden(
        "TextContent",
        &text,
        &json!({"type": "text", "text": "hello"}),
    );
    if let ContentBlock::Text {
        annotations: a,
        meta,
        ..
    } = &mut text
    {
        *a = Some(annotations());
        *meta = Some(object(json!({"com.example/k": 1})));
    }
    let annotated = json!({"type": "text", "text": "hello", "annotations": annotations_json(),
                           "_meta": {"com.example/k": 1}});
    golden("TextContent", &text, &annotated);
    golden("ContentBlock", &text, &annotated);
    assert_eq!(text.as_text(), Some("hello"));

    let png = [0x89, b'P', b'N', b'G'];
    let image = ContentBlock::image(&png, "image/png");
    let image_json = json!({"type": "image", "data": "iVBORw==", "mimeType": "image/png"});
    golden("ImageContent", &image, &image_json);
    golden("ContentBlock", &image, &image_json);
    assert_eq!(ContentBlock::image_base64("iVBORw==", "image/png"), image);
    assert_eq!(image.as_text(), None);

    let audio = ContentBlock::audio(b"RIFF", "audio/wav");
    let audio_json = json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"});
    golden("AudioContent", &audio, &audio_json);
    golden("ContentBlock", &audio, &audio_json);
    assert_eq!(ContentBlock::audio_base64("UklGRg==", "audio/wav"), audio);

    let embedded_text = ContentBlock::resource(
        ResourceContents::text("file:///a.txt", "alpha").with_mime_type("text/plain"),
    );
    let embedded_text_json = json!({"type": "resource",
        "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "alpha"}});
    golden("EmbeddedResource", &embedded_text, &embedded_text_json);
    golden("ContentBlock", &embedded_text, &embedded_text_json);

    let embedded_blob = ContentBlock::resource(ResourceContents::blob("file:///b.bin", &[0, 1, 2]));
    let embedded_blob_json =
        json!({"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAEC"}});
    golden("EmbeddedResource", &embedded_blob, &embedded_blob_json);
    golden("ContentBlock", &embedded_blob, &embedded_blob_json);

    let link = ContentBlock::resource_link(Resource::new("file:///c.md", "c"));
    let link_json = json!({"type": "resource_link", "uri": "file:///c.md", "name": "c"});
    golden("ResourceLink", &link, &link_json);
    golden("ContentBlock", &link, &link_json);

    let mut full_link_json = full_resource_json();
    full_link_json["type"] = json!("resource_link");
    let full_link = ContentBlock::resource_link(full_resource());
    golden("ResourceLink", &full_link, &full_link_json);
    golden("ContentBlock", &full_link, &full_link_json);
}

#[test]
fn resource_contents() {
    let text = ResourceContents::text("file:///a.txt", "alpha");
    golden(
        "TextResourceContents",
        &text,
        &json!({"uri": "file:///a.txt", "text": "alpha"}),
    );
    assert_eq!(text.uri(), "file:///a.txt");

    let blob =
        ResourceContents::blob("file:///logo.png", b"\x89PNG\r\n").with_mime_type("image/png");
    golden(
        "BlobResourceContents",
        &blob,
        &json!({"uri": "file:///logo.png", "mimeType": "image/png", "blob": "iVBORw0K"}),
    );
    assert_eq!(blob.uri(), "file:///logo.png");

    // An empty text is still text, never mistaken for a blob.
    let empty = ResourceContents::text("file:///empty", "");
    golden(
        "TextResourceContents",
        &empty,
        &json!({"uri": "file:///empty", "text": ""}),
    );

    // `_meta` has no setter; it is reachable through the variant and through Deserialize.
    let with_meta: ResourceContents = serde_json::from_value(
        json!({"uri": "file:///m", "text": "t", "_meta": {"com.example/etag": "x1"}}),
    )
    .unwrap();
    assert!(
        matches!(&with_meta, ResourceContents::Text { meta: Some(m), .. } if m["com.example/etag"] == "x1")
    );
    golden(
        "TextResourceContents",
        &with_meta,
        &json!({"uri": "file:///m", "text": "t", "_meta": {"com.example/etag": "x1"}}),
    );
}
