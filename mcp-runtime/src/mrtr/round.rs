//! One round of a multi round-trip request, end to end: open it from the retry's
//! `inputResponses` and `requestState`, drive the handler until it finishes or asks for
//! input it does not have, and seal what the next round needs.

use super::input::{Input, InputState, Mode};
use super::state::{KeyRing, MAX_STATE_LEN, OpenError, SealError, Sealed, digest, now};
use crate::protocol::{ClientCapabilities, RpcError};
use crate::store::ReplayStore;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

/// Most entries accepted in `inputResponses`.
pub(crate) const MAX_INPUT_RESPONSES: usize = 64;

/// How request states are sealed: the keys, how long a state stays valid, and how many
/// rounds one request may take.
pub(crate) struct Sealer {
    /// The server's name, sealed into each state and checked when one is opened.
    pub(crate) audience: String,
    pub(crate) keys: SealKeys,
    pub(crate) ttl: Duration,
    /// How long past its expiry a state is still accepted (clock skew between instances).
    pub(crate) leeway: Duration,
    pub(crate) max_rounds: u32,
    /// Where redeemed states are remembered, when states are single use.
    pub(crate) replay: Option<Arc<dyn ReplayStore>>,
}

/// A sealer's key ring: given (or random), or key material read from the environment
/// when the server was built (and checked then), derived into keys when a state is first
/// sealed or opened. Only rounds ([`ENGINE`]) call [`SealKeys::ring`], so a server none
/// of whose handlers asks does not link the derivation.
pub(crate) enum SealKeys {
    Ring(KeyRing),
    Material(super::state::KeyMaterial, std::sync::OnceLock<KeyRing>),
}

impl SealKeys {
    pub(crate) fn ring(&self) -> &KeyRing {
        match self {
            SealKeys::Ring(ring) => ring,
            SealKeys::Material(keys, ring) => ring.get_or_init(|| KeyRing::derive(keys)),
        }
    }
}

impl From<KeyRing> for SealKeys {
    fn from(ring: KeyRing) -> Self {
        SealKeys::Ring(ring)
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// What runs rounds: the arguments' digest, opening a round and sealing its state. A
/// handler that may ask carries a reference to [`ENGINE`] (set by
/// [`Requirements::uses_input`](crate::handler::Requirements::uses_input)), and rounds
/// are reached only through it: nothing else names this code (the state's encoding and
/// encryption among it), so a server none of whose handlers asks does not link it.
pub(crate) struct Engine {
    digest: fn(&Value) -> String,
    open: OpenRound,
    seal: fn(&Round) -> Result<InputRequired, RpcError>,
}

/// [`Round::open`]'s shape.
type OpenRound = fn(
    Arc<Sealer>,
    Binding,
    &mut Map<String, Value>,
    ClientCapabilities,
) -> Result<Round, RpcError>;

/// The one [`Engine`].
pub(crate) static ENGINE: Engine = Engine {
    digest,
    open: Round::open_with,
    seal: Round::seal_with,
};

impl PartialEq for Engine {
    fn eq(&self, other: &Engine) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for Engine {}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("mrtr::Engine")
    }
}

/// What a `requestState` is bound to: it opens only for the same method, target,
/// arguments and principal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    /// What opens and seals rounds of this request.
    pub(crate) engine: &'static Engine,
    pub(crate) method: &'static str,
    /// The tool or prompt name, or the resource URI.
    pub(crate) target: String,
    /// The canonical digest of the arguments (empty when the target says it all).
    pub(crate) digest: String,
    pub(crate) principal: String,
}

impl Binding {
    /// A binding whose arguments are `arguments` (canonical: key order and spacing do not
    /// matter).
    pub(crate) fn new(
        engine: &'static Engine,
        method: &'static str,
        target: &str,
        arguments: Option<&Value>,
    ) -> Binding {
        Binding {
            engine,
            method,
            target: target.to_owned(),
            digest: arguments.map(engine.digest).unwrap_or_default(),
            // Without authorization, one principal for every caller.
            principal: "local".to_owned(),
        }
    }
    /// The same binding for the caller `principal` (its issuer and subject), if there is
    /// one: a state sealed for one caller does not open for another.
    pub(crate) fn for_caller(mut self, principal: Option<String>) -> Binding {
        if let Some(p) = principal {
            self.principal = format!("caller {p}");
        }
        self
    }
}

/// How a handler's run for this round ended.
pub(crate) enum Finished<T> {
    /// It returned.
    Done(T),
    /// It asked for input the client has not given yet: the round ends here.
    Asked,
    /// It has its inputs and reached its body: a task runs it from here (see
    /// [`Round::probe`]).
    Body,
}

/// One round of one request.
pub(crate) struct Round {
    sealer: Arc<Sealer>,
    binding: Binding,
    input: Input,
    /// The presented state's id and how long it stays acceptable (single-use states).
    redeem: Option<(String, Duration)>,
}

/// The `input_required` result of a round: what to ask, and the state to send back.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InputRequired {
    input_requests: Map<String, Value>,
    request_state: String,
}

impl Round {
    /// Opens a round: takes `inputResponses` and `requestState` out of `params`. A retry
    /// with answers but no state starts again at round one; a state that fails any check
    /// (key, integrity, expiry, binding) is one generic `-32602`.
    pub(crate) fn open(
        sealer: Arc<Sealer>,
        binding: Binding,
        params: &mut Map<String, Value>,
        capabilities: ClientCapabilities,
    ) -> Result<Round, RpcError> {
        (binding.engine.open)(sealer, binding, params, capabilities)
    }

    /// [`Round::open`], the engine's.
    fn open_with(
        sealer: Arc<Sealer>,
        binding: Binding,
        params: &mut Map<String, Value>,
        capabilities: ClientCapabilities,
    ) -> Result<Round, RpcError> {
        let responses = match params.remove("inputResponses") {
            None => Map::new(),
            Some(Value::Object(m)) if m.len() <= MAX_INPUT_RESPONSES => m,
            Some(Value::Object(_)) => {
                return Err(RpcError::invalid_params(format!(
                    "`inputResponses` has more than {MAX_INPUT_RESPONSES} entries"
                )));
            }
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "`inputResponses` must be an object",
                ));
            }
        };
        let mut state = InputState::new(capabilities);
        let mut redeem = None;
        match params.remove("requestState") {
            None => {}
            Some(Value::String(s)) => {
                let sealed = opened(&sealer, &binding, &s)?;
                state.responses = responses
                    .into_iter()
                    .filter(|(k, _)| sealed.p.contains(k))
                    .collect();
                state.answers = sealed.ans;
                state.steps = sealed.st;
                state.round = sealed.r + 1;
                if sealer.replay.is_some() {
                    let left = sealed
                        .exp
                        .saturating_add(ms(sealer.leeway))
                        .saturating_sub(now());
                    let id: String = Sha256::digest(s.as_bytes())
                        .iter()
                        .take(16)
                        .map(|b| format!("{b:02x}"))
                        .collect();
                    redeem = Some((id, Duration::from_millis(left.max(1))));
                }
            }
            Some(_) => return Err(RpcError::invalid_params("`requestState` must be a string")),
        }
        Ok(Round {
            sealer,
            binding,
            input: Input(Arc::new(Mutex::new(state))),
            redeem,
        })
    }

    /// With single-use states, redeems the presented one: a state redeemed before (on any
    /// instance sharing the replay store) fails like any invalid state; a store failure
    /// refuses the round (fails closed).
    pub(crate) async fn redeem(&self) -> Result<(), RpcError> {
        let (Some(store), Some((id, ttl))) = (&self.sealer.replay, &self.redeem) else {
            return Ok(());
        };
        match store.redeem(id, *ttl).await {
            Ok(true) => Ok(()),
            Ok(false) => {
                tracing::debug!("requestState refused: already redeemed (single use)");
                Err(RpcError::invalid_params("Invalid or expired requestState"))
            }
            Err(e) => {
                tracing::warn!("requestState refused: the replay store failed: {e}");
                Err(RpcError::internal(
                    "Internal error: could not check the requestState; retry, and if the state is then refused (a timed-out check may have used it up), start the request again",
                ))
            }
        }
    }

    /// The handler's handle on this round's inputs.
    pub(crate) fn input(&self) -> Input {
        self.input.clone()
    }

    /// Makes this the round before a task: it also ends when the handler reaches its body
    /// ([`Finished::Body`]).
    pub(crate) fn probe(self) -> Round {
        self.input.lock().mode = Mode::Probe;
        self
    }

    /// Runs `fut` (the handler) for this round: [`Finished::Asked`] as soon as it asked
    /// for input it does not have.
    pub(crate) fn drive<F: Future + Unpin>(&self, fut: F) -> Drive<F> {
        Drive {
            input: self.input.clone(),
            fut,
        }
    }

    /// The `input_required` result of a round that asked: the questions and the sealed
    /// state of everything answered and recorded so far.
    pub(crate) fn seal(&self) -> Result<InputRequired, RpcError> {
        (self.binding.engine.seal)(self)
    }

    /// [`Round::seal`], the engine's.
    fn seal_with(&self) -> Result<InputRequired, RpcError> {
        let st = self.input.lock();
        if st.pending.is_empty() {
            return Err(RpcError::internal(
                "Internal error: the handler ended the round without asking",
            ));
        }
        if st.round >= self.sealer.max_rounds {
            return Err(RpcError::internal(format!(
                "Internal error: the request did not complete within {} rounds",
                self.sealer.max_rounds
            )));
        }
        let sealed = Sealed {
            aud: self.sealer.audience.clone(),
            exp: now().saturating_add(ms(self.sealer.ttl)),
            m: self.binding.method.to_owned(),
            t: self.binding.target.clone(),
            a: self.binding.digest.clone(),
            s: self.binding.principal.clone(),
            r: st.round,
            ans: st.answers.clone(),
            st: st.steps.clone(),
            p: st.pending.keys().cloned().collect(),
        };
        let request_state = self.sealer.keys.ring().seal(&sealed).map_err(|e| match e {
            // Most of a state is the client's answers: a request that carries more
            // than fits is the client's to make smaller, not an internal error.
            SealError::TooLarge(n) => RpcError::invalid_params(format!(
                "the answers and steps of this request do not fit in a requestState \
                     ({n} bytes sealed; the cap is {MAX_STATE_LEN})"
            )),
            SealError::Failed(e) => RpcError::internal(format!("Internal error: {e}")),
        })?;
        tracing::debug!(round = st.round, "input required");
        Ok(InputRequired {
            input_requests: st.pending.clone().into_iter().collect(),
            request_state,
        })
    }
}

/// Opens a presented state and checks its expiry and binding. Every failure is one
/// generic `-32602`; the reason goes to the log: a key this instance does not hold (or
/// holds other material for) is a deployment problem, so it is a warning, at most one per
/// [`KEY_WARN_EVERY_MS`] with a count of the ones suppressed.
fn opened(sealer: &Sealer, binding: &Binding, state: &str) -> Result<Sealed, RpcError> {
    let invalid = || RpcError::invalid_params("Invalid or expired requestState");
    match sealer.keys.ring().open(state) {
        Ok(p) if p.exp.saturating_add(ms(sealer.leeway)) < now() => {
            tracing::debug!("requestState refused: expired");
            Err(invalid())
        }
        Ok(p) if p.aud != sealer.audience => {
            tracing::debug!("requestState refused: sealed by another server");
            Err(invalid())
        }
        Ok(p) if !binding.admits(&p) => {
            tracing::debug!("requestState refused: sealed for another request or caller");
            Err(invalid())
        }
        Ok(p) => Ok(p),
        Err(OpenError::Malformed) => {
            tracing::debug!("requestState refused: malformed");
            Err(invalid())
        }
        Err(OpenError::UnknownKey(kid)) => {
            warn_key(
                &kid,
                sealer,
                "it names a key id this instance does not hold",
            );
            Err(invalid())
        }
        Err(OpenError::Unsealed(kid)) => {
            warn_key(
                &kid,
                sealer,
                "it does not open with this instance's key of that id (tampered, or instances hold different keys under one id)",
            );
            Err(invalid())
        }
    }
}

/// The shortest time between two key warnings.
pub(crate) const KEY_WARN_EVERY_MS: u64 = 10_000;

static KEY_WARNINGS: crate::telemetry::Throttle =
    crate::telemetry::Throttle::every(std::time::Duration::from_millis(KEY_WARN_EVERY_MS));

fn warn_key(kid: &str, sealer: &Sealer, why: &str) {
    let Some(suppressed) = KEY_WARNINGS.admit() else {
        tracing::debug!(kid, "requestState refused: {why}");
        return;
    };
    let held: Vec<&str> = sealer.keys.ring().kids().collect();
    tracing::warn!(
        kid,
        held = ?held,
        suppressed,
        "requestState refused: {why}; check that every instance has the same key ring (MCP_REQUEST_STATE_KEYS)"
    );
}

impl Binding {
    fn admits(&self, p: &Sealed) -> bool {
        p.m == self.method && p.t == self.target && p.a == self.digest && p.s == self.principal
    }
}

/// A handler's future for one round (see [`Round::drive`]).
pub(crate) struct Drive<F> {
    input: Input,
    fut: F,
}

impl<F: Future + Unpin> Future for Drive<F> {
    type Output = Finished<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        this.input.lock().waker = Some(cx.waker().clone());
        match Pin::new(&mut this.fut).poll(cx) {
            Poll::Ready(out) => Poll::Ready(Finished::Done(out)),
            // Every question asked in this poll (several, under `join!`) is recorded now.
            Poll::Pending => {
                let st = this.input.lock();
                if !st.pending.is_empty() {
                    Poll::Ready(Finished::Asked)
                } else if st.reached_body {
                    Poll::Ready(Finished::Body)
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
