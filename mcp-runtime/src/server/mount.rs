//! Mounting: one server made of several, each under a namespace. A child's tools and
//! prompts are renamed `{namespace}_{name}`, its resources' URIs (and URI templates, and
//! what their list functions and handlers return) get the namespace as a scheme prefix
//! (`notes://1` → `docs+notes://1`), its middleware wraps its own items inside the
//! parent's, and its state fills in what the parent does not have. Everything else (the
//! transport settings, limits, authorization, stores) is the parent's. `merge` does the
//! same without a namespace.

use super::def::{Handler, Item, PromptDef, ResourceDef, ToolDef, kind};
use super::{ServerBuilder, middleware};
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

/// The longest tool name (`mcp_rules::tool_name`).
const MAX_TOOL_NAME: usize = 64;

/// The name of `item` mounted under `ns`: [`name`], but for an item made from another
/// server's listing whose mounted name would be longer than a tool name may be, which is
/// cut and given a hash of the whole name, so it stays the same and tells long names
/// apart (`ns_get_repos_…_3f9a1c07`). Its calls still reach the upstream under its own
/// name.
pub(crate) fn name_of(ns: &str, name: &str, foreign: bool) -> String {
    let full = self::name(ns, name);
    if !foreign || full.chars().count() <= MAX_TOOL_NAME {
        return full;
    }
    // FNV-1a: stable across builds and platforms.
    let hash = full.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    let kept: String = full.chars().take(MAX_TOOL_NAME - 9).collect();
    format!("{kept}_{hash:08x}")
}

/// A URI (or URI template) mounted under `ns`: the namespace as a scheme prefix; for an
/// MCP App view (`ui://`, a scheme hosts look for), the namespace as its first segment.
pub(crate) fn uri(ns: &str, uri: &str) -> String {
    match uri.strip_prefix("ui://") {
        Some(rest) => format!("ui://{ns}/{rest}"),
        None => format!("{ns}+{uri}"),
    }
}

/// Records that `item` is mounted under `ns` (outside any earlier mount).
fn mounted(item: &mut Item, ns: &str) {
    let mut mounts = item.mounts.as_deref().unwrap_or_default().to_vec();
    mounts.push(ns.to_owned());
    item.mounts = Some(mounts.into());
}

/// `uri`, as an item mounted under `mounts` (innermost first) names it, as this server
/// serves it: with every namespace.
pub(crate) fn served_uri(mounts: Option<&[String]>, uri: String) -> String {
    match mounts {
        None => uri,
        Some(mounts) => mounts.iter().fold(uri, |u, ns| self::uri(ns, &u)),
    }
}

/// `uri` as served, as an item mounted under `mounts` (innermost first) names it: its
/// namespaces taken off (what [`served_uri`] adds); without them, as it is.
#[cfg(feature = "proxy")]
pub(crate) fn own_uri(mounts: Option<&[String]>, uri: &str) -> String {
    let base = if uri.starts_with("ui://") {
        "ui://"
    } else {
        ""
    };
    // What the mounts put before any URI of that kind: `outer+inner+`, `ui://outer/inner/`.
    let prefix = served_uri(mounts, base.to_owned());
    match uri.strip_prefix(&prefix) {
        Some(rest) if mounts.is_some() => format!("{base}{rest}"),
        _ => uri.to_owned(),
    }
}

/// The name of a tool or prompt, as an item mounted under `mounts` (innermost first)
/// names it, as this server serves it.
pub(crate) fn served_name(mounts: Option<&[String]>, name: &str) -> String {
    let mounts = mounts.unwrap_or_default();
    mounts
        .iter()
        .fold(name.to_owned(), |n, ns| self::name(ns, &n))
}

pub(crate) fn tool(ns: &str, mut def: ToolDef) -> ToolDef {
    def.item.name = name_of(ns, &def.item.name, def.item.foreign);
    mounted(&mut def.item, ns);
    if let Some(view) = def.item.view.take() {
        let view = uri(ns, &view);
        super::apps::point_at(def.item.meta.get_or_insert_with(Default::default), &view);
        def.item.view = Some(view);
    }
    def
}

pub(crate) fn prompt(ns: &str, mut def: PromptDef) -> PromptDef {
    def.item.name = name(ns, &def.item.name);
    mounted(&mut def.item, ns);
    def
}

pub(crate) fn resource(ns: &str, mut def: ResourceDef) -> ResourceDef {
    def.spec.uri = uri(ns, &def.spec.uri);
    // Mounted already (inside a server mounted here), its contents are remapped already.
    let innermost = def.item.mounts.is_none();
    mounted(&mut def.item, ns);
    // What the list function lists carries the child's URIs: give them the namespace too.
    if let Some(lister) = def.spec.lister.take() {
        let ns = ns.to_owned();
        def.spec.lister = Some(Arc::new(move || {
            let (lister, ns) = (Arc::clone(&lister), ns.clone());
            Box::pin(async move {
                let mut listed = lister().await?;
                for r in &mut listed {
                    r.uri = uri(&ns, &r.uri);
                }
                Ok(listed)
            })
        }));
    }
    // The contents carry the URI that was read (served already), or the child's own URIs,
    // which get every namespace the request's item is mounted under, whatever the depth:
    // done once, by the innermost mount. So does a resource-not-found error it returns.
    if !innermost {
        return def;
    }
    let inner: Handler<kind::Resource> = Arc::clone(&def.handler);
    def.handler = Arc::new(move |call| {
        let inner = Arc::clone(&inner);
        let (mounts, read) = (call.request.mounts.clone(), call.request.target.clone());
        Box::pin(async move {
            let mut contents = inner(call)
                .await
                .map_err(|e| e.served_under(mounts.as_deref(), read.as_deref()))?;
            for c in &mut contents {
                let uri = match c {
                    ResourceContents::Text(t) => &mut t.uri,
                    ResourceContents::Blob(b) => &mut b.uri,
                };
                if read.as_deref() != Some(uri.as_str()) {
                    *uri = served_uri(mounts.as_deref(), std::mem::take(uri));
                }
            }
            Ok(contents)
        })
    });
    def
}

impl ServerBuilder {
    /// Serves everything `child` serves under `namespace`: its tools and prompts as
    /// `{namespace}_{name}`, its resources with `{namespace}+` before their URI scheme
    /// (`notes://{id}` → `docs+notes://{id}`, also in what their list functions and handlers
    /// return), its standby items likewise, its middleware around its own items (inside
    /// this server's), its state where this server has none of that type, and its
    /// instructions after this server's. Its other settings (limits, authorization,
    /// stores) are this server's. A name that two sources give is a build error naming
    /// both; lists stay sorted, and list hints are computed over all items.
    ///
    /// ```
    /// use mcp_runtime::{Server, tool, tools};
    ///
    /// /// Searches the docs.
    /// #[tool]
    /// async fn search(q: String) -> String { format!("docs about {q}") }
    /// /// Searches the tickets.
    /// #[tool(name = "search")]
    /// async fn search_tickets(q: String) -> String { format!("tickets about {q}") }
    ///
    /// let docs = Server::builder("docs", "1.0").tools(tools![search]);
    /// let tickets = Server::builder("tickets", "1.0").tools(tools![search_tickets]);
    /// let server = Server::builder("support", "1.0")
    ///     .mount("docs", docs)
    ///     .mount("tickets", tickets)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(server.tool_names(), ["docs_search", "tickets_search"]);
    /// ```
    pub fn mount(mut self, namespace: impl Into<String>, child: ServerBuilder) -> Self {
        let ns = namespace.into();
        if let Err(e) = check_namespace(&ns) {
            self.mount_errors.push(e);
            return self;
        }
        self.fold_in(child, Some(&ns))
    }

    /// Declares the extension `id` (such as `com.example/audit`) with its `settings` in
    /// `server/discover`'s `capabilities.extensions` (the ones the framework serves, tasks
    /// and MCP Apps, are declared when used). Handlers read what the client declared with
    /// [`Context::client_extension`](crate::Context::client_extension); an item that needs
    /// it says so with [`Def::requires_extension`](crate::def::ToolDef::requires_extension).
    ///
    /// ```
    /// use mcp_runtime::Server;
    ///
    /// let server = Server::builder("x", "1.0")
    ///     .extension("com.example/audit", serde_json::json!({"version": 2}))
    ///     .build()
    ///     .unwrap();
    /// # drop(server);
    /// ```
    pub fn extension(mut self, id: impl Into<String>, settings: serde_json::Value) -> Self {
        self.declared.insert(id.into(), settings);
        self
    }

    /// Serves everything `child` serves under its own names (no namespace), with its
    /// middleware around its items only: how a group of items (a `#[server]` provider,
    /// say) gets middleware of its own. Otherwise like [`ServerBuilder::mount`].
    ///
    /// ```
    /// use mcp_runtime::middleware::RateLimit;
    /// use mcp_runtime::{Server, tool, tools};
    /// use std::time::Duration;
    ///
    /// /// Sends a text message.
    /// #[tool]
    /// async fn sms(to: String) -> String { format!("sent to {to}") }
    /// /// Says hi.
    /// #[tool]
    /// async fn hi() -> &'static str { "hi" }
    ///
    /// let paid = Server::builder("paid", "1.0")
    ///     .tools(tools![sms])
    ///     .layer(RateLimit::new(5, Duration::from_secs(60)));
    /// let server = Server::builder("x", "1.0").tools(tools![hi]).merge(paid).build().unwrap();
    /// assert_eq!(server.tool_names(), ["hi", "sms"]);
    /// ```
    pub fn merge(self, child: ServerBuilder) -> Self {
        self.fold_in(child, None)
    }

    /// Takes in `child`'s items (with its middleware around them, renamed under `ns` when
    /// mounted), state, instructions and problems.
    fn fold_in(mut self, child: ServerBuilder, ns: Option<&str>) -> Self {
        let layers = child.layers;
        #[cfg(feature = "proxy")]
        if let Some(ns) = ns
            && !layers.is_empty()
        {
            self.mount_layers.push((ns.to_owned(), layers.clone()));
        }
        let tool = |d| {
            let d = middleware::layered_tool(d, &layers);
            match ns {
                Some(ns) => tool(ns, d),
                None => d,
            }
        };
        let prompt = |d| {
            let d = middleware::layered(d, &layers, true);
            match ns {
                Some(ns) => prompt(ns, d),
                None => d,
            }
        };
        let resource = |d| {
            let d = middleware::layered(d, &layers, true);
            match ns {
                Some(ns) => resource(ns, d),
                None => d,
            }
        };
        self.tools.extend(child.tools.into_iter().map(tool));
        self.standby_tools
            .extend(child.standby_tools.into_iter().map(tool));
        self.prompts.extend(child.prompts.into_iter().map(prompt));
        self.standby_prompts
            .extend(child.standby_prompts.into_iter().map(prompt));
        self.resources
            .extend(child.resources.into_iter().map(resource));
        self.standby_resources
            .extend(child.standby_resources.into_iter().map(resource));
        self.child_layers.extend(layers);
        self.child_layers.extend(child.child_layers);
        self.extensions.fill_from(child.extensions);
        if let Some(i) = child.instructions {
            let mine = self.instructions.take().unwrap_or_default();
            let sep = if mine.is_empty() { "" } else { "\n\n" };
            let theirs = match ns {
                Some(ns) => format!("Tools, prompts and resources prefixed `{ns}`: {i}"),
                None => i,
            };
            self.instructions = Some(format!("{mine}{sep}{theirs}"));
        }
        self.mount_errors.extend(child.mount_errors);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "proxy")]
    #[test]
    fn a_served_uri_is_taken_back_to_the_childs() {
        let nested = ["inner".to_owned(), "outer".to_owned()];
        for own in [
            "notes://1",
            "ui://app/v.html",
            "file:///{+path}",
            "inner+notes://1",
        ] {
            let served = served_uri(Some(&nested), own.to_owned());
            assert_eq!(own_uri(Some(&nested), &served), own);
        }
        assert_eq!(own_uri(Some(&nested), "inner+notes://1"), "inner+notes://1");
        assert_eq!(own_uri(None, "outer+inner+x://1"), "outer+inner+x://1");
    }

    #[test]
    fn namespaces_fit_names_and_schemes() {
        assert!(check_namespace("docs").is_ok());
        assert!(check_namespace("v2.files-east").is_ok());
        for bad in ["", "2docs", "do cs", "a_b", "x/y", &"a".repeat(33)] {
            assert!(check_namespace(bad).is_err(), "{bad}");
        }
        assert_eq!(name("docs", "search"), "docs_search");
        let nested = ["inner".to_owned(), "outer".to_owned()];
        let served = |u: &str| served_uri(Some(&nested), u.to_owned());
        assert_eq!(served("notes://1"), "outer+inner+notes://1");
        assert_eq!(served("ui://app/v.html"), "ui://outer/inner/app/v.html");
        // A child's URI that looks mounted already is still the child's own.
        assert_eq!(served("inner+notes://1"), "outer+inner+inner+notes://1");
        assert_eq!(served("ui://inner/v.html"), "ui://outer/inner/inner/v.html");
        assert_eq!(served_uri(None, "notes://1".into()), "notes://1");
        assert_eq!(served_name(Some(&nested), "export"), "outer_inner_export");
        assert_eq!(served_name(None, "export"), "export");
        let long = "get_repos_owner_repo_pulls_pull_number_reviews_review_id_comments";
        let short = name_of("gh", long, true);
        assert_eq!(short.chars().count(), MAX_TOOL_NAME, "{short}");
        assert!(short.starts_with("gh_get_repos_owner"), "{short}");
        assert_eq!(short, name_of("gh", long, true), "stable");
        assert_ne!(short, name_of("gh", &format!("{long}_x"), true));
        assert!(mcp_rules::tool_name(&short).is_ok());
        assert_eq!(name_of("gh", long, false), format!("gh_{long}"));
        assert_eq!(name_of("gh", "add", true), "gh_add");
        assert_eq!(uri("docs", "file:///{+path}"), "docs+file:///{+path}");
        assert_eq!(uri("docs", "ui://view.html"), "ui://docs/view.html");
    }
}
