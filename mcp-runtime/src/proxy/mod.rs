//! Proxying (the `proxy` feature): serve another MCP server's tools, prompts and resources
//! through this one. [`Upstream`] connects to it, as a child process on stdio or at a
//! Streamable HTTP URL, in either era (it asks `server/discover` first, and opens a
//! 2025-11-25 session with `initialize` when the server does not know it), and
//! [`Upstream::items`] turns what it serves into definitions whose handlers forward each
//! call: mount them like any other server's.
//!
//! ```no_run
//! use mcp_runtime::Server;
//! use mcp_runtime::proxy::Upstream;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let fs = Upstream::stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]).await?;
//! let tickets = Upstream::http("http://127.0.0.1:9000/mcp").await?;
//! let server = Server::builder("gateway", "1.0")
//!     .mount("fs", fs.items().await?)
//!     .mount("tickets", tickets.items().await?)
//!     .build()?;
//! server.serve_http("127.0.0.1:8080").await?;
//! # Ok(()) }
//! ```
//!
//! A 2026-07-28 upstream that asks for input (`input_required`) has its questions passed
//! to the client through this server's own rounds, so the proxied tools ask for input:
//! serving them over HTTP needs a shared `requestState` key, as any such server does.
//!
//! What it does not do yet: the requests a legacy upstream sends during a call (they get
//! `-32601`), resource templates, subscriptions and list changes of the upstream (its lists
//! are read once, by `items`), TLS (`https://`).

mod link;

pub use link::{DEFAULT_UPSTREAM_TIMEOUT, UpstreamError};

use crate::Error;
use crate::protocol::{CallToolResult, ResourceContents, RpcError};
use crate::server::def::{
    Call, GetPromptResult, PromptDef, ResourceDef, Signature, ToolAnnotations, ToolDef, kind,
};
use crate::server::{Server, ServerBuilder};
use link::Link;
use serde_json::{Value, json};
use std::ffi::OsStr;
use std::sync::Arc;

/// A connected upstream MCP server.
#[derive(Clone)]
pub struct Upstream {
    link: Arc<Link>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("version", &self.link.version())
            .finish_non_exhaustive()
    }
}

impl Upstream {
    /// Starts `program` with `args` and speaks MCP with it on its stdin and stdout (its
    /// stderr goes to this process's). It is killed when the last clone of the
    /// `Upstream` (and of the definitions made from it) is dropped.
    pub async fn stdio<I, S>(program: impl AsRef<OsStr>, args: I) -> Result<Upstream, UpstreamError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args);
        Self::command(cmd).await
    }

    /// Like [`Upstream::stdio`], with a command of your own (environment, directory).
    pub async fn command(cmd: tokio::process::Command) -> Result<Upstream, UpstreamError> {
        Ok(Upstream {
            link: Arc::new(Link::stdio(cmd).await?),
        })
    }

    /// Connects to the Streamable HTTP endpoint at `url` (`http://` only).
    pub async fn http(url: &str) -> Result<Upstream, UpstreamError> {
        Ok(Upstream {
            link: Arc::new(Link::http(url).await?),
        })
    }

    /// The revision spoken with it (`2026-07-28`, or the one `initialize` negotiated).
    pub fn protocol_version(&self) -> &str {
        self.link.version()
    }

    /// Sends one request; its result, or why there is none.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, UpstreamError> {
        self.link.request(method, params).await
    }

    /// What the upstream serves (its tools, prompts and static resources, read now), as a
    /// builder to [`mount`](ServerBuilder::mount): each definition forwards its calls.
    pub async fn items(&self) -> Result<ServerBuilder, UpstreamError> {
        let info = self.link.server_info();
        let mut b = Server::builder(
            info["name"].as_str().unwrap_or("upstream"),
            info["version"].as_str().unwrap_or("0"),
        );
        if let Some(i) = self.link.instructions() {
            b = b.instructions(i);
        }
        let caps = self.link.capabilities();
        if caps.get("tools").is_some() {
            for t in self.list("tools/list", "tools").await? {
                b = b.tool(self.tool(&t));
            }
        }
        if caps.get("prompts").is_some() {
            for p in self.list("prompts/list", "prompts").await? {
                b = b.prompt(self.prompt(&p));
            }
        }
        if caps.get("resources").is_some() {
            for r in self.list("resources/list", "resources").await? {
                if let Some(def) = self.resource(&r) {
                    b = b.resource(def);
                }
            }
        }
        Ok(b)
    }

    /// Every page of a list.
    async fn list(&self, method: &str, key: &str) -> Result<Vec<Value>, UpstreamError> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = self.link.request(method, params).await?;
            if let Some(items) = page.get(key).and_then(Value::as_array) {
                out.extend(items.iter().cloned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) if !c.is_empty() => cursor = Some(c.to_owned()),
                _ => return Ok(out),
            }
        }
        Ok(out)
    }

    fn tool(&self, t: &Value) -> ToolDef {
        let name = t["name"].as_str().unwrap_or_default().to_owned();
        let link = Arc::clone(&self.link);
        let upstream_name = name.clone();
        let mut signature = Signature::new();
        // It may ask for input (the upstream's questions pass through): rounds are sealed.
        signature.requirements().uses_input();
        let mut def = ToolDef::new(name, signature, move |call: Call<kind::Tool>| {
            let (link, name) = (Arc::clone(&link), upstream_name.clone());
            let input = call.input().ok();
            async move { forward_call(&link, input, &name, call.arguments).await }
        });
        if let Some(d) = t["description"].as_str() {
            def = def.description(d);
        }
        if let Some(d) = t["title"].as_str() {
            def = def.title(d);
        }
        if let Some(s) = t.get("inputSchema").filter(|s| s.is_object()) {
            def = def.input_schema(s.clone());
        }
        if let Some(a) = t
            .get("annotations")
            .and_then(|a| serde_json::from_value::<ToolAnnotations>(a.clone()).ok())
        {
            def = def.annotations(a);
        }
        def
    }

    fn prompt(&self, p: &Value) -> PromptDef {
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
        let mut def = PromptDef::new(name, signature, move |call: Call<kind::Prompt>| {
            let (link, name) = (Arc::clone(&link), upstream_name.clone());
            async move {
                let args = Value::Object(call.arguments);
                let r = link
                    .request("prompts/get", json!({ "name": name, "arguments": args }))
                    .await
                    .map_err(failed)?;
                serde_json::from_value::<GetPromptResult>(r).map_err(|e| {
                    Error::new(format!(
                        "the upstream server answered an invalid prompt: {e}"
                    ))
                })
            }
        });
        if let Some(d) = p["description"].as_str() {
            def = def.description(d);
        }
        def
    }

    fn resource(&self, r: &Value) -> Option<ResourceDef> {
        let uri = r["uri"].as_str()?.to_owned();
        let name = r["name"].as_str().unwrap_or(&uri).to_owned();
        let link = Arc::clone(&self.link);
        let upstream_uri = uri.clone();
        let mut def = ResourceDef::new(
            uri,
            name,
            Signature::new(),
            move |_call: Call<kind::Resource>| {
                let (link, uri) = (Arc::clone(&link), upstream_uri.clone());
                async move {
                    let r = link
                        .request("resources/read", json!({ "uri": uri }))
                        .await
                        .map_err(failed)?;
                    let contents = r
                        .get("contents")
                        .cloned()
                        .unwrap_or(Value::Array(Vec::new()));
                    serde_json::from_value::<Vec<ResourceContents>>(contents).map_err(|e| {
                        Error::new(format!(
                            "the upstream server answered invalid contents: {e}"
                        ))
                    })
                }
            },
        );
        if let Some(d) = r["description"].as_str() {
            def = def.description(d);
        }
        if let Some(m) = r["mimeType"].as_str() {
            def = def.mime_type(m);
        }
        Some(def)
    }
}

/// Most rounds of one forwarded multi round-trip request.
const MAX_UPSTREAM_ROUNDS: usize = 16;

/// A `tools/call` forwarded, with its rounds: when the upstream asks for input, its
/// questions go to our client as ours (under the round's key), the upstream's answer and
/// `requestState` are recorded in our sealed state, and the next round gives the upstream
/// the client's answers. Each of our rounds runs this again from the start; recorded
/// upstream rounds are not sent again.
async fn forward_call(
    link: &Link,
    input: Option<crate::Input>,
    name: &str,
    arguments: serde_json::Map<String, Value>,
) -> Result<CallToolResult, Error> {
    let mut carry = serde_json::Map::new();
    for round in 0..MAX_UPSTREAM_ROUNDS {
        let key = format!("upstream.{round}");
        let recorded = input.as_ref().and_then(|i| i.recorded_step(&key));
        let r = match recorded {
            Some(r) => r,
            None => {
                let mut params = json!({ "name": name, "arguments": arguments });
                if let Value::Object(p) = &mut params {
                    p.extend(std::mem::take(&mut carry));
                }
                let r = link.request("tools/call", params).await.map_err(failed)?;
                if asks(&r)
                    && let Some(i) = &input
                {
                    i.record_step(&key, r.clone());
                }
                r
            }
        };
        if !asks(&r) {
            return serde_json::from_value::<CallToolResult>(r).map_err(|e| {
                Error::new(format!(
                    "the upstream server answered an invalid result: {e}"
                ))
            });
        }
        let Some(input) = &input else {
            return Err(Error::new(
                "the upstream server asked for input, which this request cannot forward",
            ));
        };
        let requests: Vec<(String, Value)> = r["inputRequests"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        // All of a round's questions at once, so they go out in one round of ours.
        let keys: Vec<String> = requests.iter().map(|(k, _)| format!("{key}.{k}")).collect();
        let answers = futures_util::future::join_all(
            requests
                .iter()
                .zip(&keys)
                .map(|((_, req), k)| input.ask(k, req.clone())),
        )
        .await;
        let mut responses = serde_json::Map::new();
        for ((k, _), a) in requests.into_iter().zip(answers) {
            responses.insert(k, a?);
        }
        carry.insert("inputResponses".into(), Value::Object(responses));
        if let Some(s) = r.get("requestState") {
            carry.insert("requestState".into(), s.clone());
        }
    }
    Err(Error::new(format!(
        "the upstream server asked for input more than {MAX_UPSTREAM_ROUNDS} times"
    )))
}

/// Whether an upstream result asks for input.
fn asks(r: &Value) -> bool {
    r.get("resultType").and_then(Value::as_str) == Some("input_required")
}

/// An upstream failure as the handler's error: a JSON-RPC error of the upstream passes
/// through with its code; an unreachable upstream is an execution error (for a tool, an
/// `isError` result the model reads).
fn failed(e: UpstreamError) -> Error {
    match e {
        UpstreamError::Rpc {
            code,
            message,
            data,
        } => {
            let mut e = RpcError::new(crate::protocol::ErrorCode::from_wire(code), message);
            if let Some(d) = data {
                e = e.with_data(d);
            }
            Error::protocol(e)
        }
        other => Error::new(format!("the upstream server is unavailable: {other}")),
    }
}
