//! [`Input`]: what a handler calls to ask the client for more, and [`Elicited`].

use crate::Error;
use crate::protocol::{ClientCapabilities, RpcError};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Waker};
use tokio::sync::Notify;

/// What the client answered to an elicitation.
///
/// ```
/// use mcp_runtime::{Elicited, Form, tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// struct Sure {
///     ok: bool,
/// }
///
/// /// Deploys a service after the user confirms.
/// #[tool]
/// #[mcp_runtime::needs_input]
/// async fn deploy(service: String, #[input(elicit = "Really deploy {service}?")] sure: Elicited<Sure>) -> String {
///     match sure {
///         Elicited::Accept(Sure { ok: true }) => format!("deployed {service}"),
///         Elicited::Accept(_) | Elicited::Decline => "not deployed".into(),
///         Elicited::Cancel => "cancelled".into(),
///     }
/// }
///
/// assert_eq!(Elicited::Accept(3).accepted().unwrap(), 3);
/// assert!(Elicited::<u8>::Decline.accepted().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user submitted the form.
    Accept(T),
    /// The user declined.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

impl<T> Elicited<T> {
    /// The accepted value, or an execution error saying the user declined or cancelled.
    pub fn accepted(self) -> Result<T, Error> {
        match self {
            Elicited::Accept(v) => Ok(v),
            Elicited::Decline => Err(Error::new("The user declined the request for input.")),
            Elicited::Cancel => Err(Error::new("The user cancelled the request for input.")),
        }
    }
}

/// How questions are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A round of a multi round-trip request: a question without an answer ends it.
    Round,
    /// A round before a task exists: as `Round`, and reaching the body ends it too (the
    /// task then runs the handler again).
    Probe,
    /// Live: inside a running task, or in a legacy session (where each question is a
    /// server→client request); questions wait for answers delivered from outside.
    Live,
}

/// The state of one request's inputs in this round.
pub(crate) struct InputState {
    pub(crate) mode: Mode,
    /// Answers received so far (sealed from earlier rounds, or validated this round).
    pub(crate) answers: BTreeMap<String, Value>,
    /// Results of steps already run.
    pub(crate) steps: BTreeMap<String, Value>,
    /// Answers sent with this retry, for keys asked in the previous round.
    pub(crate) responses: Map<String, Value>,
    /// What was asked this round and not answered: key → `{method, params}`.
    pub(crate) pending: BTreeMap<String, Value>,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) round: u32,
    /// Woken when a question is asked, so the round ends even if it was asked from a task
    /// the handler spawned.
    pub(crate) waker: Option<Waker>,
    /// The handler reached its body (`Mode::Probe`).
    pub(crate) reached_body: bool,
    /// Questions waiting for answers (`Mode::Live`), woken when answers arrive.
    pub(crate) waiters: Vec<Waker>,
    /// Pending questions already handed to the task (`Mode::Live`).
    pub(crate) published: BTreeSet<String>,
    /// Questions handed over whose asker stopped waiting (`Mode::Live`), to withdraw.
    pub(crate) withdrawn: Vec<String>,
    /// Notified when a question is asked (`Mode::Live`).
    pub(crate) asked: Arc<Notify>,
    /// Questions that can get no answer, and why (`Mode::Live`: the client refused).
    pub(crate) failed: BTreeMap<String, String>,
    /// Invalid answers received so far in this request (`Mode::Live`), whichever
    /// questions they answer, each asked again; at `max_reasks` the question so answered
    /// fails instead, as a round-trip request ends at its round cap: a client that
    /// answers wrongly at once would otherwise be asked again and again, as fast as it
    /// answers, until the request times out.
    pub(crate) reasks: u32,
    pub(crate) max_reasks: u32,
}

impl InputState {
    pub(crate) fn new(capabilities: ClientCapabilities) -> Self {
        InputState {
            mode: Mode::Round,
            answers: BTreeMap::new(),
            steps: BTreeMap::new(),
            responses: Map::new(),
            pending: BTreeMap::new(),
            capabilities,
            round: 1,
            waker: None,
            reached_body: false,
            waiters: Vec::new(),
            published: BTreeSet::new(),
            withdrawn: Vec::new(),
            asked: Arc::new(Notify::new()),
            failed: BTreeMap::new(),
            reasks: 0,
            max_reasks: crate::config::DEFAULT_MAX_ROUNDS,
        }
    }
}

/// Asks the client for input during a `tools/call`, `prompts/get` or `resources/read`.
///
/// Take it as a parameter. Ask independent questions together (`tokio::join!`) so they go
/// in one round; ask dependent ones in sequence. A question whose answer is not there yet
/// never returns: the round ends with `input_required`, and the handler runs again from
/// the top when the client answers. So nothing a handler does with the result of a call
/// (not even `map_err`) can swallow a round.
///
/// ```
/// use mcp_runtime::{tool, Error, Input};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Confirm { ok: bool }
///
/// /// Deletes a file after the user confirms.
/// #[tool]
/// async fn delete(path: String, input: Input) -> Result<String, Error> {
///     let size = input.step("size", async { 42u64 }).await?; // runs once across rounds
///     let confirm: Confirm = input.elicit("confirm", format!("Delete {path} ({size} bytes)?")).await?.accepted()?;
///     Ok(if confirm.ok { format!("deleted {path}") } else { "kept".into() })
/// }
/// ```
#[derive(Clone)]
pub struct Input(pub(crate) Arc<Mutex<InputState>>);

impl Input {
    pub(crate) fn lock(&self) -> MutexGuard<'_, InputState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn require(&self, path: &str) -> Result<(), Error> {
        self.require_all(&[path])
    }

    /// Fails with `-32021` naming every capability of `paths` (`elicitation.url`,
    /// `sampling`, ...) the client did not declare, before anything is asked. Generated code
    /// calls it for a handler's `#[input]` parameters, which are asked together: one
    /// missing capability refuses the request up front rather than after the client has
    /// answered the others.
    #[doc(hidden)]
    pub fn require_all(&self, paths: &[&str]) -> Result<(), Error> {
        match self.lock().capabilities.missing(paths) {
            Some(e) => Err(Error::protocol(e)),
            None => Ok(()),
        }
    }

    /// The answer to `key` if there is a valid one (checked by `check`); otherwise records
    /// `request` as a question of this round (a bad answer is asked again, with the reason
    /// given by `reask`) and returns `None`.
    fn answer(
        &self,
        key: &str,
        request: &Value,
        check: &impl Fn(&Value) -> Result<(), String>,
        reask: &impl Fn(&Value, &str) -> Value,
    ) -> Option<Result<Value, String>> {
        let mut st = self.lock();
        if let Some(v) = st.answers.get(key) {
            return Some(Ok(v.clone()));
        }
        if let Some(why) = st.failed.remove(key) {
            st.pending.remove(key);
            return Some(Err(why));
        }
        let question = match st.responses.remove(key) {
            Some(v) => match check(&v) {
                Ok(()) => {
                    st.pending.remove(key);
                    st.answers.insert(key.to_owned(), v.clone());
                    return Some(Ok(v));
                }
                Err(why) if st.mode == Mode::Live => {
                    st.reasks += 1;
                    if st.reasks >= st.max_reasks {
                        st.pending.remove(key);
                        return Some(Err(format!(
                            "the client's answers were not valid {} times; the last: {why}",
                            st.reasks
                        )));
                    }
                    reask(request, &why)
                }
                Err(why) => reask(request, &why),
            },
            None if st.pending.contains_key(key) => return None,
            None => request.clone(),
        };
        st.pending.insert(key.to_owned(), question);
        st.published.remove(key);
        if let Some(w) = &st.waker {
            w.wake_by_ref();
        }
        if st.mode == Mode::Live {
            st.asked.notify_one();
        }
        None
    }

    /// The answer to `key`. Without one, in a round, the question never returns (the
    /// round ends with `input_required`); live, it waits until the answer arrives (or the
    /// client refuses: an error).
    async fn answer_or_end_round(
        &self,
        key: &str,
        request: Value,
        check: impl Fn(&Value) -> Result<(), String>,
        reask: impl Fn(&Value, &str) -> Value,
    ) -> Result<Value, Error> {
        // Live, a question whose asker stops waiting (a timeout around it, a `select!`)
        // is withdrawn; answered, it is no longer pending, and this does nothing.
        let _withdraw = Withdraw { input: self, key };
        std::future::poll_fn(|cx| match self.answer(key, &request, &check, &reask) {
            Some(v) => Poll::Ready(v.map_err(Error::new)),
            None => {
                let mut st = self.lock();
                if !st.waiters.iter().any(|w| w.will_wake(cx.waker())) {
                    st.waiters.push(cx.waker().clone());
                }
                Poll::Pending
            }
        })
        .await
    }

    /// Live input (a task, a legacy session), with what earlier rounds answered and
    /// recorded.
    pub(crate) fn live(
        capabilities: ClientCapabilities,
        answers: BTreeMap<String, Value>,
        steps: BTreeMap<String, Value>,
        max_reasks: u32,
    ) -> Input {
        let mut st = InputState::new(capabilities);
        st.mode = Mode::Live;
        st.max_reasks = max_reasks.max(1);
        st.answers = answers;
        st.steps = steps;
        Input(Arc::new(Mutex::new(st)))
    }

    /// What the client answered and the handler recorded so far (answers, steps), for
    /// the task that runs the handler on after its first round.
    pub(crate) fn recorded(&self) -> (BTreeMap<String, Value>, BTreeMap<String, Value>) {
        let st = self.lock();
        (st.answers.clone(), st.steps.clone())
    }

    /// Notified when the handler asks a question (`Mode::Live`).
    pub(crate) fn asked(&self) -> Arc<Notify> {
        Arc::clone(&self.lock().asked)
    }

    /// The questions asked and not handed over yet (`Mode::Live`); they count as handed
    /// over now.
    pub(crate) fn take_questions(&self) -> Vec<(String, Value)> {
        let mut st = self.lock();
        let st = &mut *st;
        let fresh: Vec<(String, Value)> = st
            .pending
            .iter()
            .filter(|(k, _)| !st.published.contains(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        st.published.extend(fresh.iter().map(|(k, _)| k.clone()));
        fresh
    }

    /// Withdraws the question `key` if it is still pending (`Mode::Live`): nobody waits
    /// for its answer any more. One already handed over is listed for
    /// [`Input::take_withdrawn`], and the task told.
    fn withdraw(&self, key: &str) {
        let mut st = self.lock();
        if st.mode != Mode::Live || st.pending.remove(key).is_none() {
            return;
        }
        st.responses.remove(key);
        st.failed.remove(key);
        if st.published.remove(key) {
            st.withdrawn.push(key.to_owned());
            st.asked.notify_one();
        }
    }

    /// The questions handed over and withdrawn since the last call (`Mode::Live`).
    pub(crate) fn take_withdrawn(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().withdrawn)
    }

    /// Tells the question waiting on `key` that no answer will come (`Mode::Live`).
    pub(crate) fn fail(&self, key: &str, why: String) {
        let mut st = self.lock();
        if !st.pending.contains_key(key) {
            return;
        }
        st.failed.insert(key.to_owned(), why);
        for w in st.waiters.drain(..) {
            w.wake();
        }
    }

    /// Hands the answer to `key` to the question waiting for it (`Mode::Live`).
    pub(crate) fn deliver(&self, key: &str, response: Value) {
        let mut st = self.lock();
        if !st.pending.contains_key(key) {
            return;
        }
        st.responses.insert(key.to_owned(), response);
        for w in st.waiters.drain(..) {
            w.wake();
        }
    }

    /// Marks the end of the questions a handler asks before its body (its `#[input]`
    /// parameters). Generated code calls it; before a task exists, the round ends here and
    /// the task runs the handler again, with the answers.
    #[doc(hidden)]
    pub async fn begin_body(&self) {
        {
            let mut st = self.lock();
            if st.mode != Mode::Probe {
                return;
            }
            st.reached_body = true;
            if let Some(w) = &st.waker {
                w.wake_by_ref();
            }
        }
        std::future::pending::<()>().await;
    }

    /// Asks the user to fill in a form whose schema comes from `T` (a flat object of
    /// strings, numbers, booleans and enums).
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        key: &str,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, Error> {
        self.require("elicitation.form")?;
        let schema = crate::schema::inline_schema_for::<T>();
        let requested = super::forms::requested_schema(&schema);
        let message = message.into();
        let request = json!({
            "method": "elicitation/create",
            "params": { "mode": "form", "message": message, "requestedSchema": requested },
        });
        let validator = crate::schema::ArgumentValidator::compile(&schema).map_err(|e| {
            Error::protocol(RpcError::internal(format!(
                "the elicitation schema does not compile: {e}"
            )))
        })?;
        let check = |v: &Value| -> Result<(), String> {
            match v.get("action").and_then(Value::as_str) {
                Some("accept") => {
                    let content = v
                        .get("content")
                        .ok_or("the accepted answer has no content")?;
                    validator.validate(content)?;
                    serde_json::from_value::<T>(content.clone())
                        .map(drop)
                        .map_err(|e| e.to_string())
                }
                Some("decline" | "cancel") => Ok(()),
                _ => Err("the answer needs an `action` of accept, decline or cancel".into()),
            }
        };
        let v = self
            .answer_or_end_round(key, request, check, reask_elicitation(&message))
            .await?;
        Ok(match v["action"].as_str() {
            Some("accept") => Elicited::Accept(
                serde_json::from_value(v["content"].clone())
                    .map_err(|e| Error::new(e.to_string()))?,
            ),
            Some("decline") => Elicited::Decline,
            _ => Elicited::Cancel,
        })
    }

    /// Asks the user to fill in a form described by a hand-written `requestedSchema` (for
    /// what a Rust type cannot say: defaults, titled or multi-select enums); an accepted
    /// answer is checked against `schema` and handed back as JSON.
    ///
    /// ```
    /// use mcp_runtime::{Elicited, Error, Input, tool};
    /// use serde_json::json;
    ///
    /// /// Picks a plan.
    /// #[tool]
    /// async fn pick_plan(input: Input) -> Result<String, Error> {
    ///     let schema = json!({
    ///         "type": "object",
    ///         "properties": {"plan": {"type": "string", "oneOf": [
    ///             {"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}
    ///         ], "default": "free"}},
    ///         "required": ["plan"],
    ///     });
    ///     Ok(match input.elicit_schema("plan", "Which plan?", schema).await? {
    ///         Elicited::Accept(v) => format!("plan: {}", v["plan"]),
    ///         _ => "no plan".into(),
    ///     })
    /// }
    /// ```
    pub async fn elicit_schema(
        &self,
        key: &str,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<Elicited<Value>, Error> {
        self.require("elicitation.form")?;
        let validator = crate::schema::ArgumentValidator::compile(&schema).map_err(|e| {
            Error::protocol(RpcError::internal(format!(
                "the elicitation schema does not compile: {e}"
            )))
        })?;
        let message = message.into();
        let request = json!({
            "method": "elicitation/create",
            "params": { "mode": "form", "message": message, "requestedSchema": schema },
        });
        let check = |v: &Value| -> Result<(), String> {
            match v.get("action").and_then(Value::as_str) {
                Some("accept") => validator.validate(
                    v.get("content")
                        .ok_or("the accepted answer has no content")?,
                ),
                Some("decline" | "cancel") => Ok(()),
                _ => Err("the answer needs an `action` of accept, decline or cancel".into()),
            }
        };
        let v = self
            .answer_or_end_round(key, request, check, reask_elicitation(&message))
            .await?;
        Ok(match v["action"].as_str() {
            Some("accept") => Elicited::Accept(v["content"].clone()),
            Some("decline") => Elicited::Decline,
            _ => Elicited::Cancel,
        })
    }

    /// Asks the user to complete a flow at `url` (URL-mode elicitation); returns whether
    /// they accepted.
    pub async fn elicit_url(
        &self,
        key: &str,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<Elicited<()>, Error> {
        self.require("elicitation.url")?;
        let url = url.into();
        if mcp_rules::url_has_dot_segment(&url) {
            return Err(Error::new(format!(
                "the URL to send the user to holds a `.` or `..` path segment, which would move it elsewhere on the site: {}",
                crate::protocol::reflect(&url)
            )));
        }
        let message = message.into();
        let request = json!({
            "method": "elicitation/create",
            "params": { "mode": "url", "message": message, "url": url },
        });
        let check = |v: &Value| match v.get("action").and_then(Value::as_str) {
            Some("accept" | "decline" | "cancel") => Ok(()),
            _ => Err("the answer needs an `action` of accept, decline or cancel".to_owned()),
        };
        let v = self
            .answer_or_end_round(key, request, check, reask_elicitation(&message))
            .await?;
        Ok(match v["action"].as_str() {
            Some("accept") => Elicited::Accept(()),
            Some("decline") => Elicited::Decline,
            _ => Elicited::Cancel,
        })
    }

    /// Asks the client's model for a completion (`sampling/createMessage`, deprecated in
    /// 2026-07-28). `params` are the request's params (`messages`, `maxTokens`, ...);
    /// returns the client's `CreateMessageResult`.
    pub async fn sample(&self, key: &str, params: Value) -> Result<Value, Error> {
        self.require_sampling(&params)?;
        let request = json!({ "method": "sampling/createMessage", "params": params });
        self.answer_or_end_round(key, request, check_sampled, |r, _| r.clone())
            .await
    }

    /// The capabilities a `sampling/createMessage` with `params` needs: `sampling`, and for
    /// tool use and context inclusion, their own.
    fn require_sampling(&self, params: &Value) -> Result<(), Error> {
        self.require("sampling")?;
        if params.get("tools").is_some() || params.get("toolChoice").is_some() {
            self.require("sampling.tools")?;
        }
        if params
            .get("includeContext")
            .and_then(Value::as_str)
            .is_some_and(|c| c != "none")
        {
            self.require("sampling.context")?;
        }
        Ok(())
    }

    /// Asks the client for its roots (`roots/list`, deprecated in 2026-07-28).
    pub async fn roots(&self, key: &str) -> Result<Vec<Value>, Error> {
        self.require("roots")?;
        let request = json!({ "method": "roots/list", "params": {} });
        let v = self
            .answer_or_end_round(key, request, check_roots, |r, _| r.clone())
            .await?;
        Ok(v["roots"].as_array().cloned().unwrap_or_default())
    }

    /// Runs `work` once for this request, across all its rounds: the result is recorded in
    /// the sealed `requestState` and a later round gets the recorded value back without
    /// running `work` again.
    pub async fn step<T, F>(&self, key: &str, work: F) -> Result<T, Error>
    where
        T: Serialize + DeserializeOwned,
        F: Future<Output = T>,
    {
        if let Some(v) = self.lock().steps.get(key).cloned() {
            return serde_json::from_value(v).map_err(|e| Error::new(format!("step `{key}`: {e}")));
        }
        let out = work.await;
        let v = serde_json::to_value(&out).map_err(|e| Error::new(format!("step `{key}`: {e}")))?;
        self.lock().steps.insert(key.to_owned(), v);
        Ok(out)
    }

    /// Asks the client with a request of your own, `{"method": ..., "params": ...}` (one
    /// another server asked, say): `elicitation/create`, `sampling/createMessage` or
    /// `roots/list`, checked against the client's capabilities. Returns the client's answer
    /// as it came. Like the other questions, the round ends here until it is answered.
    pub async fn ask(&self, key: &str, request: Value) -> Result<Value, Error> {
        match request["method"].as_str() {
            Some("elicitation/create") => {
                let mode = request["params"]["mode"].as_str().unwrap_or("form");
                if !matches!(mode, "form" | "url") {
                    return Err(Error::new(format!("unknown elicitation mode `{mode}`")));
                }
                self.require(&format!("elicitation.{mode}"))?;
            }
            Some("sampling/createMessage") => self.require_sampling(&request["params"])?,
            Some("roots/list") => self.require("roots")?,
            other => {
                return Err(Error::new(format!(
                    "cannot ask the client `{}`",
                    other.unwrap_or("(no method)")
                )));
            }
        }
        self.answer_or_end_round(key, request, |_| Ok(()), |r, _| r.clone())
            .await
    }

    /// Whether a question waits for its answer here instead of ending the round (inside a
    /// running task, or in a legacy session): then the handler is never run again.
    #[cfg_attr(not(feature = "proxy"), allow(dead_code))]
    pub(crate) fn is_live(&self) -> bool {
        self.lock().mode == Mode::Live
    }

    /// A value recorded under `key` in an earlier round.
    #[cfg_attr(not(feature = "proxy"), allow(dead_code))]
    pub(crate) fn recorded_step(&self, key: &str) -> Option<Value> {
        self.lock().steps.get(key).cloned()
    }

    /// Records `value` under `key` for the rounds to come.
    #[cfg_attr(not(feature = "proxy"), allow(dead_code))]
    pub(crate) fn record_step(&self, key: &str, value: Value) {
        self.lock().steps.insert(key.to_owned(), value);
    }

    /// Which round this is (1 for the first call).
    pub fn round(&self) -> u32 {
        self.lock().round
    }
}

/// Whether `v` has the shape of a `CreateMessageResult`: a `role`, a `model`, and
/// `content` that is a content block (an object with a `type`) or a list of them.
fn check_sampled(v: &Value) -> Result<(), String> {
    let block = |c: &Value| c.get("type").is_some_and(Value::is_string);
    match v.get("role").and_then(Value::as_str) {
        Some("user" | "assistant") => {}
        _ => return Err("the answer needs a `role` of user or assistant".into()),
    }
    if !v.get("model").is_some_and(Value::is_string) {
        return Err("the answer needs a `model` string".into());
    }
    match v.get("content") {
        Some(c) if block(c) => Ok(()),
        Some(Value::Array(cs)) if !cs.is_empty() && cs.iter().all(block) => Ok(()),
        Some(_) => Err("the answer's `content` is not a content block with a `type`".into()),
        None => Err("the answer has no `content`".into()),
    }
}

/// Whether `v` has the shape of a `ListRootsResult`: `roots`, each with a `uri` string.
fn check_roots(v: &Value) -> Result<(), String> {
    let Some(roots) = v.get("roots").and_then(Value::as_array) else {
        return Err("the answer has no `roots` array".into());
    };
    match roots
        .iter()
        .position(|r| !r.get("uri").is_some_and(Value::is_string))
    {
        Some(i) => Err(format!("root {i} has no `uri` string")),
        None => Ok(()),
    }
}

/// How an elicitation is asked again after an invalid answer: the same request, its
/// message saying why.
fn reask_elicitation(message: &str) -> impl Fn(&Value, &str) -> Value + '_ {
    move |req, why| {
        let mut r = req.clone();
        r["params"]["message"] = json!(format!(
            "The previous answer was not valid ({why}). {message}"
        ));
        r
    }
}

/// Withdraws a live question when its asker stops waiting ([`Input::withdraw`]).
struct Withdraw<'a> {
    input: &'a Input,
    key: &'a str,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        self.input.withdraw(self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::{check_roots, check_sampled};
    use serde_json::json;

    #[test]
    fn sampling_answers_need_role_model_and_content_blocks() {
        let text = json!({"type": "text", "text": "hi"});
        let ok = json!({"role": "assistant", "model": "m", "content": text});
        assert_eq!(check_sampled(&ok), Ok(()));
        let list = json!({"role": "assistant", "model": "m", "content": [text, text]});
        assert_eq!(check_sampled(&list), Ok(()));
        for (bad, why) in [
            (json!({"model": "m", "content": text}), "a `role`"),
            (json!({"role": "assistant", "content": text}), "a `model`"),
            (json!({"role": "assistant", "model": "m"}), "no `content`"),
            (
                json!({"role": "assistant", "model": "m", "content": 5}),
                "content block",
            ),
            (
                json!({"role": "assistant", "model": "m", "content": []}),
                "content block",
            ),
            (
                json!({"role": "robot", "model": "m", "content": text}),
                "a `role`",
            ),
        ] {
            let e = check_sampled(&bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn roots_answers_need_a_uri_each() {
        assert_eq!(check_roots(&json!({"roots": []})), Ok(()));
        let ok = json!({"roots": [{"uri": "file:///a", "name": "a"}]});
        assert_eq!(check_roots(&ok), Ok(()));
        assert_eq!(
            check_roots(&json!({"roots": ["x"]})),
            Err("root 0 has no `uri` string".into())
        );
        assert!(check_roots(&json!({"roots": {}})).is_err());
    }
}
