//! Opaque tokens, checked by RFC 7662 introspection, with a response cache.

use super::jwt::numeric_date;
use super::{AuthError, Principal, TokenValidator, fetch, same_resource};
use futures_util::future::BoxFuture;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::{Mutex, OnceCell, Semaphore};

/// How far in the future an answer's `nbf` may be (clock skew), as the JWT validator's
/// default leeway.
const NBF_LEEWAY: Duration = Duration::from_secs(30);

/// How long a failed introspection (the endpoint, or its discovery, unreachable or
/// answering nonsense) is remembered: meanwhile a token not in the cache is refused at
/// once as not checkable now (`503`), rather than waiting on the same failure.
const FAILURE_PAUSE: Duration = Duration::from_secs(5);

/// How many introspection calls may be under way at once; a token that would need
/// one more is refused at once as not checkable now (`503`).
const MAX_CALLS: usize = 32;

/// Checks tokens at the authorization server's introspection endpoint (RFC 7662), as a
/// client of its own (HTTP Basic). A token must be `active`, unexpired, for this server's
/// audience (`aud`; a response without `aud` is refused unless
/// [`Introspection::allow_missing_audience`]), and of the configured issuer when the
/// response names one; when the response gives a `token_type`, that of an access token
/// (`Bearer`), and never one bound to a key (`cnf`). Answers are cached (by a hash of
/// the token, never the token) until the token expires or the cache TTL passes,
/// whichever is first. Lookups of the same token are merged into one call; a failed call
/// is remembered for a few seconds (tokens not cached meanwhile get `503` at once), and
/// at most a few dozen calls are under way at once.
pub struct Introspection {
    endpoint: Option<String>,
    issuer: String,
    audience: String,
    client_id: String,
    client_secret: String,
    ttl: Duration,
    allow_missing_audience: bool,
    cache: Mutex<HashMap<[u8; 32], Cached>>,
    max_entries: usize,
    /// The endpoint found in the issuer's metadata (once found).
    discovered: OnceCell<String>,
    /// When the last call failed (on the runtime's clock, as its time limits).
    failed_at: std::sync::Mutex<Option<tokio::time::Instant>>,
    /// The lookups under way, by the SHA-256 of their token (see [`Flight`]).
    flights: Flights,
    /// The calls that may be under way at once.
    calls: Semaphore,
}

/// The lookups under way, by the SHA-256 of their token: each caller of one holds its
/// cell, and the first to poll it makes the call, whose answer all get.
type Flights = std::sync::Mutex<HashMap<[u8; 32], Arc<OnceCell<Result<Principal, AuthError>>>>>;

/// An answer kept until the instant, by the SHA-256 of its token.
type Cached = (Instant, Result<Principal, AuthError>);

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl Introspection {
    /// Introspection at `issuer`'s endpoint (from its metadata) for tokens of `audience`,
    /// authenticating as `client_id` / `client_secret`.
    pub fn new(
        issuer: impl Into<String>,
        audience: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        Introspection {
            endpoint: None,
            issuer: issuer.into(),
            audience: audience.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            ttl: Duration::from_secs(60),
            allow_missing_audience: false,
            cache: Mutex::new(HashMap::new()),
            max_entries: 10_000,
            discovered: OnceCell::new(),
            failed_at: std::sync::Mutex::new(None),
            flights: std::sync::Mutex::new(HashMap::new()),
            calls: Semaphore::new(MAX_CALLS),
        }
    }
    /// The endpoint URL, instead of the one in the issuer's metadata.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }
    /// How long an answer is reused (default 60 s; never past the token's expiry). A
    /// revoked token stays accepted for at most this long.
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }
    /// Accepts active tokens whose introspection names no audience (for authorization
    /// servers that serve one resource only).
    pub fn allow_missing_audience(mut self) -> Self {
        self.allow_missing_audience = true;
        self
    }

    async fn endpoint_url(&self) -> Result<String, AuthError> {
        if let Some(e) = &self.endpoint {
            return Ok(e.clone());
        }
        // Found once; a failure is not kept, so a token looks again once the failure is
        // no longer remembered (the tokens that queued behind it do not each look).
        let found = self.discovered.get_or_try_init(|| async {
            self.not_failed_lately()?;
            let meta = fetch::server_metadata(&self.issuer)
                .await
                .map_err(AuthError::Unavailable)?;
            meta.get("introspection_endpoint")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| {
                    AuthError::Unavailable(format!(
                        "the metadata of {} has no introspection_endpoint",
                        self.issuer
                    ))
                })
        });
        found.await.cloned()
    }

    async fn introspect(&self, token: &str) -> Result<Principal, AuthError> {
        // The endpoint's lookup (its URLs sharing one time limit) and the call (one more)
        // within two in all.
        let call = async {
            let url = self.endpoint_url().await?;
            let v = fetch::post_form(
                &url,
                Some((&self.client_id, &self.client_secret)),
                &[("token", token), ("token_type_hint", "access_token")],
            )
            .await
            .map_err(AuthError::Unavailable)?;
            Ok::<_, AuthError>((url, v))
        };
        let (url, v) = tokio::time::timeout(2 * fetch::TIMEOUT, call)
            .await
            .unwrap_or_else(|_| {
                Err(AuthError::Unavailable(format!(
                    "the introspection of {} did not answer within {:?}",
                    self.issuer,
                    2 * fetch::TIMEOUT
                )))
            })?;
        let Value::Object(claims) = v else {
            return Err(AuthError::Unavailable(format!("{url} answered no object")));
        };
        self.admit(&claims)?;
        super::jwt::principal_of(claims, token, Some(&self.issuer))
    }

    /// `Ok` when the answer `claims` accepts the token for this server: active, in its
    /// time, of this issuer and for this audience.
    fn admit(&self, claims: &serde_json::Map<String, Value>) -> Result<(), AuthError> {
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(AuthError::Invalid("token not active".into()));
        }
        // RFC 7662 2.2: `token_type` is the type of RFC 6749 7.1, `Bearer` for a bearer
        // access token (some servers say `access_token`, as the hint's value). Any other
        // (a refresh token, which the same server also finds active) is refused.
        match claims.get("token_type") {
            None | Some(Value::Null) => {}
            Some(Value::String(t))
                if t.eq_ignore_ascii_case("bearer") || t.eq_ignore_ascii_case("access_token") => {}
            Some(Value::String(_)) => {
                return Err(AuthError::Invalid(
                    "not a bearer access token (by its `token_type`)".into(),
                ));
            }
            Some(_) => return Err(AuthError::Invalid("`token_type` is malformed".into())),
        }
        // A time present but not a number of seconds is refused, as the JWT validator
        // refuses it (skipping its check would accept what it should stop).
        // `null` is no value (as some serializers write what they lack).
        let time = |k: &str| match claims.get(k).filter(|v| !v.is_null()).map(numeric_date) {
            None => Ok(None),
            Some(Ok(at)) => Ok(Some(at)),
            Some(Err(())) => Err(AuthError::Invalid(format!("`{k}` is malformed"))),
        };
        // `Some(None)`: past what the clock holds.
        if let Some(Some(at)) = time("exp")?
            && at <= SystemTime::now()
        {
            return Err(AuthError::Invalid("token expired".into()));
        }
        // As the JWT validator does, with its default leeway.
        if let Some(at) = time("nbf")?
            && at.is_none_or(|at| at > SystemTime::now() + NBF_LEEWAY)
        {
            return Err(AuthError::Invalid("token not valid yet".into()));
        }
        match claims.get("iss") {
            None | Some(Value::Null) => {}
            Some(Value::String(iss)) if *iss == self.issuer => {}
            Some(Value::String(_)) => {
                return Err(AuthError::Invalid("token of another issuer".into()));
            }
            Some(_) => return Err(AuthError::Invalid("`iss` is malformed".into())),
        }
        let aud_ok = match claims.get("aud") {
            Some(Value::String(a)) => same_resource(a, &self.audience),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .any(|a| same_resource(a, &self.audience)),
            None => self.allow_missing_audience,
            Some(_) => false,
        };
        if !aud_ok {
            return Err(AuthError::Invalid("token for another audience".into()));
        }
        Ok(())
    }

    /// `Err` (unavailable) while a failed call is remembered.
    fn not_failed_lately(&self) -> Result<(), AuthError> {
        let failed_at = *self
            .failed_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match failed_at {
            Some(at) if at.elapsed() < FAILURE_PAUSE => Err(AuthError::Unavailable(format!(
                "the introspection at {} failed {:?} ago; not asking again yet",
                self.issuer,
                at.elapsed()
            ))),
            _ => Ok(()),
        }
    }

    /// The cached answer for the token hashed to `key`, while it holds.
    async fn cached(&self, key: &[u8; 32]) -> Option<Result<Principal, AuthError>> {
        match self.cache.lock().await.get(key) {
            Some((until, r)) if Instant::now() < *until => Some(r.clone()),
            _ => None,
        }
    }

    async fn check(&self, token: &str) -> Result<Principal, AuthError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(r) = self.cached(&key).await {
            return r;
        }
        let flight = Flight::join(&self.flights, key);
        match flight.cell() {
            Some(cell) => cell.get_or_init(|| self.look_up(key, token)).await.clone(),
            None => self.look_up(key, token).await,
        }
    }

    /// The answer for `token` (hashed to `key`) from the authorization server, cached;
    /// a failure is remembered for [`FAILURE_PAUSE`].
    async fn look_up(&self, key: [u8; 32], token: &str) -> Result<Principal, AuthError> {
        // A lookup that ended just before this one began has answered.
        if let Some(r) = self.cached(&key).await {
            return r;
        }
        self.not_failed_lately()?;
        let Ok(_call) = self.calls.try_acquire() else {
            return Err(AuthError::Unavailable(format!(
                "{MAX_CALLS} introspections are under way already"
            )));
        };
        let r = self.introspect(token).await;
        if matches!(r, Err(AuthError::Unavailable(_))) {
            *self
                .failed_at
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(tokio::time::Instant::now());
        }
        // An unreachable server is not remembered; an answer is, until the token expires.
        let expiry = r.as_ref().ok().and_then(Principal::expiry);
        if !matches!(r, Err(AuthError::Unavailable(_)))
            && let Some(until) = cache_until(Instant::now(), SystemTime::now(), self.ttl, expiry)
        {
            let mut cache = self.cache.lock().await;
            if cache.len() >= self.max_entries {
                // Full: the expired answers go, then the refusals, so that a flood of
                // made-up tokens does not flush the callers whose tokens are valid.
                let now = Instant::now();
                cache.retain(|_, (t, _)| *t > now);
                if cache.len() >= self.max_entries {
                    cache.retain(|_, (_, r)| r.is_ok());
                }
                if cache.len() >= self.max_entries {
                    cache.clear();
                }
            }
            cache.insert(key, (until, r.clone()));
        }
        r
    }
}

/// Until when an answer got at `now` (`now_wall` on the wall clock) is kept: `ttl`, and
/// no later than the token's `expiry`. `None` (not kept) when the token has expired by
/// now (its time ran out since it was admitted), or when neither bound can be told on
/// this clock.
fn cache_until(
    now: Instant,
    now_wall: SystemTime,
    ttl: Duration,
    expiry: Option<SystemTime>,
) -> Option<Instant> {
    let by_ttl = now.checked_add(ttl);
    let Some(expiry) = expiry else {
        return by_ttl;
    };
    let left = expiry
        .duration_since(now_wall)
        .ok()
        .filter(|d| !d.is_zero())?;
    match (by_ttl, now.checked_add(left)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// One caller's part in the lookup of a token: the lookup leaves the map of those under
/// way when its last caller is done (or gone), so that the map holds only lookups that
/// someone waits on.
struct Flight<'a> {
    flights: &'a Flights,
    key: [u8; 32],
    cell: Option<Arc<OnceCell<Result<Principal, AuthError>>>>,
}

impl<'a> Flight<'a> {
    /// Joins the lookup of the token hashed to `key`, beginning it if none is under way.
    fn join(flights: &'a Flights, key: [u8; 32]) -> Self {
        let mut map = flights.lock().unwrap_or_else(PoisonError::into_inner);
        let cell = map.entry(key).or_default().clone();
        Flight {
            flights,
            key,
            cell: Some(cell),
        }
    }

    /// Where the lookup's answer comes (always there: taken out only when dropped).
    fn cell(&self) -> Option<&OnceCell<Result<Principal, AuthError>>> {
        self.cell.as_deref()
    }
}

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        // Each caller's handle is taken and dropped under the lock, as it was cloned:
        // the count seen is exact, and the last one out removes the lookup.
        let mut map = self.flights.lock().unwrap_or_else(PoisonError::into_inner);
        drop(self.cell.take());
        if map
            .get(&self.key)
            .is_some_and(|c| Arc::strong_count(c) == 1)
        {
            map.remove(&self.key);
        }
    }
}

impl TokenValidator for Introspection {
    fn validate<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(self.check(token))
    }
    fn audience(&self) -> Option<&str> {
        Some(&self.audience)
    }
    fn issuer(&self) -> Option<&str> {
        Some(&self.issuer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn an_answer_is_checked_as_a_jwt_would_be() {
        let i = Introspection::new("https://as.example", "https://mcp.example/mcp", "c", "s");
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let answer = |extra: Value| {
            let mut v = serde_json::json!({"active": true, "sub": "u",
                "aud": "https://mcp.example/mcp", "exp": now + 600});
            v.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            v.as_object().unwrap().clone()
        };
        let why = |extra: Value| match i.admit(&answer(extra)) {
            Ok(()) => "admitted".to_owned(),
            Err(e) => e.to_string(),
        };
        assert_eq!(why(serde_json::json!({})), "admitted");
        assert_eq!(
            why(serde_json::json!({"nbf": now + 10})),
            "admitted",
            "within the leeway"
        );
        assert!(why(serde_json::json!({"nbf": now + 100_000})).contains("not valid yet"));
        assert!(why(serde_json::json!({"nbf": u64::MAX})).contains("not valid yet"));
        assert!(why(serde_json::json!({"exp": now - 10})).contains("expired"));
        assert!(why(serde_json::json!({"active": false})).contains("not active"));
        // Only an access token: a refresh token is active and for this audience too.
        for ok in ["Bearer", "bearer", "access_token", "ACCESS_TOKEN"] {
            assert_eq!(
                why(serde_json::json!({"token_type": ok})),
                "admitted",
                "{ok}"
            );
        }
        assert_eq!(why(serde_json::json!({"token_type": null})), "admitted");
        for other in ["refresh_token", "DPoP", "N_A", ""] {
            let w = why(serde_json::json!({"token_type": other}));
            assert!(w.contains("not a bearer access token"), "{other}: {w}");
        }
        assert!(why(serde_json::json!({"token_type": 1})).contains("malformed"));
        // A token bound to a key (DPoP, mutual TLS) needs a proof that is not checked.
        let bound = answer(
            serde_json::json!({"cnf": {"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}}),
        );
        let w = super::super::jwt::principal_of(bound, "t", None).unwrap_err();
        assert!(w.to_string().contains("bound to a key"), "{w}");
        let tenant = serde_json::json!({"aud": "https://mcp.example/mcp?tenant=b"});
        assert!(why(tenant).contains("another audience"));

        // Times and the issuer that are not what they must be are refused, as the JWT
        // validator refuses them, not skipped; a fractional time is a time.
        let past = (now - 600) as f64 + 0.5;
        assert!(why(serde_json::json!({"exp": past})).contains("expired"));
        for malformed in [
            serde_json::json!({"exp": -5}),
            serde_json::json!({"exp": "5"}),
            serde_json::json!({"nbf": "99999999999"}),
            serde_json::json!({"nbf": -1}),
            serde_json::json!({"iss": ["https://other.example"]}),
            serde_json::json!({"iss": 7}),
        ] {
            let w = why(malformed.clone());
            assert!(w.contains("malformed"), "{malformed}: {w}");
        }
        let later = (now + 100_000) as f64;
        assert!(why(serde_json::json!({"nbf": later})).contains("not valid yet"));
        assert_eq!(
            why(serde_json::json!({"exp": (now + 600) as f64})),
            "admitted"
        );
        assert_eq!(why(serde_json::json!({"exp": u64::MAX})), "admitted");
        // `null` is no value, as a missing member.
        let nulls = serde_json::json!({"exp": null, "nbf": null, "iss": null});
        assert_eq!(why(nulls), "admitted");
        // A fractional `exp` bounds how long the answer is cached.
        let p =
            super::super::jwt::principal_of(answer(serde_json::json!({"exp": past})), "t", None)
                .unwrap();
        assert!(p.expiry().is_some_and(|at| at < SystemTime::now()));
    }

    /// An answer is kept for the TTL, never past the token's expiry, and not at all for a
    /// token whose expiry has come since it was admitted (it was kept for the whole TTL).
    #[test]
    fn answers_are_not_kept_past_the_tokens_expiry() {
        let (now, wall) = (Instant::now(), SystemTime::now());
        let ttl = Duration::from_secs(60);
        let s = Duration::from_secs;
        assert_eq!(cache_until(now, wall, ttl, None), Some(now + ttl));
        assert_eq!(
            cache_until(now, wall, ttl, Some(wall + s(5))),
            Some(now + s(5))
        );
        assert_eq!(
            cache_until(now, wall, ttl, Some(wall + s(600))),
            Some(now + ttl)
        );
        assert_eq!(cache_until(now, wall, ttl, Some(wall)), None);
        assert_eq!(cache_until(now, wall, ttl, Some(wall - s(1))), None);
        // A TTL past what the clock holds: until the expiry, or not kept.
        let ever = Duration::MAX;
        assert_eq!(
            cache_until(now, wall, ever, Some(wall + s(5))),
            Some(now + s(5))
        );
        assert_eq!(cache_until(now, wall, ever, None), None);
    }

    /// A hanging authorization server holds a token's introspection for one time limit in
    /// all, not one per URL asked (three for the metadata, then the call).
    #[tokio::test(start_paused = true)]
    async fn a_hanging_authorization_server_costs_one_time_limit() {
        // Connections are taken (the backlog) and never answered.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let issuer = format!("http://{}/tenant", l.local_addr().unwrap());
        let i = Introspection::new(&issuer, "https://mcp.example/mcp", "c", "s");
        let t = tokio::time::Instant::now();
        let r = i.check("t").await;
        assert!(matches!(r, Err(AuthError::Unavailable(_))), "{r:?}");
        assert!(
            t.elapsed() <= fetch::TIMEOUT + Duration::from_secs(1),
            "{:?}",
            t.elapsed()
        );
    }

    /// A failed introspection is remembered for a few seconds: tokens not cached
    /// meanwhile are refused at once (503) instead of each waiting the whole time limit
    /// on the same hanging server, whether the endpoint hangs or its discovery does.
    /// Then it is asked again.
    #[tokio::test(start_paused = true)]
    async fn a_failure_is_remembered_a_few_seconds() {
        // Connections are taken (the backlog) and never answered.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let aud = "https://mcp.example/mcp";
        let given = Introspection::new(&base, aud, "c", "s").endpoint(format!("{base}/i"));
        let discovered = Introspection::new(&base, aud, "c", "s");
        for i in [given, discovered] {
            let timed = |token: &'static str| {
                let i = &i;
                async move {
                    let t = tokio::time::Instant::now();
                    let r = i.check(token).await;
                    assert!(matches!(r, Err(AuthError::Unavailable(_))), "{r:?}");
                    t.elapsed()
                }
            };
            assert!(timed("a").await >= fetch::TIMEOUT);
            for token in ["a", "b", "c"] {
                assert!(timed(token).await < Duration::from_secs(1));
            }
            tokio::time::sleep(FAILURE_PAUSE).await;
            assert!(timed("d").await >= fetch::TIMEOUT);
        }
    }

    /// A local introspection endpoint answering every token as active after `delay`,
    /// or never when `delay` is `None`; how many calls it got.
    async fn introspecting(
        delay: Option<Duration>,
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = hits.clone();
        tokio::spawn(async move {
            while let Ok((mut c, _)) = l.accept().await {
                let counted = counted.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0; 8192];
                    let _ = c.read(&mut buf).await;
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    match delay {
                        Some(d) => tokio::time::sleep(d).await,
                        None => std::future::pending().await,
                    }
                    let body = serde_json::json!({"active": true, "sub": "u",
                        "aud": "https://mcp.example/mcp"})
                    .to_string();
                    let r = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = c.write_all(r.as_bytes()).await;
                });
            }
        });
        (base, hits)
    }

    /// Lookups of the same token at the same time make one call, whose answer all get;
    /// none is left behind in the map of lookups under way.
    #[tokio::test]
    async fn lookups_of_one_token_are_merged() {
        use std::sync::atomic::Ordering::SeqCst;
        let (base, hits) = introspecting(Some(Duration::from_millis(300))).await;
        let i = std::sync::Arc::new(
            Introspection::new(&base, "https://mcp.example/mcp", "c", "s")
                .endpoint(format!("{base}/i")),
        );
        let calls = ["t", "t", "t", "t", "u"].map(|token| {
            let i = i.clone();
            tokio::spawn(async move { i.check(token).await })
        });
        for r in futures_util::future::join_all(calls).await {
            assert_eq!(r.unwrap().unwrap().subject(), "u");
        }
        assert_eq!(hits.load(SeqCst), 2);
        assert!(i.flights.lock().unwrap().is_empty());
        // A lookup whose callers are gone leaves nothing behind either.
        let gone = {
            let i = i.clone();
            tokio::spawn(async move { i.check("v").await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        gone.abort();
        let _ = gone.await;
        assert!(i.flights.lock().unwrap().is_empty());
    }

    /// When as many calls as allowed are under way, a token that needs one more is
    /// refused at once (503) rather than queued behind a hanging server.
    #[tokio::test]
    async fn calls_under_way_are_bounded() {
        let (base, hits) = introspecting(None).await;
        let mut i = Introspection::new(&base, "https://mcp.example/mcp", "c", "s")
            .endpoint(format!("{base}/i"));
        i.calls = Semaphore::new(1);
        let i = std::sync::Arc::new(i);
        let first = {
            let i = i.clone();
            tokio::spawn(async move { i.check("a").await })
        };
        while hits.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let t = Instant::now();
        let r = i.check("b").await;
        assert!(
            matches!(&r, Err(AuthError::Unavailable(why)) if why.contains("under way")),
            "{r:?}"
        );
        assert!(t.elapsed() < Duration::from_secs(1));
        first.abort();
    }

    /// Made-up tokens (each refused, each remembered) do not flush the answers for valid
    /// ones from a full cache.
    #[tokio::test]
    async fn refusals_do_not_flush_valid_answers() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let aud = "https://mcp.example/mcp";
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let log = asked.clone();
        tokio::spawn(async move {
            while let Ok((mut c, _)) = l.accept().await {
                let mut buf = vec![0; 8192];
                let n = c.read(&mut buf).await.unwrap_or(0);
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                let token = text.rsplit("token=").next().unwrap_or("").to_owned();
                let body = if token.starts_with("good") {
                    serde_json::json!({"active": true, "sub": "u", "aud": aud})
                } else {
                    serde_json::json!({"active": false})
                }
                .to_string();
                log.lock().unwrap().push(token);
                let r = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = c.write_all(r.as_bytes()).await;
            }
        });
        let mut i = Introspection::new(&base, aud, "c", "s").endpoint(format!("{base}/introspect"));
        i.max_entries = 4;
        assert!(i.check("good1").await.is_ok());
        assert!(i.check("good2").await.is_ok());
        for n in 0..10 {
            assert!(i.check(&format!("made-up{n}")).await.is_err());
        }
        assert!(i.check("good1").await.is_ok());
        assert!(i.check("good2").await.is_ok());
        let asked = asked.lock().unwrap().clone();
        let good = asked.iter().filter(|t| t.starts_with("good")).count();
        assert_eq!((good, asked.len()), (2, 12), "{asked:?}");
    }

    /// The introspection endpoint found in the issuer's metadata is looked up once, not
    /// before every token (which cost the authorization server one to three more
    /// requests per token, and each token the time they took).
    #[tokio::test]
    async fn the_endpoint_is_discovered_once() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let aud = "https://mcp.example/mcp";
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let (log, issuer) = (seen.clone(), base.clone());
        tokio::spawn(async move {
            while let Ok((mut c, _)) = l.accept().await {
                let mut buf = vec![0; 8192];
                let n = c.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                let body = if path.starts_with("/.well-known/") {
                    serde_json::json!({"issuer": issuer,
                        "introspection_endpoint": format!("{issuer}/introspect")})
                } else {
                    serde_json::json!({"active": true, "sub": "u", "aud": aud})
                }
                .to_string();
                log.lock().unwrap().push(path);
                let r = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = c.write_all(r.as_bytes()).await;
            }
        });
        let i = Introspection::new(&base, aud, "c", "s");
        for token in ["a", "b", "c"] {
            assert!(i.check(token).await.is_ok());
        }
        let seen = seen.lock().unwrap().clone();
        let discovery = seen
            .iter()
            .filter(|p| p.starts_with("/.well-known/"))
            .count();
        assert_eq!((discovery, seen.len()), (1, 4), "{seen:?}");
    }
}
