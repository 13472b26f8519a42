//! Mounting: one server made of several, each under a namespace. A child's tools and
//! prompts are renamed `{namespace}_{name}`, its resources' URIs (and URI templates, and
//! what their list functions and handlers return) get the namespace as a scheme prefix
//! (`notes://1` → `docs+notes://1`), its middleware wraps its own items inside the
//! parent's, and its state fills in what the parent does not have. Everything else (the
//! transport settings, limits, authorization, stores) is the parent's.

use super::def::{Handler, PromptDef, ResourceDef, ToolDef, kind};
use crate::protocol::ResourceContents;
use std::sync::Arc;

/// Checks a namespace: it becomes part of tool names (`[A-Za-z0-9_.-]`) and a URI scheme
/// prefix, so it is a letter followed by letters, digits, `-` and `.`, at most 32 long.
pub(crate) fn check_namespace(ns: &str) -> Result<(), String> {
    let ok = !ns.is_empty()
        && ns.len() <= 32
        && ns.starts_with(|c: char| c.is_ascii_alphabetic())
        && ns
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "mount namespace `{ns}`: use a letter, then letters, digits, `-` or `.` (at most 32), so it fits tool names and URI schemes"
        ))
    }
}

/// The name of a tool or prompt mounted under `ns`.
pub(crate) fn name(ns: &str, name: &str) -> String {
    format!("{ns}_{name}")
}

/// A URI (or URI template) mounted under `ns`: the namespace as a scheme prefix; for an
/// MCP App view (`ui://`, a scheme hosts look for), the namespace as its first segment.
pub(crate) fn uri(ns: &str, uri: &str) -> String {
    match uri.strip_prefix("ui://") {
        Some(rest) => format!("ui://{ns}/{rest}"),
        None => format!("{ns}+{uri}"),
    }
}

pub(crate) fn tool(ns: &str, mut def: ToolDef) -> ToolDef {
    def.item.name = name(ns, &def.item.name);
    def.item.mounted = Some(ns.to_owned());
    if let Some(view) = def.item.view.take() {
        let view = uri(ns, &view);
        if let Some(ui) = def
            .item
            .meta
            .as_mut()
            .and_then(|m| m.get_mut("ui"))
            .and_then(serde_json::Value::as_object_mut)
        {
            ui.insert("resourceUri".into(), serde_json::json!(view));
        }
        def.item.view = Some(view);
    }
    def
}

pub(crate) fn prompt(ns: &str, mut def: PromptDef) -> PromptDef {
    def.item.name = name(ns, &def.item.name);
    def.item.mounted = Some(ns.to_owned());
    def
}

pub(crate) fn resource(ns: &str, mut def: ResourceDef) -> ResourceDef {
    def.spec.uri = uri(ns, &def.spec.uri);
    def.item.mounted = Some(ns.to_owned());
    let ns_owned = ns.to_owned();
    // What the list function lists, and what the handler returns, carry the child's
    // URIs: give them the namespace too.
    if let Some(lister) = def.spec.lister.take() {
        let ns = ns_owned.clone();
        def.spec.lister = Some(Arc::new(move || {
            let (lister, ns) = (Arc::clone(&lister), ns.clone());
            Box::pin(async move {
                let mut listed = lister().await?;
                for r in &mut listed {
                    remount(&ns, &mut r.uri);
                }
                Ok(listed)
            })
        }));
    }
    let inner: Handler<kind::Resource> = Arc::clone(&def.handler);
    def.handler = Arc::new(move |call| {
        let (inner, ns) = (Arc::clone(&inner), ns_owned.clone());
        Box::pin(async move {
            let mut contents = inner(call).await?;
            for c in &mut contents {
                match c {
                    ResourceContents::Text(t) => remount(&ns, &mut t.uri),
                    ResourceContents::Blob(b) => remount(&ns, &mut b.uri),
                }
            }
            Ok(contents)
        })
    });
    def
}

/// Gives `u` the namespace, unless it has it already.
fn remount(ns: &str, u: &mut String) {
    let mounted = u.starts_with(&format!("{ns}+")) || u.starts_with(&format!("ui://{ns}/"));
    if !mounted {
        *u = uri(ns, u);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_fit_names_and_schemes() {
        assert!(check_namespace("docs").is_ok());
        assert!(check_namespace("v2.files-east").is_ok());
        for bad in ["", "2docs", "do cs", "a_b", "x/y", &"a".repeat(33)] {
            assert!(check_namespace(bad).is_err(), "{bad}");
        }
        assert_eq!(name("docs", "search"), "docs_search");
        assert_eq!(uri("docs", "file:///{+path}"), "docs+file:///{+path}");
        assert_eq!(uri("docs", "ui://view.html"), "ui://docs/view.html");
    }
}
