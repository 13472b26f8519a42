//! What a handler can learn about its request, and the extractors that hand it over.

use super::trace::TraceContext;
use crate::protocol::{ClientCapabilities, LogLevel, RequestId, envelope, methods};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Where request-scoped notifications (progress, log messages) go: the request's own
/// stream. Each item is one serialized JSON-RPC notification. Once the request is over
/// (answered or cancelled: `over` fires), nothing more goes out, whoever still holds a
/// `Progress` or `Logger` of it.
#[derive(Clone, Default)]
pub(crate) struct NotificationSink(Option<(mpsc::Sender<String>, CancellationToken)>);

impl NotificationSink {
    /// A sink that discards everything (the transport cannot stream for this request).
    pub(crate) fn disabled() -> Self {
        NotificationSink(None)
    }

    /// A sink feeding this channel until `over` fires.
    pub(crate) fn new(tx: mpsc::Sender<String>, over: CancellationToken) -> Self {
        NotificationSink(Some((tx, over)))
    }

    fn sender(&self) -> Option<&mpsc::Sender<String>> {
        self.0
            .as_ref()
            .filter(|(_, over)| !over.is_cancelled())
            .map(|(tx, _)| tx)
    }

    pub(crate) fn is_enabled(&self) -> bool {
        self.sender().is_some_and(|tx| !tx.is_closed())
    }

    /// Sends the last message of a request that is over (the cancellation of a question it
    /// asked the client) on its stream, which still delivers what is queued before its
    /// end; `false` when the sink is disabled, closed or full.
    pub(crate) fn send_last(&self, msg: String) -> bool {
        match &self.0 {
            Some((tx, _)) => tx.try_send(msg).is_ok(),
            None => false,
        }
    }

    /// Sends a whole message (a server→client request) without waiting; `false` when the
    /// sink is disabled, closed or full.
    pub(crate) fn send_raw(&self, msg: String) -> bool {
        match self.sender() {
            Some(tx) => tx.try_send(msg).is_ok(),
            None => false,
        }
    }

    /// Sends without waiting. A full buffer drops the notification: delivery of progress
    /// and log messages is best effort, and a slow reader must not grow memory.
    fn send(&self, method: &str, params: Value) -> bool {
        let Some(tx) = self.sender() else {
            return false;
        };
        match tx.try_send(envelope::notification(method, params)) {
            Ok(()) => true,
            Err(e) => {
                tracing::debug!(method, "notification dropped: {e}");
                false
            }
        }
    }
}

/// Values shared by every handler of a server (`State<T>`), keyed by type.
#[derive(Default, Clone)]
pub(crate) struct Extensions(HashMap<TypeId, Arc<dyn Any + Send + Sync>>);

impl Extensions {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.0.insert(TypeId::of::<T>(), Arc::new(value));
    }
    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.0
            .get(&TypeId::of::<T>())
            .and_then(|v| Arc::clone(v).downcast::<T>().ok())
    }
    /// Adds `other`'s values of the types this one has none of.
    pub(crate) fn fill_from(&mut self, other: Extensions) {
        for (k, v) in other.0 {
            self.0.entry(k).or_insert(v);
        }
    }
    pub(crate) fn contains(&self, id: TypeId) -> bool {
        self.0.contains_key(&id)
    }
}

/// Everything the server knows about one request. Built fresh for every request: nothing
/// is carried from one request to the next.
pub(crate) struct Request {
    pub(crate) id: RequestId,
    pub(crate) method: &'static str,
    /// The tool or prompt name, or the resource URI.
    pub(crate) target: Option<String>,
    /// The MIME type the read resource declares.
    pub(crate) mime_type: Option<std::sync::Arc<str>>,
    /// The namespaces the item is mounted under, innermost first.
    pub(crate) mounts: Option<Arc<[String]>>,
    pub(crate) protocol_version: String,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Value>,
    pub(crate) meta: Map<String, Value>,
    pub(crate) progress_token: Option<Value>,
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) trace: Option<TraceContext>,
    pub(crate) cancel: CancellationToken,
    pub(crate) sink: NotificationSink,
    pub(crate) extensions: Arc<Extensions>,
    pub(crate) server: std::sync::Weak<super::ServerInner>,
    /// Inputs of a multi round-trip request (for handlers that ask).
    pub(crate) input: Option<crate::Input>,
    pub(crate) last_progress: Mutex<Option<f64>>,
    /// The task this request runs as, if it does.
    pub(crate) task: Option<TaskLink>,
    /// Who is calling, when the transport authenticated the request.
    pub(crate) principal: Option<Arc<crate::auth::Principal>>,
    /// What middleware inserted for the handler (`Layered<T>`).
    pub(crate) layered: Mutex<Option<Arc<Extensions>>>,
}

/// What a handler running as a task reports through: its id, and where progress goes
/// (it becomes the task's `statusMessage`).
#[derive(Clone)]
pub(crate) struct TaskLink {
    pub(crate) id: String,
    pub(crate) status: mpsc::Sender<String>,
}

impl Request {
    /// The request as the task running it sees it: the same request, with its own
    /// cancellation, no notification stream (a task's request sends none), the task's
    /// input and link.
    pub(crate) fn for_task(&self, input: Option<crate::Input>, task: TaskLink) -> Request {
        Request {
            id: self.id.clone(),
            method: self.method,
            target: self.target.clone(),
            mime_type: self.mime_type.clone(),
            mounts: self.mounts.clone(),
            protocol_version: self.protocol_version.clone(),
            capabilities: self.capabilities.clone(),
            client_info: self.client_info.clone(),
            meta: self.meta.clone(),
            progress_token: None,
            log_level: None,
            trace: self.trace.clone(),
            cancel: CancellationToken::new(),
            sink: NotificationSink::disabled(),
            extensions: Arc::clone(&self.extensions),
            server: self.server.clone(),
            input,
            last_progress: Mutex::new(None),
            layered: Mutex::new(None),
            task: Some(task),
            principal: self.principal.clone(),
        }
    }
}

/// The request a handler is serving: id, client capabilities, `_meta`, cancellation.
///
/// Take it as a tool parameter (`cx: Context`); it is not part of the input schema.
///
/// ```
/// use mcp_runtime::{tool, Context};
///
/// /// Tells whether the client can answer sampling requests.
/// #[tool]
/// async fn can_sample(cx: Context) -> String {
///     format!("sampling: {}", cx.client_capabilities().has("sampling"))
/// }
/// ```
#[derive(Clone)]
pub struct Context(pub(crate) Arc<Request>);

impl Context {
    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.0.id
    }
    /// The method being served, such as `tools/call`.
    pub fn method(&self) -> &str {
        self.0.method
    }
    /// The tool, prompt or resource this request targets, if any.
    pub fn target(&self) -> Option<&str> {
        self.0.target.as_deref()
    }
    /// The id of the task this request runs as (`#[tool(task = ..)]`, when the client
    /// declared the tasks extension), if it does.
    pub fn task_id(&self) -> Option<&str> {
        self.0.task.as_ref().map(|t| t.id.as_str())
    }
    /// The protocol version the client asked for on this request.
    pub fn protocol_version(&self) -> &str {
        &self.0.protocol_version
    }
    /// The capabilities the client declared on this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.0.capabilities
    }
    /// `clientInfo` as sent (optional; never a basis for security decisions).
    pub fn client_info(&self) -> Option<&Value> {
        self.0.client_info.as_ref()
    }
    /// The settings the client declared for the extension `id`
    /// (`clientCapabilities.extensions[id]`), if it declared it.
    pub fn client_extension(&self, id: &str) -> Option<&Value> {
        self.0
            .capabilities
            .as_map()
            .get("extensions")
            .and_then(|e| e.get(id))
            .filter(|v| v.is_object())
    }
    /// The whole request `_meta`.
    pub fn meta(&self) -> &Map<String, Value> {
        &self.0.meta
    }
    /// The W3C trace context the client sent, if it was well formed.
    pub fn trace_context(&self) -> Option<&TraceContext> {
        self.0.trace.as_ref()
    }
    /// Fires when the client cancels the request (closed HTTP stream, or
    /// `notifications/cancelled` on stdio). The handler's future is dropped at the same
    /// time; the token is for work the handler spawned elsewhere.
    pub fn cancellation(&self) -> CancellationToken {
        self.0.cancel.clone()
    }
    /// Fails with `-32021` unless the client declared the capability on this request.
    ///
    /// `path` is a dotted capability path such as `"sampling"` or `"elicitation.url"`.
    pub fn require_capability(&self, path: &str) -> Result<(), crate::Error> {
        if self.0.capabilities.has(path) {
            return Ok(());
        }
        let mut required = json!({});
        let mut cur = &mut required;
        for part in path.split('.') {
            cur = cur
                .as_object_mut()
                .expect("built as objects")
                .entry(part)
                .or_insert_with(|| json!({}));
        }
        Err(crate::Error::missing_capability(
            format!("This request needs the client capability `{path}`"),
            required,
        ))
    }
    /// The server serving this request, to change what it serves or announce changes
    /// ([`Server::add_tool`], [`Server::notify`], ...). `None` once it has shut down.
    ///
    /// [`Server::add_tool`]: crate::Server::add_tool
    /// [`Server::notify`]: crate::Server::notify
    pub fn server(&self) -> Option<crate::Server> {
        self.0.server.upgrade().map(|inner| crate::Server { inner })
    }

    /// `uri` as the server serving this request names it. The handler of an item of a
    /// server mounted with [`ServerBuilder::mount`] names resources as its own server does
    /// (`notes://1`); this is the URI clients read and subscribe to (`docs+notes://1`),
    /// for links in results or notifications. Unmounted, `uri` is returned as it is. Not
    /// for the URIs of a resource's own contents: the mount gives those the namespaces.
    ///
    /// [`ServerBuilder::mount`]: crate::ServerBuilder::mount
    pub fn served_uri(&self, uri: impl Into<String>) -> String {
        super::mount::served_uri(self.0.mounts.as_deref(), uri.into())
    }

    /// The name of a tool or prompt of this item's own server as the server serving this
    /// request names it: for an item of a server mounted with
    /// [`ServerBuilder::mount`](crate::ServerBuilder::mount), `export` is `docs_export`
    /// (nested mounts add each namespace), the name to give
    /// [`Server::enable_tool`](crate::Server::enable_tool) and the like. Unmounted, `name`
    /// as it is.
    pub fn served_name(&self, name: &str) -> String {
        super::mount::served_name(self.0.mounts.as_deref(), name)
    }

    /// Announces that the contents of the resource at `uri` changed, `uri` named as this
    /// item's own server names it (see [`Context::served_uri`]): what
    /// [`Server::notify_resource_updated`](crate::Server::notify_resource_updated) does
    /// with the served URI. Nothing happens once the server has shut down.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        if let Some(server) = self.server() {
            server.notify_resource_updated(self.served_uri(uri));
        }
    }

    /// A progress reporter for this request.
    pub fn progress(&self) -> Progress {
        Progress(Arc::clone(&self.0))
    }
    /// A logger for this request.
    pub fn logger(&self) -> Logger {
        Logger(Arc::clone(&self.0))
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("id", &self.0.id)
            .field("method", &self.0.method)
            .field("target", &self.0.target)
            .finish_non_exhaustive()
    }
}

/// Reports progress of the current request as `notifications/progress`.
///
/// Notifications are sent only when the request's `_meta` carried a `progressToken`, only
/// on the request's own stream, and only while the request runs. `progress` must grow with
/// every report; a report that does not grow is dropped (the spec requires strictly
/// increasing values). In a tool running as a task, a report becomes the task's
/// `statusMessage` instead (the message, or `progress/total`), since a task's request
/// sends no notifications.
///
/// ```
/// use mcp_runtime::{tool, Progress};
///
/// /// Counts to three, reporting each step.
/// #[tool]
/// async fn count(progress: Progress) -> String {
///     for i in 1..=3 {
///         progress.report(i as f64, Some(3.0), Some(&format!("step {i}")));
///     }
///     "done".into()
/// }
/// ```
#[derive(Clone)]
pub struct Progress(pub(crate) Arc<Request>);

impl Progress {
    /// Whether reports go anywhere (the client sent a `progressToken` and the transport can
    /// stream to it).
    pub fn is_enabled(&self) -> bool {
        self.0.task.is_some() || (self.0.progress_token.is_some() && self.0.sink.is_enabled())
    }

    /// Sends `progress` (of `total`, if known) with an optional message. Returns whether
    /// the notification was queued.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        if !progress.is_finite() {
            return false;
        }
        if let Some(task) = &self.0.task {
            let text = match (message, total.filter(|t| t.is_finite())) {
                (Some(m), _) => m.to_owned(),
                (None, Some(t)) => format!("{progress}/{t}"),
                (None, None) => format!("{progress}"),
            };
            // Best effort, like notifications: a full queue drops the report.
            return task.status.try_send(text).is_ok();
        }
        let Some(token) = &self.0.progress_token else {
            return false;
        };
        {
            let mut last = self
                .0
                .last_progress
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|l| progress <= l) {
                tracing::debug!(progress, "progress report dropped: not increasing");
                return false;
            }
            *last = Some(progress);
        }
        let mut params = Map::new();
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), json!(progress));
        if let Some(total) = total.filter(|t| t.is_finite()) {
            params.insert("total".into(), json!(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), json!(message));
        }
        self.0
            .sink
            .send(methods::NOTIFICATION_PROGRESS, Value::Object(params))
    }
}

/// Sends `notifications/message` log entries on the current request's stream.
///
/// Entries are sent only when the request's `_meta` set
/// `io.modelcontextprotocol/logLevel`, and only at or above that level. (Logging is
/// deprecated in 2026-07-28; prefer `tracing`, which goes to stderr.) A server with a tool
/// that takes a `Logger` advertises the `logging` capability.
///
/// ```
/// use mcp_runtime::protocol::LogLevel;
/// use mcp_runtime::{Logger, Server, tool, tools};
///
/// /// Imports a file, logging as it goes.
/// #[tool]
/// async fn import(log: Logger, path: String) -> String {
///     log.info(format!("importing {path}"));
///     if log.enabled(LogLevel::Debug) {
///         log.log(LogLevel::Debug, Some("import"), serde_json::json!({ "path": path }));
///     }
///     "imported".into()
/// }
///
/// let server = Server::builder("importer", "1.0").tools(tools![import]).build().unwrap();
/// assert_eq!(server.tool_names(), ["import"]);
/// ```
#[derive(Clone)]
pub struct Logger(pub(crate) Arc<Request>);

impl Logger {
    /// Whether entries at `level` would be sent.
    pub fn enabled(&self, level: LogLevel) -> bool {
        self.0.log_level.is_some_and(|min| level >= min) && self.0.sink.is_enabled()
    }

    /// Logs `data` (any JSON) at `level`, with an optional logger name.
    pub fn log(&self, level: LogLevel, logger: Option<&str>, data: impl Serialize) -> bool {
        if !self.enabled(level) {
            return false;
        }
        let data = serde_json::to_value(data).unwrap_or(Value::Null);
        let mut params = Map::new();
        params.insert("level".into(), json!(level.as_str()));
        if let Some(logger) = logger {
            params.insert("logger".into(), json!(logger));
        }
        params.insert("data".into(), data);
        self.0
            .sink
            .send(methods::NOTIFICATION_MESSAGE, Value::Object(params))
    }
    /// Logs at `debug`.
    pub fn debug(&self, data: impl Serialize) -> bool {
        self.log(LogLevel::Debug, None, data)
    }
    /// Logs at `info`.
    pub fn info(&self, data: impl Serialize) -> bool {
        self.log(LogLevel::Info, None, data)
    }
    /// Logs at `warning`.
    pub fn warning(&self, data: impl Serialize) -> bool {
        self.log(LogLevel::Warning, None, data)
    }
    /// Logs at `error`.
    pub fn error(&self, data: impl Serialize) -> bool {
        self.log(LogLevel::Error, None, data)
    }
}

/// Shared state given to the server builder with [`ServerBuilder::state`], handed to free
/// function tools by type.
///
/// ```
/// use mcp_runtime::{tool, State};
///
/// struct Config {
///     greeting: String,
/// }
///
/// /// Greets someone with the configured greeting.
/// #[tool]
/// async fn greet(config: State<Config>, name: String) -> String {
///     format!("{} {name}", config.greeting)
/// }
///
/// let server = mcp_runtime::Server::builder("demo", "1.0")
///     .state(Config { greeting: "Hello".into() })
///     .tools(mcp_runtime::tools![greet])
///     .build()
///     .unwrap();
/// # drop(server);
/// ```
///
/// [`ServerBuilder::state`]: crate::ServerBuilder::state
pub struct State<T>(pub(crate) Arc<T>);

impl<T> State<T> {
    /// The shared value's `Arc` (to move it into a spawned task).
    pub fn arc(&self) -> Arc<T> {
        Arc::clone(&self.0)
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(Arc::clone(&self.0))
    }
}

impl<T> std::ops::Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
