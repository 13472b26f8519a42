//! Checking a definition and compiling what it needs per request (argument validators,
//! URI templates, list entries). The rules are `mcp_rules`, the ones the macros apply at
//! compile time, so a definition built by hand is held to exactly the same.

use crate::protocol::headers::{self, HeaderParam};
use crate::schema::{ArgumentValidator, LazyValidator};
use crate::server::context::Extensions;
use crate::server::def::kind::Kind;
use crate::server::def::{Def, Icon, Item, PromptDef, Requirements, ResourceDef, ToolDef};
use mcp_rules::Check;
use mcp_uri_template::UriTemplate;
use serde_json::value::RawValue;
use std::sync::Arc;

/// A tool, checked, with its validator and list entry.
///
/// Its JSON is held once, as the text `tools/list` serves (shared with the list); the
/// parsed `inputSchema` and `outputSchema` are dropped from `def` once that text is made.
pub(crate) struct ToolEntry {
    pub(crate) def: ToolDef,
    /// Compiled on the first call when the schema is generated (see
    /// [`crate::schema::can_defer`]), else when the server is built.
    validator: LazyValidator,
    /// The definition as listed.
    pub(crate) json: Arc<RawValue>,
    /// Its `x-mcp-header` parameters.
    pub(crate) headers: Vec<HeaderParam>,
    /// Its output schema is no object: a legacy client gets it, and its structured
    /// content, wrapped ([`crate::protocol::legacy::wraps_output`]).
    pub(crate) wraps_output: bool,
}

impl ToolEntry {
    /// The argument validator, compiled now (from the listed `inputSchema`) if this is the
    /// first call. `Err`: the schema does not compile (only a generated schema can get
    /// that far, from a hand-written `JsonSchema` impl).
    pub(crate) fn validator(&self) -> Result<&ArgumentValidator, &str> {
        self.validator.get(self.def.spec.patterns, || {
            #[derive(serde::Deserialize)]
            struct Listed {
                #[serde(rename = "inputSchema")]
                input_schema: serde_json::Value,
            }
            serde_json::from_str::<Listed>(self.json.get())
                .map(|l| l.input_schema)
                .map_err(|e| e.to_string())
        })
    }
}

/// A prompt, checked, with its list entry.
pub(crate) struct PromptEntry {
    pub(crate) def: PromptDef,
    pub(crate) json: Arc<RawValue>,
}

/// A resource or template, checked, with its parsed template and list entry.
pub(crate) struct ResourceEntry {
    pub(crate) def: ResourceDef,
    pub(crate) template: Arc<UriTemplate>,
    pub(crate) variables: Vec<String>,
    pub(crate) json: Arc<RawValue>,
}

/// Problems found in one definition, each naming it.
struct Problems<'a> {
    what: String,
    errors: &'a mut Vec<String>,
}

impl Problems<'_> {
    fn push(&mut self, problem: impl std::fmt::Display) {
        self.errors.push(format!("{}: {problem}", self.what));
    }
    fn check(&mut self, check: Check) {
        if let Err(v) = check {
            self.push(v);
        }
    }
}

/// Icons, wherever they are (items and the server itself).
pub(crate) fn check_icons(icons: &[Icon], what: &str, errors: &mut Vec<String>) {
    let mut p = Problems {
        what: what.to_owned(),
        errors,
    };
    for icon in icons {
        p.check(mcp_rules::icon_src(&icon.src));
        if let Some(theme) = &icon.theme {
            p.check(mcp_rules::icon_theme(theme));
        }
    }
}

/// The rules every kind shares: its name, icons, `_meta` keys, the state its extractors
/// need; completers only where the kind has completion.
fn check_item(
    item: &Item,
    requirements: &Requirements,
    name_rule: fn(&str) -> Check,
    completes: bool,
    ext: &Extensions,
    p: &mut Problems<'_>,
) {
    p.check(name_rule(&item.name));
    check_icons(&item.icons, &p.what.clone(), p.errors);
    for key in item.meta.iter().flat_map(|m| m.keys()) {
        p.check(mcp_rules::meta_key(key));
    }
    for scope in &item.scopes {
        p.check(mcp_rules::scope(scope));
    }
    for (id, ty) in &requirements.required_state {
        if !ext.contains(*id) {
            p.push(format!(
                "it takes `State<{ty}>`, but the builder has no state of that type; add it with `.state(...)`"
            ));
        }
    }
    for ty in &requirements.required_layered {
        p.push(format!(
            "it takes `Layered<{ty}>`, but no middleware wraps it, so nothing can provide one; add a middleware that inserts it (`Request::insert`) with `.layer(...)` on the builder or the item"
        ));
    }
    if !completes && !item.completers.is_empty() {
        p.push("tool arguments have no completion (completers apply to prompt arguments and resource template variables)");
    }
}

/// Checks a tool; compiles its argument validator when its schema is hand-written (so a
/// broken one is refused now) or has parts that can fail to compile, and leaves it to the
/// first call otherwise.
pub(crate) fn tool(mut def: ToolDef, ext: &Extensions) -> Result<ToolEntry, Vec<String>> {
    let mut errors = Vec::new();
    let mut p = Problems {
        what: format!("tool `{}`", def.item.name),
        errors: &mut errors,
    };
    check_item(
        &def.item,
        &def.requirements,
        mcp_rules::tool_name,
        false,
        ext,
        &mut p,
    );
    let spec = &def.spec;
    let mut validator = None;
    if let Some(e) = &spec.input_schema_error {
        p.push(format!(
            "the hand-written inputSchema is not valid JSON: {e}"
        ));
    } else {
        let root = spec.input_schema.get("type").and_then(|t| t.as_str());
        p.check(mcp_rules::input_schema_root(root));
        // A hand-written schema that lists properties lists the typed parameters' too:
        // a client reads the schema, so one it lacks would never be sent. One that may
        // declare properties elsewhere (a subschema, a reference, a pattern) is not
        // checked here: it may declare the parameter there.
        const ELSEWHERE: [&str; 9] = [
            "allOf",
            "anyOf",
            "oneOf",
            "$ref",
            "if",
            "then",
            "else",
            "dependentSchemas",
            "patternProperties",
        ];
        let listed = spec
            .input_schema
            .get("properties")
            .and_then(|v| v.as_object())
            .filter(|_| {
                ELSEWHERE
                    .iter()
                    .all(|k| spec.input_schema.get(*k).is_none())
            });
        if let (Some(_), Some(listed)) = (&spec.input_schema_text, listed) {
            for name in spec.typed.iter().filter(|n| !listed.contains_key(*n)) {
                let names: Vec<&str> = listed.keys().map(String::as_str).collect();
                p.push(format!(
                    "parameter `{name}` is no property of the hand-written inputSchema (which lists {}), so no client would send it; add it to the schema, or read it from `Arguments`",
                    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
                ));
            }
        }
        let generated = spec.input_schema_text.is_none();
        if generated && crate::schema::can_defer(&spec.input_schema) {
            validator = Some(LazyValidator::deferred());
        } else {
            match ArgumentValidator::compile_with(&spec.input_schema, spec.patterns) {
                Ok(v) => validator = Some(LazyValidator::compiled(v)),
                Err(e) => p.push(format!("inputSchema does not compile: {e}")),
            }
        }
    }
    let headers = headers::header_params(&spec.input_schema).unwrap_or_else(|es| {
        for e in es {
            p.push(e);
        }
        Vec::new()
    });
    match validator {
        Some(validator) if errors.is_empty() => {
            let json = Arc::from(def.to_json());
            let wraps_output = (def.spec.output_schema.as_ref())
                .is_some_and(crate::protocol::legacy::wraps_output);
            // The listed text is the one copy kept.
            def.spec.input_schema = serde_json::Value::Null;
            def.spec.input_schema_text = None;
            def.spec.output_schema = None;
            Ok(ToolEntry {
                json,
                def,
                validator,
                headers,
                wraps_output,
            })
        }
        _ => Err(errors),
    }
}

/// [`prompt`], reached through the prompts' engine: what the builder and
/// [`Server::add_prompt`](crate::Server::add_prompt) call, so that a server without
/// prompts does not link the prompts' code.
pub(crate) fn by_engine_prompt(
    def: PromptDef,
    ext: &Extensions,
) -> Result<PromptEntry, Vec<String>> {
    (def.spec.engine.compile)(def, ext)
}

/// [`resource`], reached through the resources' engine (as [`by_engine_prompt`]).
pub(crate) fn by_engine_resource(
    def: ResourceDef,
    ext: &Extensions,
) -> Result<ResourceEntry, Vec<String>> {
    (def.spec.engine.compile)(def, ext)
}

/// Checks a prompt (the prompts' engine's `compile`).
pub(crate) fn prompt(def: PromptDef, ext: &Extensions) -> Result<PromptEntry, Vec<String>> {
    let mut errors = Vec::new();
    let mut p = Problems {
        what: format!("prompt `{}`", def.item.name),
        errors: &mut errors,
    };
    check_item(
        &def.item,
        &def.requirements,
        mcp_rules::prompt_name,
        true,
        ext,
        &mut p,
    );
    for arg in def.item.completers.keys() {
        if !def.spec.arguments.iter().any(|a| &a.name == arg) {
            p.push(format!(
                "it has a completer for `{arg}`, which is not one of its arguments"
            ));
        }
    }
    if errors.is_empty() {
        Ok(PromptEntry {
            json: Arc::from(def.to_json()),
            def,
        })
    } else {
        Err(errors)
    }
}

/// Checks a resource and parses its URI template (the resources' engine's `compile`).
pub(crate) fn resource(def: ResourceDef, ext: &Extensions) -> Result<ResourceEntry, Vec<String>> {
    let mut errors = Vec::new();
    let mut p = Problems {
        what: format!("resource `{}`", def.spec.uri),
        errors: &mut errors,
    };
    check_item(
        &def.item,
        &def.requirements,
        mcp_rules::resource_name,
        true,
        ext,
        &mut p,
    );
    if let Some(a) = &def.spec.annotations {
        if let Some(priority) = a.priority {
            p.check(mcp_rules::priority(priority));
        }
        if let Some(lm) = &a.last_modified {
            p.check(mcp_rules::last_modified(lm));
        }
    }
    let template = match UriTemplate::parse(&def.spec.uri) {
        Ok(t) => t,
        Err(e) => {
            p.push(format!("invalid URI template: {e}"));
            return Err(errors);
        }
    };
    let variables: Vec<String> = template
        .variables()
        .into_iter()
        .map(|(v, _)| v.to_owned())
        .collect();
    for var in def.item.completers.keys() {
        if !variables.contains(var) {
            p.push(format!(
                "it has a completer for `{var}`, which is not a variable of its template"
            ));
        }
    }
    if template.is_static() && def.spec.lister.is_some() {
        p.push("it has a list function, but only templates can list what they produce");
    }
    if errors.is_empty() {
        let json = Arc::from(def.to_json(!template.is_static()));
        Ok(ResourceEntry {
            def,
            template: Arc::new(template),
            variables,
            json,
        })
    } else {
        Err(errors)
    }
}

/// Compiles every definition of one kind, collecting every problem.
pub(crate) fn all<K: Kind, E>(
    defs: Vec<Def<K>>,
    ext: &Extensions,
    compile: fn(Def<K>, &Extensions) -> Result<E, Vec<String>>,
    errors: &mut Vec<String>,
) -> Vec<Arc<E>> {
    defs.into_iter()
        .filter_map(|d| compile(d, ext).map_err(|e| errors.extend(e)).ok())
        .map(Arc::new)
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::protocol::Annotations;
    use crate::server::def::{Icon, PromptDef, ResourceDef, Signature, ToolDef};
    use crate::{Error, Server};

    fn build_errors(b: crate::ServerBuilder) -> Vec<String> {
        b.build().err().map(|e| e.0).unwrap_or_default()
    }

    fn tool(name: &str) -> ToolDef {
        ToolDef::new(name, Signature::new(), |_| async { Ok::<_, Error>("") }).description("T.")
    }

    #[test]
    fn hand_built_definitions_meet_the_rules_of_the_macros() {
        let errors = build_errors(
            Server::builder("x", "1")
                .icon(Icon::new("http://insecure/x.png"))
                .tool(tool("bad name"))
                .tool(tool("t").meta("io.modelcontextprotocol/x", serde_json::json!(1)))
                .tool(tool("u").icon(Icon::new("https://x/y.png").theme("blue")))
                .tool(tool("v").completer("a", |_: String| async { Vec::<String>::new() }))
                .prompt(PromptDef::new("say hi", Signature::new(), |_| async {
                    Ok::<_, Error>("hi")
                }))
                .resource(
                    ResourceDef::new("r://x", "r", Signature::new(), |_| async {
                        Ok::<_, Error>("x")
                    })
                    .annotations(Annotations {
                        priority: Some(2.0),
                        last_modified: Some("yesterday".into()),
                        ..Default::default()
                    }),
                ),
        );
        let all = errors.join("\n");
        for expected in [
            "the server: icon `http://insecure/x.png` must be an `https:` or `data:` URI",
            "tool `bad name`: tool name `bad name` contains ` `",
            "tool `t`: `_meta` prefix `io.modelcontextprotocol/` is reserved for MCP",
            "tool `u`: unknown icon theme `blue`",
            "tool `v`: tool arguments have no completion",
            "prompt `say hi`: prompt name `say hi` contains whitespace",
            "resource `r://x`: annotation priority 2 is outside 0.0..=1.0",
            "resource `r://x`: last_modified `yesterday` is not an ISO 8601 date-time",
        ] {
            assert!(all.contains(expected), "missing `{expected}` in:\n{all}");
        }
        assert_eq!(errors.len(), 8, "{all}");
    }

    /// A number argument whose schema is whatever `SCHEMA` holds (a hand-written
    /// `JsonSchema` impl, the one way a generated schema can be broken).
    struct Custom;
    impl<'de> serde::Deserialize<'de> for Custom {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            serde_json::Value::deserialize(d).map(|_| Custom)
        }
    }
    thread_local! {
        static SCHEMA: std::cell::RefCell<serde_json::Value> =
            const { std::cell::RefCell::new(serde_json::Value::Null) };
    }
    impl schemars::JsonSchema for Custom {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Custom".into()
        }
        fn inline_schema() -> bool {
            true
        }
        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            SCHEMA
                .with(|s| s.borrow().clone())
                .try_into()
                .unwrap_or_default()
        }
    }

    fn with_arg<T: serde::de::DeserializeOwned + schemars::JsonSchema + 'static>(
        name: &str,
    ) -> ToolDef {
        let mut sig = Signature::new();
        sig.add_argument::<T>(&crate::handler::Param::new("n"));
        ToolDef::new(name, sig, |_| async { Ok::<_, Error>("ok") }).description("T.")
    }

    fn custom(name: &str, schema: serde_json::Value) -> ToolDef {
        SCHEMA.with(|s| *s.borrow_mut() = schema);
        with_arg::<Custom>(name)
    }

    /// One `tools/call` over an in-process pipe: the result object.
    async fn call(server: crate::Server, name: &str, args: serde_json::Value) -> serde_json::Value {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(theirs);
        tokio::spawn(server.serve_io(r, w, std::future::pending()));
        let (read, mut write) = tokio::io::split(ours);
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": args, "_meta": {
                "io.modelcontextprotocol/protocolVersion": crate::protocol::PROTOCOL_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {}}}});
        write
            .write_all(format!("{body}\n").as_bytes())
            .await
            .unwrap();
        let mut lines = tokio::io::BufReader::new(read).lines();
        let line = lines.next_line().await.unwrap().unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        v["result"].clone()
    }

    #[tokio::test]
    async fn generated_validators_compile_on_the_first_call_with_the_same_errors() {
        let server = Server::builder("x", "1")
            .tool(with_arg::<u8>("small"))
            .build()
            .unwrap();
        let entry = std::sync::Arc::clone(&server.inner.catalog().tools["small"]);
        assert!(!entry.validator.is_compiled());
        let r = call(server.clone(), "small", serde_json::json!({"n": 300})).await;
        assert!(entry.validator.is_compiled());
        assert_eq!(r["isError"], true, "{r}");
        let text = r["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.starts_with("Invalid arguments for tool `small`: `n`: "),
            "{text}"
        );
        let r = call(server, "small", serde_json::json!({"n": 3})).await;
        assert_ne!(r["isError"], true, "{r}");
    }

    /// A generated schema from a type that is not plain carries the pattern engine, and
    /// its pattern is checked (by the built-in validator, not a fallback); one from plain
    /// types carries none.
    #[tokio::test]
    async fn a_generated_pattern_is_checked_and_plain_arguments_need_no_engine() {
        let code = custom(
            "code",
            serde_json::json!({"type": "string", "pattern": "^[A-Z]+$"}),
        );
        assert!(code.spec.patterns.is_some());
        assert!(with_arg::<Option<Vec<u8>>>("plain").spec.patterns.is_none());
        let server = Server::builder("x", "1")
            .tool(code)
            .tool(with_arg::<String>("text"))
            .build()
            .unwrap();
        let entry = std::sync::Arc::clone(&server.inner.catalog().tools["code"]);
        let validator = entry.validator().unwrap();
        assert!(validator.is_built_in());
        let refused = call(server.clone(), "code", serde_json::json!({"n": "abc"})).await;
        assert_eq!(refused["isError"], true, "{refused}");
        let text = refused["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("^[A-Z]+$"), "{text}");
        let fine = call(server.clone(), "code", serde_json::json!({"n": "ABC"})).await;
        assert_eq!(fine["content"][0]["text"], "ok", "{fine}");
        let plain = call(server, "text", serde_json::json!({"n": "abc"})).await;
        assert_eq!(plain["content"][0]["text"], "ok", "{plain}");
    }

    #[test]
    fn hand_written_and_risky_schemas_are_compiled_when_built() {
        // Hand-written: compiled (and refused) at once.
        let t = tool("hand").input_schema(serde_json::json!({"type": "object"}));
        let s = Server::builder("x", "1").tool(t).build().unwrap();
        assert!(s.inner.catalog().tools["hand"].validator.is_compiled());
        // Generated, but with a user's regular expression in it: refused at once.
        let bad = custom(
            "bad",
            serde_json::json!({"type": "string", "pattern": "(unclosed"}),
        );
        let errors = build_errors(Server::builder("x", "1").tool(bad));
        assert!(
            errors
                .iter()
                .any(|e| e.contains("inputSchema does not compile")),
            "{errors:?}"
        );
    }

    /// A hand-written schema that lists properties lists the typed parameters' too: one
    /// it lacks (here `n`) no client would send.
    #[test]
    fn a_hand_written_schema_lists_the_typed_parameters() {
        let hand = |props: serde_json::Value| {
            with_arg::<u32>("hs").input_schema(serde_json::json!({
                "type": "object", "properties": props
            }))
        };
        let errors = build_errors(
            Server::builder("x", "1").tool(hand(serde_json::json!({"code": {"type": "string"}}))),
        );
        assert!(
            errors
                .iter()
                .any(|e| e.contains("parameter `n` is no property")
                    && e.contains("which lists code")),
            "{errors:?}"
        );
        let listed = hand(serde_json::json!({"n": {"type": "integer"}}));
        assert!(Server::builder("x", "1").tool(listed).build().is_ok());
        // A schema without `properties` (any object) is not checked.
        let open = with_arg::<u32>("open").input_schema(serde_json::json!({"type": "object"}));
        assert!(Server::builder("x", "1").tool(open).build().is_ok());
        // Nor one that may declare it elsewhere: in a subschema, or by a pattern.
        for elsewhere in [
            serde_json::json!({"allOf": [{"properties": {"n": {"type": "integer"}}}]}),
            serde_json::json!({"patternProperties": {"^n$": {"type": "integer"}}}),
        ] {
            let mut schema = serde_json::json!({
                "type": "object", "properties": {"mode": {"type": "string"}}
            });
            for (k, v) in elsewhere.as_object().unwrap() {
                schema[k] = v.clone();
            }
            let tool = with_arg::<u32>("sub").input_schema(schema);
            let built = Server::builder("x", "1").tool(tool).build();
            assert!(built.is_ok(), "{elsewhere}: {:?}", built.err());
        }
    }

    #[tokio::test]
    async fn a_generated_schema_that_does_not_compile_fails_its_calls() {
        let odd = custom("odd", serde_json::json!({"type": "strnig"}));
        let server = Server::builder("x", "1").tool(odd).build().unwrap();
        let r = call(server, "odd", serde_json::json!({"n": 1})).await;
        assert_eq!(r["isError"], true, "{r}");
        let text = r["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("cannot check its arguments"), "{text}");
    }

    #[test]
    fn the_listed_json_is_the_one_copy() {
        let s = Server::builder("x", "1")
            .tool(with_arg::<u8>("small"))
            .build()
            .unwrap();
        let catalog = s.inner.catalog();
        let entry = &catalog.tools["small"];
        // Held by the entry and the list, not copied.
        assert_eq!(std::sync::Arc::strong_count(&entry.json), 2);
        assert!(entry.def.spec.input_schema.is_null());
        assert!(entry.json.get().contains(r#""inputSchema":{"#));
    }
}
