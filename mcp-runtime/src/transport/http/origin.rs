//! DNS rebinding protection: the `Host` and `Origin` checks.

use super::HttpConfig;
use axum::extract::Request;
use axum::http::header;

/// DNS rebinding protection: `Host` must be allowed (loopback by default), and `Origin`,
/// when present, must be allowed too. Failures are 403.
pub(super) fn check_host_origin(cfg: &HttpConfig, req: &Request) -> Result<(), &'static str> {
    if let Some(allowed) = &cfg.allowed_hosts {
        let hosts = req.headers().get_all(header::HOST);
        let mut iter = hosts.iter();
        let host = match (req.uri().authority(), iter.next(), iter.next()) {
            (Some(a), _, _) => a.as_str(),
            (None, Some(h), None) => match h.to_str() {
                Ok(h) => h,
                Err(_) => return Err("malformed Host header"),
            },
            (None, Some(_), Some(_)) => return Err("repeated Host header"),
            (None, None, _) => return Err("missing Host header"),
        };
        let Some(name) = host_of(host) else {
            return Err("malformed Host header");
        };
        if !is_loopback_name(name)
            && !allowed
                .iter()
                .any(|a| a.eq_ignore_ascii_case(host) || a.eq_ignore_ascii_case(name))
        {
            return Err("Host is not allowed");
        }
    }
    let origins = req.headers().get_all(header::ORIGIN);
    let mut iter = origins.iter();
    match (iter.next(), iter.next()) {
        (None, _) => Ok(()),
        (Some(_), Some(_)) => Err("repeated Origin header"),
        (Some(o), None) => {
            let Ok(o) = o.to_str() else {
                return Err("malformed Origin");
            };
            // `scheme://host[:port]`, nothing after: an Origin never carries a path, not
            // even `/` (the configured ones are kept without one).
            let o = o.trim().to_ascii_lowercase();
            let Some(rest) = o
                .strip_prefix("http://")
                .or_else(|| o.strip_prefix("https://"))
            else {
                return Err("Origin is not allowed");
            };
            let Some(name) = host_of(rest) else {
                return Err("malformed Origin");
            };
            if is_loopback_name(name) || cfg.allowed_origins.contains(&o) {
                Ok(())
            } else {
                Err("Origin is not allowed")
            }
        }
    }
}

/// `host[:port]` → `host` (IPv6 keeps its brackets), or `None` when the text is not a
/// plain authority: userinfo (`a@b`), a path, a bad port or any other stray character is
/// refused, so what is checked is what a client would connect to.
fn host_of(authority: &str) -> Option<&str> {
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let end = rest.find(']')?;
            let inner = &rest[..end];
            if inner.is_empty()
                || !inner
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
            {
                return None;
            }
            let after = &rest[end + 1..];
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':')?),
            };
            (&authority[..end + 2], port)
        }
        None => match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        },
    };
    let host_ok = !host.is_empty()
        && (host.starts_with('[')
            || host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_')));
    let port_ok =
        port.is_none_or(|p| p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok());
    (host_ok && port_ok).then_some(host)
}

fn is_loopback_name(name: &str) -> bool {
    ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .any(|l| l.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        assert_eq!(host_of("127.0.0.1:3000"), Some("127.0.0.1"));
        assert_eq!(host_of("localhost:65535"), Some("localhost"));
        assert_eq!(host_of("[::1]:80"), Some("[::1]"));
        assert_eq!(host_of("example.com"), Some("example.com"));
        assert!(is_loopback_name(host_of("localhost:1").unwrap()));
        assert!(!is_loopback_name(host_of("localhost.evil.com").unwrap()));
        for bad in [
            "127.0.0.1:3000@other.example",
            "127.0.0.1@other.example",
            "localhost:80:81",
            "localhost:",
            "localhost:99999x",
            "localhost:99999",
            "localhost:65536",
            "localhost:+80",
            "localhost/",
            "local host",
            "[::1",
            "[::1]x",
            "[zz]",
            "",
        ] {
            assert_eq!(host_of(bad), None, "{bad}");
        }
    }
}
