//! Logging setup: `tracing` to stderr, filtered by `RUST_LOG`.

use std::fmt::{self, Write as _};
use tracing::field::{Field, Visit};
use tracing_subscriber::field::{MakeVisitor, VisitFmt, VisitOutput};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::{DefaultVisitor, Writer};

/// Installs a `tracing` subscriber writing to **stderr** (stdout belongs to the stdio
/// transport), filtered by `RUST_LOG` (default `info`). Does nothing if a global subscriber
/// is already set, so calling it more than once is harmless.
///
/// `RUST_LOG` is a comma-separated list of `level` and `target=level` directives
/// (`warn,mcp_runtime=debug`), read as [`Targets`]. A value that does not parse is reported
/// on stderr and `info` used. Filters on spans or fields (`[span{field=x}]`) need a
/// subscriber of your own, such as `tracing_subscriber::EnvFilter`, installed instead.
pub fn init() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = filter(std::env::var("RUST_LOG").ok().as_deref());
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .fmt_fields(Fields);
    let _ = tracing_subscriber::registry()
        .with(fmt)
        .with(filter)
        .try_init();
}

/// Formats fields exactly as `tracing_subscriber`'s `DefaultFields` does (`name=value`,
/// space-separated), with less work for the fields every request span has: a name and a
/// plain string or one `Debug`/`Display` value are written straight out, where the
/// default goes through three formatting arguments per field. The request span's fields
/// are formatted when the span is made, at the shipped `info` filter on every request.
/// Anything else (`message`, `r#` names, errors, `log.` fields, strings that need
/// escaping) is handed to `DefaultVisitor`.
struct Fields;

impl<'a> MakeVisitor<Writer<'a>> for Fields {
    type Visitor = FieldsVisitor<'a>;

    fn make_visitor(&self, writer: Writer<'a>) -> FieldsVisitor<'a> {
        FieldsVisitor {
            writer,
            staged: [0; STAGE],
            len: 0,
            empty: true,
            result: Ok(()),
        }
    }
}

/// Room for the fields of one span or event before they go to the writer in one piece:
/// the writer is the span's `String`, which grows once then instead of at every few bytes.
const STAGE: usize = 256;

struct FieldsVisitor<'a> {
    writer: Writer<'a>,
    /// What is written but not yet passed on to `writer`: whole `str`s, so UTF-8.
    staged: [u8; STAGE],
    len: usize,
    /// Nothing written yet: the next field needs no separating space.
    empty: bool,
    result: fmt::Result,
}

impl FieldsVisitor<'_> {
    /// Whether `name` takes the short path: the names `DefaultVisitor` treats as such.
    fn plain(name: &str) -> bool {
        name != "message" && !name.starts_with("r#") && !name.starts_with("log.")
    }

    /// Passes what is staged on to the writer.
    fn flush(&mut self) -> fmt::Result {
        let staged = &self.staged[..std::mem::take(&mut self.len)];
        match std::str::from_utf8(staged) {
            Ok("") => Ok(()),
            Ok(text) => self.writer.write_str(text),
            Err(_) => Err(fmt::Error),
        }
    }

    /// Writes `name=` after a separating space if one is due.
    fn key(&mut self, name: &str) -> fmt::Result {
        if !std::mem::take(&mut self.empty) {
            self.write_str(" ")?;
        }
        self.write_str(name)?;
        self.write_str("=")
    }

    /// `DefaultVisitor`'s rendering of one field, in `record`.
    fn fallback(&mut self, name: &str, record: impl FnOnce(&mut DefaultVisitor<'_>)) {
        if self.result.is_err() {
            return;
        }
        if let Err(e) = self.flush() {
            self.result = Err(e);
            return;
        }
        if !name.starts_with("log.") {
            // It writes every other field, so a space is due after it.
            let mut inner = DefaultVisitor::new(self.writer.by_ref(), self.empty);
            record(&mut inner);
            self.result = inner.finish();
            self.empty = false;
            return;
        }
        // `log.` fields it skips when `tracing-subscriber`'s `tracing-log` feature is on
        // (it can be turned on from anywhere in the build): see whether it wrote. Such
        // a field is written without styling, which this writer (no ANSI) has none of.
        let mut tracked = Tracked {
            out: &mut self.writer,
            wrote: false,
        };
        let mut inner = DefaultVisitor::new(Writer::new(&mut tracked), self.empty);
        record(&mut inner);
        self.result = inner.finish();
        self.empty &= !tracked.wrote;
    }
}

impl fmt::Write for FieldsVisitor<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.len + s.len() > STAGE {
            self.flush()?;
            if s.len() > STAGE {
                return self.writer.write_str(s);
            }
        }
        let end = self.len + s.len();
        self.staged[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// A writer that notes whether anything went through it.
struct Tracked<'w, 'a> {
    out: &'w mut Writer<'a>,
    wrote: bool,
}

impl fmt::Write for Tracked<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.wrote |= !s.is_empty();
        self.out.write_str(s)
    }
}

impl Visit for FieldsVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        let name = field.name();
        // `Debug` of a `str` is the text in quotes when no character needs escaping.
        let bare = value
            .bytes()
            .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\');
        if !Self::plain(name) || !bare {
            return self.fallback(name, |v| v.record_str(field, value));
        }
        if self.result.is_ok() {
            self.result = self.key(name).and_then(|()| {
                self.write_str("\"")?;
                self.write_str(value)?;
                self.write_str("\"")
            });
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.fallback(field.name(), |v| v.record_error(field, value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let name = field.name();
        if !Self::plain(name) {
            return self.fallback(name, |v| v.record_debug(field, value));
        }
        if self.result.is_ok() {
            self.result = self.key(name).and_then(|()| write!(self, "{value:?}"));
        }
    }
}

impl VisitOutput<fmt::Result> for FieldsVisitor<'_> {
    fn finish(mut self) -> fmt::Result {
        let flushed = self.flush();
        self.result.and(flushed)
    }
}

impl VisitFmt for FieldsVisitor<'_> {
    fn writer(&mut self) -> &mut dyn fmt::Write {
        self
    }
}

/// The filter `RUST_LOG` asks for.
fn filter(var: Option<&str>) -> Targets {
    let info = || Targets::new().with_default(LevelFilter::INFO);
    match var.map(str::trim) {
        None | Some("") => info(),
        Some(directives) => directives.parse().unwrap_or_else(|e| {
            eprintln!("RUST_LOG={directives:?} is not understood ({e}); logging at info");
            info()
        }),
    }
}

/// A warning logged at most once per period, with how many were held back meanwhile
/// (a fault repeated per request or per message would flood the log).
pub(crate) struct Throttle {
    /// Milliseconds since the Unix epoch of the last warning let through.
    last: std::sync::atomic::AtomicU64,
    held: std::sync::atomic::AtomicU64,
    every_ms: u64,
}

impl Throttle {
    pub(crate) const fn every(period: std::time::Duration) -> Throttle {
        Throttle {
            last: std::sync::atomic::AtomicU64::new(0),
            held: std::sync::atomic::AtomicU64::new(0),
            every_ms: period.as_millis() as u64,
        }
    }

    /// `Some(held back since the last one)` when a warning may be logged now; `None` (and
    /// one more held back) otherwise.
    pub(crate) fn admit(&self) -> Option<u64> {
        use std::sync::atomic::Ordering::Relaxed;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let last = self.last.load(Relaxed);
        let due = now.saturating_sub(last) >= self.every_ms || last == 0;
        if due
            && self
                .last
                .compare_exchange(last, now, Relaxed, Relaxed)
                .is_ok()
        {
            return Some(self.held.swap(0, Relaxed));
        }
        self.held.fetch_add(1, Relaxed);
        None
    }
}

/// A limit reached (requests, request bytes, sessions, subscriptions, tasks): warned at
/// most every ten seconds, all limits together, with how many were held back meanwhile;
/// the others at debug. A client past a cap would otherwise write a line per request.
pub(crate) fn cap_reached(message: &'static str) {
    static WARNINGS: Throttle = Throttle::every(std::time::Duration::from_secs(10));
    match WARNINGS.admit() {
        Some(held) => tracing::warn!(suppressed = held, "{message}"),
        None => tracing::debug!("{message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing::Level;
    use tracing_subscriber::fmt::format::{DefaultFields, FormatFields};
    use tracing_subscriber::layer::SubscriberExt;

    /// An error with a source, for `record_error`.
    #[derive(Debug)]
    struct Outer(std::io::Error);

    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("outer failed")
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    /// Spans and events with every kind of field, as the log lines `fields` makes of them.
    fn lines<N>(fields: N) -> String
    where
        N: for<'w> FormatFields<'w> + Send + Sync + 'static,
    {
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&out);
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(move || Sink(Arc::clone(&sink)))
            .with_ansi(false)
            .without_time()
            .fmt_fields(fields);
        let subscriber = tracing_subscriber::registry()
            .with(layer)
            .with(LevelFilter::TRACE);
        tracing::subscriber::with_default(subscriber, || {
            let method = std::borrow::Cow::Borrowed("tools/call");
            let span = tracing::info_span!(
                "mcp.request",
                method = %method,
                id = %7,
                name = Some("add"),
                subject = tracing::field::Empty,
                trace_id = tracing::field::Empty,
            );
            span.record("subject", "alice");
            span.record("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736");
            let _entered = span.enter();
            tracing::info!("plain message");
            tracing::info!(
                quoted = "say \"hi\"",
                backslash = "a\\b",
                newline = "a\nb",
                tab = "a\tb",
                unicode = "héllo",
                escape = "\u{1b}[31mred",
                empty = "",
                apostrophe = "it's",
                "with {} message",
                "args"
            );
            tracing::info!(
                n = -3_i64,
                u = 4_u64,
                f = 1.5_f64,
                b = true,
                big = 1_u128 << 100,
                dbg = ?vec!["a", "b"],
                shown = %"x y",
                r#type = "raw name",
            );
            let err = Outer(std::io::Error::other("disk full"));
            tracing::warn!(error = &err as &(dyn std::error::Error + 'static), "failed");
            let alone = std::io::Error::other("alone");
            tracing::warn!(error = &alone as &(dyn std::error::Error + 'static));
            tracing::info!(log.target = "x", after = "y");
            // Longer than what is staged: alone, and after fields that are staged.
            let long = "x".repeat(300);
            let longer = "y".repeat(200);
            tracing::info!(long = long.as_str(), a = 1, b = ?longer, c = longer.as_str(), d = %longer);
            tracing::info!(message = "\u{1b}[2Jclear", "later" = 1);
            let inner = tracing::debug_span!("inner", r#loop = 2, text = "a b", list = ?[1, 2]);
            inner.in_scope(|| tracing::debug!(done = true));
        });
        let bytes = out.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn fields_read_as_the_default_formatter_writes_them() {
        let ours = lines(Fields);
        let default = lines(DefaultFields::new());
        assert_eq!(ours, default);
        // The comparison covers what it should: every line was written, spans included.
        assert_eq!(ours.lines().count(), 9, "{ours}");
        for part in [
            r#"mcp.request{method=tools/call id=7 name="add" subject="alice" trace_id="4bf92f3577b34da6a3ce929d0e0e4736"}"#,
            r#"quoted="say \"hi\"""#,
            "error.sources=[disk full]",
            "inner{loop=2 text=\"a b\" list=[1, 2]}",
            "type=\"raw name\"",
        ] {
            assert!(ours.contains(part), "{part} not in:\n{ours}");
        }
    }

    #[test]
    fn rust_log_is_read_as_targets() {
        let f = filter(None);
        assert!(f.would_enable("anything", &Level::INFO));
        assert!(!f.would_enable("anything", &Level::DEBUG));
        let f = filter(Some("warn,mcp_runtime=debug"));
        assert!(f.would_enable("mcp_runtime::server", &Level::DEBUG));
        assert!(!f.would_enable("hyper", &Level::INFO));
        assert!(f.would_enable("hyper", &Level::WARN));
        let f = filter(Some("mcp_runtime=[span]"));
        assert!(
            f.would_enable("x", &Level::INFO),
            "a bad value falls back to info"
        );
    }

    #[test]
    fn a_throttle_lets_one_through_per_period_and_counts_the_rest() {
        let t = super::Throttle::every(std::time::Duration::from_secs(3600));
        assert_eq!(t.admit(), Some(0));
        assert_eq!(t.admit(), None);
        assert_eq!(t.admit(), None);
        let open = super::Throttle::every(std::time::Duration::ZERO);
        assert_eq!(open.admit(), Some(0));
        assert_eq!(open.admit(), Some(0));
    }
}
