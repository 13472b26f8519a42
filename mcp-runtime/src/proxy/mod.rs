//! Proxying (the `proxy` feature): serve another MCP server's tools, prompts, resources
//! and resource templates through this one. [`Upstream`] connects to it, as a child
//! process on stdio, at a Streamable HTTP URL (`http://` or `https://`, with the headers
//! and certificate authorities of [`HttpOptions`]), or as a running [`Server`] of this
//! process ([`Upstream::local`]), in either era (it asks `server/discover` first, and opens
//! a 2025-11-25 session with `initialize` when the server does not know it, and a new one
//! when it forgets that session, answering `404`), and
//! [`Upstream::items`] turns what it serves into definitions whose handlers forward each
//! call: mount them like any other server's. [`Upstream::follow`] keeps them in step
//! with the upstream while the server runs.
//!
//! ```no_run
//! use mcp_runtime::Server;
//! use mcp_runtime::proxy::Upstream;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let fs = Upstream::stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]).await?;
//! let tickets = Upstream::http("https://tickets.example.com/mcp").await?;
//! let server = Server::builder("gateway", "1.0")
//!     .mount("fs", fs.items().await?)
//!     .mount("tickets", tickets.items().await?)
//!     .build()?;
//! let _following = (fs.follow(&server, "fs"), tickets.follow(&server, "tickets"));
//! server.serve_http("127.0.0.1:8080").await?;
//! # Ok(()) }
//! ```
//!
//! During a forwarded call:
//! - a 2026-07-28 upstream that asks for input (`input_required`) has its questions passed
//!   to the client through this server's own rounds; it is told the client's
//!   capabilities (elicitation, sampling, roots), so it asks only what can be answered;
//! - a 2025-11-25 upstream's requests (`elicitation/create`, `sampling/createMessage`,
//!   `roots/list`) reach the client the same way (`input_required` rounds for a 2026-07-28
//!   client, requests in the session of a legacy one) while the upstream call waits,
//!   parked in this process between rounds (so a fleet routes a request's rounds to one
//!   instance, or the later round gets a clear error); on stdio, where the wire does not
//!   say which call a request belongs to, that is done while one call is in flight and no
//!   other request (a task's polls aside), and a request that comes while several are
//!   gets an error rather than the wrong client;
//! - the upstream's progress reaches the client under the client's progress token, and
//!   its log messages go to the client's log (on stdio, while one call is in flight and
//!   no other request).
//!
//! Either way, serving proxied tools over HTTP needs a shared `requestState` key, as any
//! server whose tools ask for input does.
//!
//! When the upstream offers completions, the arguments of its prompts and the variables of
//! its resource templates complete through it (`completion/complete`, in its own names).
//!
//! A 2026-07-28 upstream that offers tasks (the `io.modelcontextprotocol/tasks` extension)
//! has its tools served as tasks when the client asks for one, and a task the upstream
//! starts is followed to its end (its status, questions and cancellation pass through).
//! A 2025-11-25 upstream that offers tasks (its experimental task API) has the tools it
//! runs as tasks served as tasks too; one it runs only as a task is run as an upstream
//! task for every call, so that any client can call it, and its result is read with
//! `tasks/result`, its questions reaching the client on the way.
//!
//! With [`Upstream::follow`], the upstream's resource updates reach this server's
//! subscribers too.
//!
//! A stdio upstream's child that exits (or crashes) fails the requests waiting on it at
//! once ([`UpstreamError::Unavailable`]), a warning says how it exited, and the next
//! request starts it again and does the handshake again, as on the first connect; a
//! followed upstream's lists are then read again, and its resources subscribed to again.
//! A child that stops reading its stdin but keeps it open is taken for gone the same
//! way, and killed, once a write to it makes no progress for
//! [`StdioOptions::write_stall_timeout`] (by default its request time limit).
//! On unix a child runs in a process group of its own, killed whole when the child is
//! killed or exits (the server a wrapper such as `npx` runs goes with it) before the next
//! starts; it does not get the terminal's Ctrl-C, and when this process is killed, its
//! stdin closes: a server that exits at the end of its stdin exits then. Being a
//! background group, a child that reads from or changes the terminal is stopped
//! (`SIGTTIN`, `SIGTTOU`); and a `Command` whose `pre_exec` calls `setsid()` fails to
//! start (`EPERM`: a process group leader cannot start a session).
//! A child that exits again less than 30 s after it started is started again only after
//! a wait (1 s, doubling up to 30 s), and requests meanwhile are refused, saying when it
//! will be. [`Upstream::stdio`], [`Upstream::stdio_with`] and [`Upstream::command_with`]
//! start it again; [`Upstream::command`], whose `Command` cannot be made again, does not.
//! A request an upstream stays silent on is given up after 60 s
//! ([`DEFAULT_UPSTREAM_TIMEOUT`]), or the time [`StdioOptions::timeout`] or
//! [`HttpOptions::timeout`] sets, and cancelled upstream. An answer on stdio whose id
//! names no request waiting is told at warn and dropped; one whose id is ours written as
//! a string (`"7"` for 7) is taken.
//!
//! What an upstream says that is not what it should be (an HTTP error page, a body that
//! is not the JSON-RPC answer, an `error` that is not a JSON-RPC error object) is told at
//! warn in the log, naming the upstream, at most once in 10 s (the others at debug), and
//! never put in an error: the error a client reads says only what went wrong (an HTTP
//! upstream's status, say), as the page may hold the upstream's internals. A
//! well-formed JSON-RPC error of the upstream is meant for clients, and passes (in the
//! codes this server may send). So with an HTTP upstream that cannot be reached: the
//! client reads a short reason taken from the error's kind (`cannot connect (connection
//! refused)`, `cannot connect (TLS failed: its certificate is not trusted)`), the log the
//! error itself, which may name hosts, addresses or a certificate's names. And with an
//! answer of the wrong shape (a tool result, a prompt, a resource's contents): the client
//! reads what is wrong in it without its values (`the upstream server's answer was not
//! valid: invalid type: string, expected a sequence`, or the name of a field it misses;
//! of a result that breaks its tool's output schema, only that it does), the log serde's
//! (or the validator's) message and an excerpt of the answer. The log names an HTTP
//! upstream by its URL without credentials or query, and with a path segment that may be
//! a key (`https://host/<key>/mcp`: one longer than 20 characters, or of 16 or more
//! mixing letters and digits or at least half digits) shown as `…`; and, once a call
//! reached it through a mount, by that mount (`mount=outer/inner`, the first one a call
//! came through when it is mounted under two names; no `mount` field before).

mod changes;
mod checked;
mod complete;
#[cfg(test)]
mod fake;
mod follow;
mod forward;
mod items;
mod legacy_task;
mod link;
mod ongoing;
mod options;
mod overlong;
mod parked;
mod posted;
mod presented;
mod routing;
mod streams;
mod task;
mod watch;

pub use follow::Following;
pub use options::{HttpOptions, StdioOptions};

pub use link::{DEFAULT_UPSTREAM_TIMEOUT, UpstreamError};

use crate::server::{Server, ServerBuilder};
use checked::failed;
pub(crate) use forward::relay;
use link::Link;
use serde_json::{Value, json};
use std::ffi::{OsStr, OsString};
use std::sync::Arc;

/// A connected upstream MCP server.
#[derive(Clone)]
pub struct Upstream {
    link: Arc<Link>,
    parked: Arc<parked::Parked>,
    /// The lists as last read (by `items`), where `follow` starts from.
    seen: Arc<std::sync::Mutex<Option<follow::Lists>>>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("version", &self.link.version())
            .finish_non_exhaustive()
    }
}

impl Upstream {
    fn new(link: Link) -> Upstream {
        Upstream {
            link: Arc::new(link),
            parked: Arc::default(),
            seen: Arc::default(),
        }
    }

    /// Starts `program` with `args` and speaks MCP with it on its stdin and stdout (its
    /// stderr goes to this process's), on unix in a process group of its own. It is
    /// killed, with its group (what it started), when the last clone of the `Upstream`
    /// (and of the definitions made from it) is dropped. When it exits (or
    /// stops reading its stdin: [`StdioOptions::write_stall_timeout`]), the requests
    /// waiting on it fail at once, a warning says so, and it is started again on the next
    /// request (see [`Upstream::command_with`]).
    pub async fn stdio<I, S>(program: impl AsRef<OsStr>, args: I) -> Result<Upstream, UpstreamError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Self::stdio_with(program, args, StdioOptions::new()).await
    }

    /// Like [`Upstream::stdio`], with a time limit of your own.
    pub async fn stdio_with<I, S>(
        program: impl AsRef<OsStr>,
        args: I,
        options: StdioOptions,
    ) -> Result<Upstream, UpstreamError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let program = program.as_ref().to_owned();
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let command = move || {
            let mut cmd = tokio::process::Command::new(&program);
            cmd.args(&args);
            cmd
        };
        Self::command_with(command, options).await
    }

    /// Like [`Upstream::stdio`], with a command of your own (environment, directory; its
    /// pipes and process group set as there). A [`Command`](tokio::process::Command)
    /// cannot be copied, so the child is **not started again** when it exits: every later
    /// request fails. Prefer [`Upstream::command_with`], which makes the command anew.
    pub async fn command(cmd: tokio::process::Command) -> Result<Upstream, UpstreamError> {
        let program = program_of(&cmd);
        let first = link::spawn(cmd)?;
        let limit = DEFAULT_UPSTREAM_TIMEOUT;
        let link = Link::stdio(first, None, program, limit, limit).await?;
        Ok(Upstream::new(link))
    }

    /// Starts the child `command` makes (a command of your own: environment, directory),
    /// with `options` (a zero limit in them refused before anything starts), as
    /// [`Upstream::stdio`] does (its pipes and process group set likewise); `command` is
    /// called again to start it again each time it exited.
    ///
    /// A child that exited is started again on the next request (the requests waiting on
    /// it failed at once with [`UpstreamError::Unavailable`]), and the handshake is done
    /// again, as on the first connect: it must speak the revision it spoke then, for which
    /// the items served were made. Its lists and resource updates are then read and asked
    /// for again by [`Upstream::follow`], so a gateway that follows it serves what the new
    /// run has. When it exits again less than 30 s after it was started, the next start
    /// waits: requests meanwhile get an [`UpstreamError::Unavailable`] that says for how
    /// long, 1 s, then 2 s, doubling up to 30 s; a run of 30 s or more brings the next
    /// start back at once.
    ///
    /// ```no_run
    /// # use mcp_runtime::proxy::{StdioOptions, Upstream};
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let db = Upstream::command_with(
    ///     || {
    ///         let mut cmd = tokio::process::Command::new("db-mcp");
    ///         cmd.env("DB_URL", "postgres://localhost/app").current_dir("/srv/app");
    ///         cmd
    ///     },
    ///     StdioOptions::new(),
    /// )
    /// .await?;
    /// # Ok(()) }
    /// ```
    pub async fn command_with(
        command: impl Fn() -> tokio::process::Command + Send + Sync + 'static,
        options: StdioOptions,
    ) -> Result<Upstream, UpstreamError> {
        let (patience, stall) = options.limits()?;
        let first = command();
        let program = program_of(&first);
        let first = link::spawn(first)?;
        let again: link::Spawn = Arc::new(move || link::spawn(command()));
        let link = Link::stdio(first, Some(again), program, patience, stall).await?;
        Ok(Upstream::new(link))
    }

    /// Connects to the Streamable HTTP endpoint at `url` (`http://`, or `https://`
    /// checked against the public certificate authorities).
    pub async fn http(url: &str) -> Result<Upstream, UpstreamError> {
        Self::http_with(url, HttpOptions::new()).await
    }

    /// Like [`Upstream::http`], with headers every request carries (credentials) and
    /// certificate authorities of your own.
    pub async fn http_with(url: &str, options: HttpOptions) -> Result<Upstream, UpstreamError> {
        Ok(Upstream::new(Link::http(url, &options).await?))
    }

    /// A running [`Server`] of this process, served through an in-process pipe as if it
    /// were another: mount its [`items`](Upstream::items) and [`follow`](Upstream::follow)
    /// it, and the tools, prompts and resources it adds or removes while running show in
    /// the parent at once (it tells them on `subscriptions/listen`), its progress and log
    /// messages reach the parent's client, and its questions (`input_required`) pass
    /// through the parent's rounds. Each call crosses the pipe as JSON; for a child that
    /// never changes, [`ServerBuilder::mount`] of its builder costs nothing per call.
    pub async fn local(server: Server) -> Result<Upstream, UpstreamError> {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (their_read, their_write) = tokio::io::split(theirs);
        let (our_read, our_write) = tokio::io::split(ours);
        let dropped = tokio_util::sync::CancellationToken::new();
        let stop = dropped.clone();
        tokio::spawn(async move {
            let stopped = async move { stop.cancelled().await };
            if let Err(e) = server.serve_io(their_read, their_write, stopped).await {
                tracing::warn!("a local upstream stopped: {e}");
            }
        });
        Ok(Upstream::new(
            Link::pipes(our_read, our_write, dropped).await?,
        ))
    }

    /// The revision spoken with it (`2026-07-28`, or the one `initialize` negotiated).
    pub fn protocol_version(&self) -> &str {
        self.link.version()
    }

    /// Sends one request; its result, or why there is none.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, UpstreamError> {
        self.link.request(method, params).await
    }

    /// What the upstream serves (its tools, prompts, resources and resource templates,
    /// read now), as a builder to [`mount`](ServerBuilder::mount): each definition
    /// forwards its calls. To keep them in step with the upstream's changes once the
    /// server runs, see [`Upstream::follow`].
    pub async fn items(&self) -> Result<ServerBuilder, UpstreamError> {
        let info = self.link.server_info();
        let mut b = Server::builder(
            info["name"].as_str().unwrap_or("upstream"),
            info["version"].as_str().unwrap_or("0"),
        );
        if let Some(i) = self.link.instructions() {
            b = b.instructions(i);
        }
        let lists = self.read_lists().await?;
        let views = presented::views(&lists.resources);
        let (tool, prompt) = (presented::tool_name, presented::prompt_name);
        let tools = presented::served_names(&lists.tools, tool);
        let prompts = presented::served_names(&lists.prompts, prompt);
        presented::tell_left_out(presented::left_out(&lists.tools, &tools), tool, "tool");
        presented::tell_left_out(
            presented::left_out(&lists.prompts, &prompts),
            prompt,
            "prompt",
        );
        for t in &lists.tools {
            let Some(served) = t["name"].as_str().and_then(|n| tools.get(n)) else {
                continue;
            };
            // What `build()` would refuse in it (a schema that does not compile, say)
            // leaves it out, not the whole server.
            if let Err(problems) = crate::server::check_tool(self.tool(t, served, &views)) {
                tracing::warn!(tool = %served, "an upstream tool left out: {}", problems.join("; "));
                continue;
            }
            b = b.tool(self.tool(t, served, &views));
        }
        for p in &lists.prompts {
            if let Some(served) = p["name"].as_str().and_then(|n| prompts.get(n)) {
                b = b.prompt(self.prompt(p, served));
            }
        }
        let (resources, templates) =
            presented::servable_together(&lists.resources, &lists.templates);
        presented::tell_clashing(&lists.templates, &templates);
        for r in resources {
            if let Some(def) = self.resource(r) {
                b = b.resource(def);
            }
        }
        for r in templates {
            if let Some(def) = self.template(r) {
                b = b.resource(def);
            }
        }
        *self.seen.lock().unwrap_or_else(|e| e.into_inner()) = Some(lists);
        Ok(b)
    }

    /// Every list the upstream has, read now.
    async fn read_lists(&self) -> Result<follow::Lists, UpstreamError> {
        let caps = self.link.capabilities();
        let mut lists = follow::Lists::default();
        if caps.get("tools").is_some() {
            let (items, t) = self.list("tools/list", "tools").await?;
            lists.tools = presented::first_of_each(items, "name");
            self.link.remember_headers(&lists.tools);
            lists.shorten(t);
        }
        if caps.get("prompts").is_some() {
            let (items, t) = self.list("prompts/list", "prompts").await?;
            lists.prompts = presented::first_of_each(items, "name");
            lists.shorten(t);
        }
        if caps.get("resources").is_some() {
            let (items, t) = self.list("resources/list", "resources").await?;
            lists.resources = presented::first_of_each(items, "uri");
            lists.shorten(t);
            // A server with resources and no templates may not know the method.
            match self
                .list("resources/templates/list", "resourceTemplates")
                .await
            {
                Ok((items, t)) => {
                    lists.templates = presented::first_of_each(items, "uriTemplate");
                    lists.shorten(t);
                }
                Err(UpstreamError::Rpc { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(lists)
    }

    /// Every page of a list (up to [`MAX_LISTED`] items, and [`MAX_LISTED_BYTES`] of
    /// pages: past either, the rest is left out, with a warning), and the shortest `ttlMs`
    /// its pages gave.
    async fn list(
        &self,
        method: &str,
        key: &str,
    ) -> Result<(Vec<Value>, Option<u64>), UpstreamError> {
        let mut out = Vec::new();
        let mut ttl: Option<u64> = None;
        let mut cursor: Option<String> = None;
        let mut bytes = 0;
        for _ in 0..1000 {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = self.link.request(method, params).await?;
            bytes += crate::protocol::json::json_len(&page);
            let mut cut = false;
            if let Some(items) = page.get(key).and_then(Value::as_array) {
                let room = MAX_LISTED - out.len();
                cut = items.len() > room;
                out.extend(items.iter().take(room).cloned());
            }
            if let Some(t) = page.get("ttlMs").and_then(Value::as_u64) {
                ttl = Some(ttl.map_or(t, |l| l.min(t)));
            }
            let next = page.get("nextCursor").and_then(Value::as_str);
            let more = next.is_some_and(|c| !c.is_empty());
            if cut || (more && (out.len() >= MAX_LISTED || bytes >= MAX_LISTED_BYTES)) {
                self.link.tell(format_args!(
                    "its `{method}` goes on past {} items ({bytes} bytes of pages; at most \
                     {MAX_LISTED} items and {MAX_LISTED_BYTES} bytes are read): the rest is left out",
                    out.len()
                ));
                return Ok((out, ttl));
            }
            match next {
                Some(c) if more => cursor = Some(c.to_owned()),
                _ => return Ok((out, ttl)),
            }
        }
        Ok((out, ttl))
    }

    /// This upstream's identity while it lives (its connection's address): what marks the
    /// items it made, which following it replaces or removes, and no other's.
    pub(super) fn id(&self) -> usize {
        Arc::as_ptr(&self.link) as usize
    }
}

/// Most items one list of an upstream (all its pages together) may have.
pub(crate) const MAX_LISTED: usize = 10_000;

/// Most bytes (as JSON) the pages of one list of an upstream may have together.
pub(crate) const MAX_LISTED_BYTES: usize = link::MAX_MESSAGE;

/// The program `cmd` starts, to name it in logs.
fn program_of(cmd: &tokio::process::Command) -> String {
    cmd.as_std().get_program().to_string_lossy().into_owned()
}

#[cfg(test)]
mod list_tests {
    use super::fake::{self, Reply};
    use super::{MAX_LISTED, Upstream};
    use serde_json::json;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// An HTTP upstream offering tools whose every `tools/list` page is `page(n)` (the
    /// `n`th asked) and names a next one; how many pages were asked, and the upstream.
    async fn endless(
        page: impl Fn(usize) -> Vec<serde_json::Value> + Send + Sync + 'static,
    ) -> (Upstream, Arc<AtomicUsize>) {
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&asked);
        let (link, _) = fake::http(move |req| match req.body["method"].as_str() {
            Some("tools/list") => {
                let n = counted.fetch_add(1, Ordering::SeqCst);
                Some(Reply::json(&json!({"jsonrpc": "2.0", "id": req.body["id"],
                    "result": {"tools": page(n), "nextCursor": "more"}})))
            }
            _ => None,
        })
        .await;
        (Upstream::new(link), asked)
    }

    /// A list with no end (its pages always name a next one) is read up to
    /// [`MAX_LISTED`] items, the rest left out. Before, 1000 pages were read whatever they
    /// held, all kept (here 100,000 tools), and the templates among such a list checked
    /// against each other in quadratic time.
    #[tokio::test]
    async fn an_endless_list_is_read_up_to_its_cap() {
        let (up, asked) = endless(|n| {
            (0..100)
                .map(|i| json!({"name": format!("t{n}_{i}"), "inputSchema": {"type": "object"}}))
                .collect()
        })
        .await;
        let lists = up.read_lists().await.unwrap();
        assert_eq!(lists.tools.len(), MAX_LISTED);
        assert_eq!(asked.load(Ordering::SeqCst), MAX_LISTED / 100);
    }

    /// An upstream listing a tool whose name, mounted, is the shortened form of another
    /// of its tools' (`mount::name_of`: cut, and a 32-bit hash) has the second left out,
    /// with a warning, not the whole server refused. Before, `build()` failed ("two
    /// tools are named ..."), the server's own items and every other upstream's with it.
    #[tokio::test]
    async fn an_upstream_tool_named_as_anothers_shortened_name_is_left_out() {
        let long = format!("x{}", "a".repeat(70));
        let full = format!("up_{long}");
        let hash = full.bytes().fold(0x811c_9dc5_u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        });
        let kept: String = full.chars().take(55).collect();
        let shortened = format!("{kept}_{hash:08x}");
        let crafted = shortened["up_".len()..].to_owned();
        let tools = json!([{"name": long, "inputSchema": {"type": "object"}},
            {"name": crafted, "inputSchema": {"type": "object"}}]);
        let (link, _) = fake::http(move |req| {
            (req.body["method"] == "tools/list").then(|| {
                Reply::json(&json!({"jsonrpc": "2.0", "id": req.body["id"],
                    "result": {"tools": tools}}))
            })
        })
        .await;
        let items = Upstream::new(link).items().await.unwrap();
        let own = crate::def::ToolDef::new("own", crate::handler::Signature::new(), |_| async {
            Ok::<_, crate::Error>("hi")
        });
        let server = crate::Server::builder("gw", "1")
            .tool(own)
            .mount("up", items)
            .build();
        let names = server.map(|s| s.tool_names()).map_err(|e| e.to_string());
        assert_eq!(names, Ok(vec!["own".to_owned(), shortened]));
    }

    /// Pages of large items are read up to [`MAX_LISTED_BYTES`](super::MAX_LISTED_BYTES)
    /// together. Before, 1000 pages of up to 16 MiB each were kept (16 GiB).
    #[tokio::test]
    async fn a_list_of_large_pages_is_read_up_to_its_size_cap() {
        let big = "x".repeat(256 * 1024);
        let (up, asked) = endless(move |n| {
            vec![json!({"name": format!("t{n}"), "description": big,
                "inputSchema": {"type": "object"}})]
        })
        .await;
        let lists = up.read_lists().await.unwrap();
        let pages = super::MAX_LISTED_BYTES / (256 * 1024);
        assert!(asked.load(Ordering::SeqCst) <= pages + 1, "{asked:?}");
        assert!(lists.tools.len() <= pages, "{}", lists.tools.len());
    }
}
