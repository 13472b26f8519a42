//! Single-use `requestState`: a [`ReplayStore`] remembers every state redeemed until it
//! expires, so a second redemption of the same state fails (a payment confirmed twice).
//! Turned on with [`RequestState::single_use`](crate::config::RequestState::single_use).

use super::StoreError;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// Remembers redeemed `requestState`s. Shared by every instance (a state redeemed on one
/// instance must fail on the others), so a fleet uses a shared back end
/// ([`RedisStore`][redis]).
///
/// Contract: `redeem` is atomic: of two concurrent redemptions of one id, exactly one
/// gets `true`.
///
/// ```
/// use mcp_runtime::store::{MemoryReplayStore, ReplayStore};
/// use std::time::Duration;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = MemoryReplayStore::new();
/// assert!(store.redeem("state-1", Duration::from_secs(60)).await.unwrap());
/// assert!(!store.redeem("state-1", Duration::from_secs(60)).await.unwrap());
/// # });
/// ```
///
#[cfg_attr(feature = "redis", doc = "[redis]: crate::store::redis::RedisStore")]
#[cfg_attr(not(feature = "redis"), doc = "[redis]: crate#features")]
pub trait ReplayStore: Send + Sync + 'static {
    /// Marks `id` as used for `ttl`; `false` when it already was.
    fn redeem<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>>;
}

impl<S: ReplayStore + ?Sized> ReplayStore for std::sync::Arc<S> {
    fn redeem<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).redeem(id, ttl)
    }
}

/// Default cap on the ids a [`MemoryReplayStore`] remembers.
pub const DEFAULT_MAX_REDEEMED: usize = 1_000_000;

/// An in-process [`ReplayStore`] (one instance). When full of unexpired ids it refuses
/// redemptions (fails closed) rather than forgetting one that could then be replayed.
pub struct MemoryReplayStore {
    used: Mutex<HashMap<String, u64>>,
    max: usize,
}

impl MemoryReplayStore {
    /// An empty store remembering at most [`DEFAULT_MAX_REDEEMED`] ids.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_MAX_REDEEMED)
    }
    /// An empty store remembering at most `max` ids (at least 1).
    pub fn with_capacity(max: usize) -> Self {
        MemoryReplayStore {
            used: Mutex::new(HashMap::new()),
            max: max.max(1),
        }
    }
}

impl Default for MemoryReplayStore {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplayStore for MemoryReplayStore {
    fn redeem<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>> {
        let now = super::now_ms();
        let until = now.saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        let out = match used.get(id) {
            Some(exp) if *exp > now => Ok(false),
            _ => {
                if used.len() >= self.max {
                    used.retain(|_, exp| *exp > now);
                }
                if used.len() >= self.max {
                    Err(StoreError::Full)
                } else {
                    used.insert(id.to_owned(), until);
                    Ok(true)
                }
            }
        };
        async move { out }.boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ids_redeem_once_until_they_expire_and_a_full_store_fails_closed() {
        let s = MemoryReplayStore::with_capacity(1);
        assert!(s.redeem("a", Duration::from_millis(20)).await.unwrap());
        assert!(!s.redeem("a", Duration::from_millis(20)).await.unwrap());
        assert_eq!(
            s.redeem("b", Duration::from_secs(1)).await,
            Err(StoreError::Full)
        );
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert!(s.redeem("b", Duration::from_secs(1)).await.unwrap());
    }
}
