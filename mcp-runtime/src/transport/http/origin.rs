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
        let name = host_name(host);
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
            let o = o.trim().trim_end_matches('/').to_ascii_lowercase();
            let Some(rest) = o
                .strip_prefix("http://")
                .or_else(|| o.strip_prefix("https://"))
            else {
                return Err("Origin is not allowed");
            };
            if rest.contains(['/', '@', '?', '#']) {
                return Err("malformed Origin");
            }
            if is_loopback_name(host_name(rest)) || cfg.allowed_origins.contains(&o) {
                Ok(())
            } else {
                Err("Origin is not allowed")
            }
        }
    }
}

/// `host[:port]` → `host` (keeps IPv6 brackets).
fn host_name(authority: &str) -> &str {
    if let Some(end) = authority.find(']') {
        return &authority[..=end];
    }
    authority.split(':').next().unwrap_or(authority)
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
        assert_eq!(host_name("127.0.0.1:3000"), "127.0.0.1");
        assert_eq!(host_name("[::1]:80"), "[::1]");
        assert!(is_loopback_name(host_name("localhost:1")));
        assert!(!is_loopback_name(host_name("localhost.evil.com")));
    }
}
