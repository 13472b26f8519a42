//! Applying a change of an upstream's lists (two reads, before and now) to the server
//! that mounts its items, for [`Upstream::follow`]: what went goes, what is new or
//! different comes in, in an order that keeps the catalog valid on the way.

use super::follow::Lists;
use super::{Upstream, presented};
use crate::server::Server;
use crate::server::def::Item;
use crate::server::{middleware, mount};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Adds `v` to `list` unless it is there already (the same listing entry).
fn once<'a>(list: &mut Vec<&'a Value>, v: &'a Value) {
    if !list.iter().any(|c| std::ptr::eq(*c, v)) {
        list.push(v);
    }
}

/// What changed between two reads, by key: gone, and new or different.
fn diff<'a>(before: &'a [Value], now: &'a [Value], key: &str) -> (Vec<&'a str>, Vec<&'a Value>) {
    let index = |l: &'a [Value]| -> BTreeMap<&'a str, &'a Value> {
        l.iter()
            .filter_map(|v| Some((v.get(key)?.as_str()?, v)))
            .collect()
    };
    let (b, n) = (index(before), index(now));
    let gone = b.keys().filter(|k| !n.contains_key(*k)).copied().collect();
    let changed = n
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .map(|(_, v)| *v)
        .collect();
    (gone, changed)
}

/// Applies what changed between two reads. The order keeps the catalog valid on the way:
/// what went goes first (so a template whose text changed does not clash with its old
/// self), except views, which go (or, listed now as plain resources, are replaced) last,
/// once no tool shows them; resources come in before the tools, so a tool gets its view
/// when the view is served. A tool whose view came or went, though its own listing did not
/// change, is replaced too.
pub(super) fn apply(up: &Upstream, server: &Server, ns: &str, before: &Lists, now: &Lists) {
    // What this upstream put here: made from its listing, mounted under `ns` alone. An
    // item of another source that has the same served name (the server's own `ns_x`, or
    // another upstream's under the same namespace) is neither replaced nor removed: the
    // upstream's is left out instead, and told.
    let id = up.id();
    // Around what comes in, the mounted child's middleware, as around what it had at build
    // (`ServerBuilder::mount`: inside the server's own).
    let layers = server.inner.mount_layers(ns);
    let owned = |item: &Item| {
        item.foreign
            && item.upstream == Some(id)
            && item
                .mounts
                .as_deref()
                .is_some_and(|m| m.len() == 1 && m[0] == ns)
    };
    let report = |what: &str, name: &str, served: &str, r: Result<bool, crate::BuildError>| match r
    {
        Ok(true) => {}
        Ok(false) => tracing::warn!(
            namespace = %ns,
            "the upstream's {what} `{name}` left out: `{served}` is served already, not by this upstream"
        ),
        Err(e) => {
            tracing::warn!(namespace = %ns, "the upstream's {what} `{name}` cannot be served: {e}");
        }
    };
    let add = |r: &Value, template: bool| {
        let (def, key) = match template {
            false => (up.resource(r), "uri"),
            true => (up.template(r), "uriTemplate"),
        };
        if let Some(def) = def {
            let uri = r[key].as_str().unwrap_or_default();
            let def = mount::resource(ns, middleware::layered(def, layers, true));
            let served = def.spec.uri.clone();
            report(
                "resource",
                uri,
                &served,
                server.add_resource_over(def, owned),
            );
        }
    };
    let remove = |uri: &str| {
        let uri = mount::uri(ns, uri);
        if !server.remove_resource_if(&uri, owned)
            && server
                .inner
                .catalog()
                .resource_by_uri(&uri)
                .is_some_and(|r| owned(&r.def.item))
        {
            tracing::warn!(namespace = %ns, "the upstream's resource `{uri}` went, but is still served: a tool shows it");
        }
    };
    let views_before = presented::views(&before.resources);
    let listed_views = presented::views(&now.resources);
    let (_, mut tools) = diff(&before.tools, &now.tools, "name");
    let (_, mut prompts) = diff(&before.prompts, &now.prompts, "name");
    type Serve = fn(&str) -> String;
    let (tool, prompt): (Serve, Serve) = (presented::tool_name, presented::prompt_name);
    let tool_names = presented::served_names(&now.tools, tool);
    let tools_before = presented::served_names(&before.tools, tool);
    let prompt_names = presented::served_names(&now.prompts, prompt);
    let prompts_before = presented::served_names(&before.prompts, prompt);
    // Told once: what is left out now and was not before.
    for (was, is, serve, kind) in [
        (
            (&before.tools, &tools_before),
            (&now.tools, &tool_names),
            tool,
            "tool",
        ),
        (
            (&before.prompts, &prompts_before),
            (&now.prompts, &prompt_names),
            prompt,
            "prompt",
        ),
    ] {
        let was = presented::left_out(was.0, was.1);
        let newly = presented::left_out(is.0, is.1);
        presented::tell_left_out(newly.into_iter().filter(|n| !was.contains(n)), serve, kind);
    }
    // A served name no item has now goes; an item whose served name changed comes again.
    let gone = |before: &BTreeMap<&str, String>, now: &BTreeMap<&str, String>| {
        let kept: BTreeSet<&String> = now.values().collect();
        let gone: Vec<String> = before
            .values()
            .filter(|s| !kept.contains(s))
            .cloned()
            .collect();
        gone
    };
    let (gone_tools, gone_prompts) = (
        gone(&tools_before, &tool_names),
        gone(&prompts_before, &prompt_names),
    );
    for (list, before, now, changed) in [
        (&now.tools, &tools_before, &tool_names, &mut tools),
        (&now.prompts, &prompts_before, &prompt_names, &mut prompts),
    ] {
        for v in list {
            let n = v["name"].as_str().unwrap_or_default();
            if before.get(n) != now.get(n) {
                once(changed, v);
            }
        }
    }
    let (gone_resources, mut resources) = diff(&before.resources, &now.resources, "uri");
    let (gone_templates, mut templates) = diff(&before.templates, &now.templates, "uriTemplate");
    // Only what can be served together comes in (as in `items()`); what could not before
    // and can now comes in though its listing did not change.
    let (ok_resources, ok_templates) = presented::servable_together(&now.resources, &now.templates);
    let (was_ok_resources, was_ok_templates) =
        presented::servable_together(&before.resources, &before.templates);
    // Told once: a template left out now that was not left out before.
    let text = |t: &Value| t["uriTemplate"].as_str().map(str::to_owned);
    let left_out_before: BTreeSet<Option<String>> = before
        .templates
        .iter()
        .filter(|b| !was_ok_templates.iter().any(|w| std::ptr::eq(*w, *b)))
        .map(text)
        .collect();
    let told = now
        .templates
        .iter()
        .filter(|t| !left_out_before.contains(&text(t)));
    presented::tell_clashing(told, &ok_templates);
    for (changed, ok, was_ok, key) in [
        (&mut resources, &ok_resources, &was_ok_resources, "uri"),
        (
            &mut templates,
            &ok_templates,
            &was_ok_templates,
            "uriTemplate",
        ),
    ] {
        changed.retain(|c| ok.iter().any(|o| std::ptr::eq(*o, *c)));
        for o in ok {
            let text = o[key].as_str();
            if !was_ok.iter().any(|w| w[key].as_str() == text) {
                once(changed, o);
            }
        }
    }
    // A view that went, or is listed now as a plain resource: last.
    let was_view = |u: &str| views_before.contains(u) && !listed_views.contains(u);
    // A listed URI with variables was never served (a template may have that text).
    let gone_resources = gone_resources
        .into_iter()
        .filter(|u| presented::fixed_uri(u));
    let (gone_views, gone_resources): (Vec<&str>, Vec<&str>) =
        gone_resources.partition(|u| views_before.contains(*u));
    let (unviewed, resources): (Vec<&Value>, Vec<&Value>) = resources
        .into_iter()
        .partition(|r| r["uri"].as_str().is_some_and(was_view));

    for n in gone_tools {
        server.remove_tool_if(&mount::name_of(ns, &n, true), owned);
    }
    for n in gone_prompts {
        server.remove_prompt_if(&mount::name(ns, &n), owned);
    }
    for u in gone_templates.into_iter().chain(gone_resources) {
        remove(u);
    }
    for r in resources {
        add(r, false);
    }
    for r in templates {
        add(r, true);
    }
    // The views served now: listed as views, and taken in (one refused leaves its tool
    // without it, not unserved).
    let catalog = server.inner.catalog();
    let views: BTreeSet<String> = listed_views
        .into_iter()
        .filter(|v| {
            let served = catalog.resource_by_uri(&mount::uri(ns, v));
            served.is_some_and(|r| r.def.item.app)
        })
        .collect();
    drop(catalog);
    let view_changed = |t: &&Value| {
        crate::server::apps::view_in(&t["_meta"])
            .is_some_and(|v| views_before.contains(v) != views.contains(v))
    };
    for t in now.tools.iter().filter(view_changed) {
        once(&mut tools, t);
    }
    for t in tools {
        let name = t["name"].as_str().unwrap_or_default();
        if let Some(served) = tool_names.get(name) {
            let def = up.tool(t, served, &views);
            let def = mount::tool(ns, middleware::layered_tool(def, layers));
            let served = def.item.name.clone();
            let added = server.add_tool_over(def, owned);
            if added.is_err() {
                // Not served as it was either: its listing is not what it was.
                server.remove_tool_if(&served, owned);
            }
            report("tool", name, &served, added);
        }
    }
    for p in prompts {
        let name = p["name"].as_str().unwrap_or_default();
        if let Some(served) = prompt_names.get(name) {
            let def = mount::prompt(ns, middleware::layered(up.prompt(p, served), layers, true));
            let served = def.item.name.clone();
            report("prompt", name, &served, server.add_prompt_over(def, owned));
        }
    }
    for u in gone_views {
        remove(u);
    }
    for r in unviewed {
        add(r, false);
    }
}

#[cfg(test)]
mod tests {
    use super::{Lists, Upstream, apply, diff};
    use crate::Error;
    use crate::server::Server;
    use crate::server::def::{PromptDef, ResourceDef, Signature, ToolDef};
    use serde_json::{Value, json};
    use std::collections::BTreeSet;

    fn lists(tools: &[Value], resources: &[Value], templates: &[Value]) -> Lists {
        Lists {
            tools: tools.to_vec(),
            resources: resources.to_vec(),
            templates: templates.to_vec(),
            ..Lists::default()
        }
    }

    /// The served view of the tool `name`, if it is served: `Some(None)` without one.
    fn view_of(server: &Server, name: &str) -> Option<Option<String>> {
        let catalog = server.inner.catalog();
        let tool = catalog.tools.get(name)?;
        let meta = tool.def.item.meta.clone().map(Value::Object);
        let listed = meta.as_ref().and_then(|m| m["ui"]["resourceUri"].as_str());
        assert_eq!(listed, tool.def.item.view.as_deref(), "what the tool lists");
        Some(tool.def.item.view.clone())
    }

    fn served(server: &Server, uri: &str) -> bool {
        server.inner.catalog().resource_by_uri(uri).is_some()
    }

    /// Each step applies one read of the lists after another, as `follow` does: a view
    /// and its tool in one read, a view that comes or goes in a later read than its
    /// unchanged tool, a template whose text changes.
    #[tokio::test]
    async fn changes_keep_the_catalog_valid_on_the_way() {
        let upstream = Server::builder("up", "1").build().unwrap();
        let up = Upstream::local(upstream).await.unwrap();
        let server = Server::builder("gw", "1").build().unwrap();
        let tool = json!({"name": "show", "inputSchema": {"type": "object"},
            "_meta": {"ui": {"resourceUri": "ui://app/v.html"}}});
        let view = json!({"uri": "ui://app/v.html", "name": "v",
            "mimeType": crate::apps::MIME_TYPE});
        let (old, new) = (
            json!({"uriTemplate": "notes://{id}", "name": "n"}),
            json!({"uriTemplate": "notes://{note}", "name": "n"}),
        );
        let mounted_view = Some(Some("ui://kid/app/v.html".to_owned()));
        let none = lists(&[], &[], &[]);

        // A view and its tool in one read: both served, the tool with its view.
        let both = lists(
            std::slice::from_ref(&tool),
            std::slice::from_ref(&view),
            &[],
        );
        apply(&up, &server, "kid", &none, &both);
        assert_eq!(view_of(&server, "kid_show"), mounted_view);
        // The view goes, the tool's listing stays: the tool loses its view, then the view
        // goes.
        let tool_only = lists(std::slice::from_ref(&tool), &[], &[]);
        apply(&up, &server, "kid", &both, &tool_only);
        assert_eq!(view_of(&server, "kid_show"), Some(None));
        assert!(!served(&server, "ui://kid/app/v.html"));
        // The view comes back in a later read than its tool: the tool gets it again.
        apply(&up, &server, "kid", &tool_only, &both);
        assert_eq!(view_of(&server, "kid_show"), mounted_view);
        // The view stays, as a plain resource: the tool loses it, and the resource is
        // served as plain.
        let plain = json!({"uri": "ui://app/v.html", "name": "v", "mimeType": "text/html"});
        let unviewed = lists(
            std::slice::from_ref(&tool),
            std::slice::from_ref(&plain),
            &[],
        );
        apply(&up, &server, "kid", &both, &unviewed);
        assert_eq!(view_of(&server, "kid_show"), Some(None));
        let catalog = server.inner.catalog();
        let plain = catalog.resource_by_uri("ui://kid/app/v.html");
        assert!(!plain.expect("served").def.item.app);
        drop(catalog);
        apply(&up, &server, "kid", &unviewed, &both);
        assert_eq!(view_of(&server, "kid_show"), mounted_view);
        // Both go in one read.
        apply(&up, &server, "kid", &both, &none);
        assert_eq!(view_of(&server, "kid_show"), None);
        assert!(!served(&server, "ui://kid/app/v.html"));

        // A template whose text changes: the new one is served, not refused as a clash
        // with the old.
        let before = lists(&[], &[], std::slice::from_ref(&old));
        apply(&up, &server, "kid", &none, &before);
        assert!(served(&server, "kid+notes://{id}"));
        apply(&up, &server, "kid", &before, &lists(&[], &[], &[new]));
        assert!(!served(&server, "kid+notes://{id}"));
        assert!(served(&server, "kid+notes://{note}"));

        // A view whose URI this server cannot serve (a bad percent-encoding) is left out:
        // the tool is served without it.
        let tool = json!({"name": "show", "inputSchema": {"type": "object"},
            "_meta": {"ui": {"resourceUri": "ui://app/%zz.html"}}});
        let refused = json!({"uri": "ui://app/%zz.html", "name": "v",
            "mimeType": crate::apps::MIME_TYPE});
        let server = Server::builder("gw", "1").build().unwrap();
        let refused = lists(std::slice::from_ref(&tool), &[refused], &[]);
        apply(&up, &server, "kid", &none, &refused);
        assert_eq!(view_of(&server, "kid_show"), Some(None));
        // A blank resource name: served under its URI.
        let blank = json!({"uri": "x://1", "name": " "});
        apply(&up, &server, "kid", &none, &lists(&[], &[blank], &[]));
        assert!(served(&server, "kid+x://1"));
    }

    /// An upstream that comes to list an item whose served name another source has
    /// already (the server's own `kid_echo`, here a module mounted under the same
    /// namespace) neither takes it over nor, when it goes again, removes it.
    #[tokio::test]
    async fn an_upstream_never_replaces_or_removes_another_sources_item() {
        let upstream = Server::builder("up", "1").build().unwrap();
        let up = Upstream::local(upstream).await.unwrap();
        let local = Server::builder("kid", "1")
            .tool(ToolDef::new("echo", Signature::new(), |_| async {
                Ok::<_, Error>("local")
            }))
            .prompt(PromptDef::new("intro", Signature::new(), |_| async {
                Ok::<_, Error>("local")
            }))
            .resource(ResourceDef::new(
                "x://1",
                "one",
                Signature::new(),
                |_| async { Ok::<_, Error>("local") },
            ));
        let server = Server::builder("gw", "1")
            .mount("kid", local)
            .build()
            .unwrap();
        let is_local = |server: &Server| {
            let catalog = server.inner.catalog();
            let tool = catalog.tools.get("kid_echo").map(|t| t.def.item.foreign);
            let prompt = catalog.prompts.get("kid_intro").map(|p| p.def.item.foreign);
            let resource = catalog
                .resource_by_uri("kid+x://1")
                .map(|r| r.def.item.foreign);
            (tool, prompt, resource) == (Some(false), Some(false), Some(false))
        };
        assert!(is_local(&server));
        let none = lists(&[], &[], &[]);
        let clashing = Lists {
            tools: vec![json!({"name": "echo", "inputSchema": {"type": "object"}})],
            prompts: vec![json!({"name": "intro"})],
            resources: vec![json!({"uri": "x://1", "name": "one"})],
            ..Lists::default()
        };
        apply(&up, &server, "kid", &none, &clashing);
        assert!(is_local(&server), "replaced");
        apply(&up, &server, "kid", &clashing, &none);
        assert!(is_local(&server), "removed");
        // Its own items it still replaces and removes.
        let other = lists(
            &[json!({"name": "other", "inputSchema": {"type": "object"}})],
            &[],
            &[],
        );
        apply(&up, &server, "kid", &none, &other);
        assert_eq!(server.tool_names(), ["kid_echo", "kid_other"]);
        apply(&up, &server, "kid", &other, &none);
        assert_eq!(server.tool_names(), ["kid_echo"]);
    }

    /// Two upstreams followed under one namespace: neither replaces nor removes what the
    /// other put there.
    #[tokio::test]
    async fn an_upstream_never_replaces_or_removes_another_upstreams_item() {
        let a = Upstream::local(Server::builder("a", "1").build().unwrap())
            .await
            .unwrap();
        let b = Upstream::local(Server::builder("b", "1").build().unwrap())
            .await
            .unwrap();
        assert_ne!(a.id(), b.id());
        let server = Server::builder("gw", "1").build().unwrap();
        let tool =
            |d: &str| json!({"name": "echo", "description": d, "inputSchema": {"type": "object"}});
        let behind = || {
            let catalog = server.inner.catalog();
            catalog.tools.get("kid_echo")?.def.item.description.clone()
        };
        let none = lists(&[], &[], &[]);
        let from_a = lists(&[tool("a")], &[], &[]);
        let from_b = lists(&[tool("b")], &[], &[]);
        apply(&a, &server, "kid", &none, &from_a);
        assert_eq!(behind().as_deref(), Some("a"));
        apply(&b, &server, "kid", &none, &from_b);
        assert_eq!(behind().as_deref(), Some("a"), "b took a's tool over");
        apply(&b, &server, "kid", &from_b, &none);
        assert_eq!(behind().as_deref(), Some("a"), "b removed a's tool");
        apply(&a, &server, "kid", &from_a, &none);
        assert_eq!(behind(), None);
    }

    /// Names tools may not have are served in their alphabet; two upstream tools whose
    /// served names would be the same are not both served, and a served name stays while
    /// an upstream tool still has it.
    #[tokio::test]
    async fn upstream_names_are_served_in_our_alphabet_one_per_served_name() {
        let upstream = Server::builder("up", "1").build().unwrap();
        let up = Upstream::local(upstream).await.unwrap();
        let server = Server::builder("gw", "1").build().unwrap();
        let tool = |name: &str| json!({"name": name, "description": name, "inputSchema": {"type": "object"}});
        // Which upstream tool a served name stands for (its description is its name).
        let behind = |name: &str| {
            let catalog = server.inner.catalog();
            let tool = catalog.tools.get(name)?;
            tool.def.item.description.clone()
        };
        let none = lists(&[], &[], &[]);
        let spaced = lists(&[tool("look up")], &[], &[]);
        apply(&up, &server, "kid", &none, &spaced);
        assert_eq!(server.tool_names(), ["kid_look_up"]);
        assert_eq!(behind("kid_look_up").as_deref(), Some("look up"));
        apply(&up, &server, "kid", &spaced, &none);
        assert!(server.tool_names().is_empty());
        // Both: the one served as it is keeps the name; the other is left out.
        let both = lists(&[tool("look up"), tool("look_up")], &[], &[]);
        apply(&up, &server, "kid", &none, &both);
        assert_eq!(server.tool_names(), ["kid_look_up"]);
        assert_eq!(behind("kid_look_up").as_deref(), Some("look_up"));
        // It goes: the other one takes the name.
        apply(&up, &server, "kid", &both, &spaced);
        assert_eq!(server.tool_names(), ["kid_look_up"]);
        assert_eq!(behind("kid_look_up").as_deref(), Some("look up"));
        apply(&up, &server, "kid", &spaced, &none);
        assert!(server.tool_names().is_empty());

        // A tool `build()` would refuse (an input schema that is no object) is checked
        // out before it is served.
        // A tool whose listing turns into one `build()` refuses: not served as it was.
        let ok = lists(&[tool("flip")], &[], &[]);
        let bad = json!({"name": "flip", "inputSchema": {"type": "string"}});
        apply(&up, &server, "kid", &none, &ok);
        assert_eq!(server.tool_names(), ["kid_flip"]);
        apply(&up, &server, "kid", &ok, &lists(&[bad], &[], &[]));
        assert!(server.tool_names().is_empty());

        // A template left out for a clash comes in once the one in its way goes.
        let t = |text: &str| json!({"uriTemplate": text, "name": text});
        let clash = lists(&[], &[], &[t("t://{id}"), t("t://{name}")]);
        apply(&up, &server, "kid", &none, &clash);
        assert!(served(&server, "kid+t://{id}") && !served(&server, "kid+t://{name}"));
        apply(
            &up,
            &server,
            "kid",
            &clash,
            &lists(&[], &[], &[t("t://{name}")]),
        );
        assert!(!served(&server, "kid+t://{id}") && served(&server, "kid+t://{name}"));

        let bad = json!({"name": "bad", "inputSchema": {"type": "string"}});
        let views = BTreeSet::new();
        assert!(crate::server::check_tool(up.tool(&bad, "bad", &views)).is_err());
        assert!(crate::server::check_tool(up.tool(&tool("ok"), "ok", &views)).is_ok());
        // Listed without an inputSchema object: served taking any object of arguments.
        for listed in [
            json!({"name": "bare"}),
            json!({"name": "bare", "inputSchema": "object"}),
            json!({"name": "bare", "inputSchema": []}),
        ] {
            let def = up.tool(&listed, "bare", &views);
            assert_eq!(
                def.input_schema_value(),
                &json!({"type": "object"}),
                "{listed}"
            );
            assert!(crate::server::check_tool(def).is_ok(), "{listed}");
        }
    }

    #[test]
    fn a_diff_names_what_went_and_what_is_new_or_different() {
        let before = [
            json!({"name": "a", "d": 1}),
            json!({"name": "b"}),
            json!({"name": "c"}),
        ];
        let now = [
            json!({"name": "a", "d": 2}),
            json!({"name": "c"}),
            json!({"name": "e"}),
        ];
        let (gone, changed) = diff(&before, &now, "name");
        assert_eq!(gone, ["b"]);
        let changed: Vec<&str> = changed.iter().filter_map(|v| v["name"].as_str()).collect();
        assert_eq!(changed, ["a", "e"]);
    }
}
