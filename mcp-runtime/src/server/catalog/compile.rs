//! Checking a definition and compiling what it needs per request (argument validators,
//! URI templates, list entries). The rules are `mcp_rules`, the ones the macros apply at
//! compile time, so a definition built by hand is held to exactly the same.

use crate::protocol::headers::{self, HeaderParam};
use crate::schema::ArgumentValidator;
use crate::server::context::Extensions;
use crate::server::def::kind::Kind;
use crate::server::def::{Def, Icon, Item, PromptDef, Requirements, ResourceDef, ToolDef};
use mcp_rules::Check;
use mcp_uri_template::UriTemplate;
use serde_json::value::RawValue;

/// A tool, checked, with its validator and list entry.
pub(crate) struct ToolEntry {
    pub(crate) def: ToolDef,
    pub(crate) validator: ArgumentValidator,
    /// The definition as listed.
    pub(crate) json: Box<RawValue>,
    /// Its `x-mcp-header` parameters.
    pub(crate) headers: Vec<HeaderParam>,
}

/// A prompt, checked, with its list entry.
pub(crate) struct PromptEntry {
    pub(crate) def: PromptDef,
    pub(crate) json: Box<RawValue>,
}

/// A resource or template, checked, with its parsed template and list entry.
pub(crate) struct ResourceEntry {
    pub(crate) def: ResourceDef,
    pub(crate) template: UriTemplate,
    pub(crate) variables: Vec<String>,
    pub(crate) json: Box<RawValue>,
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
    if !completes && !item.completers.is_empty() {
        p.push("tool arguments have no completion (completers apply to prompt arguments and resource template variables)");
    }
}

/// Checks a tool and compiles its argument validator.
pub(crate) fn tool(def: ToolDef, ext: &Extensions) -> Result<ToolEntry, Vec<String>> {
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
        match ArgumentValidator::compile(&spec.input_schema) {
            Ok(v) => validator = Some(v),
            Err(e) => p.push(format!("inputSchema does not compile: {e}")),
        }
    }
    let headers = headers::header_params(&spec.input_schema).unwrap_or_else(|es| {
        for e in es {
            p.push(e);
        }
        Vec::new()
    });
    match validator {
        Some(validator) if errors.is_empty() => Ok(ToolEntry {
            json: def.to_json(),
            def,
            validator,
            headers,
        }),
        _ => Err(errors),
    }
}

/// Checks a prompt.
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
            json: def.to_json(),
            def,
        })
    } else {
        Err(errors)
    }
}

/// Checks a resource and parses its URI template.
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
        let json = def.to_json(!template.is_static());
        Ok(ResourceEntry {
            def,
            template,
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
) -> Vec<std::sync::Arc<E>> {
    defs.into_iter()
        .filter_map(|d| compile(d, ext).map_err(|e| errors.extend(e)).ok())
        .map(std::sync::Arc::new)
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
}
