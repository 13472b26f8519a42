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

/// Who a validated token stands for: subject, issuer, client, scopes, claims.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    subject: String,
    issuer: Option<String>,
    client_id: Option<String>,
    scopes: BTreeSet<String>,
    claims: Map<String, Value>,
    expires_at: Option<SystemTime>,
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
    /// When a stream opened with this token ends (its expiry on the runtime's clock):
    /// `None` when the token has no known expiry or one past what the clock holds.
    pub(crate) fn stream_deadline(&self) -> Option<tokio::time::Instant> {
        let left = self
            .expires_at?
            .duration_since(SystemTime::now())
            .unwrap_or_default();
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
