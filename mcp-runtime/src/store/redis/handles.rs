//! `RedisStore` as a [`HandleStore`]: a hash per handle (`owner`, `value`), expiring with
//! it, and an index of ids per owner for `list`.
//!
//! The index of an owner is `{p}:hz:{owner}`, a sorted set of the owner's handle ids
//! scored by expiry (ms, Redis's clock): each mint drops the ids that expired, and `list`
//! reads only the ones that have not. (It was a plain set, `{p}:ho:{owner}`, that only
//! `list` ever took expired ids out of: each mint added one and stretched its expiry, so
//! an owner minting steadily had an index that grew for ever. The new key has a new name,
//! so an index of the old kind neither fails nor is read by this code; it expires by
//! itself.)
//!
//! The handles held are capped as a `MemoryHandleStore`'s are (by default
//! [`DEFAULT_MAX_HANDLES`] live handles, [`DEFAULT_MAX_HANDLE_BYTES`] of values as JSON;
//! [`RedisStore::max_handles`], [`RedisStore::max_handle_bytes`]), fleet-wide: past
//! either, a new handle, or a value that grows, is refused ([`StoreError::Full`]). The
//! count is kept as the tasks' is (see `tasks.rs`), in `{p}:handles:ids`,
//! `{p}:handles:sizes` and `{p}:handles:bytes`.
//!
//! [`DEFAULT_MAX_HANDLES`]: crate::store::DEFAULT_MAX_HANDLES
//! [`DEFAULT_MAX_HANDLE_BYTES`]: crate::store::DEFAULT_MAX_HANDLE_BYTES

use super::tasks::BOOKKEEPING;
use super::{RedisStore, backend, ms};
use crate::store::{HandleRecord, HandleStore, StoreError};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::time::Duration;

/// How many ids `list` reads from an owner's index at a time.
const LIST_PAGE: usize = 1000;

/// The most ids one `list` reads from an owner's index, live or not, per handle the
/// store may hold.
const SCANNED_PER_HANDLE: usize = 4;

/// Stores a handle unless the handles held are at their cap (0; else 1), sweeping expired
/// ids from the bookkeeping and from the owner's index first. KEYS: the handle, the
/// owner's index, the bookkeeping's ids, sizes, total; ARGV: the value, the owner (empty:
/// none), the TTL (ms), the id, the cap on handles, on bytes.
static INSERT_HANDLE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(&format!(
        r"{}
local now = now_ms()
sweep(KEYS[3], KEYS[4], KEYS[5], now)
local size = #ARGV[1]
local old = count(redis.call('HGET', KEYS[4], ARGV[4]))
if not fits(KEYS[3], KEYS[5], now, tonumber(ARGV[5]), tonumber(ARGV[6]), size, old) then
  return 0
end
reset_unless(KEYS[2], 'zset')
local ttl = tonumber(ARGV[3])
local expires = now + ttl
redis.call('HSET', KEYS[1], 'value', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'owner', ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
hold(KEYS[3], KEYS[4], KEYS[5], ARGV[4], expires, size)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], expires, ARGV[4])
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return 1",
        *BOOKKEEPING
    ))
});

/// Replaces the value of a handle that exists (1; 0 when none), unless it grows past the
/// cap on bytes (-2). KEYS: the handle, the bookkeeping's sizes, total; ARGV: the value,
/// the id, the cap on bytes.
static REPLACE_HANDLE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(&format!(
        r"{}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if not resize(KEYS[2], KEYS[3], ARGV[2], #ARGV[1], tonumber(ARGV[3])) then return -2 end
redis.call('HSET', KEYS[1], 'value', ARGV[1])
return 1",
        *BOOKKEEPING
    ))
});

/// Replaces the value while its stored text is still the one read; -1 when there is none,
/// -2 when the value grows past the cap on bytes. KEYS: the handle, the bookkeeping's
/// sizes, total; ARGV: the text read, the value, the id, the cap on bytes.
static REPLACE_HANDLE_IF: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(&format!(
        r"{}
local current = redis.call('HGET', KEYS[1], 'value')
if not current then return -1 end
if current ~= ARGV[1] then return 0 end
if not resize(KEYS[2], KEYS[3], ARGV[3], #ARGV[2], tonumber(ARGV[4])) then return -2 end
redis.call('HSET', KEYS[1], 'value', ARGV[2])
return 1",
        *BOOKKEEPING
    ))
});

/// Removes a handle (1; 0 when there was none), its id from its owner's index and from
/// the bookkeeping. KEYS: the handle, the owner's index, the bookkeeping's ids, sizes,
/// total; ARGV: the id.
static REMOVE_HANDLE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(&format!(
        r"{}
local gone = redis.call('DEL', KEYS[1])
if redis.call('TYPE', KEYS[2])['ok'] == 'zset' then redis.call('ZREM', KEYS[2], ARGV[1]) end
release(KEYS[3], KEYS[4], KEYS[5], ARGV[1])
return gone",
        *BOOKKEEPING
    ))
});

impl RedisStore {
    /// The bookkeeping of the handles held: ids by expiry, sizes, total bytes.
    fn handle_books(&self) -> [String; 3] {
        let p = &self.shared.prefix;
        [
            format!("{p}:handles:ids"),
            format!("{p}:handles:sizes"),
            format!("{p}:handles:bytes"),
        ]
    }

    /// The index of `owner`'s handles: `{p}:hz:{tag}`, the tag being the one of the old
    /// index (`{p}:ho:{tag}`, see `owner_index`).
    fn owner_expiries(&self, owner: Option<&str>) -> String {
        let old = self.owner_index(owner);
        // The tag is hex digits, or `-`: no `:` in it.
        let tag = old.rsplit(':').next().unwrap_or("-");
        self.key("hz", tag)
    }
}

/// Redis's clock, in ms (what the index's scores count in). A reply that is not a time
/// reads as 0: `list` then reads expired ids too, and skips their missing records.
async fn redis_now(c: &mut super::Link) -> Result<u64, StoreError> {
    let (secs, micros): (String, String) =
        redis::cmd("TIME").query_async(c).await.map_err(backend)?;
    let secs = secs.parse::<u64>().unwrap_or(0);
    let micros = micros.parse::<u64>().unwrap_or(0);
    Ok(secs.saturating_mul(1000).saturating_add(micros / 1000))
}

impl HandleStore for RedisStore {
    fn insert<'a>(
        &'a self,
        id: &'a str,
        record: HandleRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        async move {
            let mut c = self.conn.clone();
            let [ids, sizes, total] = self.handle_books();
            let stored = INSERT_HANDLE
                .key(self.key("h", id))
                .key(self.owner_expiries(record.owner.as_deref()))
                .key(ids)
                .key(sizes)
                .key(total)
                .arg(record.value.to_string())
                .arg(record.owner.as_deref().unwrap_or(""))
                .arg(ms(ttl))
                .arg(id)
                .arg(self.caps.handles)
                .arg(self.caps.handle_bytes)
                .invoke_async::<i64>(&mut c)
                .await
                .map_err(backend)?;
            if stored == 0 {
                return Err(StoreError::Full);
            }
            Ok(())
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
            let [_, sizes, total] = self.handle_books();
            let done = REPLACE_HANDLE
                .key(self.key("h", id))
                .key(sizes)
                .key(total)
                .arg(value.to_string())
                .arg(id)
                .arg(self.caps.handle_bytes)
                .invoke_async::<i64>(&mut c)
                .await
                .map_err(backend)?;
            match done {
                -2 => Err(StoreError::Full),
                n => Ok(n == 1),
            }
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
            let [_, sizes, total] = self.handle_books();
            let done = REPLACE_HANDLE_IF
                .key(self.key("h", id))
                .key(sizes)
                .key(total)
                .arg(current)
                .arg(value.to_string())
                .arg(id)
                .arg(self.caps.handle_bytes)
                .invoke_async::<i64>(&mut c)
                .await
                .map_err(backend)?;
            match done {
                -2 => Err(StoreError::Full),
                -1 => Ok(None),
                0 => Ok(Some(false)),
                _ => Ok(Some(true)),
            }
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
            let [ids, sizes, total] = self.handle_books();
            let gone: i64 = REMOVE_HANDLE
                .key(&key)
                .key(self.owner_expiries(owner.as_deref()))
                .key(ids)
                .key(sizes)
                .key(total)
                .arg(id)
                .invoke_async(&mut c)
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
            let index = self.owner_expiries(owner);
            let now = redis_now(&mut c).await?;
            let cap = self.caps.handles;
            let mut out = Vec::new();
            // An id read twice (the index changed between pages) counts once.
            let mut seen: std::collections::HashSet<Vec<u8>> = std::collections::HashSet::new();
            let mut stale = Vec::new();
            // Pages follow the scores: each starts at the last score read, past the ids
            // of that score read already (an offset from the start would skip ids when
            // mints meanwhile take expired ones out before it).
            let mut from: Option<(f64, usize)> = None;
            // The index (its ids that have not expired) is read a page at a time and the
            // records a page at a time, up to the cap: an owner with millions of handles
            // costs a bounded read.
            loop {
                let (min, skip) = match from {
                    None => (format!("({now}"), 0),
                    Some((score, skip)) => (score.to_string(), skip),
                };
                // Bytes, not text: an entry that is not UTF-8 (not one this store wrote)
                // is skipped, instead of failing the whole listing.
                let page: redis::RedisResult<Vec<(Vec<u8>, f64)>> = redis::cmd("ZRANGEBYSCORE")
                    .arg(&index)
                    .arg(min)
                    .arg("+inf")
                    .arg("WITHSCORES")
                    .arg("LIMIT")
                    .arg(skip)
                    .arg(LIST_PAGE)
                    .query_async(&mut c)
                    .await;
                let page = match page {
                    Ok(page) => page,
                    // An index of another type (not one this store wrote; the next mint
                    // for the owner replaces it) holds no id.
                    Err(e) if e.code() == Some("WRONGTYPE") => break,
                    Err(e) => return Err(backend(e)),
                };
                let last_page = page.len() < LIST_PAGE;
                if let Some(&(_, last)) = page.last() {
                    let at_last = page.iter().rev().take_while(|(_, s)| *s == last).count();
                    from = Some(match from {
                        // The whole page had the score the page started at.
                        Some((score, skip)) if score == last => (last, skip + at_last),
                        _ => (last, at_last),
                    });
                }
                let ids: Vec<String> = page
                    .into_iter()
                    .map(|(id, _)| id)
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
                    for (id, row) in ids.into_iter().zip(rows) {
                        let Ok((o, v)) = row else { continue };
                        match v {
                            Some(v) if o.as_deref() == owner.map(str::as_bytes) => {
                                if out.len() < cap
                                    && let Ok(v) = serde_json::from_slice(&v)
                                {
                                    out.push((id, v));
                                }
                            }
                            Some(_) => {}
                            None => stale.push(id),
                        }
                    }
                }
                // Ids of unreadable records count too: one call reads at most so many,
                // however the index grew.
                if last_page
                    || out.len() >= cap
                    || seen.len() >= cap.saturating_mul(SCANNED_PER_HANDLE)
                {
                    break;
                }
            }
            if !stale.is_empty() {
                // A record gone before its time (evicted) leaves its id behind; tidy up,
                // once the pages are read.
                let _ = redis::cmd("ZREM")
                    .arg(&index)
                    .arg(&stale)
                    .query_async::<i64>(&mut c)
                    .await;
            }
            Ok(out)
        }
        .boxed()
    }
}
