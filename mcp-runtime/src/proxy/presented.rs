//! What an upstream's listing says about an item beyond what forwarding needs, carried to
//! the item's definition: its title, icons and `_meta` (an MCP App's view and settings
//! among them), a tool's `outputSchema`, a resource's size and annotations. As far as this
//! server's rules allow: an icon or a `_meta` key they refuse is left out, and logged, so
//! one odd entry does not keep the gateway from being built.
//!
//! A tool whose `_meta.ui.resourceUri` names a view the upstream lists (a static `ui://`
//! resource of the MCP App type) is served with that view, and the resource as a view:
//! mounted, both follow the namespace, and the server declares the extension.

use crate::apps::{MIME_TYPE, is_view_uri};
use crate::protocol::Annotations;
use crate::server::def::kind::Kind;
use crate::server::def::{Def, Icon, ResourceDef, ToolDef};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The views the upstream serves: its listed `ui://` resources of the MCP App type.
pub(super) fn views(resources: &[Value]) -> BTreeSet<String> {
    resources
        .iter()
        .filter(|r| is_view(r, r["uri"].as_str()))
        .filter_map(|r| r["uri"].as_str().map(str::to_owned))
        .collect()
}

fn is_view(r: &Value, uri: Option<&str>) -> bool {
    uri.is_some_and(is_view_uri) && r["mimeType"].as_str() == Some(MIME_TYPE)
}

/// The title, icons and `_meta` of the listing `v`.
pub(super) fn item<K: Kind>(mut def: Def<K>, v: &Value) -> Def<K> {
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
    let view = crate::server::apps::view_in(&t["_meta"]);
    if let Some(view) = view.filter(|v| views.contains(*v)) {
        def.item.view = Some(view.to_owned());
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
        .and_then(|a| serde_json::from_value::<Annotations>(a.clone()).ok())
    {
        def = def.annotations(a);
    }
    if let Some(size) = r["size"].as_u64().filter(|_| !template) {
        def = def.size(size);
    }
    if !template && is_view(r, r["uri"].as_str()) {
        def.item.app = true;
    }
    def
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
    fn what_the_rules_refuse_is_left_out() {
        assert!(icon(&json!({"src": "https://x.example/i.png", "sizes": ["48x48"]})).is_some());
        assert!(icon(&json!({"src": "http://x.example/i.png"})).is_none());
        assert!(icon(&json!({"src": "https://x.example/i.png", "theme": "blue"})).is_none());
        assert!(icon(&json!({"sizes": ["any"]})).is_none());
        let meta = json!({"com.example/team": 1, "io.modelcontextprotocol/x": 2, "ui": {}});
        let kept = kept_meta(meta.as_object().unwrap(), "t").unwrap();
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["com.example/team", "ui"]);
    }

    #[test]
    fn a_view_is_a_listed_ui_resource_of_the_app_type() {
        let listed = [
            json!({"uri": "ui://a/v.html", "mimeType": MIME_TYPE}),
            json!({"uri": "ui://a/plain.html", "mimeType": "text/html"}),
            json!({"uri": "https://a.example/v.html", "mimeType": MIME_TYPE}),
        ];
        assert_eq!(
            views(&listed).into_iter().collect::<Vec<_>>(),
            ["ui://a/v.html"]
        );
    }
}
