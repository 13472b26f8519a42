//! Server settings, in groups: [`Limits`], [`Caching`], [`RequestState`], [`Tasks`],
//! [`Legacy`]. Each has the documented defaults and builder-style setters.
//!
//! ```
//! use mcp_runtime::Server;
//! use mcp_runtime::config::{Caching, Limits, RequestState};
//! use mcp_runtime::protocol::{CacheHints, CacheScope};
//! use std::time::Duration;
//!
//! let server = Server::builder("x", "1.0")
//!     .limits(Limits::default().request_timeout(Duration::from_secs(30)).page_size(50))
//!     .caching(Caching::default().lists(CacheHints::new(60_000, CacheScope::Public)))
//!     .request_state(RequestState::single_instance().max_rounds(4))
//!     .build()
//!     .unwrap();
//! # drop(server);
//! ```

use crate::mrtr::KeyRing;
use crate::protocol::{CacheHints, CacheScope};
use crate::store::{ReplayStore, TaskStore};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Default caching hints of `server/discover` and of list results: five minutes, public.
pub const DEFAULT_LIST_CACHE: CacheHints = CacheHints::new(300_000, CacheScope::Public);

/// Default caching hints of `resources/read`: stale at once, private.
pub const DEFAULT_READ_CACHE: CacheHints = CacheHints::new(0, CacheScope::Private);

/// Default number of items in one page of a list result.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// Default cap on open `subscriptions/listen` streams.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1024;

/// Default cap on the rounds of one multi round-trip request.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;

/// Default cap on requests in flight at once, per instance.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1024;

/// Default cap on the bytes of the requests in flight at once (their bodies or lines as
/// read), per instance: 16 MiB, four requests of the 4 MiB most. A request holds its
/// bytes, and the JSON parsed from them (up to some 20 times as much), until it is
/// answered; this bounds that memory where [`DEFAULT_MAX_IN_FLIGHT`] alone would let
/// 1024 requests of 4 MiB hold tens of GiB.
pub const DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT: usize = 16 * 1024 * 1024;

/// Default time a request may run before it is cancelled with `-32603`.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

pub use crate::mrtr::DEFAULT_STATE_TTL;

/// How much a request may take: run time, requests in flight, open streams, list page
/// size.
#[derive(Debug, Clone)]
pub struct Limits {
    pub(crate) request_timeout: Duration,
    pub(crate) max_subscriptions: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) max_request_bytes: usize,
    pub(crate) page_size: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT,
            page_size: DEFAULT_PAGE_SIZE,
        }
    }
}

impl Limits {
    /// How long a request may run before it is cancelled and answered with `-32603`
    /// (default [`DEFAULT_REQUEST_TIMEOUT`]; zero is refused by `build`).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }
    /// The most `subscriptions/listen` streams open at once (default
    /// [`DEFAULT_MAX_SUBSCRIPTIONS`]; at least 1); past it, a listen request is refused as
    /// busy (HTTP 503).
    pub fn max_subscriptions(mut self, n: usize) -> Self {
        self.max_subscriptions = n.max(1);
        self
    }
    /// The most requests in flight at once (default [`DEFAULT_MAX_IN_FLIGHT`]); past it,
    /// a request is refused as busy before its body is read (HTTP 503 with `Retry-After`;
    /// on stdio a `-32603` naming the limit). Listen streams are counted apart. A POST of a
    /// legacy session is let in past it (64 at a time) when it turns out to be an answer
    /// to a question of the server's or a notification (a cancellation): what a handler
    /// holding its slot waits for. Zero is refused by `build`.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n;
        self
    }
    /// The most bytes of requests in flight at once, as read: HTTP bodies, stdio lines
    /// (default [`DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT`]). Past it, a request is refused as
    /// busy (HTTP 503 with `Retry-After`, as soon as its declared length or the part of
    /// its body read so far says so; on stdio a `-32603`). One request larger than this
    /// is still served when no other request holds bytes. Zero is refused by `build`.
    pub fn max_request_bytes_in_flight(mut self, n: usize) -> Self {
        self.max_request_bytes = n;
        self
    }
    /// Items per page of list results (default [`DEFAULT_PAGE_SIZE`]; at least 1).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }
}

/// Caching hints (`ttlMs`, `cacheScope`) of the results that carry them. An item's own
/// hints (`#[tool(ttl_ms = ..)]`) can only shorten a list's TTL or make it private.
#[derive(Debug, Clone, Copy)]
pub struct Caching {
    pub(crate) lists: CacheHints,
    pub(crate) discover: CacheHints,
    pub(crate) reads: CacheHints,
}

impl Default for Caching {
    fn default() -> Self {
        Caching {
            lists: DEFAULT_LIST_CACHE,
            discover: DEFAULT_LIST_CACHE,
            reads: DEFAULT_READ_CACHE,
        }
    }
}

impl Caching {
    /// Hints of list results (default [`DEFAULT_LIST_CACHE`]).
    pub fn lists(mut self, hints: CacheHints) -> Self {
        self.lists = hints;
        self
    }
    /// Hints of `server/discover` (default [`DEFAULT_LIST_CACHE`]).
    pub fn discover(mut self, hints: CacheHints) -> Self {
        self.discover = hints;
        self
    }
    /// Hints of `resources/read` results (default [`DEFAULT_READ_CACHE`]); a resource's
    /// own hints take precedence.
    pub fn reads(mut self, hints: CacheHints) -> Self {
        self.reads = hints;
        self
    }
}

/// How `requestState` is sealed for multi round-trip requests: the keys, how long a state
/// stays valid, how many rounds a request may take.
///
/// The keys come from [`RequestState::keys`]; by default from `MCP_REQUEST_STATE_KEYS`
/// (see [`KeyRing::from_env`]), else a random key of this process, which the HTTP
/// transport refuses for a server that asks for input: with several instances, the next
/// round may land on another one. [`RequestState::single_instance`] declares that one
/// instance serves the server, so a per-process key is fine.
#[derive(Debug, Clone)]
pub struct RequestState {
    pub(crate) keys: Keys,
    pub(crate) ttl: Duration,
    pub(crate) leeway: Duration,
    pub(crate) max_rounds: u32,
    pub(crate) replay: Option<Replay>,
}

/// The replay store of single-use states.
#[derive(Clone)]
pub(crate) struct Replay(pub(crate) Arc<dyn ReplayStore>);

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Replay")
    }
}

/// Default time a `requestState` is still accepted past its expiry (clock skew between
/// instances).
pub const DEFAULT_STATE_LEEWAY: Duration = Duration::from_secs(60);

/// Where the keys come from.
#[derive(Debug, Clone)]
pub(crate) enum Keys {
    /// `MCP_REQUEST_STATE_KEYS`, else a per-process key: refused on HTTP unless one
    /// instance serves this server.
    FromEnv { single_instance: bool },
    /// These keys.
    Given(KeyRing),
}

impl Default for RequestState {
    fn default() -> Self {
        RequestState {
            keys: Keys::FromEnv {
                single_instance: false,
            },
            ttl: DEFAULT_STATE_TTL,
            leeway: DEFAULT_STATE_LEEWAY,
            max_rounds: DEFAULT_MAX_ROUNDS,
            replay: None,
        }
    }
}

impl RequestState {
    /// Seal with these keys (the first active, the others still accepted).
    pub fn keys(keys: KeyRing) -> Self {
        RequestState {
            keys: Keys::Given(keys),
            ..Self::default()
        }
    }
    /// Declares that one instance serves this server, so a random key of this process is
    /// fine when `MCP_REQUEST_STATE_KEYS` is not set (when it is, its keys are used).
    pub fn single_instance() -> Self {
        RequestState {
            keys: Keys::FromEnv {
                single_instance: true,
            },
            ..Self::default()
        }
    }
    /// How long a `requestState` stays valid (default [`DEFAULT_STATE_TTL`], 10 minutes;
    /// `build` refuses a zero `ttl` with a zero [`leeway`](Self::leeway)).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }
    /// How long past its expiry a `requestState` is still accepted, for clocks that
    /// disagree between instances (default [`DEFAULT_STATE_LEEWAY`]; expiry has millisecond
    /// precision).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }
    /// The most rounds one request may take (default [`DEFAULT_MAX_ROUNDS`]; at least 1).
    pub fn max_rounds(mut self, n: u32) -> Self {
        self.max_rounds = n.max(1);
        self
    }
    /// Makes every `requestState` single use: the first retry that carries it is served,
    /// any later one (a replay, or a second click on "pay") is refused like an invalid
    /// state (`-32602`). `store` remembers the redeemed states until they expire; a fleet
    /// shares one ([`RedisStore`][redis]), one instance can use
    /// [`MemoryReplayStore`](crate::store::MemoryReplayStore). A client whose retry was
    /// lost must then start the request over.
    ///
    /// ```
    /// use mcp_runtime::Server;
    /// use mcp_runtime::config::RequestState;
    /// use mcp_runtime::store::MemoryReplayStore;
    ///
    /// let server = Server::builder("payments", "1.0")
    ///     .request_state(RequestState::single_instance().single_use(MemoryReplayStore::new()))
    ///     .build()
    ///     .unwrap();
    /// # drop(server);
    /// ```
    ///
    #[cfg_attr(feature = "redis", doc = "[redis]: crate::store::redis::RedisStore")]
    #[cfg_attr(not(feature = "redis"), doc = "[redis]: crate#features")]
    pub fn single_use(mut self, store: impl ReplayStore) -> Self {
        self.replay = Some(Replay(Arc::new(store)));
        self
    }
}

/// Default time a task is kept after it is created, and may run: one hour.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);

/// Default polling interval suggested to clients (`pollIntervalMs`).
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Default cap on the tasks running on one instance at once.
pub const DEFAULT_MAX_RUNNING_TASKS: usize = 1024;

/// Default lease of a running task: how long it shows `working` after its instance
/// stopped renewing it (the instance renews it every quarter of this while it runs).
pub const DEFAULT_TASK_LEASE: Duration = Duration::from_secs(60);

/// How tools declared with `#[tool(task = "optional" | "required")]` run as tasks (the
/// `io.modelcontextprotocol/tasks` extension): where tasks are stored, how long they are
/// kept, how often clients should poll, how many may run at once.
///
/// Every instance serving one server must share the store; the default,
/// [`MemoryTaskStore`](crate::store::MemoryTaskStore), is in-process.
///
/// ```
/// use mcp_runtime::Server;
/// use mcp_runtime::config::Tasks;
/// use mcp_runtime::store::MemoryTaskStore;
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// let store = Arc::new(MemoryTaskStore::new()); // shared by both servers
/// let tasks = Tasks::default().store(Arc::clone(&store)).ttl(Duration::from_secs(600));
/// let a = Server::builder("jobs", "1.0").tasks(tasks.clone()).build().unwrap();
/// let b = Server::builder("jobs", "1.0").tasks(tasks).build().unwrap();
/// # drop((a, b));
/// ```
#[derive(Clone)]
pub struct Tasks {
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Option<Duration>,
    pub(crate) max_running: usize,
    pub(crate) lease: Duration,
    /// The store given, or (once a task tool needs it) the default: a cell shared by the
    /// clones of this value, so that servers given one `Tasks` share one store. Filled by
    /// the task engine only, so that a server without task tools does not link the
    /// default store.
    pub(crate) store: Arc<OnceLock<Arc<dyn TaskStore>>>,
}

impl Default for Tasks {
    fn default() -> Self {
        Tasks {
            ttl: DEFAULT_TASK_TTL,
            poll_interval: Some(DEFAULT_TASK_POLL_INTERVAL),
            max_running: DEFAULT_MAX_RUNNING_TASKS,
            lease: DEFAULT_TASK_LEASE,
            store: Arc::new(OnceLock::new()),
        }
    }
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("max_running", &self.max_running)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl Tasks {
    /// Where tasks are stored (default: a [`MemoryTaskStore`](crate::store::MemoryTaskStore),
    /// made when a task first needs it and shared by the servers given clones of this value).
    pub fn store(mut self, store: impl TaskStore) -> Self {
        let store: Arc<dyn TaskStore> = Arc::new(store);
        self.store = Arc::new(OnceLock::from(store));
        self
    }
    /// How long a task is kept after it is created (`ttlMs`, default [`DEFAULT_TASK_TTL`]).
    /// A task still running when it expires is cancelled. Under a millisecond is refused
    /// by `build`.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }
    /// The polling interval suggested to clients (`pollIntervalMs`, default
    /// [`DEFAULT_TASK_POLL_INTERVAL`]; `None` leaves it out).
    pub fn poll_interval(mut self, interval: Option<Duration>) -> Self {
        self.poll_interval = interval.map(|d| d.max(Duration::from_millis(1)));
        self
    }
    /// The most tasks running on this instance at once (default
    /// [`DEFAULT_MAX_RUNNING_TASKS`]); past it, a call that would start one is refused as
    /// busy (HTTP 503). Zero is refused by `build`.
    pub fn max_running(mut self, n: usize) -> Self {
        self.max_running = n;
        self
    }
    /// How long a running task shows `working` after the instance running it stopped
    /// renewing it (default [`DEFAULT_TASK_LEASE`]). The instance renews the lease in the
    /// store every quarter of this; when an instance dies (or loses the store for longer
    /// than this), the first instance to read the task after the lease ran out records it
    /// as failed (`-32603`, "the server instance running the task stopped"), and listen
    /// streams watching it are told. Instances' clocks must agree to well within this.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(4));
        self
    }
}

/// Default cap on live legacy sessions (HTTP).
pub const DEFAULT_MAX_SESSIONS: usize = 1024;

/// Default time a legacy session (HTTP) may stay idle before it is forgotten.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// The legacy era: clients of 2025-11-25, 2025-06-18 and 2025-03-26 open a session with
/// `initialize` and are served the same tools, resources and prompts in their revision's
/// shape. On by default; [`Legacy::off`] (or `ServerBuilder::modern_only`) serves
/// 2026-07-28 alone.
///
/// Legacy sessions live in the instance that made them: behind a load balancer, route by
/// `Mcp-Session-Id` (sticky sessions). The modern era needs no such routing.
///
/// ```
/// use mcp_runtime::Server;
/// use mcp_runtime::config::Legacy;
/// use std::time::Duration;
///
/// let server = Server::builder("x", "1.0")
///     .legacy(Legacy::default().max_sessions(100).idle_timeout(Duration::from_secs(600)))
///     .build()
///     .unwrap();
/// # drop(server);
/// let modern = Server::builder("x", "1.0").modern_only().build().unwrap();
/// # drop(modern);
/// ```
#[derive(Debug, Clone)]
pub struct Legacy {
    pub(crate) enabled: bool,
    pub(crate) max_sessions: usize,
    pub(crate) idle_timeout: Duration,
}

impl Default for Legacy {
    fn default() -> Self {
        Legacy {
            enabled: true,
            max_sessions: DEFAULT_MAX_SESSIONS,
            idle_timeout: DEFAULT_SESSION_IDLE,
        }
    }
}

impl Legacy {
    /// The legacy era off: `initialize` is answered with `-32022` naming the supported
    /// (modern) versions.
    pub fn off() -> Self {
        Legacy {
            enabled: false,
            ..Self::default()
        }
    }
    /// The most live HTTP sessions (default [`DEFAULT_MAX_SESSIONS`]); past it,
    /// `initialize` is refused as busy (HTTP 503). Zero is refused by `build` (to serve
    /// no legacy client, use [`Legacy::off`]).
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }
    /// How long an HTTP session may stay idle before it is forgotten (default
    /// [`DEFAULT_SESSION_IDLE`]); its id then gets 404 and the client initializes again.
    /// Under a second is raised to one; zero is refused by `build`.
    pub fn idle_timeout(mut self, d: Duration) -> Self {
        self.idle_timeout = if d.is_zero() {
            d
        } else {
            d.max(Duration::from_secs(1))
        };
        self
    }
}

/// The server options whose zero would refuse or cut off every request they apply to,
/// each with why: reported by [`ServerBuilder::build`](super::ServerBuilder::build). Times
/// count in milliseconds, as the stores and `requestState` do: under one is zero.
pub(crate) fn check_zero(
    limits: &Limits,
    state: &RequestState,
    handle_ttl: Duration,
    tasks: &Tasks,
    legacy: &Legacy,
    errors: &mut Vec<String>,
) {
    let mut zero = |is_zero: bool, what: &str, why: &str| {
        if is_zero {
            errors.push(format!("{what} is zero, which is refused: {why}"));
        }
    };
    zero(
        limits.request_timeout.is_zero(),
        "`Limits::request_timeout`",
        "every request would be cancelled at once",
    );
    // A state is taken until `ttl + leeway` after it was sealed.
    zero(
        (state.ttl + state.leeway).as_millis() == 0,
        "`RequestState::ttl` with its `leeway`",
        "every `requestState` would have expired when it came back",
    );
    zero(
        handle_ttl.as_millis() == 0,
        "`handle_ttl`",
        "every handle would have expired when it was used",
    );
    zero(
        limits.max_in_flight == 0,
        "`Limits::max_in_flight`",
        "every request would be refused as busy",
    );
    zero(
        limits.max_request_bytes == 0,
        "`Limits::max_request_bytes_in_flight`",
        "every request would be refused as busy",
    );
    zero(
        tasks.ttl.as_millis() == 0,
        "`Tasks::ttl`",
        "every task would have expired when it was made",
    );
    zero(
        tasks.max_running == 0,
        "`Tasks::max_running`",
        "every call that makes a task would be refused as busy",
    );
    if legacy.enabled {
        zero(
            legacy.max_sessions == 0,
            "`Legacy::max_sessions`",
            "every `initialize` would be refused as busy (`Legacy::off` serves no legacy client)",
        );
        zero(
            legacy.idle_timeout.is_zero(),
            "`Legacy::idle_timeout`",
            "every session would be forgotten at once",
        );
    }
}
