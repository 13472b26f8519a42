//! The few HTTP calls a resource server makes to its authorization server (metadata,
//! JWKS, introspection), over hyper with rustls: bounded in time and size.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Method, Request, header};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use std::sync::OnceLock;
use std::time::Duration;

type Https = hyper_rustls::HttpsConnector<HttpConnector>;

/// The longest a call may take, and the metadata lookup in all (its URLs share it).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest response read.
const MAX_BODY: usize = 1024 * 1024;

fn client() -> &'static Client<Https, Full<Bytes>> {
    static CLIENT: OnceLock<Client<Https, Full<Bytes>>> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .build();
        Client::builder(TokioExecutor::new()).build(https)
    })
}

/// `GET url` as JSON.
pub(crate) async fn get_json(url: &str) -> Result<Value, String> {
    let req = Request::builder()
        .method(Method::GET)
        .uri(url)
        .header(header::ACCEPT, "application/json")
        .body(Full::new(Bytes::new()))
        .map_err(|e| format!("bad URL {url}: {e}"))?;
    send(req, url).await
}

/// `POST url` with a form body, authenticated with HTTP Basic when `basic` is given.
pub(crate) async fn post_form(
    url: &str,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> Result<Value, String> {
    use base64::Engine;
    let body = form
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&");
    let mut req = Request::builder()
        .method(Method::POST)
        .uri(url)
        .header(header::ACCEPT, "application/json")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some((id, secret)) = basic {
        // RFC 6749 2.3.1: each part form-encoded before joining.
        let pair = format!("{}:{}", encode(id), encode(secret));
        let b64 = base64::engine::general_purpose::STANDARD.encode(pair);
        req = req.header(header::AUTHORIZATION, format!("Basic {b64}"));
    }
    let req = req
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| format!("bad URL {url}: {e}"))?;
    send(req, url).await
}

async fn send(req: Request<Full<Bytes>>, url: &str) -> Result<Value, String> {
    let call = async {
        let resp = client()
            .request(req)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        let status = resp.status();
        let body = Limited::new(resp.into_body(), MAX_BODY)
            .collect()
            .await
            .map_err(|e| format!("{url}: reading the response: {e}"))?
            .to_bytes();
        if !status.is_success() {
            return Err(format!("{url} answered {status}"));
        }
        serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))
    };
    tokio::time::timeout(TIMEOUT, call)
        .await
        .map_err(|_| format!("{url}: no answer within {TIMEOUT:?}"))?
}

/// `application/x-www-form-urlencoded` encoding of one value.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char);
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The authorization server's metadata (RFC 8414, then OpenID discovery), its `issuer`
/// checked against `issuer`.
pub(crate) async fn server_metadata(issuer: &str) -> Result<Value, String> {
    let (origin, path) = super::split_origin(issuer);
    let path = if path == "/" { "" } else { path };
    let candidates = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
        format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ),
    ];
    let mut urls: Vec<&String> = Vec::new();
    for url in &candidates {
        // The same URL twice (an issuer without a path) is asked once.
        if !urls.contains(&url) {
            urls.push(url);
        }
    }
    // The lookup has TIMEOUT in all, each URL its share of what is left: one that hangs
    // does not keep the next (which may answer) from being asked.
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    let mut last = String::new();
    for (i, url) in urls.iter().enumerate() {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let share = left / u32::try_from(urls.len() - i).unwrap_or(1);
        let answer = tokio::time::timeout(share, get_json(url))
            .await
            .unwrap_or_else(|_| Err(format!("{url}: no answer within {share:?}")));
        match answer {
            Ok(m) => {
                if m.get("issuer").and_then(Value::as_str) != Some(issuer) {
                    return Err(format!(
                        "{url} names issuer {}, not {issuer}",
                        m.get("issuer").unwrap_or(&Value::Null)
                    ));
                }
                return Ok(m);
            }
            Err(e) => last = e,
        }
    }
    Err(format!(
        "no authorization server metadata for {issuer}: {last}"
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn form_encoding_escapes_what_it_must() {
        assert_eq!(super::encode("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
    }
}
