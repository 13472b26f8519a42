//! What an upstream said that is not what it should be, told to the operator and never to
//! clients: an excerpt of an HTTP error page, or of an answer that is not JSON-RPC, may
//! hold the upstream's internals (a stack trace, host names), so it goes to the log, and
//! the error a client reads names only what went wrong (the HTTP status, say). Told at
//! warn, naming the upstream, at most once in [`TELL_EVERY`] (the others at debug,
//! counted in the next warning), so an upstream that keeps failing does not flood the log.
//! Once a call reached it through a mount, the warning names that mount too
//! (`mount=outer/inner`; no `mount` field before). One upstream mounted under two names
//! (the same `Upstream`'s items mounted twice) is named by the first mount a call came
//! through, for as long as it runs.

use std::fmt;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use tokio::time::Instant;

/// At most one warning in this long, per [`Told`].
const TELL_EVERY: Duration = Duration::from_secs(10);

/// Where what one upstream said wrong is told (one per HTTP upstream, one per run of a
/// stdio child).
#[derive(Debug)]
pub(crate) struct Told {
    /// The upstream, as the log names it: a stdio child's program, an HTTP upstream's URL
    /// as [`shown_url`] shows it (no credentials, query or key).
    name: String,
    /// Where it is mounted (its namespaces, outermost first, `/` between them), as the
    /// first call that reached it through a mount said (kept when it is mounted under
    /// another name too).
    mount: OnceLock<String>,
    /// When one was last told at warn, and how many were told at debug since.
    last: Mutex<(Option<Instant>, u64)>,
}

impl Told {
    pub(crate) fn new(name: impl Into<String>) -> Told {
        Told {
            name: name.into(),
            mount: OnceLock::new(),
            last: Mutex::new((None, 0)),
        }
    }

    /// Says where the upstream is mounted: `mounts`, innermost first, as a call sees
    /// them. The first mount said is kept: an upstream mounted under two names is named
    /// in the log by the one its first call came through.
    pub(crate) fn mounted(&self, mounts: Option<&[String]>) {
        if self.mount.get().is_some() {
            return;
        }
        if let Some(mounts) = mounts.filter(|m| !m.is_empty()) {
            let outer_first: Vec<&str> = mounts.iter().rev().map(String::as_str).collect();
            let _ = self.mount.set(outer_first.join("/"));
        }
    }

    /// Where the upstream is mounted, as the log names it, if a call said.
    pub(crate) fn mount(&self) -> Option<&str> {
        self.mount.get().map(String::as_str)
    }

    /// Says where the upstream is mounted as another [`Told`]'s [`Told::mount`] did (the
    /// last run of a stdio child's, for the run started after it), unless one was said.
    pub(crate) fn mounted_as(&self, mount: Option<String>) {
        if let Some(mount) = mount {
            let _ = self.mount.set(mount);
        }
    }

    /// The upstream, as the log names it.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Tells `what` at warn, naming the upstream, unless one was told at warn less than
    /// [`TELL_EVERY`] ago (then at debug, counted in the next warning).
    /// The `mount` field is left out while no call said one (an upstream called
    /// through [`Upstream::request`](crate::proxy::Upstream::request), say).
    pub(crate) fn tell(&self, what: impl fmt::Display) {
        let name = &self.name;
        let turn = self.turn(Instant::now());
        let what = match turn {
            Some(n) if n > 0 => format!("{what}; {n} more like it were told at debug only"),
            _ => what.to_string(),
        };
        match (turn.is_some(), self.mount.get()) {
            (false, None) => tracing::debug!(upstream = %name, "{what}"),
            (false, Some(mount)) => tracing::debug!(upstream = %name, mount = %mount, "{what}"),
            (true, None) => tracing::warn!(upstream = %name, "{what}"),
            (true, Some(mount)) => tracing::warn!(upstream = %name, mount = %mount, "{what}"),
        }
    }

    /// Whether one told at `now` is told at warn: `Some` with how many were told at debug
    /// since the last warning, or `None` (at debug).
    fn turn(&self, now: Instant) -> Option<u64> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match last.0 {
            Some(at) if now < at + TELL_EVERY => {
                last.1 += 1;
                None
            }
            _ => {
                let n = last.1;
                *last = (Some(now), 0);
                Some(n)
            }
        }
    }
}

/// `url` as a log may show it: its scheme, host, port and path, without the credentials
/// its authority may carry or its query, and with each path segment that may be a secret
/// ([`may_be_secret`]: an API key, as in `https://host/<key>/mcp`) shown as `…`.
pub(crate) fn shown_url(url: &hyper::Uri) -> String {
    let scheme = url.scheme_str().unwrap_or("http");
    let host = url.host().unwrap_or_default();
    let port = url.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
    let path: Vec<&str> = url
        .path()
        .split('/')
        .map(|s| if may_be_secret(s) { "…" } else { s })
        .collect();
    format!("{scheme}://{host}{port}{}", path.join("/"))
}

/// Whether a URL's path segment may be a secret, counted as written (a percent-encoded
/// byte is three characters): one longer than 20 characters, or of 16 or more that mixes
/// letters and digits or is at least half digits. Keys and tokens are so (hex, Base64,
/// UUIDs, a key of digits alone); a path's own names (`mcp`, `v1`, `servers`,
/// `tickets-api`) and dates (`2024-01-01`) are not.
fn may_be_secret(segment: &str) -> bool {
    let n = segment.chars().count();
    let digits = segment.chars().filter(char::is_ascii_digit).count();
    let mixed = digits > 0 && segment.chars().any(char::is_alphabetic);
    n > 20 || (n >= 16 && (mixed || digits * 2 >= n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_warning_in_ten_seconds_then_the_count_of_the_others() {
        let told = Told::new("up");
        let t = Instant::now();
        assert_eq!(told.turn(t), Some(0));
        assert_eq!(told.turn(t + Duration::from_secs(1)), None);
        assert_eq!(told.turn(t + Duration::from_secs(9)), None);
        assert_eq!(told.turn(t + TELL_EVERY), Some(2));
        assert_eq!(told.turn(t + TELL_EVERY * 3), Some(0));
    }

    #[test]
    fn the_first_mount_said_is_kept_outermost_first() {
        let told = Told::new("up");
        told.mounted(None);
        told.mounted(Some(&[]));
        assert_eq!(told.mount.get(), None);
        told.mounted(Some(&["inner".to_owned(), "outer".to_owned()]));
        told.mounted(Some(&["other".to_owned()]));
        assert_eq!(told.mount.get().map(String::as_str), Some("outer/inner"));
    }

    #[test]
    fn a_url_is_shown_without_its_credentials_or_query() {
        let shown = |u: &str| shown_url(&u.parse().unwrap());
        assert_eq!(
            shown("https://me:s3cr3t@tickets.internal:8443/mcp?token=x"),
            "https://tickets.internal:8443/mcp"
        );
        assert_eq!(shown("http://127.0.0.1/mcp"), "http://127.0.0.1/mcp");
        assert_eq!(shown("http://[::1]:9/"), "http://[::1]:9/");
    }

    #[test]
    fn a_path_segment_that_may_be_a_key_is_shown_as_an_ellipsis() {
        let shown = |u: &str| shown_url(&u.parse().unwrap());
        assert_eq!(
            shown("https://mcp.example.com/2c9f0b6e4d1a8f3e7b5c9d0a1e2f3b4c/mcp?x=1"),
            "https://mcp.example.com/…/mcp"
        );
        // Over 20 characters, whatever they are; 16 to 20 when letters and digits mix.
        assert_eq!(
            shown("http://h/v1/servers/a-very-long-segment-name/sse"),
            "http://h/v1/servers/…/sse"
        );
        assert_eq!(shown("http://h/u/ab12cd34ef56gh78/mcp"), "http://h/u/…/mcp");
        assert_eq!(
            shown("http://h/550e8400-e29b-41d4-a716-446655440000"),
            "http://h/…"
        );
        // A path's own names stay.
        assert_eq!(
            shown("http://h/api/v2/tickets-service/mcp"),
            "http://h/api/v2/tickets-service/mcp"
        );
        assert_eq!(
            shown("http://h/abcdefghijklmnopqrst/"),
            "http://h/abcdefghijklmnopqrst/"
        );
        assert_eq!(shown("http://h/abc123"), "http://h/abc123");
        // 16 to 20 that are mostly digits: a numeric key, an account's number.
        assert_eq!(shown("http://h/k/1234567890123456/mcp"), "http://h/k/…/mcp");
        assert_eq!(shown("http://h/k/98765432109876543210"), "http://h/k/…");
        assert_eq!(shown("http://h/k/4111-1111-1111-1111"), "http://h/k/…");
        // Versions and dates stay, and digits fewer than 16.
        assert_eq!(
            shown("http://h/v1/2024-01-01/mcp"),
            "http://h/v1/2024-01-01/mcp"
        );
        assert_eq!(
            shown("http://h/123456789012345/"),
            "http://h/123456789012345/"
        );
    }
}
