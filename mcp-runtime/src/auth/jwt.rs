//! JWT access tokens (RFC 9068), checked against the issuer's JWKS.

use super::{AuthError, Principal, Token, TokenValidator, fetch, same_resource};
use futures_util::future::BoxFuture;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{Mutex, RwLock};

/// Checks JWT access tokens (RFC 9068): the `typ` header (`at+jwt`), an allowed
/// asymmetric algorithm, the signature against the issuer's JWKS (found through its
/// metadata, cached, fetched again when a token names an unknown `kid`), `iss`, `aud`
/// (this server's canonical URI, compared as a URL), `exp` and `nbf` with a leeway.
pub struct JwtValidator {
    issuer: String,
    audience: String,
    jwks_uri: Option<String>,
    leeway: Duration,
    algorithms: Vec<Algorithm>,
    require_typ: bool,
    max_age: Duration,
    min_refresh: Duration,
    keys: RwLock<Option<(JwkSet, Instant)>>,
    /// The last fetch: when it began (or failed), and whether it failed.
    fetching: Mutex<Option<(Instant, bool)>>,
}

impl std::fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtValidator")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl JwtValidator {
    /// Tokens of `issuer` (its identifier, exactly as in its metadata) for `audience`
    /// (this server's canonical URI, the same as [`Auth::new`](super::Auth::new)'s).
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        JwtValidator {
            issuer: issuer.into(),
            audience: audience.into(),
            jwks_uri: None,
            leeway: Duration::from_secs(30),
            algorithms: vec![
                Algorithm::RS256,
                Algorithm::RS384,
                Algorithm::RS512,
                Algorithm::PS256,
                Algorithm::PS384,
                Algorithm::PS512,
                Algorithm::ES256,
                Algorithm::ES384,
                Algorithm::EdDSA,
            ],
            require_typ: true,
            max_age: Duration::from_secs(3600),
            min_refresh: Duration::from_secs(10),
            keys: RwLock::new(None),
            fetching: Mutex::new(None),
        }
    }
    /// The JWKS URL, instead of discovering it from the issuer's metadata.
    pub fn jwks_uri(mut self, url: impl Into<String>) -> Self {
        self.jwks_uri = Some(url.into());
        self
    }
    /// Clock leeway for `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }
    /// The accepted algorithms (default: the RSA, RSA-PSS, ECDSA P-256/P-384 and EdDSA
    /// ones). Symmetric algorithms are never accepted.
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms
            .into_iter()
            .filter(|a| !matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512))
            .collect();
        self
    }
    /// Accepts tokens without the RFC 9068 `typ` header `at+jwt`, for authorization
    /// servers that do not set it (the default refuses them, so an ID token cannot pass
    /// as an access token).
    pub fn accept_any_typ(mut self) -> Self {
        self.require_typ = false;
        self
    }
    /// How long fetched keys are used before being fetched again (default 1 h), and the
    /// least time between two fetches caused by unknown `kid`s, or after a fetch that
    /// failed (default 10 s).
    pub fn key_refresh(mut self, max_age: Duration, min_interval: Duration) -> Self {
        self.max_age = max_age;
        self.min_refresh = min_interval;
        self
    }

    async fn fetch_keys(&self) -> Result<JwkSet, AuthError> {
        let uri = match &self.jwks_uri {
            Some(u) => u.clone(),
            None => {
                let meta = fetch::server_metadata(&self.issuer)
                    .await
                    .map_err(AuthError::Unavailable)?;
                meta.get("jwks_uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        AuthError::Unavailable(format!(
                            "the metadata of {} has no jwks_uri",
                            self.issuer
                        ))
                    })?
                    .to_owned()
            }
        };
        let v = fetch::get_json(&uri)
            .await
            .map_err(AuthError::Unavailable)?;
        serde_json::from_value(v)
            .map_err(|e| AuthError::Unavailable(format!("{uri} is not a JWK set: {e}")))
    }

    /// The keys named `kid` (several may share one, RFC 7517 4.5): from the cache, else
    /// from a fresh fetch (at most one per `min_refresh`, and one at a time).
    async fn key(&self, kid: &str) -> Result<Vec<jsonwebtoken::jwk::Jwk>, AuthError> {
        if let Some((set, at)) = &*self.keys.read().await
            && at.elapsed() < self.max_age
            && let Some(k) = named(set, kid)
        {
            return Ok(k);
        }
        let mut last = self.fetching.lock().await;
        // Someone else may have fetched while we waited.
        if let Some((set, at)) = &*self.keys.read().await
            && at.elapsed() < self.max_age
            && let Some(k) = named(set, kid)
        {
            return Ok(k);
        }
        let fresh_enough = self
            .keys
            .read()
            .await
            .as_ref()
            .is_some_and(|(_, at)| at.elapsed() < self.max_age);
        if let Some((at, failed)) = *last
            && at.elapsed() < self.min_refresh
        {
            if fresh_enough {
                return Err(AuthError::Invalid(format!(
                    "unknown signing key `{}`",
                    safe(kid)
                )));
            }
            // Without usable keys, a failed fetch is not tried again by every token.
            if failed {
                return Err(AuthError::Unavailable(
                    "the signing keys could not be fetched; not trying again yet".into(),
                ));
            }
        }
        *last = Some((Instant::now(), false));
        // The metadata (its URLs sharing one time limit) and the keys (one more) within
        // two in all: a hanging authorization server holds the requests waiting for its
        // keys that long, not one time limit per URL.
        let fetched = tokio::time::timeout(2 * fetch::TIMEOUT, self.fetch_keys())
            .await
            .unwrap_or_else(|_| {
                Err(AuthError::Unavailable(format!(
                    "the signing keys of {} did not come within {:?}",
                    self.issuer,
                    2 * fetch::TIMEOUT
                )))
            });
        let set = match fetched {
            Ok(set) => set,
            Err(e) => {
                // From when it failed: a fetch that timed out took the whole interval.
                *last = Some((Instant::now(), true));
                return Err(e);
            }
        };
        let found = named(&set, kid);
        *self.keys.write().await = Some((set, Instant::now()));
        found.ok_or_else(|| AuthError::Invalid(format!("unknown signing key `{}`", safe(kid))))
    }

    async fn check(&self, token: &str) -> Result<Principal, AuthError> {
        let invalid = |why: String| AuthError::Invalid(why);
        let header = jsonwebtoken::decode_header(token).map_err(|_| invalid("not a JWT".into()))?;
        if self.require_typ
            && !header.typ.as_deref().is_some_and(|t| {
                t.eq_ignore_ascii_case("at+jwt") || t.eq_ignore_ascii_case("application/at+jwt")
            })
        {
            return Err(invalid("not a JWT access token (typ is not at+jwt)".into()));
        }
        if !self.algorithms.contains(&header.alg) {
            return Err(invalid(format!("algorithm {:?} not accepted", header.alg)));
        }
        let kid = header
            .kid
            .as_deref()
            .ok_or_else(|| invalid("no kid in the token header".into()))?;
        let keys = self.key(kid).await?;
        // Of the keys of that name (several may share one), the first that can check this
        // token's signature; when none can, the first one's reason is said.
        let mut refusals = keys.iter().map(|k| usable(k, header.alg));
        let key = match refusals.clone().find_map(Result::ok) {
            Some(key) => key,
            None => {
                let why = refusals.find_map(Result::err).unwrap_or_default();
                return Err(invalid(format!("signing key `{}` {why}", safe(kid))));
            }
        };
        let mut v = Validation::new(header.alg);
        v.algorithms = vec![header.alg];
        v.leeway = self.leeway.as_secs();
        v.validate_nbf = true;
        v.validate_aud = false;
        v.set_issuer(&[&self.issuer]);
        v.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &v)
            .map_err(|e| invalid(refusal(&e)))?;
        let claims = data.claims;
        // One issuer, a string (RFC 7519 4.1.1): the library also takes an array holding it.
        if !matches!(claims.get("iss"), Some(Value::String(_))) {
            return Err(invalid("`iss` is malformed".into()));
        }
        let aud_ok = match claims.get("aud") {
            Some(Value::String(a)) => same_resource(a, &self.audience),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .any(|a| same_resource(a, &self.audience)),
            _ => false,
        };
        if !aud_ok {
            return Err(invalid("token for another audience".into()));
        }
        // Accepted up to the leeway past `exp`: its streams end then too.
        principal_of(claims, token, Some(&self.issuer)).map(|p| p.accepted_past_expiry(self.leeway))
    }
}

/// The key `k` as one that checks a signature made with `alg`, or why it is not one: a
/// key for encryption (`use: enc`, RFC 7517 4.2, or `key_ops` without `verify`, 4.3), a
/// key that names another algorithm (4.4), or a key of another type or curve (an RSA key
/// for EdDSA, a P-384 key for ES256).
fn usable(k: &jsonwebtoken::jwk::Jwk, alg: Algorithm) -> Result<DecodingKey, String> {
    use jsonwebtoken::jwk::{
        AlgorithmParameters as P, EllipticCurve as C, KeyOperations, PublicKeyUse,
    };
    if matches!(k.common.public_key_use, Some(PublicKeyUse::Encryption))
        || k.common
            .key_operations
            .as_ref()
            .is_some_and(|ops| !ops.contains(&KeyOperations::Verify))
    {
        return Err("is not for signatures".into());
    }
    if let Some(meant) = k.common.key_algorithm
        && meant.to_string() != format!("{alg:?}")
    {
        return Err(format!("is for {meant}, not {alg:?}"));
    }
    let fits = match (&k.algorithm, alg) {
        (P::RSA(_), Algorithm::RS256 | Algorithm::RS384 | Algorithm::RS512)
        | (P::RSA(_), Algorithm::PS256 | Algorithm::PS384 | Algorithm::PS512) => true,
        (P::EllipticCurve(e), Algorithm::ES256) => e.curve == C::P256,
        (P::EllipticCurve(e), Algorithm::ES384) => e.curve == C::P384,
        (P::OctetKeyPair(o), Algorithm::EdDSA) => o.curve == C::Ed25519,
        _ => false,
    };
    if !fits {
        return Err(format!("is not a key for {alg:?}"));
    }
    DecodingKey::from_jwk(k).map_err(|e| format!("cannot be read: {e}"))
}

/// The keys of `set` named `kid`, when there is one.
fn named(set: &JwkSet, kid: &str) -> Option<Vec<jsonwebtoken::jwk::Jwk>> {
    let keys: Vec<_> = set
        .keys
        .iter()
        .filter(|k| k.common.key_id.as_deref() == Some(kid))
        .cloned()
        .collect();
    (!keys.is_empty()).then_some(keys)
}

/// A principal from token claims or an introspection response.
pub(super) fn principal_of(
    claims: Map<String, Value>,
    token: &str,
    issuer: Option<&str>,
) -> Result<Principal, AuthError> {
    let str_claim = |k: &str| claims.get(k).and_then(Value::as_str).map(str::to_owned);
    // Each a non-empty string when present (RFC 9068 2.2, RFC 7662 2.2): a number or ""
    // would stand for someone else's subject, or for everyone's.
    let text = |k: &str| match claims.get(k) {
        None => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(_) => Err(AuthError::Invalid(format!(
            "`{k}` must be a non-empty string"
        ))),
    };
    let client = text("client_id")?;
    // Without `sub` (a client-credentials token), the client is the subject, kept apart
    // from the users' subjects (see `Principal::key`).
    let (subject, by_client) = match (text("sub")?, &client) {
        (Some(sub), _) => (sub, false),
        (None, Some(c)) => (c.clone(), true),
        (None, None) => {
            return Err(AuthError::Invalid(
                "token without `sub` or `client_id`".into(),
            ));
        }
    };
    let mut scopes: Vec<String> = match claims.get("scope") {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    match claims.get("scp") {
        Some(Value::Array(a)) => {
            scopes.extend(a.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        Some(Value::String(s)) => scopes.extend(s.split_whitespace().map(str::to_owned)),
        _ => {}
    }
    let mut p = Principal::new(subject)
        .scopes(scopes)
        .token(Token::new(token));
    if by_client {
        p = p.subject_is_client();
    }
    if let Some(iss) = str_claim("iss").or_else(|| issuer.map(str::to_owned)) {
        p = p.issuer(iss);
    }
    if let Some(c) = client {
        p = p.client_id(c);
    }
    // An `exp` past what the clock can hold is no expiry to keep track of.
    if let Some(Ok(Some(at))) = claims.get("exp").map(numeric_date) {
        p = p.expires_at(at);
    }
    Ok(p.claims(claims))
}

/// A time claim (RFC 7519 NumericDate: seconds since the epoch, possibly fractional):
/// `Err` when it is not a non-negative number, `Ok(None)` when past what the clock holds.
pub(super) fn numeric_date(v: &Value) -> Result<Option<SystemTime>, ()> {
    if let Some(secs) = v.as_u64() {
        return Ok(UNIX_EPOCH.checked_add(Duration::from_secs(secs)));
    }
    match v.as_f64() {
        Some(secs) if secs >= 0.0 && v.is_f64() => Ok(Duration::try_from_secs_f64(secs)
            .ok()
            .and_then(|d| UNIX_EPOCH.checked_add(d))),
        _ => Err(()),
    }
}

/// Why a token is refused, in words that name no more than the token's claims.
fn refusal(e: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    match e.kind() {
        K::ExpiredSignature => "token expired".into(),
        K::ImmatureSignature => "token not valid yet".into(),
        K::InvalidIssuer => "token of another issuer".into(),
        K::InvalidSignature => "bad signature".into(),
        // jsonwebtoken reads a time claim that is not a number as missing.
        K::MissingRequiredClaim(c) if c == "exp" || c == "nbf" => {
            format!("token without `{c}`, or not a number")
        }
        K::MissingRequiredClaim(c) => format!("token without `{}`", safe(c)),
        K::InvalidClaimFormat(c) => format!("`{}` is malformed", safe(c)),
        K::InvalidToken | K::Base64(_) | K::Json(_) | K::Utf8(_) => "malformed token".into(),
        K::InvalidKeyFormat
        | K::InvalidEcdsaKey
        | K::InvalidEddsaKey
        | K::InvalidRsaKey(_)
        | K::InvalidAlgorithm => "the signing key does not fit the token".into(),
        _ => format!("token refused ({e})"),
    }
}

/// A `kid` (chosen by whoever made the token) made safe to print.
fn safe(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(64)
        .collect()
}

impl TokenValidator for JwtValidator {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(self.check(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sub` and `client_id` are non-empty strings or absent; a client's own token (no
    /// `sub`) is bound apart from a user whose subject is the client's name.
    #[test]
    fn subjects_are_strings_and_clients_are_not_users() {
        let of = |v: serde_json::Value| principal_of(v.as_object().cloned().unwrap(), "t", None);
        let refused = |v: serde_json::Value| of(v).err().map(|e| e.to_string());
        for (claims, claim) in [
            (
                serde_json::json!({"sub": 1001, "client_id": "webapp"}),
                "sub",
            ),
            (serde_json::json!({"sub": "", "client_id": "webapp"}), "sub"),
            (serde_json::json!({"sub": null}), "sub"),
            (serde_json::json!({"sub": "u", "client_id": 7}), "client_id"),
        ] {
            let why = refused(claims.clone()).unwrap_or_default();
            assert!(
                why.contains(&format!("`{claim}` must be a non-empty string")),
                "{claims}: {why}"
            );
        }
        let client = of(serde_json::json!({"client_id": "alice"})).unwrap();
        let user = of(serde_json::json!({"sub": "alice", "client_id": "webapp"})).unwrap();
        assert_eq!((client.subject(), user.subject()), ("alice", "alice"));
        assert_ne!(client.key(), user.key());
        assert!(refused(serde_json::json!({})).is_some());
    }

    /// A missing time claim may be one that is not a number; a missing `iss` is missing.
    #[test]
    fn missing_claims_are_named_as_they_are() {
        use jsonwebtoken::errors::{Error, ErrorKind};
        let said = |c: &str| refusal(&Error::from(ErrorKind::MissingRequiredClaim(c.into())));
        assert_eq!(said("exp"), "token without `exp`, or not a number");
        assert_eq!(said("iss"), "token without `iss`");
        assert_eq!(said("aud"), "token without `aud`");
    }

    /// A local HTTP server answering every request with `status` and `body` after
    /// `delay`; how many requests it got.
    async fn answering(
        status: u16,
        body: &'static str,
        delay: Duration,
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", l.local_addr().unwrap());
        let hits = std::sync::Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        tokio::spawn(async move {
            while let Ok((mut c, _)) = l.accept().await {
                let counted = counted.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0; 4096];
                    let _ = c.read(&mut buf).await;
                    counted.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(delay).await;
                    let r = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = c.write_all(r.as_bytes()).await;
                });
            }
        });
        (url, hits)
    }

    /// A token whose header names `kid` (its signature is never reached when the keys
    /// cannot be fetched).
    fn unsigned(kid: &str) -> String {
        use base64::Engine;
        let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let head = b64(serde_json::json!({"alg": "EdDSA", "typ": "at+jwt", "kid": kid}));
        format!("{head}.{}.AAAA", b64(serde_json::json!({})))
    }

    /// While the JWKS endpoint fails, tokens do not each fetch it again: at most one
    /// fetch per `min_interval`, counted from the failure (they queued one behind the
    /// other, each waiting for its own fetch, up to the 10 s timeout each when the
    /// endpoint hangs).
    #[tokio::test]
    async fn a_failing_jwks_endpoint_is_not_fetched_for_every_token() {
        use std::sync::atomic::Ordering::SeqCst;
        // Slower to fail than the interval, as a fetch that times out is.
        let (url, hits) = answering(503, "{}", Duration::from_millis(1500)).await;
        let v = std::sync::Arc::new(
            JwtValidator::new("https://as.example", "https://mcp.example/mcp")
                .jwks_uri(&url)
                .key_refresh(Duration::from_secs(3600), Duration::from_secs(1)),
        );
        let calls = (0..6).map(|_| {
            let v = v.clone();
            tokio::spawn(async move { v.check(&unsigned("k1")).await })
        });
        for r in futures_util::future::join_all(calls).await {
            assert!(matches!(r.unwrap(), Err(AuthError::Unavailable(_))));
        }
        for _ in 0..4 {
            let r = v.check(&unsigned("k1")).await;
            assert!(matches!(r, Err(AuthError::Unavailable(_))), "{r:?}");
        }
        assert_eq!(hits.load(SeqCst), 1);
        // Once the interval has passed, the keys are fetched again.
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let _ = v.check(&unsigned("k1")).await;
        assert_eq!(hits.load(SeqCst), 2);
    }

    /// A hanging authorization server holds a token's check for one time limit in all, not
    /// one per URL asked (three for the metadata, then the keys).
    #[tokio::test(start_paused = true)]
    async fn a_hanging_authorization_server_costs_one_time_limit() {
        // Connections are taken (the backlog) and never answered.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let issuer = format!("http://{}/tenant", l.local_addr().unwrap());
        let v = JwtValidator::new(&issuer, "https://mcp.example/mcp");
        let t = tokio::time::Instant::now();
        let r = v.check(&unsigned("k1")).await;
        assert!(matches!(r, Err(AuthError::Unavailable(_))), "{r:?}");
        assert!(
            t.elapsed() <= fetch::TIMEOUT + Duration::from_secs(1),
            "{:?}",
            t.elapsed()
        );
    }

    /// A metadata URL that hangs costs its share of the lookup's time, and the next one
    /// (which answers) is still asked: the keys come, the token is checked.
    #[tokio::test]
    async fn a_hanging_metadata_url_does_not_keep_the_next_from_answering() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let issuer = format!("{base}/tenant");
        let (meta, keys) = (
            serde_json::json!({"issuer": issuer, "jwks_uri": format!("{base}/jwks")}).to_string(),
            serde_json::json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": ED_X, "kid": "k1"}]})
                .to_string(),
        );
        tokio::spawn(async move {
            while let Ok((mut c, _)) = l.accept().await {
                let (meta, keys) = (meta.clone(), keys.clone());
                tokio::spawn(async move {
                    let mut buf = vec![0; 4096];
                    let n = c.read(&mut buf).await.unwrap_or(0);
                    let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                    let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                    let body = if path.starts_with("/.well-known/oauth-authorization-server") {
                        // RFC 8414's URL hangs.
                        std::future::pending::<()>().await;
                        unreachable!()
                    } else if path.starts_with("/.well-known/openid-configuration") {
                        meta
                    } else {
                        keys
                    };
                    let r = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = c.write_all(r.as_bytes()).await;
                });
            }
        });
        let aud = "https://mcp.example/mcp";
        let v = JwtValidator::new(&issuer, aud);
        let now = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let token = signed(
            serde_json::json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"}),
            serde_json::json!({"iss": issuer, "aud": aud, "sub": "u", "exp": now + 600}),
        );
        let p = v.check(&token).await.unwrap();
        assert_eq!(p.subject(), "u");
    }

    /// An Ed25519 test key (not used anywhere else): its PKCS #8 DER, base64, and the
    /// public key's `x`.
    const ED_DER: &str = "MC4CAQAwBQYDK2VwBCIEIOkBspsBdrEXf32R9wUAsnV1E5Na5rO5bggtCn4wTCQm";
    const ED_X: &str = "Ld3RXBKXIm4sHupPA3cW_D2piC5diiLAfFtHQyDbBf4";

    /// A JWT signed with the test key.
    fn signed(header: Value, claims: Value) -> String {
        use base64::Engine;
        let b64 =
            |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let msg = format!("{}.{}", b64(&header), b64(&claims));
        let der = base64::engine::general_purpose::STANDARD
            .decode(ED_DER)
            .unwrap();
        let key = jsonwebtoken::EncodingKey::from_ed_der(&der);
        let sig = jsonwebtoken::crypto::sign(msg.as_bytes(), &key, Algorithm::EdDSA).unwrap();
        format!("{msg}.{sig}")
    }

    /// Of the keys a token's `kid` names, one for signatures with its algorithm checks
    /// it: a key for encryption is none, and a key of another algorithm under the same
    /// name does not hide the right one. An `iss` must be one string.
    #[tokio::test]
    async fn the_key_is_one_for_signatures_with_the_tokens_algorithm() {
        let (iss, aud) = ("https://as.example", "https://mcp.example/mcp");
        let v = JwtValidator::new(iss, aud);
        let set = serde_json::json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": ED_X, "kid": "k1"},
            {"kty": "OKP", "crv": "Ed25519", "x": ED_X, "kid": "enc", "use": "enc"},
            {"kty": "RSA", "n": "AQAB", "e": "AQAB", "kid": "dup", "alg": "RS256"},
            {"kty": "OKP", "crv": "Ed25519", "x": ED_X, "kid": "dup", "use": "sig"},
            {"kty": "RSA", "n": "AQAB", "e": "AQAB", "kid": "rsa", "alg": "RS256"},
            // Without `alg`: told apart by their type.
            {"kty": "EC", "crv": "P-256", "x": "AQAB", "y": "AQAB", "kid": "dup2"},
            {"kty": "OKP", "crv": "Ed25519", "x": ED_X, "kid": "dup2"},
            {"kty": "OKP", "crv": "Ed25519", "x": ED_X, "kid": "ops", "key_ops": ["sign"]},
        ]});
        *v.keys.write().await = Some((serde_json::from_value(set).unwrap(), Instant::now()));
        let now = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let claims = serde_json::json!({"iss": iss, "aud": aud, "sub": "u", "exp": now + 600});
        let check = |kid: &str, claims: &Value| {
            let token = signed(
                serde_json::json!({"alg": "EdDSA", "typ": "at+jwt", "kid": kid}),
                claims.clone(),
            );
            let v = &v;
            async move { v.check(&token).await.map(|p| p.subject().to_owned()) }
        };
        assert_eq!(check("k1", &claims).await.unwrap(), "u");
        assert_eq!(check("dup", &claims).await.unwrap(), "u");
        assert_eq!(check("dup2", &claims).await.unwrap(), "u");
        let why = |r: Result<String, AuthError>| r.unwrap_err().to_string();
        assert!(why(check("enc", &claims).await).contains("is not for signatures"));
        assert!(why(check("ops", &claims).await).contains("is not for signatures"));
        assert!(why(check("rsa", &claims).await).contains("is for RS256, not EdDSA"));
        let mut two = claims.clone();
        two["iss"] = serde_json::json!(["https://evil.example", iss]);
        assert!(why(check("k1", &two).await).contains("`iss` is malformed"));
    }

    #[test]
    fn an_exp_past_what_the_clock_holds_is_no_expiry() {
        let claims = |exp: u64| {
            let v = serde_json::json!({"sub": "u", "exp": exp});
            v.as_object().cloned().unwrap()
        };
        let p = principal_of(claims(u64::MAX), "t", None).unwrap();
        assert_eq!(p.expiry(), None);
        let p = principal_of(claims(2_000_000_000), "t", None).unwrap();
        assert_eq!(
            p.expiry(),
            Some(UNIX_EPOCH + Duration::from_secs(2_000_000_000))
        );
    }
}
