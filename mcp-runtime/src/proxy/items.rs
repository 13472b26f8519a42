//! The items an upstream's lists become: tools, prompts, resources and templates that
//! forward to it, each marked as that upstream's own, and the read its resources share.

use super::checked::{failed, meets_output_schema};
use super::forward::forward_call;
use super::link::Link;
use super::{Upstream, UpstreamError, complete, legacy_task, parked, presented, task};
use crate::Error;
use crate::protocol::{ResourceContents, RpcError};
use crate::server::def::{
    Call, GetPromptResult, PromptDef, ResourceDef, Signature, ToolAnnotations, ToolDef, kind,
};
use crate::server::mount;
use serde_json::{Value, json};
use std::sync::Arc;

impl Upstream {
    /// `def`, marked as made by this upstream.
    fn mine<K: crate::kind::Kind>(&self, mut def: crate::def::Def<K>) -> crate::def::Def<K> {
        def.item.upstream = Some(self.id());
        def
    }

    /// A tool forwarding its calls, served as `served` (see [`presented::served_names`]);
    /// `views` are the MCP App views the upstream serves.
    pub(super) fn tool(
        &self,
        t: &Value,
        served: &str,
        views: &std::collections::BTreeSet<String>,
    ) -> ToolDef {
        let name = t["name"].as_str().unwrap_or_default().to_owned();
        let (link, parked) = (Arc::clone(&self.link), Arc::clone(&self.parked));
        let upstream_name = name.clone();
        let tasks = legacy_task::support(&self.link, t);
        let mut signature = Signature::new();
        // It may ask for input (the upstream's questions pass through): rounds are sealed.
        signature.requirements().uses_input();
        // The output schema this server serves for it, which its results must meet.
        let output = t
            .get("outputSchema")
            .filter(|s| s.is_object())
            .and_then(|s| crate::schema::ArgumentValidator::compile(s).ok())
            .map(Arc::new);
        let mut def = ToolDef::new(served, signature, move |call: Call<kind::Tool>| {
            let (link, parked) = (Arc::clone(&link), Arc::clone(&parked));
            link.mounted(call.request.mounts.as_deref());
            let name = upstream_name.clone();
            let input = call.input().ok();
            let cx = call.context();
            let output = output.clone();
            async move {
                let args = call.arguments;
                let result = if link.is_modern() {
                    forward_call(&link, &cx, input, &name, args).await
                } else if legacy_task::wanted(&cx, tasks) {
                    legacy_task::forward(&link, &cx, &parked, input, &name, args).await
                } else {
                    parked::forward(&link, &cx, &parked, input, &name, args).await
                }?;
                match output {
                    Some(schema) => meets_output_schema(&link, &schema, result),
                    None => Ok(result),
                }
            }
        });
        def.item.foreign = true;
        if let Some(d) = t["description"].as_str() {
            def = def.description(d);
        }
        match t.get("inputSchema").filter(|s| s.is_object()) {
            Some(s) => def = def.input_schema(s.clone()),
            // Listed without one (which the spec requires): any object of arguments, as
            // the upstream takes them, rather than none at all.
            None => {
                tracing::debug!(tool = %name, "an upstream tool has no inputSchema object; served with {{\"type\":\"object\"}}");
                def = def.input_schema(json!({ "type": "object" }));
            }
        }
        if task::offered(&self.link) || tasks.is_some() {
            def = def.task(crate::server::def::TaskSupport::Optional);
        }
        if let Some(a) = t
            .get("annotations")
            .and_then(|a| serde_json::from_value::<ToolAnnotations>(a.clone()).ok())
        {
            def = def.annotations(a);
        }
        self.mine(presented::tool(def, t, views))
    }

    /// A prompt forwarding its calls, served as `served`.
    pub(super) fn prompt(&self, p: &Value, served: &str) -> PromptDef {
        let name = p["name"].as_str().unwrap_or_default().to_owned();
        let mut signature = Signature::new();
        for a in p["arguments"].as_array().into_iter().flatten() {
            signature.add_raw_argument(
                a["name"].as_str().unwrap_or_default(),
                a["description"].as_str(),
                a["required"].as_bool().unwrap_or(false),
            );
        }
        let link = Arc::clone(&self.link);
        let upstream_name = name.clone();
        let mut def = PromptDef::new(served, signature, move |call: Call<kind::Prompt>| {
            let (link, name) = (Arc::clone(&link), upstream_name.clone());
            link.mounted(call.request.mounts.as_deref());
            async move {
                let args = Value::Object(call.arguments);
                let r = link
                    .request("prompts/get", json!({ "name": name, "arguments": args }))
                    .await
                    .map_err(failed)?;
                link.read_as::<GetPromptResult>("a prompt", &r)
            }
        });
        if let Some(d) = p["description"].as_str() {
            def = def.description(d);
        }
        if complete::offered(&self.link) {
            let reference = json!({ "type": "ref/prompt", "name": p["name"] });
            for a in p["arguments"].as_array().into_iter().flatten() {
                if let Some(arg) = a["name"].as_str() {
                    let c = complete::completer(&self.link, reference.clone(), arg);
                    def = def.erased_completer(arg.to_owned(), c);
                }
            }
        }
        self.mine(presented::item(def, p))
    }

    /// A resource forwarding its reads.
    pub(super) fn resource(&self, r: &Value) -> Option<ResourceDef> {
        let uri = presented::servable_uri(r["uri"].as_str()?, false)?;
        let name = presented::resource_name(r, &uri);
        let link = Arc::clone(&self.link);
        let upstream_uri = uri.clone();
        let def = ResourceDef::new(
            uri,
            name,
            Signature::new(),
            move |call: Call<kind::Resource>| {
                let (link, uri) = (Arc::clone(&link), upstream_uri.clone());
                link.mounted(call.request.mounts.as_deref());
                let served = call.target().uri().to_owned();
                async move { read(&link, &uri, &served).await }
            },
        );
        Some(self.mine(presented::resource(def, r, false)))
    }

    /// A resource template forwarding its reads.
    pub(super) fn template(&self, r: &Value) -> Option<ResourceDef> {
        let template = presented::servable_uri(r["uriTemplate"].as_str()?, true)?;
        let name = presented::resource_name(r, &template);
        let link = Arc::clone(&self.link);
        let variables: Vec<String> = if complete::offered(&self.link) {
            mcp_uri_template::UriTemplate::parse(&template)
                .map(|t| {
                    t.variables()
                        .into_iter()
                        .map(|(v, _)| v.to_owned())
                        .collect()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let reference = json!({ "type": "ref/resource", "uri": template });
        let mut def = ResourceDef::new(
            template,
            name,
            Signature::new(),
            move |call: Call<kind::Resource>| {
                let link = Arc::clone(&link);
                link.mounted(call.request.mounts.as_deref());
                // Mounted, the upstream's URI under the namespaces of every mount.
                let uri = mount::own_uri(call.request.mounts.as_deref(), call.target().uri());
                let served = call.target().uri().to_owned();
                async move { read(&link, &uri, &served).await }
            },
        );
        for v in variables {
            let c = complete::completer(&self.link, reference.clone(), &v);
            def = def.erased_completer(v, c);
        }
        Some(self.mine(presented::resource(def, r, true)))
    }
}

/// Whether an upstream's `-32602` for a read says the resource is not there (the 2026-07-28
/// code for it, which also means invalid parameters): "Resource not found: x://1" (this
/// runtime, the spec's example), "Resource x://1 not found", "Unknown resource: x://1".
/// Something else not found ("template variable `id` not found") is not.
fn says_not_found(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    (m.contains("resource") && m.contains("not found"))
        || m.contains("unknown resource")
        || m.contains("no such resource")
}

/// `resources/read` of one upstream URI, served as `served`: the upstream's not found
/// (either era's code) is this server's, naming the upstream's URI, which mounting gives
/// the namespaces (see `mount::resource`); another error naming the URI (`data.uri`, as an
/// invalid template variable's does) passes through naming the served one.
async fn read(link: &Link, uri: &str, served: &str) -> Result<Vec<ResourceContents>, Error> {
    let r = link
        .request("resources/read", json!({ "uri": uri }))
        .await
        .map_err(|e| match e {
            UpstreamError::Rpc { code, message, .. }
                if code == crate::protocol::legacy::RESOURCE_NOT_FOUND
                    || (code == -32602 && says_not_found(&message)) =>
            {
                Error::protocol(RpcError::resource_not_found(uri))
            }
            UpstreamError::Rpc {
                code,
                message,
                data: Some(mut data),
            } if data.get("uri").is_some_and(Value::is_string) => {
                data["uri"] = Value::from(served);
                failed(UpstreamError::Rpc {
                    code,
                    message,
                    data: Some(data),
                })
            }
            other => failed(other),
        })?;
    let contents = r
        .get("contents")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    link.read_as::<Vec<ResourceContents>>("a resource's contents", &contents)
}

#[cfg(test)]
mod not_found_tests {
    #[test]
    fn only_a_missing_resource_is_not_found() {
        for m in [
            "Resource not found: x://1",
            "Resource x://1 not found",
            "Unknown resource: x://1",
            "no such resource",
        ] {
            assert!(super::says_not_found(m), "{m}");
        }
        for m in [
            "template variable `id` not found",
            "Invalid argument `id`: expected u32",
        ] {
            assert!(!super::says_not_found(m), "{m}");
        }
    }
}
