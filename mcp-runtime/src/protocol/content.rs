use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who a message or an annotation is meant for.
///
/// ```
/// use mcp_runtime::protocol::{Annotations, Role};
///
/// assert_eq!(serde_json::to_value(Role::Assistant).unwrap(), "assistant");
/// let for_the_user = Annotations { audience: Some(vec![Role::User]), ..Default::default() };
/// # drop(for_the_user);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The AI model (assistant).
    Assistant,
}

/// Optional hints on content: audience, priority (0..=1), last modification (ISO 8601).
///
/// ```
/// use mcp_runtime::Content;
/// use mcp_runtime::protocol::{Annotations, Role};
///
/// let annotations = Annotations {
///     audience: Some(vec![Role::User]),
///     priority: Some(0.9),
///     last_modified: Some("2026-01-15T10:00:00Z".into()),
/// };
/// let mut block = Content::text("Only for you");
/// if let Content::Text(text) = &mut block {
///     text.annotations = Some(annotations);
/// }
/// let json = serde_json::to_value(&block).unwrap();
/// assert_eq!(json["annotations"]["audience"], serde_json::json!(["user"]));
/// assert_eq!(json["annotations"]["lastModified"], "2026-01-15T10:00:00Z");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the content is meant for (`audience`); any of `user` and `assistant`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// How important the content is (`priority`), from 0 (least) to 1 (most important).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// When the content was last modified (`lastModified`), as an ISO 8601 timestamp.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// `{type: "text", text}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text of the block.
    pub text: String,
    /// Optional hints on how the block is used or shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata (`_meta`) attached to the block.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// `{type: "image", data (base64), mimeType}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// The base64-encoded image data.
    pub data: String,
    /// The MIME type of the image data (`mimeType`), such as `image/png`.
    pub mime_type: String,
    /// Optional hints on how the block is used or shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata (`_meta`) attached to the block.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// `{type: "audio", data (base64), mimeType}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// The base64-encoded audio data.
    pub data: String,
    /// The MIME type of the audio data (`mimeType`), such as `audio/wav`.
    pub mime_type: String,
    /// Optional hints on how the block is used or shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata (`_meta`) attached to the block.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// `{type: "resource_link", uri, name, …}`: a pointer to a resource the client may read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The URI of the linked resource.
    pub uri: String,
    /// The programmatic name of the linked resource.
    pub name: String,
    /// A human-readable title for display.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description of the linked resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of the linked resource (`mimeType`), if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The size of the linked resource in bytes, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Optional hints on how the link is used or shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata (`_meta`) attached to the link.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Text contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The URI of the resource.
    pub uri: String,
    /// The MIME type of the text (`mimeType`), if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text of the resource.
    pub text: String,
    /// Extra metadata (`_meta`) attached to the contents.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Binary contents of a resource (`blob` is base64).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The URI of the resource.
    pub uri: String,
    /// The MIME type of the binary data (`mimeType`), if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The base64-encoded binary data (`blob`).
    pub blob: String,
    /// Extra metadata (`_meta`) attached to the contents.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Text or binary contents of a resource.
///
/// ```
/// use mcp_runtime::{ResourceContents, resource};
///
/// /// The logo, and a text description of it.
/// #[resource("assets://logo", mime_type = "image/png")]
/// async fn logo() -> Vec<ResourceContents> {
///     vec![
///         ResourceContents::blob("assets://logo", "image/png", [0x89, b'P', b'N', b'G']),
///         ResourceContents::text("assets://logo", "text/plain", "A blue square."),
///     ]
/// }
///
/// let text = ResourceContents::text("notes://1", "text/markdown", "# One");
/// assert_eq!(
///     serde_json::to_value(&text).unwrap(),
///     serde_json::json!({"uri": "notes://1", "mimeType": "text/markdown", "text": "# One"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents (`text`).
    Text(TextResourceContents),
    /// Binary contents (`blob`).
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// Text contents.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ResourceContents::Text(TextResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: text.into(),
            meta: None,
        })
    }
    /// Binary contents from raw bytes (base64-encoded here).
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        ResourceContents::Blob(BlobResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: crate::base64_encode(bytes.as_ref()),
            meta: None,
        })
    }
}

/// `{type: "resource", resource}`: a resource embedded in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The contents of the embedded resource.
    pub resource: ResourceContents,
    /// Optional hints on how the block is used or shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata (`_meta`) attached to the block.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// One content block of a tool result or a prompt message.
///
/// ```
/// use mcp_runtime::{Content, tool};
///
/// /// Shows this month's sales.
/// #[tool]
/// async fn sales() -> Vec<Content> {
///     vec![
///         Content::text("Sales by month:"),
///         Content::image(b"\x89PNG...", "image/png"),
///         Content::resource_link("reports://sales", "sales"),
///     ]
/// }
///
/// let json = serde_json::to_value(Content::text("hi")).unwrap();
/// assert_eq!(json, serde_json::json!({"type": "text", "text": "hi"}));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// A text block (`type: "text"`).
    Text(TextContent),
    /// An image block (`type: "image"`).
    Image(ImageContent),
    /// An audio block (`type: "audio"`).
    Audio(AudioContent),
    /// A link to a resource (`type: "resource_link"`).
    ResourceLink(ResourceLink),
    /// An embedded resource (`type: "resource"`).
    Resource(EmbeddedResource),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Content {
        Content::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An image block from raw bytes (base64-encoded here).
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Content {
        Content::Image(ImageContent {
            data: crate::base64_encode(bytes.as_ref()),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An audio block from raw bytes (base64-encoded here).
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Content {
        Content::Audio(AudioContent {
            data: crate::base64_encode(bytes.as_ref()),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An embedded text resource.
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Content {
        Content::Resource(EmbeddedResource {
            resource: ResourceContents::Text(TextResourceContents {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: text.into(),
                meta: None,
            }),
            annotations: None,
            meta: None,
        })
    }

    /// An embedded binary resource from raw bytes (base64-encoded here).
    pub fn embedded_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Content {
        Content::Resource(EmbeddedResource {
            resource: ResourceContents::Blob(BlobResourceContents {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                blob: crate::base64_encode(bytes.as_ref()),
                meta: None,
            }),
            annotations: None,
            meta: None,
        })
    }

    /// An embedded resource.
    pub fn embedded(resource: ResourceContents) -> Content {
        Content::Resource(EmbeddedResource {
            resource,
            annotations: None,
            meta: None,
        })
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Content {
        Content::ResourceLink(ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            meta: None,
        })
    }
}

// `Content` and `ResourceContents` are read by hand: serde's derive for an internally
// tagged or untagged enum buffers the input and reads each variant through a deserializer
// of its own (about 40 KB of code in every server), where reading the object once and
// each variant from that object shares serde_json's reader for `Value` with the rest.

/// The object a content block or contents is read from.
fn read_object<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Map<String, Value>, D::Error> {
    Map::deserialize(d)
}

/// Variant `T` from `object`, an error of `D` if it does not fit.
fn variant<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    object: Map<String, Value>,
) -> Result<T, D::Error> {
    T::deserialize(Value::Object(object)).map_err(serde::de::Error::custom)
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        const TYPES: &[&str] = &["text", "image", "audio", "resource_link", "resource"];
        let object = read_object(d)?;
        let kind = match object.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(_) => return Err(D::Error::custom("a content block's `type` is a string")),
            None => return Err(D::Error::missing_field("type")),
        };
        match kind.as_str() {
            "text" => variant::<D, _>(object).map(Content::Text),
            "image" => variant::<D, _>(object).map(Content::Image),
            "audio" => variant::<D, _>(object).map(Content::Audio),
            "resource_link" => variant::<D, _>(object).map(Content::ResourceLink),
            "resource" => variant::<D, _>(object).map(Content::Resource),
            other => Err(D::Error::unknown_variant(other, TYPES)),
        }
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let object = read_object(d)?;
        if object.contains_key("text") {
            variant::<D, _>(object).map(ResourceContents::Text)
        } else if object.contains_key("blob") {
            variant::<D, _>(object).map(ResourceContents::Blob)
        } else {
            Err(serde::de::Error::custom(
                "resource contents need a `text` or a `blob`",
            ))
        }
    }
}

/// The result of `tools/call` (without the envelope fields the server adds: `resultType`
/// and the server's `_meta`).
///
/// ```
/// use mcp_runtime::{CallToolResult, Content, tool};
///
/// /// Checks that a URL uses HTTPS.
/// #[tool]
/// async fn check(url: String) -> CallToolResult {
///     if url.starts_with("https://") {
///         CallToolResult::success(vec![Content::text("ok")])
///     } else {
///         CallToolResult::error("only https URLs are accepted")
///     }
/// }
///
/// let failed = CallToolResult::error("boom");
/// assert_eq!(
///     serde_json::to_value(&failed).unwrap(),
///     serde_json::json!({"content": [{"type": "text", "text": "boom"}], "isError": true})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// The content blocks of the result.
    pub content: Vec<Content>,
    /// The structured result (`structuredContent`), matching the tool's `outputSchema` if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// `Some(true)` when the tool failed (`isError`); the error is described in `content`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Extra metadata (`_meta`) of the result.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl CallToolResult {
    /// A successful result with these blocks.
    pub fn success(content: Vec<Content>) -> Self {
        CallToolResult {
            content,
            ..Default::default()
        }
    }

    /// A tool execution error (`isError: true`) with one text block.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![Content::text(message)],
            is_error: Some(true),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_and_contents_read_back_what_they_write() {
        let blocks = [
            Content::text("hi"),
            Content::image(b"png", "image/png"),
            Content::audio(b"wav", "audio/wav"),
            Content::resource_link("notes://1", "one"),
            Content::embedded_text("notes://1", "text/plain", "one"),
            Content::embedded_blob("blob://1", "application/octet-stream", b"\x00\x01"),
        ];
        for block in blocks {
            let json = serde_json::to_value(&block).unwrap();
            assert_eq!(
                serde_json::from_value::<Content>(json.clone()).unwrap(),
                block,
                "{json}"
            );
            // From text too (a deserializer other than `Value`'s).
            let text = json.to_string();
            assert_eq!(
                serde_json::from_str::<Content>(&text).unwrap(),
                block,
                "{text}"
            );
        }
        let refused = |v: Value| {
            serde_json::from_value::<Content>(v)
                .unwrap_err()
                .to_string()
        };
        assert!(refused(json!({"text": "hi"})).contains("missing field `type`"));
        assert!(refused(json!({"type": 1, "text": "hi"})).contains("`type` is a string"));
        assert!(refused(json!({"type": "video"})).contains("unknown variant `video`"));
        assert!(refused(json!({"type": "text"})).contains("missing field `text`"));
        assert!(refused(json!(["text"])).contains("invalid type"));
        let contents = |v: Value| serde_json::from_value::<ResourceContents>(v);
        assert!(matches!(
            contents(json!({"uri": "a://", "text": "t", "blob": "AA=="})).unwrap(),
            ResourceContents::Text(_)
        ));
        assert!(
            contents(json!({"uri": "a://"}))
                .unwrap_err()
                .to_string()
                .contains("`text` or a `blob`")
        );
        assert!(
            contents(json!({"blob": "AA=="}))
                .unwrap_err()
                .to_string()
                .contains("missing field `uri`")
        );
    }

    #[test]
    fn content_blocks_have_the_wire_shape() {
        let v = serde_json::to_value(vec![
            Content::text("hi"),
            Content::image(b"\x89PNG", "image/png"),
            Content::embedded_text("test://x", "text/plain", "body"),
            Content::resource_link("test://y", "y"),
        ])
        .unwrap();
        assert_eq!(v[0], json!({"type": "text", "text": "hi"}));
        assert_eq!(
            v[1],
            json!({"type": "image", "data": "iVBORw==", "mimeType": "image/png"})
        );
        assert_eq!(
            v[2],
            json!({"type": "resource", "resource": {"uri": "test://x", "mimeType": "text/plain", "text": "body"}})
        );
        assert_eq!(
            v[3],
            json!({"type": "resource_link", "uri": "test://y", "name": "y"})
        );
    }
}
