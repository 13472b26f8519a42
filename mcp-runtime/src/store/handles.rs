//! Handles: opaque, unguessable ids for values a tool gives the client and takes back in a
//! later call (a draft, a cart, a query cursor). A stateless server keeps no session, so
//! the value lives in a [`HandleStore`] every instance reaches; the client only carries the
//! id. [`Handles`] is the extractor tools use: typed, and bound to the caller.

use super::StoreError;
use base64::Engine;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How long a handle lives unless the tool says otherwise.
pub const DEFAULT_HANDLE_TTL: Duration = Duration::from_secs(3600);

/// Default cap on the handles a [`MemoryHandleStore`] holds.
pub const DEFAULT_MAX_HANDLES: usize = 100_000;

/// What a store keeps under one handle id: the value, and the caller it belongs to
/// (`None` on a server without authorization).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandleRecord {
    /// The principal key of the caller that minted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The value, as JSON.
    pub value: Value,
}

/// Where handles live. Every instance of a server reaches the same store, so a handle
/// minted on one instance reads on any other.
///
/// Contract: `insert` stores a record under a fresh id for `ttl`; nothing returns a record
/// past its TTL; `replace` keeps the record's owner and expiry; `list` returns the live
/// records of one owner. [`Handles`] checks ids and owners, so stores stay simple.
pub trait HandleStore: Send + Sync + 'static {
    /// Stores `record` under the new id `id` for `ttl`.
    fn insert<'a>(
        &'a self,
        id: &'a str,
        record: HandleRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The record, unless it does not exist or has expired.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<HandleRecord>, StoreError>>;
    /// Replaces the value of a live record (owner and expiry stay); `false` when there is
    /// none.
    fn replace<'a>(&'a self, id: &'a str, value: Value) -> BoxFuture<'a, Result<bool, StoreError>>;
    /// Replaces the value of a live record only while it is still `expected` (compare and
    /// set): `Some(true)` when replaced, `Some(false)` when it changed meanwhile, `None`
    /// when there is no record. The default reads, then replaces: two steps, not one, so
    /// a store shared by several instances should do it atomically (the built-in ones do).
    fn replace_if<'a>(
        &'a self,
        id: &'a str,
        expected: &'a Value,
        value: Value,
    ) -> BoxFuture<'a, Result<Option<bool>, StoreError>> {
        async move {
            match self.get(id).await? {
                None => Ok(None),
                Some(r) if r.value != *expected => Ok(Some(false)),
                Some(_) => Ok(self.replace(id, value).await?.then_some(true)),
            }
        }
        .boxed()
    }
    /// Forgets a record; `false` when there was none.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;
    /// The live records of `owner` (`None`: the unowned ones), as `(id, value)`, in no
    /// particular order; at most [`DEFAULT_MAX_HANDLES`] of them (the stores shipped keep
    /// to it, so an owner with more costs a bounded read).
    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<(String, Value)>, StoreError>>;
}

impl<S: HandleStore + ?Sized> HandleStore for Arc<S> {
    fn insert<'a>(
        &'a self,
        id: &'a str,
        record: HandleRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).insert(id, record, ttl)
    }
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<HandleRecord>, StoreError>> {
        (**self).get(id)
    }
    fn replace<'a>(&'a self, id: &'a str, value: Value) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).replace(id, value)
    }
    fn replace_if<'a>(
        &'a self,
        id: &'a str,
        expected: &'a Value,
        value: Value,
    ) -> BoxFuture<'a, Result<Option<bool>, StoreError>> {
        (**self).replace_if(id, expected, value)
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).remove(id)
    }
    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<(String, Value)>, StoreError>> {
        (**self).list(owner)
    }
}

/// Default cap on the size of the values a [`MemoryHandleStore`] holds together, as JSON.
pub const DEFAULT_MAX_HANDLE_BYTES: usize = 256 * 1024 * 1024;

/// An in-process [`HandleStore`]: right for one instance (and the default), wrong for a
/// fleet (use [`RedisStore`][redis] there). Holds at most
/// [`DEFAULT_MAX_HANDLES`] handles whose values come to at most
/// [`DEFAULT_MAX_HANDLE_BYTES`] as JSON; past either, expired ones are swept, and a value
/// that still does not fit is refused ([`StoreError::Full`], the tool's error), so what
/// clients make a server keep stays bounded.
///
/// ```
/// use mcp_runtime::store::MemoryHandleStore;
///
/// // 10 000 handles, 64 MiB of values.
/// let store = MemoryHandleStore::with_capacity(10_000).max_bytes(64 << 20);
/// # drop(store);
/// ```
///
#[cfg_attr(feature = "redis", doc = "[redis]: crate::store::redis::RedisStore")]
#[cfg_attr(not(feature = "redis"), doc = "[redis]: crate#features")]
pub struct MemoryHandleStore {
    held: Mutex<Held>,
    max: usize,
    max_bytes: usize,
}

/// The handles: each id's record, expiry (ms) and size (bytes of JSON), and the sizes'
/// sum.
#[derive(Default)]
struct Held {
    map: HashMap<String, (HandleRecord, u64, usize)>,
    bytes: usize,
}

impl Held {
    /// Takes out what expired by `now`.
    fn sweep(&mut self, now: u64) {
        let mut freed = 0;
        self.map.retain(|_, (_, exp, size)| {
            let live = *exp > now;
            if !live {
                freed += *size;
            }
            live
        });
        self.bytes = self.bytes.saturating_sub(freed);
    }

    fn remove(&mut self, id: &str) -> Option<(HandleRecord, u64, usize)> {
        let gone = self.map.remove(id)?;
        self.bytes = self.bytes.saturating_sub(gone.2);
        Some(gone)
    }
}

impl MemoryHandleStore {
    /// An empty store holding at most [`DEFAULT_MAX_HANDLES`] handles and
    /// [`DEFAULT_MAX_HANDLE_BYTES`] of values.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_MAX_HANDLES)
    }
    /// An empty store holding at most `max` handles (at least 1).
    pub fn with_capacity(max: usize) -> Self {
        MemoryHandleStore {
            held: Mutex::new(Held::default()),
            max: max.max(1),
            max_bytes: DEFAULT_MAX_HANDLE_BYTES,
        }
    }
    /// Holds values of at most `max` bytes together, as JSON (at least 1).
    pub fn max_bytes(mut self, max: usize) -> Self {
        self.max_bytes = max.max(1);
        self
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// Whether `held`, with `size` more bytes (and `more` more handles), stays within the
    /// limits, after sweeping what expired if it would not.
    fn fits(&self, held: &mut Held, size: usize, more: usize, now: u64) -> bool {
        let within = |h: &Held| {
            h.map.len() + more <= self.max && h.bytes.saturating_add(size) <= self.max_bytes
        };
        if within(held) {
            return true;
        }
        held.sweep(now);
        within(held)
    }
}

impl Default for MemoryHandleStore {
    fn default() -> Self {
        Self::new()
    }
}

fn expiry(ttl: Duration) -> u64 {
    super::now_ms().saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
}

impl HandleStore for MemoryHandleStore {
    fn insert<'a>(
        &'a self,
        id: &'a str,
        record: HandleRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let now = super::now_ms();
        let size = crate::protocol::json::json_len(&record.value);
        let mut held = self.lock();
        // An id already held (never, with fresh random ids) gives its place back first.
        held.remove(id);
        if !self.fits(&mut held, size, 1, now) {
            return async { Err(StoreError::Full) }.boxed();
        }
        held.bytes += size;
        held.map.insert(id.to_owned(), (record, expiry(ttl), size));
        async { Ok(()) }.boxed()
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<HandleRecord>, StoreError>> {
        let now = super::now_ms();
        let mut held = self.lock();
        let found = match held.map.get(id) {
            Some((_, exp, _)) if *exp <= now => {
                held.remove(id);
                None
            }
            Some((r, _, _)) => Some(r.clone()),
            None => None,
        };
        async move { Ok(found) }.boxed()
    }

    fn replace<'a>(&'a self, id: &'a str, value: Value) -> BoxFuture<'a, Result<bool, StoreError>> {
        let now = super::now_ms();
        let size = crate::protocol::json::json_len(&value);
        let mut held = self.lock();
        let old = match held.map.get(id) {
            Some((_, exp, old)) if *exp > now => *old,
            _ => return async { Ok(false) }.boxed(),
        };
        let result = self.put(&mut held, id, value, old, size, now);
        async move { result.map(|()| true) }.boxed()
    }

    fn replace_if<'a>(
        &'a self,
        id: &'a str,
        expected: &'a Value,
        value: Value,
    ) -> BoxFuture<'a, Result<Option<bool>, StoreError>> {
        let now = super::now_ms();
        let size = crate::protocol::json::json_len(&value);
        let mut held = self.lock();
        let old = match held.map.get(id) {
            Some((r, exp, _)) if *exp > now && r.value != *expected => {
                return async { Ok(Some(false)) }.boxed();
            }
            Some((_, exp, old)) if *exp > now => *old,
            _ => return async { Ok(None) }.boxed(),
        };
        let result = self.put(&mut held, id, value, old, size, now);
        async move { result.map(|()| Some(true)) }.boxed()
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let now = super::now_ms();
        let gone = self.lock().remove(id).is_some_and(|(_, exp, _)| exp > now);
        async move { Ok(gone) }.boxed()
    }

    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<(String, Value)>, StoreError>> {
        let now = super::now_ms();
        let out = self
            .lock()
            .map
            .iter()
            .filter(|(_, (r, exp, _))| *exp > now && r.owner.as_deref() == owner)
            .map(|(id, (r, _, _))| (id.clone(), r.value.clone()))
            .collect();
        async move { Ok(out) }.boxed()
    }
}

impl MemoryHandleStore {
    /// Puts `value` (`size` bytes) in place of the live record `id` (`old` bytes), if the
    /// difference fits.
    fn put(
        &self,
        held: &mut Held,
        id: &str,
        value: Value,
        old: usize,
        size: usize,
        now: u64,
    ) -> Result<(), StoreError> {
        if size > old && !self.fits(held, size - old, 0, now) {
            return Err(StoreError::Full);
        }
        // The sweep keeps a live record, so it is still there.
        let Some(entry) = held.map.get_mut(id) else {
            return Err(StoreError::Full);
        };
        entry.0.value = value;
        entry.2 = size;
        held.bytes = held.bytes.saturating_sub(old).saturating_add(size);
        Ok(())
    }
}

/// Why a handle operation failed. Through `?` in a tool it becomes a tool error
/// (`isError: true`) with this text, so the model knows to start over.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum HandleError {
    /// No such handle for this caller: never minted, expired, deleted, or another caller's.
    Unknown(String),
    /// The stored value is not of the type asked for.
    Mismatch(String),
    /// The store failed.
    Store(StoreError),
}

impl fmt::Display for HandleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandleError::Unknown(id) => write!(
                f,
                "unknown or expired handle `{id}`: it was never issued, has expired or was deleted; create a new one"
            ),
            HandleError::Mismatch(e) => write!(f, "the handle holds another kind of value: {e}"),
            HandleError::Store(e) => write!(f, "the handle store is unavailable: {e}"),
        }
    }
}

impl std::error::Error for HandleError {}

impl From<StoreError> for HandleError {
    fn from(e: StoreError) -> Self {
        HandleError::Store(e)
    }
}

/// Handle ids: `h_` and 22 base64url characters (128 random bits).
fn fresh_id() -> Result<String, HandleError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| HandleError::Store(StoreError::Backend(format!("no randomness: {e}"))))?;
    Ok(format!(
        "h_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    ))
}

/// Whether `id` has the shape of a handle (anything else is unknown without asking the
/// store).
fn well_formed(id: &str) -> bool {
    id.len() == 24
        && id.starts_with("h_")
        && id[2..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Most reads of one [`Handles::modify`] that other changes overtake.
const MAX_MODIFY_ATTEMPTS: usize = 32;

/// The handle store as one request sees it: typed values, owned by the caller. An
/// extractor: take it as a parameter of a tool, prompt or resource.
///
/// Without authorization every caller is the same owner: the unguessable id keeps a
/// handle from whoever was not given it, but [`Handles::list`] shows every handle to every
/// caller. With authorization, a handle minted by one caller is unknown to every other.
///
/// ```
/// use mcp_runtime::store::{HandleError, Handles};
/// use mcp_runtime::{Server, tool, tools};
///
/// /// Starts a draft and returns its handle.
/// #[tool]
/// async fn new_draft(handles: Handles, text: String) -> Result<String, HandleError> {
///     handles.mint(&text).await
/// }
///
/// /// Appends to a draft.
/// #[tool]
/// async fn append(handles: Handles, draft: String, text: String) -> Result<String, HandleError> {
///     let mut body: String = handles.get(&draft).await?;
///     body.push_str(&text);
///     handles.update(&draft, &body).await?;
///     Ok(body)
/// }
///
/// let server = Server::builder("drafts", "1.0").tools(tools![new_draft, append]).build().unwrap();
/// # drop(server);
/// ```
#[derive(Clone)]
pub struct Handles {
    store: Arc<dyn HandleStore>,
    ttl: Duration,
    owner: Option<String>,
}

impl fmt::Debug for Handles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handles")
            .field("ttl", &self.ttl)
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

impl Handles {
    /// A view of `store` for `owner` (what the extractor builds from the server's store
    /// and the request's caller; useful in tests).
    pub fn new(store: Arc<dyn HandleStore>, ttl: Duration, owner: Option<String>) -> Self {
        Handles { store, ttl, owner }
    }

    /// Stores `value` under a new handle for the server's handle TTL; returns the id.
    pub async fn mint<T: Serialize + ?Sized>(&self, value: &T) -> Result<String, HandleError> {
        self.mint_for(value, self.ttl).await
    }

    /// Stores `value` under a new handle for `ttl`.
    pub async fn mint_for<T: Serialize + ?Sized>(
        &self,
        value: &T,
        ttl: Duration,
    ) -> Result<String, HandleError> {
        let value =
            serde_json::to_value(value).map_err(|e| HandleError::Mismatch(e.to_string()))?;
        let id = fresh_id()?;
        let record = HandleRecord {
            owner: self.owner.clone(),
            value,
        };
        self.store.insert(&id, record, ttl).await?;
        Ok(id)
    }

    /// The value under `id`.
    pub async fn get<T: DeserializeOwned>(&self, id: &str) -> Result<T, HandleError> {
        let record = self.record(id).await?;
        serde_json::from_value(record.value).map_err(|e| HandleError::Mismatch(e.to_string()))
    }

    /// Replaces the value under `id` (its expiry stays).
    pub async fn update<T: Serialize + ?Sized>(
        &self,
        id: &str,
        value: &T,
    ) -> Result<(), HandleError> {
        self.record(id).await?;
        let value =
            serde_json::to_value(value).map_err(|e| HandleError::Mismatch(e.to_string()))?;
        if self.store.replace(id, value).await? {
            Ok(())
        } else {
            Err(HandleError::Unknown(id.to_owned()))
        }
    }

    /// Changes the value under `id` with `change` as one step against every other
    /// `modify` of it, on any instance sharing the store: when another change landed
    /// between this one's read and its write, `change` runs again on the newer value
    /// (so it must not do anything else but change the value). Returns the value after
    /// it. Read-then-[`update`](Self::update) loses one of two concurrent changes; this
    /// does not.
    pub async fn modify<T: Serialize + DeserializeOwned>(
        &self,
        id: &str,
        mut change: impl FnMut(&mut T) + Send,
    ) -> Result<T, HandleError> {
        for _ in 0..MAX_MODIFY_ATTEMPTS {
            let record = self.record(id).await?;
            let mut value: T = serde_json::from_value(record.value.clone())
                .map_err(|e| HandleError::Mismatch(e.to_string()))?;
            change(&mut value);
            let new =
                serde_json::to_value(&value).map_err(|e| HandleError::Mismatch(e.to_string()))?;
            match self.store.replace_if(id, &record.value, new).await? {
                Some(true) => return Ok(value),
                Some(false) => continue,
                None => return Err(HandleError::Unknown(id.to_owned())),
            }
        }
        Err(HandleError::Store(StoreError::Backend(format!(
            "the handle changed {MAX_MODIFY_ATTEMPTS} times while this change was made; try again"
        ))))
    }

    /// Forgets `id`.
    pub async fn delete(&self, id: &str) -> Result<(), HandleError> {
        self.record(id).await?;
        if self.store.remove(id).await? {
            Ok(())
        } else {
            Err(HandleError::Unknown(id.to_owned()))
        }
    }

    /// The caller's live handles holding a `T` (values of other types are skipped),
    /// sorted by id. Without authorization, that is every caller's.
    pub async fn list<T: DeserializeOwned>(&self) -> Result<Vec<(String, T)>, HandleError> {
        let mut out: Vec<(String, T)> = self
            .store
            .list(self.owner.as_deref())
            .await?
            .into_iter()
            .filter_map(|(id, v)| serde_json::from_value(v).ok().map(|t| (id, t)))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    async fn record(&self, id: &str) -> Result<HandleRecord, HandleError> {
        let unknown = || HandleError::Unknown(id.chars().take(64).collect());
        if !well_formed(id) {
            return Err(unknown());
        }
        match self.store.get(id).await? {
            Some(r) if r.owner == self.owner => Ok(r),
            _ => Err(unknown()),
        }
    }
}

/// The server's handle settings: where handles live and how long they last.
#[derive(Clone)]
pub(crate) struct HandleConfig {
    /// The store given, or the default one, made when a handler first asks for
    /// [`Handles`] (see [`HandleConfig::store`]). Shared by clones.
    pub(crate) given: Arc<OnceLock<Arc<dyn HandleStore>>>,
    pub(crate) ttl: Duration,
}

impl HandleConfig {
    /// The store: the one given, else the default ([`MemoryHandleStore`]), made now if
    /// it was not yet. Only the [`Handles`] extractor calls this, so a server none of
    /// whose handlers takes `Handles` does not link the memory store.
    pub(crate) fn store(&self) -> Arc<dyn HandleStore> {
        Arc::clone(
            self.given
                .get_or_init(|| Arc::new(MemoryHandleStore::new())),
        )
    }
}

impl Default for HandleConfig {
    fn default() -> Self {
        HandleConfig {
            given: Arc::default(),
            ttl: DEFAULT_HANDLE_TTL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default store is made on first use, once: every later ask, and every clone
    /// of the settings (a server's), gets that one store; a given store is returned as
    /// it is.
    #[test]
    fn the_default_store_is_made_once_and_shared() {
        let config = HandleConfig::default();
        let copy = config.clone();
        assert!(config.given.get().is_none(), "made before it was asked for");
        let first = config.store();
        assert!(Arc::ptr_eq(&first, &config.store()));
        assert!(Arc::ptr_eq(&first, &copy.store()));
        let given: Arc<dyn HandleStore> = Arc::new(MemoryHandleStore::new());
        let config = HandleConfig {
            given: Arc::new(OnceLock::from(Arc::clone(&given))),
            ttl: DEFAULT_HANDLE_TTL,
        };
        assert!(Arc::ptr_eq(&given, &config.store()));
    }

    fn handles(owner: Option<&str>, store: &Arc<MemoryHandleStore>) -> Handles {
        let store: Arc<dyn HandleStore> = store.clone();
        Handles::new(store, Duration::from_secs(60), owner.map(str::to_owned))
    }

    #[tokio::test]
    async fn handles_are_typed_owned_and_expire() {
        let store = Arc::new(MemoryHandleStore::new());
        let alice = handles(Some("alice"), &store);
        let bob = handles(Some("bob"), &store);
        let id = alice.mint(&vec![1, 2]).await.unwrap();
        assert!(well_formed(&id), "{id}");
        assert_eq!(alice.get::<Vec<i32>>(&id).await.unwrap(), [1, 2]);
        assert!(matches!(
            bob.get::<Vec<i32>>(&id).await,
            Err(HandleError::Unknown(_))
        ));
        assert!(matches!(
            bob.delete(&id).await,
            Err(HandleError::Unknown(_))
        ));
        assert!(matches!(
            alice.get::<String>(&id).await,
            Err(HandleError::Mismatch(_))
        ));
        alice.update(&id, &vec![3]).await.unwrap();
        assert_eq!(
            alice.list::<Vec<i32>>().await.unwrap(),
            [(id.clone(), vec![3])]
        );
        assert!(bob.list::<Vec<i32>>().await.unwrap().is_empty());
        alice.delete(&id).await.unwrap();
        assert!(matches!(
            alice.get::<Vec<i32>>(&id).await,
            Err(HandleError::Unknown(_))
        ));
        assert!(matches!(
            alice.get::<Vec<i32>>("../../etc").await,
            Err(HandleError::Unknown(_))
        ));

        let short = alice
            .mint_for("x", Duration::from_millis(10))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
        let e = alice.get::<String>(&short).await.unwrap_err();
        assert!(e.to_string().contains("unknown or expired handle"), "{e}");
    }

    #[tokio::test]
    async fn the_memory_store_is_capped() {
        let store = Arc::new(MemoryHandleStore::with_capacity(1));
        let h = handles(None, &store);
        h.mint("a").await.unwrap();
        assert!(matches!(
            h.mint("b").await,
            Err(HandleError::Store(StoreError::Full))
        ));
    }

    #[tokio::test]
    async fn the_memory_store_holds_a_bounded_size_of_values() {
        // 100 bytes of JSON in all; a 50-character string is 52 bytes.
        let store = Arc::new(MemoryHandleStore::new().max_bytes(100));
        let h = handles(None, &store);
        let fifty = "x".repeat(50);
        let a = h.mint(&fifty).await.unwrap();
        let full =
            |r: Result<String, HandleError>| matches!(r, Err(HandleError::Store(StoreError::Full)));
        assert!(full(h.mint(&fifty).await), "104 bytes do not fit in 100");
        let small = h.mint("y").await.unwrap(); // 3 bytes: 55 in all
        // Growing a value past the budget is refused, and the value stays.
        let grown = h.update(&small, &"z".repeat(60)).await;
        assert!(
            matches!(grown, Err(HandleError::Store(StoreError::Full))),
            "{grown:?}"
        );
        assert_eq!(h.get::<String>(&small).await.unwrap(), "y");
        // What is removed gives its room back; shrinking always fits.
        h.delete(&a).await.unwrap();
        let b = h.mint(&fifty).await.unwrap();
        h.update(&b, "w").await.unwrap();
        h.mint(&"v".repeat(80)).await.unwrap(); // 3 + 3 + 82 = 88
        // Expired values are swept to make room.
        let gone = h
            .mint_for(&"u".repeat(10), Duration::from_millis(10))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
        h.mint(&"t".repeat(8)).await.unwrap();
        assert!(h.get::<String>(&gone).await.is_err());
        assert!(store.lock().bytes <= 100, "{}", store.lock().bytes);
    }
}
