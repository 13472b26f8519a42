//! The caller: who a validated token stands for, and the extractors that hand it to
//! handlers.

use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::SystemTime;

/// A bearer token, kept for calls a handler makes on the caller's behalf with a token
/// exchange. Its `Debug` and `Display` never show it; [`Token::expose`] does.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(Arc<str>);

impl Token {
    /// Wraps a raw token.
    pub fn new(raw: impl Into<Arc<str>>) -> Self {
        Token(raw.into())
    }
    /// The raw token. Never log it, and never forward it to another service: the spec
    /// forbids passing a client's token through (exchange it for one of your own).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How long a stream opened with a token whose time was already up lasts (see
/// `Principal::stream_deadline`).
const STREAM_AFTER_EXPIRY: std::time::Duration = std::time::Duration::from_secs(5);

/// Who a validated token stands for: subject, issuer, client, scopes, claims.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    subject: String,
    issuer: Option<String>,
    client_id: Option<String>,
    scopes: BTreeSet<String>,
    claims: Map<String, Value>,
    expires_at: Option<SystemTime>,
    /// How long past `expires_at` the validator still accepts the token (its clock leeway).
    grace: std::time::Duration,
    token: Option<Token>,
    /// The subject is the client's (a token without `sub`), not a user's.
    by_client: bool,
}

impl Principal {
    /// A caller with subject `subject` and nothing else.
    pub fn new(subject: impl Into<String>) -> Self {
        Principal {
            subject: subject.into(),
            issuer: None,
            client_id: None,
            scopes: BTreeSet::new(),
            claims: Map::new(),
            expires_at: None,
            grace: std::time::Duration::ZERO,
            token: None,
            by_client: false,
        }
    }
    /// Sets the issuer (`iss`).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }
    /// Sets the OAuth client the token was issued to (`client_id`).
    pub fn client_id(mut self, client: impl Into<String>) -> Self {
        self.client_id = Some(client.into());
        self
    }
    /// Sets the granted scopes.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
    /// Sets the token's claims (or the introspection response).
    pub fn claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }
    /// Sets when the token expires.
    pub fn expires_at(mut self, at: SystemTime) -> Self {
        self.expires_at = Some(at);
        self
    }
    /// Says the subject is the OAuth client's own (a client-credentials token, which has
    /// no `sub`): state bound to it is never a user's of the same name.
    pub fn subject_is_client(mut self) -> Self {
        self.by_client = true;
        self
    }
    /// Keeps the raw token (the validators do).
    pub fn token(mut self, token: Token) -> Self {
        self.token = Some(token);
        self
    }

    /// The subject (`sub`; for a client-credentials token, the client).
    pub fn subject(&self) -> &str {
        &self.subject
    }
    /// The issuer, when known.
    pub fn issuer_id(&self) -> Option<&str> {
        self.issuer.as_deref()
    }
    /// The OAuth client, when known.
    pub fn client(&self) -> Option<&str> {
        self.client_id.as_deref()
    }
    /// The granted scopes, sorted.
    pub fn granted_scopes(&self) -> impl Iterator<Item = &str> + Clone {
        self.scopes.iter().map(String::as_str)
    }
    /// Whether `scope` was granted exactly (see [`crate::auth::ScopeImplies`] for how
    /// the server matches required scopes).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }
    /// A claim of the token.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }
    /// All claims.
    pub fn all_claims(&self) -> &Map<String, Value> {
        &self.claims
    }
    /// When the token expires, when known.
    pub fn expiry(&self) -> Option<SystemTime> {
        self.expires_at
    }
    /// That the validator accepts the token for `grace` past its expiry (a clock leeway):
    /// streams opened with it end then.
    #[cfg_attr(not(feature = "auth"), allow(dead_code))]
    pub(crate) fn accepted_past_expiry(mut self, grace: std::time::Duration) -> Self {
        self.grace = grace;
        self
    }
    /// When a stream opened with this token ends: when the validator stops accepting it
    /// (its expiry, plus the validator's leeway), on the runtime's clock; `None` when the
    /// token has no known expiry or one past what the clock holds. A token accepted
    /// though that time has passed (a validator of your own with a leeway of its own)
    /// gives its streams [`STREAM_AFTER_EXPIRY`], not an end at once, which the client
    /// would answer by opening the stream again, and again.
    pub(crate) fn stream_deadline(&self) -> Option<tokio::time::Instant> {
        let until = self.expires_at?.checked_add(self.grace)?;
        let left = match until.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => left,
            _ => STREAM_AFTER_EXPIRY,
        };
        tokio::time::Instant::now().checked_add(left)
    }
    /// The raw token, when kept.
    pub fn raw_token(&self) -> Option<&Token> {
        self.token.as_ref()
    }

    /// The key state is bound to: issuer and subject (a subject is unique per issuer),
    /// and whether the subject is a user's (`sub`) or a client's, so that a client named
    /// like a user is not that user.
    pub(crate) fn key(&self) -> String {
        let kind = if self.by_client { "client" } else { "sub" };
        let issuer = self.issuer.as_deref().unwrap_or("");
        format!("{issuer} {kind}:{}", self.subject)
    }
}

/// The caller, if the request carried a valid token (always `None` on stdio and on a
/// server without [`Auth`](crate::auth::Auth)). An extractor for tools, prompts,
/// resources and completers.
#[derive(Debug, Clone, Default)]
pub struct Caller(pub Option<Arc<Principal>>);

impl Caller {
    /// The principal, if any.
    pub fn principal(&self) -> Option<&Principal> {
        self.0.as_deref()
    }
    /// The subject, if any.
    pub fn subject(&self) -> Option<&str> {
        self.0.as_deref().map(Principal::subject)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A stream ends when the validator stops accepting its token: the expiry plus the
    /// validator's leeway; one opened with a token whose time was up already gets a few
    /// seconds, not an end at once (which the client would answer by opening another).
    #[tokio::test]
    async fn streams_end_when_the_token_is_no_longer_accepted() {
        let left = |p: Principal| {
            p.stream_deadline()
                .map(|at| at.duration_since(tokio::time::Instant::now()).as_secs_f64())
        };
        let now = SystemTime::now();
        assert_eq!(left(Principal::new("u")), None);
        let soon = Principal::new("u").expires_at(now + Duration::from_secs(100));
        assert!(left(soon.clone()).is_some_and(|s| (99.0..=100.0).contains(&s)));
        let with_leeway = soon.accepted_past_expiry(Duration::from_secs(30));
        assert!(left(with_leeway).is_some_and(|s| (129.0..=130.0).contains(&s)));
        let within_leeway = Principal::new("u")
            .expires_at(now - Duration::from_secs(10))
            .accepted_past_expiry(Duration::from_secs(30));
        assert!(left(within_leeway).is_some_and(|s| (19.0..=20.0).contains(&s)));
        let past = Principal::new("u").expires_at(now - Duration::from_secs(10));
        let s = left(past).unwrap();
        assert!((4.0..=5.0).contains(&s), "{s}");
        let far = Principal::new("u")
            .expires_at(SystemTime::UNIX_EPOCH + Duration::from_secs(u64::MAX / 4));
        let _ = left(far);
    }
}
