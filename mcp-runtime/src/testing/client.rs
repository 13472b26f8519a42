//! The in-process client: requests through JSON text and the stdio rules, rounds of
//! `input_required` answered from a script, tasks run to their end.

use super::{Answers, ErrorReply, Outcome, TaskOutcome, param_headers};
use crate::protocol::json::parse_strict;
use crate::protocol::{PROTOCOL_VERSION, keys};
use crate::server::Server;
use crate::server::parts::{NoGuard, Streams, TransportGuard};
use crate::server::route::Prepared;
use crate::server::session::Session;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// An in-process MCP client for tests: every request goes through JSON text and the same
/// rules as stdio (no HTTP headers). [`TestClient::new`] speaks 2026-07-28;
/// [`TestClient::legacy`] opens a legacy session with `initialize`, so the same test can
/// run in either era.
pub struct TestClient {
    server: Server,
    capabilities: Value,
    next_id: AtomicU64,
    max_rounds: u32,
    /// The legacy revision to `initialize` at, and the session once open.
    legacy: Option<(String, std::sync::Mutex<Option<Arc<Session>>>)>,
}

impl TestClient {
    /// A client declaring the elicitation, sampling and roots capabilities.
    pub fn new(server: Server) -> Self {
        TestClient {
            server,
            capabilities: json!({ "elicitation": {}, "sampling": {}, "roots": {} }),
            next_id: AtomicU64::new(1),
            max_rounds: 10,
            legacy: None,
        }
    }

    /// A client of the legacy era (2025-11-25): its first request sends `initialize` with
    /// its capabilities, and every request goes through that session. Questions a handler
    /// asks are requests to this client, answered from the [`Answers`] of the call (by
    /// input key, as in the modern era) within the one request.
    ///
    /// ```
    /// use mcp_runtime::testing::{Answers, TestClient};
    /// use mcp_runtime::{Error, Input, Server, tool, tools};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]
    /// struct Name { name: String }
    ///
    /// /// Greets.
    /// #[tool]
    /// async fn greet(input: Input) -> Result<String, Error> {
    ///     let n: Name = input.elicit("who", "Who?").await?.accepted()?;
    ///     Ok(format!("hi {}", n.name))
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let server = || Server::builder("x", "1").tools(tools![greet]).build().unwrap();
    /// let answers = Answers::new().accept("who", serde_json::json!({"name": "Ada"}));
    /// for client in [TestClient::new(server()), TestClient::legacy(server())] {
    ///     let out = client.call_tool_answering("greet", serde_json::json!({}), &answers).await.unwrap();
    ///     assert_eq!(out.text(), "hi Ada");
    /// }
    /// # });
    /// ```
    pub fn legacy(server: Server) -> Self {
        Self::legacy_at(server, "2025-11-25")
    }

    /// A client of the legacy era asking for revision `version` in `initialize`.
    pub fn legacy_at(server: Server, version: &str) -> Self {
        TestClient {
            legacy: Some((version.to_owned(), std::sync::Mutex::new(None))),
            ..Self::new(server)
        }
    }

    /// The legacy session, opened on first use; `None` for a modern client.
    fn session(&self) -> Result<Option<Arc<Session>>, ErrorReply> {
        let Some((version, slot)) = &self.legacy else {
            return Ok(None);
        };
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = &*slot {
            return Ok(Some(Arc::clone(s)));
        }
        let init = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": self.capabilities,
                "clientInfo": { "name": "mcp-runtime-test-client", "version": env!("CARGO_PKG_VERSION") },
            },
        });
        if !self.server.opens_session(&init) {
            // The transports take it as a message of the modern era, which a server with
            // the legacy era off refuses (-32022); so does this client.
            let text = init.to_string();
            let refused = parse_strict(text.as_bytes())
                .ok()
                .map(|msg| self.server.prepare(msg, &NoGuard, Streams::OnDemand));
            return Err(match refused {
                Some(Prepared::Reply(r)) => error_of(&r.body),
                _ => ErrorReply {
                    code: -32603,
                    message: "this server opens no legacy session".into(),
                    data: None,
                },
            });
        }
        let (session, reply) = self.server.initialize(init, "test".into());
        match session {
            Some(s) => {
                *slot = Some(Arc::clone(&s));
                Ok(Some(s))
            }
            None => Err(error_of(&reply.body)),
        }
    }

    /// The revision the legacy session negotiated (`None` for a modern client).
    pub fn negotiated_version(&self) -> Result<Option<String>, ErrorReply> {
        Ok(self.session()?.map(|s| s.version.as_str().to_owned()))
    }

    /// Declares these capabilities on every request instead.
    pub fn with_capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Also declares the tasks extension (`io.modelcontextprotocol/tasks`) on every request,
    /// so tools declared with `#[tool(task = ..)]` run as tasks.
    pub fn with_tasks(mut self) -> Self {
        if !self.capabilities.is_object() {
            self.capabilities = json!({});
        }
        let caps = &mut self.capabilities;
        if !caps["extensions"].is_object() {
            caps["extensions"] = json!({});
        }
        caps["extensions"][crate::protocol::tasks::EXTENSION] = json!({});
        self
    }

    /// The server under test.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Sends one request (`_meta` added) and returns its result, the notifications sent
    /// before it, or the error.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<(Value, Vec<Value>), ErrorReply> {
        let prepared = self.start(method, params, &NoGuard)?;
        self.finish(prepared, None).await
    }

    /// The HTTP headers a conforming client sends with this request: `MCP-Protocol-Version`,
    /// `Mcp-Method`, `Mcp-Name` and the tool's `Mcp-Param-*` headers. Change one and pass
    /// them to [`TestClient::request_with_headers`] to test the header rules.
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub async fn standard_headers(&self, method: &str, params: &Value) -> Vec<(String, String)> {
        let mut out = vec![
            (
                "MCP-Protocol-Version".to_owned(),
                PROTOCOL_VERSION.to_owned(),
            ),
            ("Mcp-Method".to_owned(), method.to_owned()),
        ];
        let name = match method {
            "tools/call" | "prompts/get" => params["name"].as_str(),
            "resources/read" => params["uri"].as_str(),
            "tasks/get" | "tasks/update" | "tasks/cancel" => params["taskId"].as_str(),
            _ => None,
        };
        if let Some(name) = name {
            out.push(("Mcp-Name".to_owned(), name.to_owned()));
        }
        if method == "tools/call" {
            let tools = self
                .list_all("tools/list", "tools")
                .await
                .unwrap_or_default();
            if let Some(tool) = tools.iter().find(|t| t["name"] == params["name"]) {
                out.extend(param_headers(tool, &params["arguments"]));
            }
        }
        out
    }

    /// Sends one request with these HTTP headers, checked by the same rules as the HTTP
    /// transport (`-32020` for a header that disagrees with the body, is missing or
    /// malformed). Header names are case-insensitive.
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub async fn request_with_headers(
        &self,
        method: &str,
        params: Value,
        headers: &[(String, String)],
    ) -> Result<(Value, Vec<Value>), ErrorReply> {
        let mut map = axum::http::HeaderMap::new();
        for (name, value) in headers {
            let name =
                axum::http::HeaderName::from_bytes(name.as_bytes()).map_err(|e| ErrorReply {
                    code: -32600,
                    message: format!("header name {name:?}: {e}"),
                    data: None,
                })?;
            let value =
                axum::http::HeaderValue::from_bytes(value.as_bytes()).map_err(|e| ErrorReply {
                    code: -32600,
                    message: format!("header value {value:?}: {e}"),
                    data: None,
                })?;
            map.append(name, value);
        }
        let prepared = self.start(
            method,
            params,
            &crate::transport::http::HeaderGuard::new(&map),
        )?;
        self.finish(prepared, None).await
    }

    /// Applies the request rules (synchronously: the guard is not held across an await).
    fn start(
        &self,
        method: &str,
        params: Value,
        guard: &dyn TransportGuard,
    ) -> Result<Prepared, ErrorReply> {
        let mut params = match params {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        if let Some(session) = self.session()? {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let msg = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
            return Ok(self
                .server
                .prepare_legacy(msg, &session, Streams::OnDemand, None));
        }
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.entry(keys::PROTOCOL_VERSION)
                .or_insert(json!(PROTOCOL_VERSION));
            m.entry(keys::CLIENT_CAPABILITIES)
                .or_insert(self.capabilities.clone());
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let text =
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
        let msg = parse_strict(text.as_bytes()).map_err(|e| ErrorReply {
            code: -32700,
            message: e.to_string(),
            data: None,
        })?;
        Ok(self.server.prepare(msg, guard, Streams::OnDemand))
    }

    /// Runs what [`TestClient::start`] prepared and reads the answer.
    async fn finish(
        &self,
        prepared: Prepared,
        answers: Option<&Answers>,
    ) -> Result<(Value, Vec<Value>), ErrorReply> {
        let session = self.session()?;
        let reply = match prepared {
            Prepared::Reply(r) => (r.body, Vec::new()),
            Prepared::Notification { .. } | Prepared::Answer => {
                return Ok((Value::Null, Vec::new()));
            }
            Prepared::Listen(_) => {
                return Err(ErrorReply {
                    code: -32600,
                    message: "use a transport to test subscriptions/listen".into(),
                    data: None,
                });
            }
            Prepared::Call(mut job) => {
                let rx = job.take_notifications();
                // Drain while the request runs, so a chatty handler never waits on a full
                // channel; the channel closes when the handler's context is dropped.
                let collect = async move {
                    let mut notes = Vec::new();
                    if let Some(mut rx) = rx {
                        while let Some(n) = rx.recv().await {
                            let msg: Value = serde_json::from_str(&n).unwrap_or(Value::Null);
                            match (&session, msg.get("id").and_then(Value::as_u64)) {
                                // A legacy session's request to this client: answered from
                                // the script, by the input key it asks for.
                                (Some(s), Some(id)) if msg.get("method").is_some() => {
                                    answer_request(s, id, answers);
                                }
                                _ => notes.push(msg),
                            }
                        }
                    }
                    notes
                };
                let (reply, notes) = tokio::join!(job.run(), collect);
                (reply.body, notes)
            }
        };
        let v: Value = serde_json::from_str(&reply.0).map_err(|e| ErrorReply {
            code: -32700,
            message: e.to_string(),
            data: None,
        })?;
        if v.get("error").is_some() {
            return Err(error_of(&reply.0));
        }
        Ok((v["result"].clone(), reply.1))
    }

    /// Sends a request, answering `input_required` rounds from `answers` until the result
    /// is complete (or a round asks for a key `answers` does not have: then that
    /// `input_required` result is returned).
    pub async fn request_answering(
        &self,
        method: &str,
        params: Value,
        answers: &Answers,
    ) -> Result<Outcome, ErrorReply> {
        if self.legacy.is_some() {
            // The legacy era asks within the request: one round.
            let prepared = self.start(method, params, &NoGuard)?;
            let (result, notifications) = self.finish(prepared, Some(answers)).await?;
            return Ok(Outcome {
                result,
                rounds: 1,
                notifications,
            });
        }
        let mut params = params;
        let mut notifications = Vec::new();
        for round in 1..=self.max_rounds {
            let (result, notes) = self.request(method, params.clone()).await?;
            notifications.extend(notes);
            if result["resultType"] != "input_required" {
                return Ok(Outcome {
                    result,
                    rounds: round,
                    notifications,
                });
            }
            let asked: Vec<String> = result["inputRequests"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            if asked.iter().any(|k| !answers.0.contains_key(k)) {
                return Ok(Outcome {
                    result,
                    rounds: round,
                    notifications,
                });
            }
            let responses: Map<String, Value> = asked
                .iter()
                .map(|k| (k.clone(), answers.0[k].clone()))
                .collect();
            params["inputResponses"] = Value::Object(responses);
            if let Some(s) = result.get("requestState") {
                params["requestState"] = s.clone();
            }
        }
        Err(ErrorReply {
            code: -32603,
            message: format!("no result within {} rounds", self.max_rounds),
            data: None,
        })
    }

    /// Calls a tool (no input answers).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Outcome, ErrorReply> {
        self.call_tool_answering(name, arguments, &Answers::new())
            .await
    }

    /// Calls a tool, answering its questions from `answers`.
    pub async fn call_tool_answering(
        &self,
        name: &str,
        arguments: Value,
        answers: &Answers,
    ) -> Result<Outcome, ErrorReply> {
        self.request_answering(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
            answers,
        )
        .await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<Outcome, ErrorReply> {
        self.request_answering("resources/read", json!({ "uri": uri }), &Answers::new())
            .await
    }

    /// Gets a prompt with string arguments.
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<Outcome, ErrorReply> {
        self.request_answering(
            "prompts/get",
            json!({ "name": name, "arguments": arguments }),
            &Answers::new(),
        )
        .await
    }

    /// Completes an argument of a prompt (`ref/prompt`) or a template variable (`ref/resource`).
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, ErrorReply> {
        let (r, _) = self
            .request(
                "completion/complete",
                json!({ "ref": reference, "argument": { "name": argument, "value": value } }),
            )
            .await?;
        Ok(r["completion"]["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect())
    }

    /// Calls a tool that runs as a task and returns the task handle (the
    /// `resultType: "task"` result); any other result is an error.
    pub async fn start_task(&self, name: &str, arguments: Value) -> Result<Value, ErrorReply> {
        let params = json!({ "name": name, "arguments": arguments });
        let (r, _) = self.request("tools/call", params).await?;
        if r["resultType"] != "task" {
            return Err(ErrorReply {
                code: -32603,
                message: format!("`{name}` did not start a task: {r}"),
                data: Some(r),
            });
        }
        Ok(r)
    }

    /// `tasks/get`: the task as it is now.
    pub async fn task(&self, task_id: &str) -> Result<Value, ErrorReply> {
        Ok(self
            .request("tasks/get", json!({ "taskId": task_id }))
            .await?
            .0)
    }

    /// `tasks/update`: answers the task's input requests (by key).
    pub async fn answer_task(&self, task_id: &str, answers: &Answers) -> Result<(), ErrorReply> {
        let responses: Map<String, Value> = answers.0.clone().into_iter().collect();
        self.request(
            "tasks/update",
            json!({ "taskId": task_id, "inputResponses": responses }),
        )
        .await
        .map(drop)
    }

    /// `tasks/cancel`.
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), ErrorReply> {
        self.request("tasks/cancel", json!({ "taskId": task_id }))
            .await
            .map(drop)
    }

    /// Polls `tasks/get` (every 10 ms, for at most `timeout`) until `done` holds for the
    /// task; returns it.
    pub async fn wait_task(
        &self,
        task_id: &str,
        timeout: std::time::Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Result<Value, ErrorReply> {
        let until = tokio::time::Instant::now() + timeout;
        loop {
            let task = self.task(task_id).await?;
            if done(&task) {
                return Ok(task);
            }
            if tokio::time::Instant::now() >= until {
                return Err(ErrorReply {
                    code: -32603,
                    message: format!("task {task_id} not done within {timeout:?}: {task}"),
                    data: Some(task),
                });
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Runs a tool as a task to its end: answers the `input_required` rounds before the
    /// task and the task's own input requests from `answers` (a question asked again
    /// under `key.2`, `key.3`, ... takes the answer to `key`), polls until the task is
    /// terminal (for at most 30 s), and returns its final `tasks/get` result. A question
    /// without an answer is an error.
    pub async fn run_task(
        &self,
        name: &str,
        arguments: Value,
        answers: &Answers,
    ) -> Result<TaskOutcome, ErrorReply> {
        let params = json!({ "name": name, "arguments": arguments });
        let handle = self
            .request_answering("tools/call", params, answers)
            .await?
            .result;
        if handle["resultType"] != "task" {
            return Err(ErrorReply {
                code: -32603,
                message: format!("`{name}` did not start a task: {handle}"),
                data: Some(handle),
            });
        }
        let id = handle["taskId"].as_str().unwrap_or_default().to_owned();
        let mut answered = Vec::new();
        let terminal = |t: &Value| {
            matches!(
                t["status"].as_str(),
                Some("completed" | "failed" | "cancelled" | "input_required")
            )
        };
        loop {
            let task = self
                .wait_task(&id, std::time::Duration::from_secs(30), terminal)
                .await?;
            if task["status"] != "input_required" {
                return Ok(TaskOutcome { task, answered });
            }
            if answered.len() >= 64 {
                return Err(ErrorReply {
                    code: -32603,
                    message: format!("task {id} keeps asking: {answered:?}"),
                    data: Some(task),
                });
            }
            let mut reply = Answers::new();
            for key in task["inputRequests"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
            {
                let base = key.split('.').next().unwrap_or(key);
                match answers.0.get(key).or_else(|| answers.0.get(base)) {
                    Some(a) => reply = reply.raw(key, a.clone()),
                    None => {
                        return Err(ErrorReply {
                            code: -32603,
                            message: format!("task {id} asks `{key}`, which `answers` lacks"),
                            data: Some(task),
                        });
                    }
                }
                answered.push(key.clone());
            }
            self.answer_task(&id, &reply).await?;
            // Until the task takes the answers, it may still show them as asked.
            self.wait_task(&id, std::time::Duration::from_secs(30), |t| {
                t["status"] != "input_required"
                    || t["inputRequests"]
                        .as_object()
                        .is_some_and(|m| m.keys().all(|k| !reply.0.contains_key(k)))
            })
            .await?;
        }
    }

    /// Every entry of a list method (`tools/list`, ...), all pages.
    pub async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ErrorReply> {
        let mut out = Vec::new();
        let mut cursor: Option<Value> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let (r, _) = match self.request(method, params).await {
                Ok(r) => r,
                // A kind the server does not have lists as empty.
                Err(e) if e.code == -32601 => return Ok(out),
                Err(e) => return Err(e),
            };
            out.extend(r[key].as_array().cloned().unwrap_or_default());
            match r.get("nextCursor") {
                Some(c) => cursor = Some(c.clone()),
                None => return Ok(out),
            }
        }
    }
}

/// The error of an error response's JSON text.
fn error_of(body: &str) -> ErrorReply {
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let e = &v["error"];
    ErrorReply {
        code: e["code"].as_i64().unwrap_or(-32603),
        message: e["message"].as_str().unwrap_or_default().to_owned(),
        data: e.get("data").cloned(),
    }
}

/// Answers a legacy session's request to the client from `answers`, by its input key (an
/// error when the script has none).
fn answer_request(session: &Session, id: u64, answers: Option<&Answers>) {
    let key = session.key_of(id).unwrap_or_default();
    let response = match answers.and_then(|a| a.0.get(&key)) {
        Some(result) => json!({ "id": id, "result": result }),
        None => json!({ "id": id, "error": {
            "code": -32603,
            "message": format!("the test scripted no answer for `{key}`"),
        }}),
    };
    if let Value::Object(o) = response {
        session.resolve(&o);
    }
}
