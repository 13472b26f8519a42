//! `RedisStore` as a [`HandleStore`]: a hash per handle (`owner`, `value`), expiring with
//! it, and a set of ids per owner for `list`.

use super::{RedisStore, backend, ms};
use crate::store::{DEFAULT_MAX_HANDLES, HandleRecord, HandleStore, StoreError};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::time::Duration;

/// How many ids `list` reads from an owner's index at a time.
const LIST_PAGE: usize = 1000;

/// The most ids one `list` reads from an owner's index, live or not.
const MAX_SCANNED: usize = 4 * DEFAULT_MAX_HANDLES;

static INSERT_HANDLE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
redis.call('HSET', KEYS[1], 'value', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'owner', ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[4])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return 1",
    )
});

static REPLACE_HANDLE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'value', ARGV[1])
return 1",
    )
});

/// Replaces the value while its stored text is still the one read; -1 when there is none.
static REPLACE_HANDLE_IF: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local current = redis.call('HGET', KEYS[1], 'value')
if not current then return -1 end
if current ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'value', ARGV[2])
return 1",
    )
});

impl HandleStore for RedisStore {
    fn insert<'a>(
        &'a self,
        id: &'a str,
        record: HandleRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        async move {
            let mut c = self.conn.clone();
            INSERT_HANDLE
                .key(self.key("h", id))
                .key(self.owner_index(record.owner.as_deref()))
                .arg(record.value.to_string())
                .arg(record.owner.as_deref().unwrap_or(""))
                .arg(ms(ttl))
                .arg(id)
                .invoke_async::<i64>(&mut c)
                .await
                .map(drop)
                .map_err(backend)
        }
        .boxed()
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<HandleRecord>, StoreError>> {
        async move {
            let mut c = self.conn.clone();
            let (owner, value): (Option<String>, Option<String>) = redis::cmd("HMGET")
                .arg(self.key("h", id))
                .arg("owner")
                .arg("value")
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            let Some(value) = value else { return Ok(None) };
            let value: Value = serde_json::from_str(&value).map_err(backend)?;
            Ok(Some(HandleRecord { owner, value }))
        }
        .boxed()
    }

    fn replace<'a>(&'a self, id: &'a str, value: Value) -> BoxFuture<'a, Result<bool, StoreError>> {
        async move {
            let mut c = self.conn.clone();
            REPLACE_HANDLE
                .key(self.key("h", id))
                .arg(value.to_string())
                .invoke_async::<i64>(&mut c)
                .await
                .map(|n| n == 1)
                .map_err(backend)
        }
        .boxed()
    }

    fn replace_if<'a>(
        &'a self,
        id: &'a str,
        expected: &'a Value,
        value: Value,
    ) -> BoxFuture<'a, Result<Option<bool>, StoreError>> {
        async move {
            let mut c = self.conn.clone();
            // The stored text, compared as a value here (its text need not be what
            // `expected` serializes to: a float may not read back to the same digits),
            // then set only while the text is still that one.
            let current: Option<String> = redis::cmd("HGET")
                .arg(self.key("h", id))
                .arg("value")
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            let Some(current) = current else {
                return Ok(None);
            };
            let stored: Value = serde_json::from_str(&current).map_err(backend)?;
            if stored != *expected {
                return Ok(Some(false));
            }
            let done = REPLACE_HANDLE_IF
                .key(self.key("h", id))
                .arg(current)
                .arg(value.to_string())
                .invoke_async::<i64>(&mut c)
                .await
                .map_err(backend)?;
            Ok(match done {
                -1 => None,
                0 => Some(false),
                _ => Some(true),
            })
        }
        .boxed()
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        async move {
            let mut c = self.conn.clone();
            let key = self.key("h", id);
            let owner: Option<String> = redis::cmd("HGET")
                .arg(&key)
                .arg("owner")
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            let (gone, _): (i64, i64) = redis::pipe()
                .atomic()
                .cmd("DEL")
                .arg(&key)
                .cmd("SREM")
                .arg(self.owner_index(owner.as_deref()))
                .arg(id)
                .query_async(&mut c)
                .await
                .map_err(backend)?;
            Ok(gone == 1)
        }
        .boxed()
    }

    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<(String, Value)>, StoreError>> {
        async move {
            let mut c = self.conn.clone();
            let index = self.owner_index(owner);
            let mut out = Vec::new();
            // SSCAN may return an id twice.
            let mut seen: std::collections::HashSet<Vec<u8>> = std::collections::HashSet::new();
            let mut cursor = 0u64;
            // The index is read a page at a time and the records a page at a time, up to
            // the cap: an owner with millions of handles costs a bounded read.
            loop {
                // Bytes, not text: an entry that is not UTF-8 (not one this store wrote)
                // is skipped, instead of failing the whole listing.
                let (next, ids): (u64, Vec<Vec<u8>>) = redis::cmd("SSCAN")
                    .arg(&index)
                    .arg(cursor)
                    .arg("COUNT")
                    .arg(LIST_PAGE)
                    .query_async(&mut c)
                    .await
                    .map_err(backend)?;
                let ids: Vec<String> = ids
                    .into_iter()
                    .filter(|id| seen.insert(id.clone()))
                    .filter_map(|id| String::from_utf8(id).ok())
                    .collect();
                if !ids.is_empty() {
                    let mut pipe = redis::pipe();
                    for id in &ids {
                        pipe.cmd("HMGET")
                            .arg(self.key("h", id))
                            .arg("owner")
                            .arg("value");
                    }
                    // A record that cannot be read (a key of another type) is skipped too.
                    type Row = (Option<Vec<u8>>, Option<Vec<u8>>);
                    let rows: Vec<redis::RedisResult<Row>> = pipe
                        .ignore_errors()
                        .query_async(&mut c)
                        .await
                        .map_err(backend)?;
                    let mut stale = Vec::new();
                    for (id, row) in ids.into_iter().zip(rows) {
                        let Ok((o, v)) = row else { continue };
                        match v {
                            Some(v) if o.as_deref() == owner.map(str::as_bytes) => {
                                if out.len() < DEFAULT_MAX_HANDLES
                                    && let Ok(v) = serde_json::from_slice(&v)
                                {
                                    out.push((id, v));
                                }
                            }
                            Some(_) => {}
                            None => stale.push(id),
                        }
                    }
                    if !stale.is_empty() {
                        // Expired handles leave their index entry behind; tidy up.
                        let _ = redis::cmd("SREM")
                            .arg(&index)
                            .arg(&stale)
                            .query_async::<i64>(&mut c)
                            .await;
                    }
                }
                cursor = next;
                // Ids of expired or unreadable records count too: one call reads at most
                // so many, however the index grew.
                if cursor == 0 || out.len() >= DEFAULT_MAX_HANDLES || seen.len() >= MAX_SCANNED {
                    break;
                }
            }
            Ok(out)
        }
        .boxed()
    }
}
