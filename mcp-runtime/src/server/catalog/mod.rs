//! What a server serves at one moment: the checked tools, prompts and resources, and
//! everything precomputed from them (the discover result, the list pages). Replaced as a
//! whole when the set changes at run time.

pub(crate) mod compile;
pub(crate) mod pages;

pub(crate) use compile::{PromptEntry, ResourceEntry, ToolEntry};
pub(crate) use pages::ListPages;

use crate::config::Caching;
use crate::protocol::CacheHints;
use crate::protocol::envelope::{Envelope, ResultMeta, ResultType};
use crate::server::def::resource::Lister;
use crate::server::methods::{Complete, Found, PromptEngine, ResourceEngine};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::sync::Arc;

/// Server-wide settings the catalog is assembled with.
pub(crate) struct Settings {
    /// The revisions served, as `server/discover` lists them.
    pub(crate) versions: &'static [&'static str],
    pub(crate) page_size: usize,
    pub(crate) caching: Caching,
    pub(crate) instructions: Option<String>,
    /// The `serverInfo` object results carry in `_meta` (once, serialized), when they do.
    pub(crate) server_info: Option<Box<RawValue>>,
    /// Authorization, when the server has it.
    pub(crate) auth: Option<Arc<crate::auth::Auth>>,
    /// Extensions declared with `ServerBuilder::extension` (id → settings).
    pub(crate) extensions: Map<String, Value>,
}

impl Settings {
    /// The scopes a caller needs for `item`: its own, else the server's default ones
    /// (none without authorization).
    pub(crate) fn scopes_of<'a>(&'a self, item: &'a crate::server::def::Item) -> &'a [String] {
        match &self.auth {
            None => &[],
            Some(_) if !item.scopes.is_empty() => &item.scopes,
            Some(a) => &a.default_scopes,
        }
    }
}

/// The checked entries of a catalog, to assemble a catalog from.
pub(crate) struct Entries {
    pub(crate) tools: Vec<Arc<ToolEntry>>,
    pub(crate) prompts: Vec<Arc<PromptEntry>>,
    pub(crate) resources: Vec<Arc<ResourceEntry>>,
}

pub(crate) struct Catalog {
    /// The `server/discover` result.
    pub(crate) discover: Box<RawValue>,
    pub(crate) tools: BTreeMap<String, Arc<ToolEntry>>,
    pub(crate) tool_list: ListPages,
    pub(crate) prompts: BTreeMap<String, Arc<PromptEntry>>,
    pub(crate) prompt_list: ListPages,
    pub(crate) statics: BTreeMap<String, Arc<ResourceEntry>>,
    /// Templates, sorted by template text.
    pub(crate) templates: Vec<Arc<ResourceEntry>>,
    pub(crate) resource_list: ListPages,
    pub(crate) template_list: ListPages,
    pub(crate) listers: Vec<Lister>,
    pub(crate) has_completions: bool,
    /// Some handler asks for input (multi round-trip requests).
    pub(crate) uses_input: bool,
    /// Some tool has an MCP App view, or some resource is one.
    pub(crate) uses_apps: bool,
    /// What serves tasks, when some tool runs as one (the tasks extension is then
    /// advertised and served).
    pub(crate) task_engine: Option<&'static crate::server::tasks::Engine>,
}

/// Whether `a` and `b` were both made by one upstream's listing.
#[cfg(feature = "proxy")]
fn same_upstream(a: &crate::server::def::Item, b: &crate::server::def::Item) -> bool {
    a.foreign && b.foreign && a.upstream.is_some() && a.upstream == b.upstream
}

/// The body of `server/discover`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Discover<'a> {
    supported_versions: &'a [&'a str],
    capabilities: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
}

impl Catalog {
    /// Puts checked entries together: refuses duplicate names and URIs and templates that
    /// can match the same URI, then precomputes the discover result and the list pages.
    pub(crate) fn assemble(entries: Entries, s: &Settings) -> Result<Catalog, Vec<String>> {
        let mut errors = Vec::new();
        let mut tools: BTreeMap<String, Arc<ToolEntry>> = BTreeMap::new();
        for t in entries.tools {
            match tools.entry(t.def.item.name.clone()) {
                // Two tools of one upstream that its names alone make clash here (one's
                // name is the other's shortened form: `mount::name_of`): the first is
                // served, rather than the whole server refused for what the upstream lists.
                #[cfg(feature = "proxy")]
                Entry::Occupied(o) if same_upstream(&o.get().def.item, &t.def.item) => {
                    tracing::warn!(
                        "an upstream tool left out: it would be served as `{}`, which another tool of that upstream is",
                        o.key()
                    );
                }
                Entry::Occupied(o) => errors.push(format!(
                    "two tools are named `{}`{}; tool names must be unique",
                    o.key(),
                    origins(&o.get().def.item, &t.def.item)
                )),
                Entry::Vacant(v) => {
                    v.insert(t);
                }
            }
        }
        let mut prompts: BTreeMap<String, Arc<PromptEntry>> = BTreeMap::new();
        for p in entries.prompts {
            match prompts.entry(p.def.item.name.clone()) {
                Entry::Occupied(o) => errors.push(format!(
                    "two prompts are named `{}`{}; prompt names must be unique",
                    o.key(),
                    origins(&o.get().def.item, &p.def.item)
                )),
                Entry::Vacant(v) => {
                    v.insert(p);
                }
            }
        }
        let mut statics: BTreeMap<String, Arc<ResourceEntry>> = BTreeMap::new();
        let mut templates: Vec<Arc<ResourceEntry>> = Vec::new();
        for r in entries.resources {
            let uri = &r.def.spec.uri;
            if r.template.is_static() {
                if let Some(first) = statics.get(uri) {
                    errors.push(format!(
                        "two resources have the URI `{uri}`{}",
                        origins(&first.def.item, &r.def.item)
                    ));
                } else {
                    statics.insert(uri.clone(), r);
                }
            } else if let Some(other) = templates
                .iter()
                .find(|t| (r.def.spec.engine.more.clash)(t, &r))
            {
                errors.push(format!(
                    "resource templates `{}` and `{uri}`{} can match the same URI; make their fixed parts differ",
                    other.def.spec.uri,
                    origins(&other.def.item, &r.def.item)
                ));
            } else {
                templates.push(r);
            }
        }
        // MCP Apps: a view is a static `ui://` resource, and a tool's view is served.
        for r in statics.values().chain(&templates) {
            if r.def.item.app
                && (!crate::server::apps::is_view_uri(&r.def.spec.uri) || !r.template.is_static())
            {
                errors.push(format!(
                    "resource `{}` is served as an MCP App view, which needs a fixed `ui://` URI",
                    r.def.spec.uri
                ));
            }
        }
        for t in tools.values() {
            let Some(view) = &t.def.item.view else {
                continue;
            };
            if !crate::server::apps::is_view_uri(view) {
                errors.push(format!(
                    "tool `{}` shows the view `{view}`, which is not a `ui://` URI",
                    t.def.item.name
                ));
                continue;
            }
            match statics.get(view) {
                Some(r) if r.def.item.app => {}
                Some(_) => errors.push(format!(
                    "tool `{}` shows the view `{view}`, which is served, but not as an MCP App view; serve it with `#[resource(\"{view}\", app)]` (or `ResourceDef::app`)",
                    t.def.item.name
                )),
                None => errors.push(format!(
                    "tool `{}` shows the view `{view}`, which this server does not serve; add a `#[resource(\"{view}\", app)]`",
                    t.def.item.name
                )),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        templates.sort_by(|a, b| a.def.spec.uri.cmp(&b.def.spec.uri));

        let resources = || statics.values().chain(&templates);
        let any = |f: fn(&crate::server::def::Requirements) -> bool| {
            tools.values().any(|t| f(&t.def.requirements))
                || prompts.values().any(|p| f(&p.def.requirements))
                || resources().any(|r| f(&r.def.requirements))
        };
        let uses_logging = any(|r| r.uses_logging);
        let uses_input = any(|r| r.input.is_some());
        let task_engine = tools.values().find_map(|t| t.def.spec.engine);
        let uses_apps = tools.values().any(|t| t.def.item.view.is_some())
            || statics.values().any(|r| r.def.item.app);
        let has_completions = prompts.values().any(|p| !p.def.item.completers.is_empty())
            || templates.iter().any(|t| !t.def.item.completers.is_empty());

        let server_info = s.server_info.as_deref();
        let discover = discover(
            s.versions,
            &s.caching,
            s.instructions.as_deref(),
            server_info,
            Features {
                tools: !tools.is_empty(),
                prompts: !prompts.is_empty(),
                resources: !statics.is_empty() || !templates.is_empty(),
                completions: has_completions,
                logging: uses_logging,
                tasks: task_engine.is_some(),
                apps: uses_apps,
            },
            &s.extensions,
        );
        let lists = s.caching.lists;
        let tool_list = ListPages::build(
            "tools",
            tools
                .values()
                .map(|t| {
                    (
                        t.def.item.name.clone(),
                        Arc::clone(&t.json),
                        t.def.item.cache,
                        s.scopes_of(&t.def.item).to_vec(),
                    )
                })
                .collect(),
            s.page_size,
            lists,
            server_info,
        );
        let prompt_list = ListPages::build(
            "prompts",
            prompts
                .values()
                .map(|p| {
                    (
                        p.def.item.name.clone(),
                        Arc::clone(&p.json),
                        p.def.item.cache,
                        s.scopes_of(&p.def.item).to_vec(),
                    )
                })
                .collect(),
            s.page_size,
            lists,
            server_info,
        );
        let listers: Vec<Lister> = templates
            .iter()
            .filter_map(|t| t.def.spec.lister.clone())
            .collect();
        // A list with dynamic entries takes the hints of the templates that produce them;
        // entries only some callers see (a template with scopes, filtered per caller)
        // make it private, as static resources with scopes do.
        let lister_hints = templates
            .iter()
            .filter(|t| t.def.spec.lister.is_some())
            .map(|t| {
                let hints = t.def.item.cache.unwrap_or(s.caching.reads);
                match s.scopes_of(&t.def.item).is_empty() {
                    true => hints,
                    false => hints.combine(CacheHints::new(
                        u64::MAX,
                        crate::protocol::CacheScope::Private,
                    )),
                }
            });
        let resource_list = ListPages::build(
            "resources",
            statics
                .values()
                .map(|r| {
                    (
                        r.def.spec.uri.clone(),
                        Arc::clone(&r.json),
                        r.def.item.cache,
                        s.scopes_of(&r.def.item).to_vec(),
                    )
                })
                .collect(),
            s.page_size,
            lister_hints.fold(lists, CacheHints::combine),
            server_info,
        );
        let template_list = ListPages::build(
            "resourceTemplates",
            templates
                .iter()
                .map(|t| {
                    (
                        t.def.spec.uri.clone(),
                        Arc::clone(&t.json),
                        t.def.item.cache,
                        s.scopes_of(&t.def.item).to_vec(),
                    )
                })
                .collect(),
            s.page_size,
            lists,
            server_info,
        );
        Ok(Catalog {
            discover,
            tools,
            tool_list,
            prompts,
            prompt_list,
            statics,
            templates,
            resource_list,
            template_list,
            listers,
            has_completions,
            uses_input,
            uses_apps,
            task_engine,
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

    pub(crate) fn has_tools(&self) -> bool {
        !self.tools.is_empty()
    }

    pub(crate) fn has_prompts(&self) -> bool {
        !self.prompts.is_empty()
    }

    pub(crate) fn has_resources(&self) -> bool {
        !self.statics.is_empty() || !self.templates.is_empty()
    }

    /// What serves prompts, when there are any.
    pub(crate) fn prompt_engine(&self) -> Option<&'static PromptEngine> {
        self.prompts.values().next().map(|p| p.def.spec.engine)
    }

    /// What serves resources and templates, when there are any.
    pub(crate) fn resource_engine(&self) -> Option<&'static ResourceEngine> {
        let mut all = self.statics.values().chain(&self.templates);
        all.next().map(|r| r.def.spec.engine)
    }

    /// What answers `completion/complete`, when some prompt or template has a completer.
    pub(crate) fn completion(&self) -> Option<Complete> {
        if !self.has_completions {
            return None;
        }
        let prompts = self.prompt_engine().map(|e| e.complete);
        prompts.or_else(|| self.resource_engine().map(|e| e.complete))
    }

    /// The resource serving `uri`: a fixed resource with that URI, else the first template
    /// (in template order) that matches, with the variables it bound.
    pub(crate) fn find_resource(&self, uri: &str) -> Option<Found> {
        if let Some(r) = self.statics.get(uri) {
            return Some((Arc::clone(r), BTreeMap::new()));
        }
        // Through the resource engine, so only servers with resources link the matcher.
        let first = self.templates.first()?;
        (first.def.spec.engine.more.find)(&self.templates, uri)
    }

    /// The resource or template whose URI (template text) is exactly `uri`.
    pub(crate) fn resource_by_uri(&self, uri: &str) -> Option<&Arc<ResourceEntry>> {
        self.statics
            .get(uri)
            .or_else(|| self.templates.iter().find(|t| t.def.spec.uri == uri))
    }
}

/// ` (`a::f` and `b::g`)`: where two clashing items were defined, when known.
fn origins(a: &crate::server::def::Item, b: &crate::server::def::Item) -> String {
    // Where it is mounted, outermost first: `eu/docs`.
    let path = |m: &[String]| m.iter().rev().cloned().collect::<Vec<_>>().join("/");
    let describe = |i: &crate::server::def::Item| match (i.origin, i.mounts.as_deref().map(path)) {
        (Some(o), Some(ns)) => Some(format!("`{o}` mounted under `{ns}`")),
        (Some(o), None) => Some(format!("`{o}`")),
        (None, Some(ns)) => Some(format!("one mounted under `{ns}`")),
        (None, None) => None,
    };
    match (describe(a), describe(b)) {
        (Some(a), Some(b)) => format!(" ({a} and {b})"),
        (Some(x), None) | (None, Some(x)) => format!(" (one is {x})"),
        (None, None) => String::new(),
    }
}

/// `capabilities.extensions`: the declared ones, and those the framework serves when used
/// (tasks is a 2026-07-28 extension: the legacy era leaves it out).
pub(crate) fn extensions(
    declared: &Map<String, Value>,
    tasks: bool,
    apps: bool,
) -> Map<String, Value> {
    let mut extensions = declared.clone();
    if tasks {
        extensions
            .entry(crate::protocol::tasks::EXTENSION)
            .or_insert_with(|| json!({}));
    }
    if apps {
        extensions
            .entry(crate::server::apps::EXTENSION)
            .or_insert_with(|| json!({}));
    }
    extensions
}

/// Which features a server has, for its capabilities.
struct Features {
    tools: bool,
    prompts: bool,
    resources: bool,
    completions: bool,
    logging: bool,
    tasks: bool,
    apps: bool,
}

/// The `server/discover` result. Changes are announced on `subscriptions/listen` streams,
/// so `listChanged` (and resource `subscribe`) are true whenever the feature exists.
fn discover(
    versions: &'static [&'static str],
    caching: &Caching,
    instructions: Option<&str>,
    server_info: Option<&RawValue>,
    f: Features,
    declared: &Map<String, Value>,
) -> Box<RawValue> {
    let mut capabilities = Map::new();
    if f.tools {
        capabilities.insert("tools".into(), json!({ "listChanged": true }));
    }
    if f.prompts {
        capabilities.insert("prompts".into(), json!({ "listChanged": true }));
    }
    if f.resources {
        capabilities.insert(
            "resources".into(),
            json!({ "subscribe": true, "listChanged": true }),
        );
    }
    if f.completions {
        capabilities.insert("completions".into(), json!({}));
    }
    if f.logging {
        capabilities.insert("logging".into(), json!({}));
    }
    let extensions = extensions(declared, f.tasks, f.apps);
    if !extensions.is_empty() {
        capabilities.insert("extensions".into(), Value::Object(extensions));
    }
    let envelope = Envelope {
        result_type: ResultType::Complete,
        body: Discover {
            supported_versions: versions,
            capabilities,
            instructions,
        },
        cache: Some(caching.discover),
        meta: ResultMeta {
            own: None,
            server_info,
        },
    };
    serde_json::value::to_raw_value(&envelope).expect("the discover result serializes")
}
