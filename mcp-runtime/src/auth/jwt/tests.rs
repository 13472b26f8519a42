//! The JWT validator's tests: refetching keys, choosing among keys, claims, time limits.

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
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
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
    // Bound to a key (DPoP, mutual TLS): its proof of possession is not checked.
    let mut bound = claims.clone();
    bound["cnf"] = serde_json::json!({"x5t#S256": "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"});
    assert!(why(check("k1", &bound).await).contains("bound to a key"));
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

/// A local JWKS endpoint that answers the test key on its first request, then fails the
/// others (`503`, or no answer at all when `hang`); how many requests it got.
async fn keys_once_then_failing(
    hang: bool,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks", l.local_addr().unwrap());
    let hits = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let keys =
        serde_json::json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": ED_X, "kid": "k1"}]})
            .to_string();
    tokio::spawn(async move {
        while let Ok((mut c, _)) = l.accept().await {
            let (counted, keys) = (counted.clone(), keys.clone());
            tokio::spawn(async move {
                let mut buf = vec![0; 4096];
                let _ = c.read(&mut buf).await;
                let (status, body) = match counted.fetch_add(1, Ordering::SeqCst) {
                    0 => (200, keys),
                    _ if hang => std::future::pending().await,
                    _ => (503, "{}".to_owned()),
                };
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

/// A valid token of `iss` for `aud` signed with the test key `k1`.
fn valid_token(iss: &str, aud: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    signed(
        serde_json::json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"}),
        serde_json::json!({"iss": iss, "aud": aud, "sub": "u", "exp": now + 600}),
    )
}

/// Keys past their `max_age` still check the tokens they hold when fetching them again
/// fails (the authorization server is down for a while): before, every token got 503,
/// each after waiting on its own fetch. The refresh runs in the background, one at a
/// time and at most once per `min_interval`: no request waits on it.
#[tokio::test]
async fn stale_keys_answer_while_the_jwks_endpoint_fails() {
    use std::sync::atomic::Ordering::SeqCst;
    let (iss, aud) = ("https://as.example", "https://mcp.example/mcp");
    let (url, hits) = keys_once_then_failing(false).await;
    let v = JwtValidator::new(iss, aud)
        .jwks_uri(&url)
        .key_refresh(Duration::from_millis(50), Duration::from_millis(200));
    let token = valid_token(iss, aud);
    assert_eq!(v.check(&token).await.unwrap().subject(), "u");
    assert_eq!(hits.load(SeqCst), 1);
    // Past `max_age`, and past `min_interval` since the fetch.
    tokio::time::sleep(Duration::from_millis(250)).await;
    // Stale: answered from the cache, a refresh started (which fails).
    assert_eq!(v.check(&token).await.unwrap().subject(), "u");
    // Once the refresh is done (it holds `fetching` while it runs), it was one, failed.
    let last = *v.fetching.lock().await;
    assert!(last.is_some_and(|(_, failed)| failed), "{last:?}");
    assert_eq!(hits.load(SeqCst), 2);
    for _ in 0..5 {
        assert_eq!(v.check(&token).await.unwrap().subject(), "u");
    }
    // Within `min_interval` of the failure, nothing more was asked.
    assert_eq!(hits.load(SeqCst), 2);
    // An unknown `kid` still needs the keys: it cannot be checked now.
    let r = v.check(&unsigned("k2")).await;
    assert!(matches!(r, Err(AuthError::Unavailable(_))), "{r:?}");
}

/// While the refresh of stale keys hangs, the tokens they hold are checked at once.
#[tokio::test]
async fn a_hanging_refresh_keeps_no_request_waiting() {
    use std::sync::atomic::Ordering::SeqCst;
    let (iss, aud) = ("https://as.example", "https://mcp.example/mcp");
    let (url, hits) = keys_once_then_failing(true).await;
    let v = std::sync::Arc::new(
        JwtValidator::new(iss, aud)
            .jwks_uri(&url)
            .key_refresh(Duration::from_millis(50), Duration::from_millis(50)),
    );
    let token = valid_token(iss, aud);
    assert!(v.check(&token).await.is_ok());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let t = Instant::now();
    let calls = (0..8).map(|_| {
        let (v, token) = (v.clone(), token.clone());
        tokio::spawn(async move { v.check(&token).await })
    });
    for r in futures_util::future::join_all(calls).await {
        assert_eq!(r.unwrap().unwrap().subject(), "u");
    }
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // One refresh under way, however many tokens came.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(hits.load(SeqCst), 2);
}

/// The leeway is at most 5 minutes: `Duration::MAX` overflowed inside the JWT library, an
/// hour accepted tokens expired for most of one.
#[tokio::test]
async fn the_leeway_is_at_most_five_minutes() {
    let (iss, aud) = ("https://as.example", "https://mcp.example/mcp");
    let set =
        serde_json::json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": ED_X, "kid": "k1"}]});
    let now = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let expired = |ago: u64| {
        signed(
            serde_json::json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"}),
            serde_json::json!({"iss": iss, "aud": aud, "sub": "u", "exp": now - ago}),
        )
    };
    for leeway in [Duration::from_secs(3600), Duration::MAX] {
        let v = JwtValidator::new(iss, aud).leeway(leeway);
        assert_eq!(v.leeway, MAX_LEEWAY);
        *v.keys.write().await =
            Some((serde_json::from_value(set.clone()).unwrap(), Instant::now()));
        let r = v.check(&expired(600)).await;
        assert!(
            r.as_ref().is_err_and(|e| e.to_string().contains("expired")),
            "{r:?}"
        );
        assert_eq!(v.check(&expired(120)).await.unwrap().subject(), "u");
    }
    let v = JwtValidator::new(iss, aud).leeway(Duration::from_secs(5));
    assert_eq!(v.leeway, Duration::from_secs(5));
}
