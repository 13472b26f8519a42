//! Why an HTTP upstream could not be reached, or its answer read, as a client may read it:
//! a short fixed reason, classified from the error's kind (a refused connection, a
//! timeout, TLS, what TLS refused in the certificate), never from its text, which may
//! name internal hosts, addresses or a certificate's names. The whole error goes to the
//! log ([`Told`]), naming the upstream.

use super::{Told, UpstreamError, gone};
use std::error::Error as StdError;

/// A request to the upstream that failed with `e` before its answer came: the error a
/// client may read (`cannot connect`, when no connection was made, or `the request
/// failed`, with the reason), the whole of `e` told to `told`.
pub(crate) fn unsent(e: &hyper_util::client::legacy::Error, told: &Told) -> UpstreamError {
    let stage = if e.is_connect() {
        "cannot connect"
    } else {
        "the request failed"
    };
    unreached(stage, e, told)
}

/// A failure `e` at `stage` (`"cannot connect"`, say): the error a client may read,
/// `stage` with the reason [`reason`] finds, the whole of `e` told to `told`.
pub(crate) fn unreached(stage: &str, e: &(dyn StdError + 'static), told: &Told) -> UpstreamError {
    let shown = match reason(e) {
        Some(why) => format!("{stage} ({why})"),
        None => stage.to_owned(),
    };
    told.tell(format_args!(
        "the upstream server is unavailable: {shown}: {}",
        crate::error::with_sources(e)
    ));
    gone(shown)
}

/// The reason for `e`, from the kinds of the errors in its chain: TLS first (what it
/// refused), then the kind of an I/O or HTTP error; `None` when none is known.
fn reason(e: &(dyn StdError + 'static)) -> Option<&'static str> {
    let chain = chain(e);
    if let Some(tls) = chain.iter().find_map(|e| e.downcast_ref::<rustls::Error>()) {
        return Some(tls_reason(tls));
    }
    chain.iter().find_map(|e| {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return io_reason(io.kind());
        }
        if let Some(h) = e.downcast_ref::<hyper::Error>() {
            return hyper_reason(h);
        }
        e.downcast_ref::<http_body_util::LengthLimitError>()
            .map(|_| "larger than the limit")
    })
}

/// `e` and its sources; an I/O error's own inner error too (its `source` skips it: the
/// TLS error of a handshake is there).
fn chain<'a>(e: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    let mut out = Vec::new();
    let mut next = Some(e);
    while let Some(e) = next.take() {
        if out.len() >= 32 {
            break;
        }
        out.push(e);
        let inner = e
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .map(|i| i as &(dyn StdError + 'static));
        next = inner.or_else(|| e.source());
    }
    out
}

fn tls_reason(e: &rustls::Error) -> &'static str {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(c) => match c {
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                "TLS failed: its certificate is not valid for its name"
            }
            C::UnknownIssuer | C::BadSignature => "TLS failed: its certificate is not trusted",
            C::Expired | C::ExpiredContext { .. } => "TLS failed: its certificate has expired",
            C::NotValidYet | C::NotValidYetContext { .. } => {
                "TLS failed: its certificate is not valid yet"
            }
            C::Revoked => "TLS failed: its certificate is revoked",
            _ => "TLS failed: its certificate was refused",
        },
        _ => "TLS failed",
    }
}

fn io_reason(kind: std::io::ErrorKind) -> Option<&'static str> {
    use std::io::ErrorKind as K;
    Some(match kind {
        K::ConnectionRefused => "connection refused",
        K::TimedOut => "timed out",
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
            "the connection was closed"
        }
        K::HostUnreachable | K::NetworkUnreachable => "unreachable",
        K::AddrNotAvailable => "no address to reach it at",
        _ => return None,
    })
}

fn hyper_reason(e: &hyper::Error) -> Option<&'static str> {
    if e.is_timeout() {
        Some("timed out")
    } else if e.is_incomplete_message() || e.is_closed() || e.is_canceled() {
        Some("the connection was closed")
    } else if e.is_parse() {
        Some("its answer is not HTTP")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_comes_from_the_kinds_in_the_chain_not_the_text() {
        let io = |kind, text: &str| std::io::Error::new(kind, text.to_owned());
        let refused = io(std::io::ErrorKind::ConnectionRefused, "10.0.0.7:5432");
        assert_eq!(reason(&refused), Some("connection refused"));
        // A TLS error inside an I/O error (as a handshake's is), however deep.
        let named = rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName);
        let wrapped = std::io::Error::new(std::io::ErrorKind::InvalidData, named);
        let boxed: Box<dyn StdError + Send + Sync> = Box::new(wrapped);
        let outer = std::io::Error::other(boxed);
        assert_eq!(
            reason(&outer),
            Some("TLS failed: its certificate is not valid for its name")
        );
        let corrupt = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::General("db-7.internal".into()),
        );
        assert_eq!(reason(&corrupt), Some("TLS failed"));
        // Nothing known: no reason (the stage alone is shown).
        assert_eq!(reason(&io(std::io::ErrorKind::Other, "x")), None);
        let told = Told::new("up");
        let e = unreached("cannot connect", &refused, &told);
        assert_eq!(e.to_string(), "cannot connect (connection refused)");
    }
}
