//! What a server serves at one moment: the compiled tools, prompts and resources, and
//! everything precomputed from them (discover result, list pages). Replaced as a whole when
//! the set changes at run time.

use super::context::Extensions;
use super::extract::Requirements;
use super::resource::{self, ResourceDef};
use super::{PromptDef, ToolDef, valid_tool_name};
use crate::protocol::headers::{self, HeaderParam};
use crate::protocol::{CacheHints, SUPPORTED_VERSIONS};
use crate::schema::ArgumentValidator;
use mcp_uri_template::UriTemplate;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Server-wide settings the catalog is assembled with.
pub(crate) struct Settings {
    pub(crate) page_size: usize,
    pub(crate) list_cache: CacheHints,
    pub(crate) discover_cache: CacheHints,
    pub(crate) read_cache: CacheHints,
    pub(crate) instructions: Option<String>,
    /// `{"io.modelcontextprotocol/serverInfo": {...}}`, when results carry it.
    pub(crate) meta_value: Option<Value>,
}

pub(crate) struct ToolEntry {
    pub(crate) def: ToolDef,
    pub(crate) validator: ArgumentValidator,
    /// The definition as listed (JSON text).
    pub(crate) json: String,
    /// Its `x-mcp-header` parameters.
    pub(crate) headers: Vec<HeaderParam>,
}

pub(crate) struct ResourceEntry {
    pub(crate) def: ResourceDef,
    pub(crate) template: UriTemplate,
    pub(crate) variables: Vec<String>,
}

fn check_state(
    what: &str,
    name: &str,
    req: &Requirements,
    ext: &Extensions,
    errors: &mut Vec<String>,
) {
    for (id, ty) in &req.required_state {
        if !ext.contains(*id) {
            errors.push(format!(
                "{what} `{name}` takes `State<{ty}>`, but the builder has no state of that type; add it with `.state(...)`"
            ));
        }
    }
}

/// Checks a tool and compiles its argument validator.
pub(crate) fn compile_tool(def: ToolDef, ext: &Extensions) -> Result<ToolEntry, Vec<String>> {
    let mut errors = Vec::new();
    let name = def.name.clone();
    if !valid_tool_name(&name) {
        errors.push(format!(
            "tool name `{name}` is invalid: use 1 to 64 characters from [A-Za-z0-9_.-]"
        ));
    }
    if let Some(e) = def.input_schema.get("$invalid") {
        errors.push(format!(
            "tool `{name}`: the hand-written inputSchema is not valid JSON: {e}"
        ));
    } else if def.input_schema.get("type") != Some(&json!("object")) {
        errors.push(format!(
            "tool `{name}`: inputSchema must have \"type\": \"object\" at its root"
        ));
    }
    check_state("tool", &name, &def.requirements, ext, &mut errors);
    let validator = ArgumentValidator::compile(&def.input_schema)
        .map_err(|e| errors.push(format!("tool `{name}`: inputSchema does not compile: {e}")))
        .ok();
    let headers = headers::header_params(&def.input_schema).unwrap_or_else(|es| {
        errors.extend(es.into_iter().map(|e| format!("tool `{name}`: {e}")));
        Vec::new()
    });
    match validator {
        Some(validator) if errors.is_empty() => {
            let json = def.to_json();
            Ok(ToolEntry {
                def,
                validator,
                json,
                headers,
            })
        }
        _ => Err(errors),
    }
}

/// Checks a prompt.
pub(crate) fn check_prompt(def: PromptDef, ext: &Extensions) -> Result<PromptDef, Vec<String>> {
    let mut errors = Vec::new();
    if def.name.is_empty() {
        errors.push("a prompt name cannot be empty".into());
    }
    check_state("prompt", &def.name, &def.requirements, ext, &mut errors);
    for arg in def.completers.keys() {
        if !def.arguments.iter().any(|(n, _, _)| n == arg) {
            errors.push(format!(
                "prompt `{}` has a completer for `{arg}`, which is not one of its arguments",
                def.name
            ));
        }
    }
    if errors.is_empty() {
        Ok(def)
    } else {
        Err(errors)
    }
}

/// Checks a resource and parses its URI template.
pub(crate) fn compile_resource(
    def: ResourceDef,
    ext: &Extensions,
) -> Result<ResourceEntry, Vec<String>> {
    let mut errors = Vec::new();
    check_state("resource", &def.uri, &def.requirements, ext, &mut errors);
    if let Some(p) = def.annotations.as_ref().and_then(|a| a.priority)
        && !(0.0..=1.0).contains(&p)
    {
        errors.push(format!(
            "resource `{}`: annotation priority {p} is outside 0..=1",
            def.uri
        ));
    }
    let template = match UriTemplate::parse(&def.uri) {
        Ok(t) => t,
        Err(e) => {
            errors.push(format!("resource `{}`: invalid URI template: {e}", def.uri));
            return Err(errors);
        }
    };
    let variables: Vec<String> = template
        .variables()
        .into_iter()
        .map(|(v, _)| v.to_owned())
        .collect();
    for var in def.completers.keys() {
        if !variables.contains(var) {
            errors.push(format!("resource `{}` has a completer for `{var}`, which is not a variable of its template", def.uri));
        }
    }
    if template.is_static() && def.lister.is_some() {
        errors.push(format!(
            "resource `{}` has a list function, but only templates can list what they produce",
            def.uri
        ));
    }
    if errors.is_empty() {
        Ok(ResourceEntry {
            def,
            template,
            variables,
        })
    } else {
        Err(errors)
    }
}

/// The compiled entries of a catalog.
pub(crate) struct Entries {
    pub(crate) tools: Vec<Arc<ToolEntry>>,
    pub(crate) prompts: Vec<Arc<PromptDef>>,
    pub(crate) resources: Vec<Arc<ResourceEntry>>,
}

pub(crate) struct Catalog {
    pub(crate) discover: String,
    pub(crate) tools: BTreeMap<String, Arc<ToolEntry>>,
    pub(crate) tool_list: ListPages,
    pub(crate) prompts: BTreeMap<String, Arc<PromptDef>>,
    pub(crate) prompt_list: ListPages,
    /// `resources/list` entries of the fixed resources, by URI.
    pub(crate) static_resources: BTreeMap<String, Value>,
    pub(crate) statics: BTreeMap<String, Arc<ResourceEntry>>,
    /// Templates, sorted by template text.
    pub(crate) templates: Vec<Arc<ResourceEntry>>,
    pub(crate) resource_list: ListPages,
    pub(crate) template_list: ListPages,
    pub(crate) listers: Vec<resource::Lister>,
    pub(crate) has_completions: bool,
    /// Some handler asks for input (multi round-trip requests).
    pub(crate) uses_input: bool,
}

impl Catalog {
    /// Puts compiled entries together: refuses duplicate names and URIs and templates that
    /// can match the same URI, then precomputes the discover result and the list pages.
    pub(crate) fn assemble(
        tool_entries: Vec<Arc<ToolEntry>>,
        prompt_entries: Vec<Arc<PromptDef>>,
        resource_entries: Vec<Arc<ResourceEntry>>,
        s: &Settings,
    ) -> Result<Catalog, Vec<String>> {
        let mut errors = Vec::new();
        let mut tools = BTreeMap::new();
        for t in tool_entries {
            if tools.contains_key(&t.def.name) {
                errors.push(format!(
                    "two tools are named `{}`; tool names must be unique",
                    t.def.name
                ));
            } else {
                tools.insert(t.def.name.clone(), t);
            }
        }
        let mut prompts = BTreeMap::new();
        for p in prompt_entries {
            if prompts.contains_key(&p.name) {
                errors.push(format!(
                    "two prompts are named `{}`; prompt names must be unique",
                    p.name
                ));
            } else {
                prompts.insert(p.name.clone(), p);
            }
        }
        let mut statics: BTreeMap<String, Arc<ResourceEntry>> = BTreeMap::new();
        let mut templates: Vec<Arc<ResourceEntry>> = Vec::new();
        for r in resource_entries {
            if r.template.is_static() {
                if statics.contains_key(&r.def.uri) {
                    errors.push(format!("two resources have the URI `{}`", r.def.uri));
                } else {
                    statics.insert(r.def.uri.clone(), r);
                }
            } else if let Some(other) = templates
                .iter()
                .find(|t| t.def.uri == r.def.uri || t.template.overlaps(&r.template))
            {
                errors.push(format!(
                    "resource templates `{}` and `{}` can match the same URI; make their fixed parts differ",
                    other.def.uri, r.def.uri
                ));
            } else {
                templates.push(r);
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        templates.sort_by(|a, b| a.def.uri.cmp(&b.def.uri));

        let uses_logging = tools.values().any(|t| t.def.requirements.uses_logging)
            || prompts.values().any(|p| p.requirements.uses_logging)
            || statics
                .values()
                .chain(&templates)
                .any(|r| r.def.requirements.uses_logging);
        let uses_input = tools.values().any(|t| t.def.requirements.uses_input)
            || prompts.values().any(|p| p.requirements.uses_input)
            || statics
                .values()
                .chain(&templates)
                .any(|r| r.def.requirements.uses_input);
        let has_completions = prompts.values().any(|p| !p.completers.is_empty())
            || templates.iter().any(|t| !t.def.completers.is_empty());
        // Changes are announced on `subscriptions/listen` streams, so `listChanged` (and
        // resource `subscribe`) are true whenever the feature exists.
        let mut capabilities = Map::new();
        if !tools.is_empty() {
            capabilities.insert("tools".into(), json!({ "listChanged": true }));
        }
        if !prompts.is_empty() {
            capabilities.insert("prompts".into(), json!({ "listChanged": true }));
        }
        if !statics.is_empty() || !templates.is_empty() {
            capabilities.insert(
                "resources".into(),
                json!({ "subscribe": true, "listChanged": true }),
            );
        }
        if has_completions {
            capabilities.insert("completions".into(), json!({}));
        }
        if uses_logging {
            capabilities.insert("logging".into(), json!({}));
        }
        let mut discover = Map::new();
        discover.insert("resultType".into(), json!("complete"));
        discover.insert("supportedVersions".into(), json!(SUPPORTED_VERSIONS));
        discover.insert("capabilities".into(), Value::Object(capabilities));
        if let Some(i) = &s.instructions {
            discover.insert("instructions".into(), json!(i));
        }
        discover.insert("ttlMs".into(), json!(s.discover_cache.ttl_ms));
        discover.insert("cacheScope".into(), json!(s.discover_cache.scope.as_str()));
        if let Some(m) = &s.meta_value {
            discover.insert("_meta".into(), m.clone());
        }

        let meta = s.meta_value.as_ref();
        let tool_list = ListPages::build(
            "tools",
            tools
                .values()
                .map(|t| (t.def.name.clone(), t.json.clone(), t.def.cache))
                .collect(),
            s.page_size,
            s.list_cache,
            meta,
        );
        let prompt_list = ListPages::build(
            "prompts",
            prompts
                .values()
                .map(|p| (p.name.clone(), p.to_json().to_string(), None))
                .collect(),
            s.page_size,
            s.list_cache,
            meta,
        );
        let listers: Vec<resource::Lister> = templates
            .iter()
            .filter_map(|t| t.def.lister.clone())
            .collect();
        // A list with dynamic entries takes the hints of the templates that produce them.
        let lister_hints = templates
            .iter()
            .filter(|t| t.def.lister.is_some())
            .map(|t| t.def.cache.unwrap_or(s.read_cache));
        let resource_list = ListPages::build(
            "resources",
            statics
                .values()
                .map(|r| {
                    (
                        r.def.uri.clone(),
                        r.def.to_json(false).to_string(),
                        r.def.cache,
                    )
                })
                .collect(),
            s.page_size,
            lister_hints.fold(s.list_cache, CacheHints::combine),
            meta,
        );
        let template_list = ListPages::build(
            "resourceTemplates",
            templates
                .iter()
                .map(|t| {
                    (
                        t.def.uri.clone(),
                        t.def.to_json(true).to_string(),
                        t.def.cache,
                    )
                })
                .collect(),
            s.page_size,
            s.list_cache,
            meta,
        );
        let static_resources = statics
            .values()
            .map(|r| (r.def.uri.clone(), r.def.to_json(false)))
            .collect();
        Ok(Catalog {
            discover: Value::Object(discover).to_string(),
            tools,
            tool_list,
            prompts,
            prompt_list,
            static_resources,
            statics,
            templates,
            resource_list,
            template_list,
            listers,
            has_completions,
            uses_input,
        })
    }

    /// The entries, to assemble a changed catalog from.
    pub(crate) fn entries(&self) -> Entries {
        Entries {
            tools: self.tools.values().cloned().collect(),
            prompts: self.prompts.values().cloned().collect(),
            resources: self
                .statics
                .values()
                .chain(&self.templates)
                .cloned()
                .collect(),
        }
    }
}

impl Catalog {
    pub(crate) fn has_resources(&self) -> bool {
        !self.statics.is_empty() || !self.templates.is_empty()
    }

    /// The resource serving `uri`: a fixed resource with that URI, else the first template
    /// (in template order) that matches, with the variables it bound.
    pub(crate) fn find_resource(
        &self,
        uri: &str,
    ) -> Option<(Arc<ResourceEntry>, BTreeMap<String, String>)> {
        if let Some(r) = self.statics.get(uri) {
            return Some((Arc::clone(r), BTreeMap::new()));
        }
        self.templates
            .iter()
            .find_map(|t| t.template.matches(uri).map(|vars| (Arc::clone(t), vars)))
    }

    /// The resource or template whose URI (template text) is exactly `uri`.
    pub(crate) fn resource_by_uri(&self, uri: &str) -> Option<&Arc<ResourceEntry>> {
        self.statics
            .get(uri)
            .or_else(|| self.templates.iter().find(|t| t.def.uri == uri))
    }
}

/// The precomputed pages of one list method.
pub(crate) struct ListPages {
    names: Vec<String>,
    page_size: usize,
    /// Each item as JSON text.
    items: Vec<String>,
    key: &'static str,
    pub(crate) hints: CacheHints,
    meta: Option<Value>,
    /// Result JSON of each page, by index of its first item.
    pages: BTreeMap<usize, String>,
}

impl ListPages {
    pub(crate) fn build(
        key: &'static str,
        entries: Vec<(String, String, Option<CacheHints>)>,
        page_size: usize,
        default: CacheHints,
        meta: Option<&Value>,
    ) -> ListPages {
        Self::build_with_hints(key, entries, page_size, default, meta)
    }

    pub(crate) fn build_with_hints(
        key: &'static str,
        entries: Vec<(String, String, Option<CacheHints>)>,
        page_size: usize,
        default: CacheHints,
        meta: Option<&Value>,
    ) -> ListPages {
        let hints = entries
            .iter()
            .filter_map(|e| e.2)
            .fold(default, CacheHints::combine);
        let mut list = ListPages {
            names: entries.iter().map(|e| e.0.clone()).collect(),
            page_size,
            items: entries.into_iter().map(|e| e.1).collect(),
            key,
            hints,
            meta: meta.cloned(),
            pages: BTreeMap::new(),
        };
        let mut start = 0;
        loop {
            let page = list.render(start);
            list.pages.insert(start, page);
            start += page_size;
            if start >= list.items.len() {
                break;
            }
        }
        list
    }

    fn render(&self, start: usize) -> String {
        let end = (start + self.page_size).min(self.items.len());
        // Items are JSON text already (a hand-written schema stays as given), so the page
        // is assembled as text, keys in a fixed order.
        let mut out = format!(
            "{{\"{}\":[{}]",
            self.key,
            self.items[start.min(end)..end].join(",")
        );
        if end < self.items.len() {
            out.push_str(&format!(
                ",\"nextCursor\":{}",
                json!(encode_cursor(&self.names[end - 1]))
            ));
        }
        out.push_str(&format!(
            ",\"resultType\":\"complete\",\"ttlMs\":{},\"cacheScope\":\"{}\"",
            self.hints.ttl_ms,
            self.hints.scope.as_str()
        ));
        if let Some(m) = &self.meta {
            out.push_str(&format!(",\"_meta\":{m}"));
        }
        out.push('}');
        out
    }

    /// The page after `cursor` (or the first page). `None` for a cursor this server did
    /// not make.
    pub(crate) fn page(&self, cursor: Option<&str>) -> Option<std::borrow::Cow<'_, str>> {
        let start = match cursor {
            None => 0,
            Some(c) => {
                let after = decode_cursor(c)?;
                self.names.partition_point(|n| n.as_str() <= after.as_str())
            }
        };
        Some(match self.pages.get(&start) {
            Some(p) => std::borrow::Cow::Borrowed(p.as_str()),
            None => std::borrow::Cow::Owned(self.render(start)),
        })
    }
}

const CURSOR_PREFIX: &str = "after:";

/// Cursors name the last item of the previous page, so they stay valid across restarts,
/// across instances and when items are added or removed.
pub(crate) fn encode_cursor(last: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{last}"))
}

pub(crate) fn decode_cursor(cursor: &str) -> Option<String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let s = String::from_utf8(bytes).ok()?;
    s.strip_prefix(CURSOR_PREFIX).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_foreign_values() {
        let c = encode_cursor("weather");
        assert_eq!(decode_cursor(&c).as_deref(), Some("weather"));
        assert!(decode_cursor("garbage!").is_none());
        assert!(decode_cursor("Zm9v").is_none());
    }
}
