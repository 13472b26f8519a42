//! `RedisStore` as a [`ReplayStore`]: `SET NX PX` per redeemed state.

use super::{RedisStore, backend, ms};
use crate::store::{ReplayStore, StoreError};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use std::time::Duration;

impl ReplayStore for RedisStore {
    fn redeem<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>> {
        async move {
            let mut c = self.conn.clone();
            let set: Option<String> = redis::cmd("SET")
                .arg(self.key("rs", id))
                .arg(1)
                .arg("NX")
                .arg("PX")
                .arg(ms(ttl))
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            Ok(set.is_some())
        }
        .boxed()
    }
}
