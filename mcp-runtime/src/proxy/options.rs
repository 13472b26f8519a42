//! How to reach an upstream: over HTTP, headers every request carries (its credentials,
//! say) and the certificate authorities trusted for `https://` beyond the public ones;
//! either way, how long it may stay silent on a request.

use super::UpstreamError;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::time::Duration;

/// Settings of a stdio upstream, for [`Upstream::stdio_with`](super::Upstream::stdio_with)
/// and [`Upstream::command_with`](super::Upstream::command_with).
///
/// ```no_run
/// # use mcp_runtime::proxy::{StdioOptions, Upstream};
/// # use std::time::Duration;
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let fs = Upstream::stdio_with(
///     "npx",
///     ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"],
///     StdioOptions::new().timeout(Duration::from_secs(10)),
/// )
/// .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
pub struct StdioOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) write_stall: Option<Duration>,
}

impl StdioOptions {
    /// The defaults: a 60 s time limit, for requests and for a stalled write to the
    /// child's stdin.
    pub fn new() -> StdioOptions {
        StdioOptions::default()
    }

    /// How long the upstream may stay silent on a request (no answer; for a tool call, no
    /// progress or question either) before the request is given up, an
    /// [`UpstreamError::Timeout`] (a tool error for a forwarded call): 60 s by default
    /// ([`DEFAULT_UPSTREAM_TIMEOUT`](super::DEFAULT_UPSTREAM_TIMEOUT)). A request given up
    /// is forgotten, and the upstream is told (`notifications/cancelled`). The requests of
    /// the handshake have this limit too, on the first connect and when a child that
    /// exited is started again. Zero is refused when connecting
    /// ([`UpstreamError::Unavailable`]).
    pub fn timeout(mut self, silence: Duration) -> StdioOptions {
        self.timeout = Some(silence);
        self
    }

    /// How long a write to the child's stdin may make no progress before the child is
    /// taken for gone. A child that stops reading its stdin but keeps it open (hung, or
    /// stuck in a loop) blocks our writes once the pipe's buffer is full (64 KiB on
    /// Linux). By default it is the request time limit ([`StdioOptions::timeout`]): a
    /// child busy with one long request is not killed while the next waits to be written
    /// within its own limit. When it runs out, every request waiting on the child fails
    /// at once ([`UpstreamError::Unavailable`], saying it stopped reading its stdin), one
    /// warning names the program, the child is killed (with its process group, on unix),
    /// and the next request starts it again, as when it exits. Set it shorter than the
    /// time limit to find such a child before the request whose write stalled ends at its
    /// own limit ([`UpstreamError::Timeout`]). Zero is refused when connecting
    /// ([`UpstreamError::Unavailable`]): a child would be killed on any write that has to
    /// wait, however healthy; so is a zero [`StdioOptions::timeout`], which it is unless
    /// set.
    pub fn write_stall_timeout(mut self, stall: Duration) -> StdioOptions {
        self.write_stall = Some(stall);
        self
    }

    /// How long the child may stay silent on a request, and how long a write to its stdin
    /// may make no progress; a zero limit refused.
    pub(crate) fn limits(&self) -> Result<(Duration, Duration), UpstreamError> {
        let patience = self.timeout.unwrap_or(super::DEFAULT_UPSTREAM_TIMEOUT);
        if patience.is_zero() {
            return Err(zero(
                "StdioOptions::timeout",
                "every request would be given up at once",
            ));
        }
        let stall = self.write_stall.unwrap_or(patience);
        if stall.is_zero() {
            return Err(zero(
                "StdioOptions::write_stall_timeout",
                "the child would be killed on any write to its stdin that has to wait",
            ));
        }
        Ok((patience, stall))
    }
}

/// The error of an option set to zero, which would make the upstream useless (`why`).
fn zero(option: &str, why: &str) -> UpstreamError {
    UpstreamError::Unavailable(format!("{option} is zero, which is refused: {why}"))
}

/// Settings of an HTTP upstream, for [`Upstream::http_with`](super::Upstream::http_with).
///
/// ```no_run
/// # use mcp_runtime::proxy::{HttpOptions, Upstream};
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let ca = std::fs::read("/etc/ssl/internal-ca.pem")?;
/// let tickets = Upstream::http_with(
///     "https://tickets.internal/mcp",
///     HttpOptions::new()
///         .header("authorization", "Bearer s3cr3t")
///         .root_certificates_pem(&ca)?,
/// )
/// .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) roots: Vec<CertificateDer<'static>>,
    pub(crate) timeout: Option<Duration>,
}

impl HttpOptions {
    /// No extra headers; the public certificate authorities (Mozilla's, built in).
    pub fn new() -> HttpOptions {
        HttpOptions::default()
    }

    /// A header every request to the upstream carries (checked when connecting).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> HttpOptions {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// How long the upstream may stay silent on a request (no answer, no progress, not
    /// even the response's head) before the request is a tool error: 60 s by default
    /// ([`DEFAULT_UPSTREAM_TIMEOUT`](super::DEFAULT_UPSTREAM_TIMEOUT)). Zero is refused
    /// when connecting ([`UpstreamError::Unavailable`]).
    pub fn timeout(mut self, silence: Duration) -> HttpOptions {
        self.timeout = Some(silence);
        self
    }

    /// How long the upstream may stay silent on a request; zero refused.
    pub(crate) fn patience(&self) -> Result<Duration, UpstreamError> {
        let patience = self.timeout.unwrap_or(super::DEFAULT_UPSTREAM_TIMEOUT);
        if patience.is_zero() {
            return Err(zero(
                "HttpOptions::timeout",
                "every request would be given up at once",
            ));
        }
        Ok(patience)
    }

    /// Also trusts the certificate authorities in `pem` (one or more `CERTIFICATE`
    /// blocks), for an upstream whose certificate a private authority signed.
    pub fn root_certificates_pem(mut self, pem: &[u8]) -> Result<HttpOptions, UpstreamError> {
        let before = self.roots.len();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| {
                UpstreamError::Unavailable(format!("a root certificate that is not PEM: {e}"))
            })?;
            self.roots.push(cert);
        }
        if self.roots.len() == before {
            return Err(UpstreamError::Unavailable(
                "no CERTIFICATE in the root certificates given".into(),
            ));
        }
        Ok(self)
    }

    /// The connector: `http://` as is, `https://` checked against the public roots and
    /// the ones given.
    pub(crate) fn connector(
        &self,
    ) -> Result<
        hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
        UpstreamError,
    > {
        let mut roots =
            rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for cert in &self.roots {
            roots.add(cert.clone()).map_err(|e| {
                UpstreamError::Unavailable(format!("a root certificate rustls refuses: {e}"))
            })?;
        }
        let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| UpstreamError::Unavailable(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
        Ok(hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .build())
    }

    /// The headers, checked.
    pub(crate) fn header_map(&self) -> Result<hyper::HeaderMap, UpstreamError> {
        let mut map = hyper::HeaderMap::new();
        for (k, v) in &self.headers {
            let name = hyper::header::HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| UpstreamError::Unavailable(format!("bad header name `{k}`")))?;
            let value = hyper::header::HeaderValue::from_str(v)
                .map_err(|_| UpstreamError::Unavailable(format!("bad value for header `{k}`")))?;
            map.append(name, value);
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Upstream;
    use super::*;

    /// A zero time limit of an HTTP upstream is refused when connecting, as a stdio
    /// upstream's is (`tests/proxy_stdio.rs`). Before, it was taken, and every request
    /// given up at once, the handshake's first.
    #[tokio::test]
    async fn a_zero_http_time_limit_is_refused() {
        let (_link, addr) = super::super::fake::http(|_| None).await;
        let options = HttpOptions::new().timeout(Duration::ZERO);
        let r = Upstream::http_with(&format!("http://{addr}/mcp"), options).await;
        assert!(
            matches!(&r, Err(UpstreamError::Unavailable(why)) if why.starts_with("HttpOptions::timeout is zero")),
            "{r:?}"
        );
    }
}
