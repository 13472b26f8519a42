//! The envelopes every outgoing message is written in: JSON-RPC responses, error responses
//! and notifications, and the result object that every result shares (`resultType`, the
//! caching hints and `_meta`). Results are only ever built through these types: none is
//! assembled by hand or by patching text.

use super::legacy::{self, LegacyVersion, Shape};
use super::{CacheHints, RequestId, RpcError, keys};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// What kind of result a response carries (`resultType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    /// The final result of the request.
    Complete,
    /// An interim result of a multi round-trip request: the client answers
    /// `inputRequests` and retries with `requestState`.
    InputRequired,
    /// A task handle (the tasks extension): the client polls `tasks/get`.
    Task,
}

/// The `_meta` of a result: its own entries, then the server's identity under
/// `io.modelcontextprotocol/serverInfo` (which wins over an own entry of that name).
#[derive(Debug, Clone, Copy, Default)]
pub struct ResultMeta<'a> {
    /// Entries the result itself carries (a tool's `CallToolResult::meta`, a listen
    /// stream's subscription id).
    pub own: Option<&'a Map<String, Value>>,
    /// The server's `serverInfo` object, serialized once when the server was built.
    pub server_info: Option<&'a RawValue>,
}

impl ResultMeta<'_> {
    /// Whether there is nothing to write (then `_meta` is left out).
    pub fn is_empty(&self) -> bool {
        self.own.is_none_or(Map::is_empty) && self.server_info.is_none()
    }
}

impl Serialize for ResultMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.own.into_iter().flatten() {
            if k != keys::SERVER_INFO || self.server_info.is_none() {
                m.serialize_entry(k, v)?;
            }
        }
        if let Some(info) = self.server_info {
            m.serialize_entry(keys::SERVER_INFO, info)?;
        }
        m.end()
    }
}

/// A result object: `resultType`, the result's own fields (`body`), its caching hints
/// (`ttlMs`, `cacheScope`) and `_meta`.
///
/// ```
/// use mcp_runtime::protocol::envelope::{Envelope, ResultMeta, ResultType};
/// use mcp_runtime::protocol::{CacheHints, CacheScope};
///
/// #[derive(serde::Serialize)]
/// struct Body { answer: u32 }
///
/// let e = Envelope {
///     result_type: ResultType::Complete,
///     body: Body { answer: 42 },
///     cache: Some(CacheHints::new(0, CacheScope::Private)),
///     meta: ResultMeta::default(),
/// };
/// assert_eq!(
///     serde_json::to_string(&e).unwrap(),
///     r#"{"resultType":"complete","answer":42,"ttlMs":0,"cacheScope":"private"}"#
/// );
/// ```
#[derive(Debug)]
pub struct Envelope<'a, B> {
    /// `resultType`.
    pub result_type: ResultType,
    /// The fields of this kind of result.
    pub body: B,
    /// `ttlMs` and `cacheScope`, on cacheable results.
    pub cache: Option<CacheHints>,
    /// `_meta`, left out when empty.
    pub meta: ResultMeta<'a>,
}

/// The 2026-07-28 shape of an [`Envelope`], as serde writes it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Modern<'e, 'a, B> {
    result_type: ResultType,
    #[serde(flatten)]
    body: &'e B,
    #[serde(flatten)]
    cache: Option<CacheHints>,
    #[serde(rename = "_meta", skip_serializing_if = "ResultMeta::is_empty")]
    meta: ResultMeta<'a>,
}

impl<B: Serialize> Serialize for Envelope<'_, B> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Modern {
            result_type: self.result_type,
            body: &self.body,
            cache: self.cache,
            meta: self.meta,
        }
        .serialize(s)
    }
}

impl<'a, B: Serialize> Envelope<'a, B> {
    /// The result as a legacy revision has it: the same result, without what only
    /// 2026-07-28 defines (`resultType`, caching hints, the server's `_meta`), and without
    /// the fields newer than `version` ([`legacy::downgrade`]). For a revision that lacks
    /// nothing else ([`legacy::only_envelope_differs`]: 2025-11-25, what most clients
    /// speak, but for tool lists) it is written straight from the envelope; otherwise it is
    /// made a `Value` that `downgrade` takes fields out of.
    pub fn legacy(&self, version: LegacyVersion, shape: Shape) -> LegacyResult<'_, 'a, B> {
        if legacy::only_envelope_differs(version, shape) {
            return LegacyResult::Direct(self);
        }
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        legacy::downgrade(shape, version, &mut v);
        LegacyResult::Downgraded(v)
    }
}

/// A result in a legacy revision's shape, from [`Envelope::legacy`].
#[derive(Debug)]
pub enum LegacyResult<'e, 'a, B> {
    /// The envelope's result, written without the envelope's own fields.
    Direct(&'e Envelope<'a, B>),
    /// The result with the fields its revision lacks taken out.
    Downgraded(Value),
}

/// A result without the 2026-07-28 envelope's fields, as serde writes it.
#[derive(Serialize)]
struct Bare<'e, B> {
    #[serde(flatten)]
    body: &'e B,
    #[serde(rename = "_meta", skip_serializing_if = "OwnMeta::is_empty")]
    meta: OwnMeta<'e>,
}

/// A result's own `_meta` entries, but for the server's identity (only the 2026-07-28
/// envelope carries that).
#[derive(Clone, Copy)]
struct OwnMeta<'e>(Option<&'e Map<String, Value>>);

impl OwnMeta<'_> {
    fn entries(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0
            .into_iter()
            .flatten()
            .filter(|(k, _)| !legacy::envelope_meta(k))
    }

    fn is_empty(&self) -> bool {
        self.entries().next().is_none()
    }
}

impl Serialize for OwnMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.entries())
    }
}

impl<B: Serialize> Serialize for LegacyResult<'_, '_, B> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LegacyResult::Direct(e) => Bare {
                body: &e.body,
                meta: OwnMeta(e.meta.own),
            }
            .serialize(s),
            LegacyResult::Downgraded(v) => v.serialize(s),
        }
    }
}

/// `{"jsonrpc": "2.0", "id": .., "result": ..}`.
#[derive(Debug, Serialize)]
pub struct Response<'a, R> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: R,
}

/// `{"jsonrpc": "2.0", "id": .., "error": ..}`; the id is left out when it could not be
/// read from the request.
#[derive(Debug, Serialize)]
pub struct ErrorResponse<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    error: &'a RpcError,
}

/// `{"jsonrpc": "2.0", "method": .., "params": ..}`.
#[derive(Debug, Serialize)]
pub struct Notification<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    params: P,
}

/// The JSON text of a response carrying `result`.
pub fn response<R: Serialize>(id: &RequestId, result: R) -> String {
    text(&Response {
        jsonrpc: "2.0",
        id,
        result,
    })
    .expect("results serialize")
}

/// The JSON text of an error response.
pub fn error_response(id: Option<&RequestId>, error: &RpcError) -> String {
    text(&ErrorResponse {
        jsonrpc: "2.0",
        id,
        error,
    })
    .expect("errors serialize")
}

/// Room a message's text is given before it is written: most messages fit, so their buffer
/// is allocated once. `serde_json::to_string` starts at 128 bytes and grows by `realloc`,
/// which makes the grown block outside glibc's per-thread cache; freeing it puts it there
/// anyway, so with one such block per request that cache's bin fills up, and from then on
/// every message's buffer is freed the slow way (the arena, its lock, and a consolidation
/// of its small free blocks each time the freed block borders the arena's top). A buffer
/// allocated at its final size comes from that cache and goes back to it.
const MESSAGE_ROOM: usize = 512;

/// `value` as JSON text, in a buffer of [`MESSAGE_ROOM`] to start with.
fn text(value: &impl Serialize) -> serde_json::Result<String> {
    let mut buf = Vec::with_capacity(MESSAGE_ROOM);
    serde_json::to_writer(&mut buf, value)?;
    utf8(buf)
}

/// serde_json writes UTF-8 only; the check is a pass over what was just written. Out of
/// line: `text` is compiled once per message type, this once.
#[inline(never)]
fn utf8(buf: Vec<u8>) -> serde_json::Result<String> {
    String::from_utf8(buf).map_err(serde::ser::Error::custom)
}

/// Whether a received message is a request (it has a `method` and an `id`): not a
/// notification, nor a response to a request of the server's.
pub(crate) fn is_request(msg: &serde_json::Value) -> bool {
    msg.get("method").is_some() && msg.get("id").is_some()
}

/// The JSON text of a request the server sends (legacy era: `elicitation/create`,
/// `sampling/createMessage`, `roots/list`).
pub fn request<P: Serialize>(id: u64, method: &str, params: P) -> String {
    #[derive(Serialize)]
    struct Request<'a, P> {
        jsonrpc: &'static str,
        id: u64,
        method: &'a str,
        params: P,
    }
    text(&Request {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
    .expect("requests serialize")
}

/// The JSON text of a notification.
pub fn notification<P: Serialize>(method: &str, params: P) -> String {
    text(&Notification {
        jsonrpc: "2.0",
        method,
        params,
    })
    .expect("notifications serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_legacy_result_written_directly_is_the_downgraded_one() {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body {
            content: Value,
            structured_content: Value,
            is_error: bool,
        }
        let info = RawValue::from_string(r#"{"name":"x","version":"1"}"#.into()).unwrap();
        let own = json!({"com.example/a": 1, "io.modelcontextprotocol/serverInfo": "spoofed"});
        let only_info = json!({"io.modelcontextprotocol/serverInfo": "spoofed"});
        let hints = Some(CacheHints::new(5, super::super::CacheScope::Public));
        let cases = [
            (None, Some(&*info), None),
            (own.as_object(), Some(&*info), hints),
            (own.as_object(), None, None),
            (only_info.as_object(), Some(&*info), None),
            (None, None, hints),
        ];
        for (own, server_info, cache) in cases {
            let e = Envelope {
                result_type: ResultType::Complete,
                body: Body {
                    content: json!([{"type": "text", "text": "5", "_meta": {"k": 1}},
                                    {"type": "resource_link", "uri": "file:///a", "name": "a"}]),
                    structured_content: json!({"n": 5}),
                    is_error: false,
                },
                cache,
                meta: ResultMeta { own, server_info },
            };
            let version = LegacyVersion::V2025_11_25;
            let direct = e.legacy(version, Shape::CallTool);
            assert!(matches!(direct, LegacyResult::Direct(_)));
            let mut downgraded = serde_json::to_value(&e).unwrap();
            legacy::downgrade(Shape::CallTool, version, &mut downgraded);
            assert_eq!(serde_json::to_value(&direct).unwrap(), downgraded);
            // An older revision still goes through `downgrade`.
            let old = e.legacy(LegacyVersion::V2025_03_26, Shape::CallTool);
            assert!(matches!(old, LegacyResult::Downgraded(_)));
        }
    }

    #[test]
    fn the_server_info_goes_last_and_wins() {
        let own = json!({"com.example/a": 1, "io.modelcontextprotocol/serverInfo": "spoofed"});
        let info = RawValue::from_string(r#"{"name":"x"}"#.into()).unwrap();
        let meta = ResultMeta {
            own: own.as_object(),
            server_info: Some(&info),
        };
        let e = Envelope {
            result_type: ResultType::InputRequired,
            body: json!({"requestState": "s"}),
            cache: None,
            meta,
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"resultType":"input_required","requestState":"s","_meta":{"com.example/a":1,"io.modelcontextprotocol/serverInfo":{"name":"x"}}}"#
        );
    }

    #[test]
    fn envelopes_of_messages() {
        let id = RequestId::from_value(&json!(7)).unwrap();
        assert_eq!(
            response(&id, json!({"a": 1})),
            r#"{"jsonrpc":"2.0","id":7,"result":{"a":1}}"#
        );
        let e = RpcError::invalid_params("bad");
        assert_eq!(
            error_response(None, &e),
            r#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"bad"}}"#
        );
        assert_eq!(
            notification("notifications/progress", json!({"progress": 1})),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#
        );
    }

    #[test]
    fn an_answer_longer_than_its_first_buffer_is_whole() {
        let id = RequestId::from_value(&json!("r")).unwrap();
        let long = "é🦀\"".repeat(MESSAGE_ROOM);
        let result = json!({"text": long, "n": [1, 2.5, -3]});
        let text = response(&id, &result);
        assert!(text.len() > MESSAGE_ROOM * 3);
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"jsonrpc": "2.0", "id": "r", "result": result})
        );
        assert!(text.starts_with(r#"{"jsonrpc":"2.0","id":"r","result":{"#));
    }
}
