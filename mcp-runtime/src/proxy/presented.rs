//! What an upstream's listing says about an item beyond what forwarding needs, carried to
//! the item's definition: its title, icons and `_meta` (an MCP App's view and settings
//! among them), a tool's `outputSchema`, a resource's size and annotations. As far as this
//! server's rules allow: an icon or a `_meta` key they refuse is left out, and logged, so
//! one odd entry does not keep the gateway from being built.
//!
//! A tool whose `_meta.ui.resourceUri` names a view the upstream lists (a static `ui://`
//! resource of the MCP App type) is served with that view, and the resource as a view:
//! mounted, both follow the namespace, and the server declares the extension. A view the
//! upstream does not list is left out of the tool's `_meta`: it would point at nothing,
//! or at another server's view of that URI.

use crate::apps::{MIME_TYPE, is_view_uri};
use crate::protocol::Annotations;
use crate::server::def::kind::Kind;
use crate::server::def::{Def, Icon, ResourceDef, ToolDef};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// A tool's name as this server can serve it: a character tool names may not have (the
/// spec only recommends `[A-Za-z0-9_.-]`, and SDKs let others through) becomes `_`, so
/// `look up` is served as `look_up`. Its calls still reach the upstream under its own
/// name.
pub(super) fn tool_name(name: &str) -> String {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    name.chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .collect()
}

/// The served names of a list's tools (with [`tool_name`]) or prompts (with
/// [`prompt_name`]), by the upstream's names. Names served as they are come first; one
/// whose served name another item has already is left out (see [`left_out`]), so that no
/// two upstream items share a served name (which would fail the build, or let one replace
/// the other's forwarder).
pub(super) fn served_names(list: &[Value], serve: fn(&str) -> String) -> BTreeMap<&str, String> {
    let names: Vec<&str> = list.iter().filter_map(|v| v["name"].as_str()).collect();
    let (plain, changed): (Vec<&str>, Vec<&str>) = names.into_iter().partition(|n| serve(n) == *n);
    let mut taken = BTreeSet::new();
    let mut served = BTreeMap::new();
    for n in plain.into_iter().chain(changed) {
        let s = serve(n);
        if !s.is_empty() && taken.insert(s.clone()) {
            served.insert(n, s);
        }
    }
    served
}

/// The names of `list` that `served` leaves out.
pub(super) fn left_out<'a>(list: &'a [Value], served: &BTreeMap<&str, String>) -> Vec<&'a str> {
    let names = list.iter().filter_map(|v| v["name"].as_str());
    names.filter(|n| !served.contains_key(n)).collect()
}

/// Logs the names of a list of `kind` left out for their served name.
pub(super) fn tell_left_out<'a>(
    names: impl IntoIterator<Item = &'a str>,
    serve: fn(&str) -> String,
    kind: &str,
) {
    for n in names {
        let s = serve(n);
        tracing::warn!(
            "the upstream's {kind} `{n}` left out: it would be served as `{s}`, which another {kind} is"
        );
    }
}

/// The first item of each `key` in `list`: an upstream that lists one twice is read as
/// listing it once.
pub(super) fn first_of_each(list: Vec<Value>, key: &str) -> Vec<Value> {
    let mut seen = BTreeSet::new();
    list.into_iter()
        .filter(|v| v[key].as_str().is_none_or(|k| seen.insert(k.to_owned())))
        .collect()
}

/// The resources and templates of the lists this server can serve together, as `build()`
/// checks them: a fixed URI (a resource's, or a template's without variables) listed
/// again, and a template with variables that can match the same URI as one before it,
/// are left out (quietly: see [`tell_clashing`]). Resources whose URI has variables are
/// not served (see [`servable_uri`]), so they take no URI here.
pub(super) fn servable_together<'a>(
    resources: &'a [Value],
    templates: &'a [Value],
) -> (Vec<&'a Value>, Vec<&'a Value>) {
    use mcp_uri_template::UriTemplate;
    let mut fixed = BTreeSet::new();
    let resources: Vec<&Value> = resources
        .iter()
        .filter(|r| match r["uri"].as_str() {
            Some(u) if fixed_uri(u) => fixed.insert(u.to_owned()),
            _ => true, // left out, and told, where it is read
        })
        .collect();
    let mut taken: Vec<UriTemplate> = Vec::new();
    let templates = templates
        .iter()
        .filter(|r| {
            let text = r["uriTemplate"].as_str().unwrap_or_default();
            match UriTemplate::parse(text) {
                Ok(t) if t.is_static() => fixed.insert(text.to_owned()),
                Ok(t) if taken.iter().any(|o| o.overlaps(&t)) => false,
                Ok(t) => {
                    taken.push(t);
                    true
                }
                Err(_) => true,
            }
        })
        .collect();
    (resources, templates)
}

/// Logs the templates of `listed` that `served` leaves out.
pub(super) fn tell_clashing<'a>(listed: impl IntoIterator<Item = &'a Value>, served: &[&Value]) {
    for t in listed {
        if !served.iter().any(|s| std::ptr::eq(*s, t)) {
            let text = t["uriTemplate"].as_str().unwrap_or_default();
            tracing::warn!(template = %text, "an upstream template left out: it can match the same URI as another resource");
        }
    }
}

/// A prompt's name as this server can serve it: whitespace and control characters
/// become `_`.
pub(super) fn prompt_name(name: &str) -> String {
    let refused = |c: char| c.is_whitespace() || c.is_control();
    name.chars()
        .map(|c| if refused(c) { '_' } else { c })
        .collect()
}

/// A resource's URI (or, `template`, its URI template) as listed, if this server can
/// serve it: one that is no valid URI template (a bad percent-encoding, say), or a
/// resource's URI with variables in it, is left out, and logged.
pub(super) fn servable_uri(uri: &str, template: bool) -> Option<String> {
    match mcp_uri_template::UriTemplate::parse(uri) {
        Ok(t) if template || t.is_static() => Some(uri.to_owned()),
        Ok(_) => {
            tracing::warn!(%uri, "an upstream resource left out: its URI has variables");
            None
        }
        Err(e) => {
            tracing::warn!(%uri, "an upstream resource left out: its URI cannot be served: {e}");
            None
        }
    }
}

/// Whether `uri` is a fixed URI this server can serve (quietly: for filtering).
pub(super) fn fixed_uri(uri: &str) -> bool {
    mcp_uri_template::UriTemplate::parse(uri).is_ok_and(|t| t.is_static())
}

/// A resource's name as listed; its URI when it has none (or a blank one, which resource
/// names may not be).
pub(super) fn resource_name(r: &Value, uri: &str) -> String {
    let name = r["name"].as_str().filter(|n| !n.trim().is_empty());
    name.unwrap_or(uri).to_owned()
}

/// The views the upstream serves: its listed `ui://` resources of the MCP App type.
pub(super) fn views(resources: &[Value]) -> BTreeSet<String> {
    resources
        .iter()
        .filter(|r| is_view(r, r["uri"].as_str()))
        .filter_map(|r| r["uri"].as_str().map(str::to_owned))
        .collect()
}

fn is_view(r: &Value, uri: Option<&str>) -> bool {
    let uri = uri.filter(|u| fixed_uri(u));
    // MIME type parameters may come with spaces, quotes and in any case:
    // `text/html; profile="mcp-app"`.
    let mime = |m: &str| m.replace([' ', '"'], "").to_ascii_lowercase();
    uri.is_some_and(is_view_uri) && r["mimeType"].as_str().map(mime).as_deref() == Some(MIME_TYPE)
}

/// The title, icons and `_meta` of the listing `v`, on an item marked as made from one
/// (`foreign`).
pub(super) fn item<K: Kind>(mut def: Def<K>, v: &Value) -> Def<K> {
    def.item.foreign = true;
    let what = def.item.name.clone();
    if let Some(t) = v["title"].as_str() {
        def = def.title(t);
    }
    for icon in v["icons"].as_array().into_iter().flatten() {
        match self::icon(icon) {
            Some(i) => def = def.icon(i),
            None => tracing::debug!(item = %what, %icon, "an upstream icon left out"),
        }
    }
    if let Some(meta) = v["_meta"].as_object() {
        def.item.meta = kept_meta(meta, &what);
    }
    def
}

/// A tool: also its `outputSchema`, and its view when the upstream serves it (`views`).
pub(super) fn tool(def: ToolDef, t: &Value, views: &BTreeSet<String>) -> ToolDef {
    let mut def = item(def, t);
    if let Some(s) = t.get("outputSchema").filter(|s| s.is_object()) {
        def.spec.output_schema = Some(s.clone());
    }
    match crate::server::apps::view_in(&t["_meta"]) {
        Some(view) if views.contains(view) => def.item.view = Some(view.to_owned()),
        // A view the upstream does not serve: named here, it would point at nothing, or
        // at a view of this server or another upstream that has that URI.
        Some(view) => {
            tracing::debug!(tool = %def.item.name, %view, "an upstream tool's view is not listed; left out");
            if let Some(meta) = def.item.meta.as_mut() {
                crate::server::apps::forget_view(meta);
            }
        }
        None => {}
    }
    def
}

/// A resource (or, `template`, a resource template): also its description, MIME type,
/// annotations and (a resource's) size; a view is served as one.
pub(super) fn resource(mut def: ResourceDef, r: &Value, template: bool) -> ResourceDef {
    def = item(def, r);
    if let Some(d) = r["description"].as_str() {
        def = def.description(d);
    }
    if let Some(m) = r["mimeType"].as_str() {
        def = def.mime_type(m);
    }
    if let Some(a) = r
        .get("annotations")
        .and_then(|a| annotations(a, &def.item.name))
    {
        def = def.annotations(a);
    }
    if let Some(size) = r["size"].as_u64().filter(|_| !template) {
        def = def.size(size);
    }
    if !template && is_view(r, r["uri"].as_str()) {
        def.item.app = true;
        def.spec.mime_type = Some(MIME_TYPE.into());
    }
    def
}

/// Annotations as listed, without a field this server's rules refuse.
fn annotations(v: &Value, what: &str) -> Option<Annotations> {
    let mut a = match serde_json::from_value::<Annotations>(v.clone()) {
        Ok(a) => a,
        Err(e) => {
            tracing::debug!(item = %what, "an upstream resource's annotations left out: {e}");
            return None;
        }
    };
    if a.priority.is_some_and(|p| mcp_rules::priority(p).is_err()) {
        tracing::debug!(item = %what, "an upstream resource's priority left out");
        a.priority = None;
    }
    if a.last_modified
        .as_deref()
        .is_some_and(|m| mcp_rules::last_modified(m).is_err())
    {
        tracing::debug!(item = %what, "an upstream resource's lastModified left out");
        a.last_modified = None;
    }
    Some(a)
}

/// An icon as listed, if this server's rules take it.
fn icon(v: &Value) -> Option<Icon> {
    let mut icon = Icon::new(v["src"].as_str()?);
    if let Some(m) = v["mimeType"].as_str() {
        icon = icon.mime_type(m);
    }
    for s in v["sizes"].as_array().into_iter().flatten() {
        icon = icon.size(s.as_str()?);
    }
    if let Some(t) = v["theme"].as_str() {
        icon = icon.theme(t);
    }
    let theme_ok = icon
        .theme
        .as_deref()
        .is_none_or(|t| mcp_rules::icon_theme(t).is_ok());
    (mcp_rules::icon_src(&icon.src).is_ok() && theme_ok).then_some(icon)
}

/// The `_meta` entries whose keys this server's rules take.
fn kept_meta(meta: &Map<String, Value>, what: &str) -> Option<Map<String, Value>> {
    let kept: Map<String, Value> = meta
        .iter()
        .filter(|(k, _)| {
            let ok = mcp_rules::meta_key(k).is_ok();
            if !ok {
                tracing::debug!(item = %what, key = %k, "an upstream `_meta` entry left out");
            }
            ok
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!kept.is_empty()).then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_rules_refuse_are_served_in_their_alphabet() {
        assert_eq!(tool_name("look up/v2"), "look_up_v2");
        assert_eq!(tool_name("search.v2-beta_x"), "search.v2-beta_x");
        assert!(mcp_rules::tool_name(&tool_name("naïve café")).is_ok());
        assert_eq!(prompt_name("code review\t"), "code_review_");
        assert_eq!(prompt_name("naïve/ok"), "naïve/ok");
        let r = |name: &str| json!({"uri": "x://1", "name": name});
        assert_eq!(resource_name(&r(" "), "x://1"), "x://1");
        assert_eq!(resource_name(&json!({}), "x://1"), "x://1");
        assert_eq!(resource_name(&r("one"), "x://1"), "one");
        assert_eq!(servable_uri("x://{id}", true).as_deref(), Some("x://{id}"));
        assert_eq!(servable_uri("x://{id}", false), None);
        assert_eq!(servable_uri("x://1", false).as_deref(), Some("x://1"));
        assert_eq!(servable_uri("x://%zz", true), None);
        let list = [
            json!({"name": "look up"}),
            json!({"name": "look_up"}),
            json!({"name": "a b"}),
            json!({"name": "a/b"}),
            json!({"name": "a b"}),
        ];
        let served = served_names(&list, tool_name);
        assert_eq!(left_out(&list, &served), ["look up", "a/b"]);
        let served: Vec<(&str, &str)> = served.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(served, [("a b", "a_b"), ("look_up", "look_up")]);
        let twice = vec![json!({"name": "a", "d": 1}), json!({"name": "a", "d": 2})];
        assert_eq!(first_of_each(twice, "name"), [json!({"name": "a", "d": 1})]);
        let resources = [
            json!({"uri": "x://1"}),
            json!({"uri": "x://1"}),
            json!({"uri": "z://{id}"}),
        ];
        let templates = [
            json!({"uriTemplate": "x://1"}),
            json!({"uriTemplate": "x://{id}"}),
            json!({"uriTemplate": "x://{name}"}),
            json!({"uriTemplate": "y://{id}"}),
            json!({"uriTemplate": "z://{id}"}),
        ];
        let (r, t) = servable_together(&resources, &templates);
        let r: Vec<&Value> = r.iter().map(|r| &r["uri"]).collect();
        assert_eq!(r, [&json!("x://1"), &json!("z://{id}")]);
        let t: Vec<&Value> = t.iter().map(|t| &t["uriTemplate"]).collect();
        assert_eq!(
            t,
            [&json!("x://{id}"), &json!("y://{id}"), &json!("z://{id}")]
        );
        assert!(served_names(&[json!({"name": ""})], tool_name).is_empty());
    }

    #[test]
    fn what_the_rules_refuse_is_left_out() {
        assert!(icon(&json!({"src": "https://x.example/i.png", "sizes": ["48x48"]})).is_some());
        assert!(icon(&json!({"src": "http://x.example/i.png"})).is_none());
        assert!(icon(&json!({"src": "https://x.example/i.png", "theme": "blue"})).is_none());
        assert!(icon(&json!({"sizes": ["any"]})).is_none());
        let meta = json!({"com.example/team": 1, "io.modelcontextprotocol/x": 2, "ui": {}});
        let kept = kept_meta(meta.as_object().unwrap(), "t").unwrap();
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["com.example/team", "ui"]);
        let a = json!({"priority": 2.0, "lastModified": "yesterday", "audience": ["user"]});
        let a = annotations(&a, "r").unwrap();
        assert_eq!((a.priority, a.last_modified), (None, None));
        assert!(a.audience.is_some());
        let a = json!({"priority": 0.5, "lastModified": "2025-01-12T15:00:58Z"});
        let a = annotations(&a, "r").unwrap();
        assert_eq!(a.priority, Some(0.5));
        assert!(a.last_modified.is_some());
    }

    #[test]
    fn a_view_is_a_listed_ui_resource_of_the_app_type() {
        let listed = [
            json!({"uri": "ui://a/v.html", "mimeType": MIME_TYPE}),
            json!({"uri": "ui://a/plain.html", "mimeType": "text/html"}),
            json!({"uri": "https://a.example/v.html", "mimeType": MIME_TYPE}),
            json!({"uri": "ui://a/spaced.html", "mimeType": "text/html; Profile=\"mcp-app\""}),
            json!({"uri": "ui://a/%zz.html", "mimeType": MIME_TYPE}),
            json!({"uri": "ui://a/{x}.html", "mimeType": MIME_TYPE}),
        ];
        assert_eq!(
            views(&listed).into_iter().collect::<Vec<_>>(),
            ["ui://a/spaced.html", "ui://a/v.html"]
        );
    }
}
