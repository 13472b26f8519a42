//! The legacy era: the revisions that open with `initialize` (2025-11-25, 2025-06-18,
//! 2025-03-26), how one is negotiated, and what each one's results may carry. Results are
//! made once, in the 2026-07-28 shape; [`downgrade`] takes out what the negotiated
//! revision does not define, from the one table in this file.

use super::RpcError;
use super::error::ErrorCode;
use serde_json::{Map, Value, json};

/// A legacy revision, oldest first (so they compare in time order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LegacyVersion {
    /// `2025-03-26`: Streamable HTTP and sessions, JSON-RPC batches, tool annotations,
    /// audio, completions.
    V2025_03_26,
    /// `2025-06-18`: `structuredContent` and `outputSchema`, titles, resource links,
    /// elicitation, `_meta` on items; no more batches.
    V2025_06_18,
    /// `2025-11-25`: icons, elicitation modes and richer form schemas, sampling tools.
    V2025_11_25,
}

/// The legacy revisions served, newest first (as `supportedVersions` lists them).
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

impl LegacyVersion {
    /// The newest legacy revision, answered to an `initialize` asking for one not served.
    pub const LATEST: LegacyVersion = LegacyVersion::V2025_11_25;

    /// The revision named `v`, if it is a served legacy one.
    pub fn parse(v: &str) -> Option<Self> {
        match v {
            "2025-03-26" => Some(Self::V2025_03_26),
            "2025-06-18" => Some(Self::V2025_06_18),
            "2025-11-25" => Some(Self::V2025_11_25),
            _ => None,
        }
    }

    /// What `initialize` answers to a client asking for `requested`: that revision when it
    /// is served, else the newest (the client then decides whether it can speak it).
    pub fn negotiate(requested: &str) -> Self {
        Self::parse(requested).unwrap_or(Self::LATEST)
    }

    /// The revision's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
        }
    }

    /// Whether messages may come in JSON-RPC batches (2025-03-26 only).
    pub fn allows_batches(self) -> bool {
        self == Self::V2025_03_26
    }

    /// Whether the revision has elicitation (from 2025-06-18).
    pub fn has_elicitation(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Whether the revision has elicitation's modes, URL mode among them (from
    /// 2025-11-25; before, every elicitation is a form).
    pub fn has_elicitation_modes(self) -> bool {
        self >= Self::V2025_11_25
    }
}

impl std::fmt::Display for LegacyVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of object a legacy result is, for [`downgrade`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Nothing revision-specific (`{}`, completion results, ...).
    Plain,
    /// The `initialize` result.
    Initialize,
    /// A `tools/list` page.
    Tools,
    /// A `prompts/list` page.
    Prompts,
    /// A `resources/list` page.
    Resources,
    /// A `resources/templates/list` page.
    Templates,
    /// A `tools/call` result.
    CallTool,
    /// A `prompts/get` result.
    GetPrompt,
    /// A `resources/read` result.
    ReadResource,
    /// The params of an `elicitation/create` request the server sends.
    Elicit,
}

/// Takes out of `v` (a result in the 2026-07-28 shape, or a request's params) what
/// `version` does not define, and puts in what it requires that 2026-07-28 took out (a
/// URL-mode elicitation's `elicitationId`). The one table of which revision introduced
/// which field.
pub fn downgrade(shape: Shape, version: LegacyVersion, v: &mut Value) {
    use LegacyVersion::*;
    let Some(o) = v.as_object_mut() else { return };
    // Never on a legacy wire: the 2026-07-28 envelope's own fields.
    for k in ["resultType", "ttlMs", "cacheScope"] {
        o.remove(k);
    }
    strip_meta(o);
    if version < V2025_06_18 {
        o.remove("_meta");
    }
    match shape {
        Shape::Plain => {}
        Shape::Initialize => {
            if let Some(info) = o.get_mut("serverInfo").and_then(Value::as_object_mut) {
                implementation(info, version);
            }
        }
        Shape::Tools => each(o, "tools", |t| {
            if let Some(schema) = t.get_mut("outputSchema")
                && wraps_output(schema)
            {
                wrap_output_schema(schema);
            }
            if version < V2025_06_18 {
                // `title` came in 2025-06-18; 2025-03-26 has the annotation's title.
                t.remove("title");
                t.remove("outputSchema");
                t.remove("_meta");
            }
            if version < V2025_11_25 {
                t.remove("icons");
                t.remove("execution");
            }
        }),
        Shape::Prompts => each(o, "prompts", |p| {
            item(p, version);
            if version < V2025_06_18
                && let Some(args) = p.get_mut("arguments").and_then(Value::as_array_mut)
            {
                for a in args.iter_mut().filter_map(Value::as_object_mut) {
                    a.remove("title");
                }
            }
        }),
        Shape::Resources => each(o, "resources", |r| {
            item(r, version);
            annotations(r, version);
        }),
        Shape::Templates => each(o, "resourceTemplates", |r| {
            item(r, version);
            annotations(r, version);
        }),
        Shape::CallTool => {
            if version < V2025_06_18 {
                o.remove("structuredContent");
            }
            blocks(o.get_mut("content"), version);
        }
        Shape::GetPrompt => {
            if let Some(messages) = o.get_mut("messages").and_then(Value::as_array_mut) {
                for m in messages.iter_mut().filter_map(Value::as_object_mut) {
                    if let Some(c) = m.get_mut("content") {
                        block(c, version);
                    }
                }
            }
        }
        Shape::ReadResource => each(o, "contents", |c| {
            if version < V2025_06_18 {
                c.remove("_meta");
            }
        }),
        Shape::Elicit => {
            if version < V2025_11_25 {
                o.remove("mode");
                if let Some(fields) = o
                    .get_mut("requestedSchema")
                    .and_then(|s| s.get_mut("properties"))
                    .and_then(Value::as_object_mut)
                {
                    fields
                        .values_mut()
                        .filter_map(Value::as_object_mut)
                        .for_each(field_before_2025_11_25);
                }
            } else if o.get("mode").and_then(Value::as_str) == Some("url")
                && !o.contains_key("elicitationId")
            {
                // 2025-11-25 requires an id on a URL-mode request (2026-07-28 took it out).
                o.insert("elicitationId".into(), Value::String(elicitation_id()));
            }
        }
    }
}

/// A field of an elicitation form as 2025-06-18 has them: titled choices (a `oneOf` of
/// `const`s with `title`s, from 2025-11-25) become `enum` with `enumNames`, and only a
/// boolean keeps its `default` (the others got one in 2025-11-25).
fn field_before_2025_11_25(field: &mut Map<String, Value>) {
    if field.get("type").and_then(Value::as_str) != Some("boolean") {
        field.remove("default");
    }
    let Some(Value::Array(choices)) = field.get("oneOf") else {
        return;
    };
    let mut values = Vec::with_capacity(choices.len());
    let mut names = Vec::with_capacity(choices.len());
    for choice in choices {
        let Some(value) = choice.get("const").filter(|c| c.is_string()) else {
            return;
        };
        values.push(value.clone());
        names.push(choice.get("title").unwrap_or(value).clone());
    }
    field.remove("oneOf");
    field.insert("enum".into(), Value::Array(values));
    field.insert("enumNames".into(), Value::Array(names));
}

/// A fresh `elicitationId`: 128 random bits in hex, unique to the request that carries it.
fn elicitation_id() -> String {
    let mut bytes = [0u8; 16];
    // Without the OS's random source the id is still unique per process: a counter.
    if getrandom::fill(&mut bytes).is_err() {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes[..8].copy_from_slice(&n.to_be_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `version` lacks nothing a result of `shape` has but what only the 2026-07-28
/// envelope carries (`resultType`, the caching hints, the server's `_meta` entry): true of
/// the newest legacy revision, which [`downgrade`] takes nothing else out of (a test holds
/// the table above to it), but for tool lists, whose output schemas may need wrapping
/// ([`wraps_output`]), and elicitations, to which it adds an id. Results in such a revision are written straight from their
/// envelope, without a pass through a `Value`
/// ([`Envelope::legacy`](super::envelope::Envelope::legacy)).
pub fn only_envelope_differs(version: LegacyVersion, shape: Shape) -> bool {
    version == LegacyVersion::V2025_11_25 && !matches!(shape, Shape::Tools | Shape::Elicit)
}

/// Whether a tool's `outputSchema` is served wrapped to a legacy client: the legacy
/// revisions allow only `"type": "object"` at an output schema's root, and an object as
/// `structuredContent` (2026-07-28 allows any schema). A tool whose output is anything else
/// (an array, a number, a union) is listed with an object schema whose one required
/// property `result` is its own, and its results carry [`wrap_output`]'s
/// `{"result": ...}`, as FastMCP does.
pub fn wraps_output(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) != Some("object")
}

/// The object schema whose one required property, `result`, is `schema`. What names the
/// schema's root (`$schema`, `$id`, `$defs`, `definitions`) moves to the wrapper, so that
/// references like `#/$defs/Item` still resolve.
fn wrap_output_schema(schema: &mut Value) {
    let mut inner = std::mem::take(schema);
    let mut outer = Map::new();
    if let Some(o) = inner.as_object_mut() {
        for k in ["$schema", "$id", "$defs", "definitions"] {
            if let Some(v) = o.remove(k) {
                outer.insert(k.to_owned(), v);
            }
        }
    }
    rebase_refs(&mut inner);
    outer.insert("type".into(), json!("object"));
    outer.insert("properties".into(), json!({ "result": inner }));
    outer.insert("required".into(), json!(["result"]));
    *schema = Value::Object(outer);
}

/// Points the root-relative references of a schema moved under `properties.result` at
/// their new place (`#` and `#/items/...`; those into the definitions moved up stay).
fn rebase_refs(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, v) in o.iter_mut() {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => {
                        let moved = !(r.starts_with("#/$defs/") || r.starts_with("#/definitions/"));
                        if moved && let Some(rest) = r.strip_prefix('#') {
                            *r = format!("#/properties/result{rest}");
                        }
                    }
                    (_, v) => rebase_refs(v),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(rebase_refs),
        _ => {}
    }
}

/// The `structuredContent` a legacy client gets from a tool whose schema
/// [`wraps_output`]: `{"result": value}`.
pub fn wrap_output(value: Value) -> Value {
    json!({ "result": value })
}

/// The result `_meta` entries only the 2026-07-28 envelope carries: never on a legacy
/// wire (here, and where [`Envelope::legacy`](super::envelope::Envelope::legacy) writes a
/// result directly).
pub(crate) fn envelope_meta(key: &str) -> bool {
    key == super::keys::SERVER_INFO
}

/// Takes out the result `_meta` entries of [`envelope_meta`].
fn strip_meta(o: &mut Map<String, Value>) {
    let empty = match o.get_mut("_meta").and_then(Value::as_object_mut) {
        Some(m) => {
            m.retain(|k, _| !envelope_meta(k));
            m.is_empty()
        }
        None => false,
    };
    if empty {
        o.remove("_meta");
    }
}

fn each(o: &mut Map<String, Value>, key: &str, mut f: impl FnMut(&mut Map<String, Value>)) {
    if let Some(items) = o.get_mut(key).and_then(Value::as_array_mut) {
        for i in items.iter_mut().filter_map(Value::as_object_mut) {
            f(i);
        }
    }
}

/// A prompt, resource or template: `title` and `_meta` (2025-06-18), `icons` (2025-11-25).
fn item(o: &mut Map<String, Value>, version: LegacyVersion) {
    if version < LegacyVersion::V2025_06_18 {
        o.remove("title");
        o.remove("_meta");
    }
    if version < LegacyVersion::V2025_11_25 {
        o.remove("icons");
    }
}

/// `annotations.lastModified` came in 2025-06-18.
fn annotations(o: &mut Map<String, Value>, version: LegacyVersion) {
    if version >= LegacyVersion::V2025_06_18 {
        return;
    }
    if let Some(a) = o.get_mut("annotations").and_then(Value::as_object_mut) {
        a.remove("lastModified");
    }
}

/// `serverInfo`: `title` (2025-06-18), `description`, `icons`, `websiteUrl` (2025-11-25).
fn implementation(o: &mut Map<String, Value>, version: LegacyVersion) {
    if version < LegacyVersion::V2025_06_18 {
        o.remove("title");
    }
    if version < LegacyVersion::V2025_11_25 {
        for k in ["description", "icons", "websiteUrl"] {
            o.remove(k);
        }
    }
}

fn blocks(content: Option<&mut Value>, version: LegacyVersion) {
    if let Some(items) = content.and_then(Value::as_array_mut) {
        for b in items {
            block(b, version);
        }
    }
}

/// One content block: `resource_link` and `_meta` came in 2025-06-18 (a link becomes its
/// text), a link's `icons` in 2025-11-25.
fn block(b: &mut Value, version: LegacyVersion) {
    let Some(o) = b.as_object_mut() else { return };
    let is_link = o.get("type").and_then(Value::as_str) == Some("resource_link");
    if version < LegacyVersion::V2025_06_18 {
        if is_link {
            let uri = o.get("uri").and_then(Value::as_str).unwrap_or_default();
            let text = match o.get("name").and_then(Value::as_str) {
                Some(name) if name != uri => format!("{name}: {uri}"),
                _ => uri.to_owned(),
            };
            *b = json!({ "type": "text", "text": text });
            return;
        }
        o.remove("_meta");
        annotations(o, version);
        if let Some(r) = o.get_mut("resource").and_then(Value::as_object_mut) {
            r.remove("_meta");
        }
    }
    if version < LegacyVersion::V2025_11_25 && is_link {
        o.remove("icons");
    }
}

/// `-32002` with `data.uri`: the legacy revisions' resource-not-found (2026-07-28 says
/// `-32602`).
pub const RESOURCE_NOT_FOUND: i32 = -32002;

/// An error as a legacy client expects it: resource-not-found takes the legacy code, and
/// the error codes only 2026-07-28 defines become `-32603` (a missing capability, say,
/// which a legacy request cannot have declared per request).
pub fn recode(e: RpcError) -> RpcError {
    let code = e.code();
    let is_resource_not_found = code == ErrorCode::INVALID_PARAMS
        && e.data().and_then(|d| d.get("uri")).is_some()
        && e.message().starts_with("Resource not found");
    if is_resource_not_found {
        let data = e.data().cloned();
        let out = RpcError::new(ErrorCode::RESOURCE_NOT_FOUND_LEGACY, e.message().to_owned());
        return match data {
            Some(d) => out.with_data(d),
            None => out,
        };
    }
    if code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        || code == ErrorCode::HEADER_MISMATCH
        || code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
    {
        return RpcError::internal(e.message().to_owned());
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_negotiate_and_order() {
        assert_eq!(
            LegacyVersion::negotiate("2025-06-18").as_str(),
            "2025-06-18"
        );
        assert_eq!(
            LegacyVersion::negotiate("2024-11-05"),
            LegacyVersion::LATEST
        );
        assert_eq!(
            LegacyVersion::negotiate("2026-07-28"),
            LegacyVersion::LATEST
        );
        assert!(LegacyVersion::V2025_03_26 < LegacyVersion::V2025_11_25);
        assert!(LegacyVersion::V2025_03_26.allows_batches());
        assert!(!LegacyVersion::V2025_03_26.has_elicitation());
        for v in LEGACY_VERSIONS {
            assert_eq!(LegacyVersion::parse(v).unwrap().as_str(), *v);
        }
    }

    #[test]
    fn fields_newer_than_the_revision_are_left_out() {
        let tools = json!({
            "resultType": "complete", "ttlMs": 1, "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "x"}},
            "tools": [{"name": "t", "title": "T", "inputSchema": {}, "outputSchema": {"type": "object"},
                       "icons": [{"src": "https://x/i.png"}], "annotations": {"title": "A"}}],
        });
        let mut v = tools.clone();
        downgrade(Shape::Tools, LegacyVersion::V2025_11_25, &mut v);
        assert_eq!(v["tools"][0]["icons"][0]["src"], "https://x/i.png");
        assert!(v.get("resultType").is_none() && v.get("_meta").is_none());
        let mut v = tools.clone();
        downgrade(Shape::Tools, LegacyVersion::V2025_06_18, &mut v);
        assert!(v["tools"][0].get("icons").is_none());
        assert_eq!(v["tools"][0]["outputSchema"], json!({"type": "object"}));
        let mut v = tools;
        downgrade(Shape::Tools, LegacyVersion::V2025_03_26, &mut v);
        let t = &v["tools"][0];
        assert!(t.get("title").is_none() && t.get("outputSchema").is_none());
        assert_eq!(t["annotations"]["title"], "A");

        let mut call = json!({
            "content": [{"type": "resource_link", "uri": "file:///a", "name": "a"},
                        {"type": "text", "text": "x", "_meta": {"k": 1}}],
            "structuredContent": {"n": 1},
        });
        downgrade(Shape::CallTool, LegacyVersion::V2025_03_26, &mut call);
        assert_eq!(
            call["content"][0],
            json!({"type": "text", "text": "a: file:///a"})
        );
        assert!(call["content"][1].get("_meta").is_none());
        assert!(call.get("structuredContent").is_none());
    }

    #[test]
    fn the_newest_revision_lacks_only_the_envelope_fields() {
        // Every field the table above knows of, for every shape at once.
        let icons = json!([{"src": "https://x/i.png"}]);
        let everything = json!({
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "x"}, "own": 1},
            "serverInfo": {"name": "s", "title": "S", "description": "d", "icons": icons,
                           "websiteUrl": "https://x"},
            "tools": [{"name": "t", "title": "T", "outputSchema": {"type": "object"}, "_meta": {"k": 1},
                       "icons": icons, "execution": {}}],
            "prompts": [{"name": "p", "title": "P", "_meta": {}, "icons": icons,
                         "arguments": [{"name": "a", "title": "A"}]}],
            "resources": [{"uri": "u", "title": "R", "_meta": {}, "icons": icons,
                           "annotations": {"lastModified": "2025-01-01T00:00:00Z"}}],
            "resourceTemplates": [{"uriTemplate": "u/{x}", "title": "R", "_meta": {},
                                   "icons": icons,
                                   "annotations": {"lastModified": "2025-01-01T00:00:00Z"}}],
            "content": [{"type": "resource_link", "uri": "file:///a", "name": "a", "icons": icons},
                        {"type": "text", "text": "x", "_meta": {},
                         "annotations": {"lastModified": "2025-01-01T00:00:00Z"}},
                        {"type": "resource", "resource": {"uri": "u", "text": "t", "_meta": {}}}],
            "structuredContent": {"n": 1},
            "messages": [{"role": "user",
                          "content": {"type": "resource_link", "uri": "u", "name": "n",
                                      "icons": icons}}],
            "contents": [{"uri": "u", "text": "t", "_meta": {}}],
            "mode": "form",
        });
        let mut enveloped = everything.clone();
        let o = enveloped.as_object_mut().unwrap();
        o.insert("resultType".into(), json!("complete"));
        o.insert("ttlMs".into(), json!(1));
        o.insert("cacheScope".into(), json!("public"));
        let mut expected = everything;
        expected["_meta"] = json!({"own": 1});
        let shapes = [
            Shape::Plain,
            Shape::Initialize,
            Shape::Tools,
            Shape::Prompts,
            Shape::Resources,
            Shape::Templates,
            Shape::CallTool,
            Shape::GetPrompt,
            Shape::ReadResource,
            Shape::Elicit,
        ];
        for version in LEGACY_VERSIONS
            .iter()
            .filter_map(|v| LegacyVersion::parse(v))
        {
            let mut changed = false;
            for shape in shapes {
                let mut v = enveloped.clone();
                downgrade(shape, version, &mut v);
                if only_envelope_differs(version, shape) {
                    assert_eq!(v, expected, "{shape:?} at {version}");
                }
                changed |= v != expected;
            }
            let newest = version == LegacyVersion::LATEST;
            assert_eq!(changed, !newest, "{version}");
        }
        // Tool lists are the exception: an output schema that is no object is wrapped.
        let mut v = json!({"tools": [{"name": "t", "outputSchema": {"type": "array"}}]});
        downgrade(Shape::Tools, LegacyVersion::LATEST, &mut v);
        assert!(!only_envelope_differs(LegacyVersion::LATEST, Shape::Tools));
        assert_eq!(v["tools"][0]["outputSchema"]["type"], "object");
    }

    #[test]
    fn a_url_elicitation_gets_an_id_in_2025_11_25_and_no_mode_before() {
        let url = json!({"mode": "url", "message": "m", "url": "https://example.com/a"});
        let mut a = url.clone();
        downgrade(Shape::Elicit, LegacyVersion::V2025_11_25, &mut a);
        let id = a["elicitationId"].as_str().unwrap().to_owned();
        assert_eq!(id.len(), 32);
        let mut b = url.clone();
        downgrade(Shape::Elicit, LegacyVersion::V2025_11_25, &mut b);
        assert_ne!(b["elicitationId"], json!(id), "one id per request");
        // Form mode has no id; an id already there is kept.
        let mut form = json!({"mode": "form", "message": "m", "requestedSchema": {}});
        downgrade(Shape::Elicit, LegacyVersion::V2025_11_25, &mut form);
        assert!(form.get("elicitationId").is_none());
        let mut given = url.clone();
        given["elicitationId"] = json!("mine");
        downgrade(Shape::Elicit, LegacyVersion::V2025_11_25, &mut given);
        assert_eq!(given["elicitationId"], "mine");
        // 2025-06-18 has no modes (and no URL elicitation to ask for).
        let mut old = form.clone();
        downgrade(Shape::Elicit, LegacyVersion::V2025_06_18, &mut old);
        assert!(old.get("mode").is_none());
    }

    #[test]
    fn titled_choices_are_enum_names_before_2025_11_25() {
        let form = json!({"mode": "form", "message": "m", "requestedSchema": {
            "type": "object",
            "properties": {
                "plan": {"type": "string", "title": "Plan", "default": "free", "oneOf": [
                    {"const": "free", "title": "Free tier"},
                    {"const": "pro"}
                ]},
                "seats": {"type": "integer", "default": 3},
                "tos": {"type": "boolean", "default": false},
                "size": {"type": "string", "enum": ["s", "m"]}
            },
            "required": ["plan"]
        }});
        let mut old = form.clone();
        downgrade(Shape::Elicit, LegacyVersion::V2025_06_18, &mut old);
        let p = &old["requestedSchema"]["properties"];
        assert_eq!(
            p["plan"],
            json!({"type": "string", "title": "Plan", "enum": ["free", "pro"], "enumNames": ["Free tier", "pro"]})
        );
        assert_eq!(p["seats"], json!({"type": "integer"}));
        assert_eq!(p["tos"], json!({"type": "boolean", "default": false}));
        assert_eq!(p["size"], form["requestedSchema"]["properties"]["size"]);
        assert_eq!(old["requestedSchema"]["required"], json!(["plan"]));
        // 2025-11-25 has them as they are.
        let mut new = form.clone();
        downgrade(Shape::Elicit, LegacyVersion::V2025_11_25, &mut new);
        assert_eq!(new["requestedSchema"], form["requestedSchema"]);
    }

    #[test]
    fn output_schemas_that_are_no_object_are_wrapped_with_their_definitions() {
        let mut v = json!({"tools": [
            {"name": "list", "outputSchema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "array", "items": {"$ref": "#/$defs/Item"},
                "$defs": {"Item": {"type": "object"}}}},
            {"name": "count", "outputSchema": {"type": "integer"}},
            {"name": "maybe", "outputSchema": {"type": ["object", "null"]}},
            {"name": "thing", "outputSchema": {"type": "object", "properties": {}}},
        ]});
        downgrade(Shape::Tools, LegacyVersion::V2025_06_18, &mut v);
        let list = &v["tools"][0]["outputSchema"];
        assert_eq!(list["type"], "object");
        assert_eq!(list["required"], json!(["result"]));
        assert_eq!(list["$defs"]["Item"], json!({"type": "object"}));
        assert_eq!(
            list["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(
            list["properties"]["result"],
            json!({"type": "array", "items": {"$ref": "#/$defs/Item"}})
        );
        assert_eq!(
            v["tools"][1]["outputSchema"]["properties"]["result"]["type"],
            "integer"
        );
        // A reference to the root, or into it, follows it under `result`.
        let mut w = json!({"tools": [{"name": "tree", "outputSchema": {
            "type": "array", "items": {"anyOf": [{"$ref": "#"}, {"$ref": "#/items/anyOf/1"},
                                                 {"type": "string"}]}}}]});
        downgrade(Shape::Tools, LegacyVersion::V2025_11_25, &mut w);
        let any = &w["tools"][0]["outputSchema"]["properties"]["result"]["items"]["anyOf"];
        assert_eq!(any[0]["$ref"], "#/properties/result");
        assert_eq!(any[1]["$ref"], "#/properties/result/items/anyOf/1");
        assert_eq!(v["tools"][2]["outputSchema"]["type"], "object");
        assert_eq!(v["tools"][2]["outputSchema"]["required"], json!(["result"]));
        assert_eq!(
            v["tools"][3]["outputSchema"],
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(wrap_output(json!([1])), json!({"result": [1]}));
    }

    #[test]
    fn errors_take_their_legacy_codes() {
        let e = recode(RpcError::resource_not_found("test://x"));
        assert_eq!(e.code().get(), -32002);
        assert_eq!(e.data().unwrap()["uri"], "test://x");
        let e = recode(RpcError::missing_capability(
            "no sampling",
            json!({"sampling": {}}),
        ));
        assert_eq!(e.code().get(), -32603);
        assert_eq!(recode(RpcError::invalid_params("bad")).code().get(), -32602);
    }
}
