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

/// A URI (or URI template) mounted under `ns`: the namespace as a scheme prefix.
pub(crate) fn uri(ns: &str, uri: &str) -> String {
    format!("{ns}+{uri}")
}

pub(crate) fn tool(ns: &str, mut def: ToolDef) -> ToolDef {
    def.item.name = name(ns, &def.item.name);
    def.item.mounted = Some(ns.to_owned());
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
    let prefix = format!("{ns}+");
    // What the list function lists, and what the handler returns, carry the child's
    // URIs: give them the namespace too.
    if let Some(lister) = def.spec.lister.take() {
        let prefix = prefix.clone();
        def.spec.lister = Some(Arc::new(move || {
            let (lister, prefix) = (Arc::clone(&lister), prefix.clone());
            Box::pin(async move {
                let mut listed = lister().await?;
                for r in &mut listed {
                    if !r.uri.starts_with(&prefix) {
                        r.uri.insert_str(0, &prefix);
                    }
                }
                Ok(listed)
            })
        }));
    }
    let inner: Handler<kind::Resource> = Arc::clone(&def.handler);
    def.handler = Arc::new(move |call| {
        let (inner, prefix) = (Arc::clone(&inner), prefix.clone());
        Box::pin(async move {
            let mut contents = inner(call).await?;
            for c in &mut contents {
                let uri = match c {
                    ResourceContents::Text(t) => &mut t.uri,
                    ResourceContents::Blob(b) => &mut b.uri,
                };
                if !uri.starts_with(&prefix) {
                    uri.insert_str(0, &prefix);
                }
            }
            Ok(contents)
        })
    });
    def
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
    }
}
