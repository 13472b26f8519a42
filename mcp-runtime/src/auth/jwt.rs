//! JWT access tokens (RFC 9068), checked against the issuer's JWKS.

use super::{AuthError, Principal, Token, TokenValidator, fetch, same_resource};
use futures_util::future::BoxFuture;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{Mutex, RwLock};

/// The largest clock leeway [`JwtValidator::leeway`] takes: clocks a few minutes apart
/// are tolerated, tokens expired for longer are not.
const MAX_LEEWAY: Duration = Duration::from_secs(300);

/// Checks JWT access tokens (RFC 9068): the `typ` header (`at+jwt`), an allowed
/// asymmetric algorithm, the signature against the issuer's JWKS (found through its
/// metadata, cached, fetched again when a token names an unknown `kid`), `iss`, `aud`
/// (this server's canonical URI, compared as a URL), `exp` and `nbf` with a leeway. A
/// token bound to a key (`cnf`: DPoP, mutual TLS) is refused: no proof is checked.
pub struct JwtValidator {
    source: KeySource,
    audience: String,
    leeway: Duration,
    algorithms: Vec<Algorithm>,
    require_typ: bool,
    max_age: Duration,
    min_refresh: Duration,
    keys: Arc<KeyCache>,
    /// The last fetch: when it began (or failed), and whether it failed. Held while a
    /// fetch runs.
    fetching: Arc<Mutex<Option<(Instant, bool)>>>,
}

impl std::fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtValidator")
            .field("issuer", &self.source.issuer)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl JwtValidator {
    /// Tokens of `issuer` (its identifier, exactly as in its metadata) for `audience`
    /// (this server's canonical URI, the same as [`Auth::new`](super::Auth::new)'s).
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        JwtValidator {
            source: KeySource {
                issuer: issuer.into(),
                jwks_uri: None,
            },
            audience: audience.into(),
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
            keys: Arc::new(RwLock::new(None)),
            fetching: Arc::new(Mutex::new(None)),
        }
    }
    /// The JWKS URL, instead of discovering it from the issuer's metadata.
    pub fn jwks_uri(mut self, url: impl Into<String>) -> Self {
        self.source.jwks_uri = Some(url.into());
        self
    }
    /// Clock leeway for `exp` and `nbf` (default 30 s), at most 5 minutes: a larger one is
    /// taken as 5 minutes, since it would accept tokens long expired.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway.min(MAX_LEEWAY);
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
    /// failed (default 10 s). Keys past their age are fetched again in the background
    /// and still used meanwhile, and for as long as fetching them fails.
    pub fn key_refresh(mut self, max_age: Duration, min_interval: Duration) -> Self {
        self.max_age = max_age;
        self.min_refresh = min_interval;
        self
    }

    /// The keys named `kid` (several may share one, RFC 7517 4.5): from the cache, else
    /// from a fresh fetch (at most one per `min_refresh`, and one at a time).
    ///
    /// Keys past `max_age` still answer for the `kid`s they hold: they are fetched again
    /// in the background (no request waits on it), and kept when that fetch fails, so
    /// that an authorization server that is down for a while does not stop every token.
    async fn key(&self, kid: &str) -> Result<Vec<jsonwebtoken::jwk::Jwk>, AuthError> {
        let cached = self
            .keys
            .read()
            .await
            .as_ref()
            .and_then(|(set, at)| Some((named(set, kid)?, at.elapsed() < self.max_age)));
        if let Some((k, fresh)) = cached {
            if !fresh {
                self.refresh_in_background();
            }
            return Ok(k);
        }
        let mut last = self.fetching.lock().await;
        // Someone else may have fetched while we waited.
        if let Some((set, _)) = &*self.keys.read().await
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
        let set = refresh(&self.source, &self.keys, &mut last).await?;
        named(&set, kid)
            .ok_or_else(|| AuthError::Invalid(format!("unknown signing key `{}`", safe(kid))))
    }

    /// Fetches the keys again in a task of their own, unless a fetch is under way or the
    /// last one began (or failed) less than `min_refresh` ago.
    fn refresh_in_background(&self) {
        let Ok(mut last) = self.fetching.clone().try_lock_owned() else {
            return;
        };
        if last.is_some_and(|(at, _)| at.elapsed() < self.min_refresh) {
            return;
        }
        let (source, keys) = (self.source.clone(), self.keys.clone());
        tokio::spawn(async move {
            if let Err(e) = refresh(&source, &keys, &mut last).await {
                tracing::warn!("the signing keys were not refreshed (the cached ones stay): {e}");
            }
        });
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
        v.set_issuer(&[&self.source.issuer]);
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
        principal_of(claims, token, Some(&self.source.issuer))
            .map(|p| p.accepted_past_expiry(self.leeway))
    }
}

/// Where the keys come from: the issuer, and the JWKS URL when it is not discovered.
#[derive(Clone)]
struct KeySource {
    issuer: String,
    jwks_uri: Option<String>,
}

/// The cached keys and when they were fetched.
type KeyCache = RwLock<Option<(JwkSet, Instant)>>;

/// Fetches the keys of `source` into `keys`, recording in `last` when the fetch began,
/// and when it failed (the caller holds `last`, so one fetch runs at a time).
async fn refresh(
    source: &KeySource,
    keys: &KeyCache,
    last: &mut Option<(Instant, bool)>,
) -> Result<JwkSet, AuthError> {
    *last = Some((Instant::now(), false));
    // The metadata (its URLs sharing one time limit) and the keys (one more) within
    // two in all: a hanging authorization server holds the requests waiting for its
    // keys that long, not one time limit per URL.
    let fetched = tokio::time::timeout(2 * fetch::TIMEOUT, fetch_keys(source))
        .await
        .unwrap_or_else(|_| {
            Err(AuthError::Unavailable(format!(
                "the signing keys of {} did not come within {:?}",
                source.issuer,
                2 * fetch::TIMEOUT
            )))
        });
    match fetched {
        Ok(set) => {
            *keys.write().await = Some((set.clone(), Instant::now()));
            Ok(set)
        }
        Err(e) => {
            // From when it failed: a fetch that timed out took the whole interval.
            *last = Some((Instant::now(), true));
            Err(e)
        }
    }
}

/// The JWK set of `source`, from its `jwks_uri` or the one in the issuer's metadata.
async fn fetch_keys(source: &KeySource) -> Result<JwkSet, AuthError> {
    let uri = match &source.jwks_uri {
        Some(u) => u.clone(),
        None => {
            let meta = fetch::server_metadata(&source.issuer)
                .await
                .map_err(AuthError::Unavailable)?;
            meta.get("jwks_uri")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    AuthError::Unavailable(format!(
                        "the metadata of {} has no jwks_uri",
                        source.issuer
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

/// A principal from token claims or an introspection response; refused when the token
/// is bound to a key.
pub(super) fn principal_of(
    claims: Map<String, Value>,
    token: &str,
    issuer: Option<&str>,
) -> Result<Principal, AuthError> {
    // A token with `cnf` (RFC 7800) is bound to a key: DPoP (RFC 9449) or mutual TLS
    // (RFC 8705). It is accepted only with a proof of possession, which is not checked
    // here; as a bearer token, a stolen one would pass.
    if claims.get("cnf").is_some_and(|c| !c.is_null()) {
        return Err(AuthError::Invalid(
            "token bound to a key (`cnf`: DPoP or mutual TLS); this server checks no proof of possession and takes bearer tokens only".into(),
        ));
    }
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
    fn audience(&self) -> Option<&str> {
        Some(&self.audience)
    }
    fn issuer(&self) -> Option<&str> {
        Some(&self.source.issuer)
    }
}

#[cfg(test)]
mod tests;
