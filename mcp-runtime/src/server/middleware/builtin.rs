//! The middleware the runtime ships: [`Timing`], [`RateLimit`], [`SizeLimit`], [`Cache`].

use super::{Middleware, Next, Request, Response};
use crate::protocol::RpcError;
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Logs each call (`info`, target `mcp_runtime::middleware`): method, target, round,
/// how it ended and how long it took.
#[derive(Debug, Clone, Default)]
pub struct Timing;

impl Middleware for Timing {
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response> {
        Box::pin(async move {
            let (method, target, round) = (request.method, request.target.clone(), request.round());
            let started = Instant::now();
            let response = next.run(request).await;
            tracing::info!(
                method,
                target = %target,
                round,
                error = response.is_error(),
                elapsed_us = started.elapsed().as_micros() as u64,
                "call"
            );
            response
        })
    }
}

/// Refuses calls past `n` per `per`, per caller (and per item with
/// [`RateLimit::per_item`]: per tool, prompt, resource or resource template, not per
/// URI read, which the client chooses): a token bucket that refills continuously, so a caller who
/// tripped it can call again as soon as a token is back. A refused tool call is an
/// `isError` result saying when to retry (what the model reads); a prompt or resource
/// gets `-32603` with the same text. Without authorization every caller is one.
pub struct RateLimit {
    capacity: f64,
    per_second: f64,
    per_item: bool,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

/// Most buckets a [`RateLimit`] keeps: past it, full buckets are forgotten first, then
/// the least recently used quarter.
pub const MAX_RATE_BUCKETS: usize = 100_000;

impl RateLimit {
    /// At most `n` calls per `per`, per caller.
    pub fn new(n: u32, per: Duration) -> RateLimit {
        let n = f64::from(n.max(1));
        RateLimit {
            capacity: n,
            per_second: n / per.as_secs_f64().max(1e-6),
            per_item: false,
            buckets: Mutex::new(HashMap::new()),
        }
    }
    /// Counts each tool, prompt or resource apart.
    pub fn per_item(mut self) -> RateLimit {
        self.per_item = true;
        self
    }

    /// Takes a token for `key`; `Err(wait)` when there is none.
    fn take(&self, key: String) -> Result<(), Duration> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= MAX_RATE_BUCKETS && !buckets.contains_key(&key) {
            // Full buckets have nothing to remember; forget those first.
            let (cap, rate) = (self.capacity, self.per_second);
            buckets.retain(|_, (t, at)| *t + now.duration_since(*at).as_secs_f64() * rate < cap);
            if buckets.len() >= MAX_RATE_BUCKETS {
                // Still full: the least recently used quarter goes (once per that many
                // new keys, so the sort is paid rarely).
                let mut ages: Vec<Instant> = buckets.values().map(|(_, at)| *at).collect();
                let quarter = ages.len() / 4;
                let (_, cutoff, _) = ages.select_nth_unstable(quarter);
                let cutoff = *cutoff;
                buckets.retain(|_, (_, at)| *at > cutoff);
            }
        }
        let (tokens, at) = buckets.entry(key).or_insert((self.capacity, now));
        *tokens =
            (*tokens + now.duration_since(*at).as_secs_f64() * self.per_second).min(self.capacity);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / self.per_second))
        }
    }
}

impl Middleware for RateLimit {
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response> {
        let mut key = request.caller_key().unwrap_or_default();
        if self.per_item {
            key.push('\0');
            key.push_str(request.method);
            key.push('\0');
            key.push_str(request.item());
        }
        match self.take(key) {
            Ok(()) => Box::pin(next.run(request)),
            Err(wait) => {
                let message = format!(
                    "Rate limit exceeded: retry in {:.1} s",
                    wait.as_secs_f64().max(0.1)
                );
                tracing::debug!(target = %request.target, "rate limited");
                let response = if request.method == crate::protocol::methods::TOOLS_CALL {
                    Response::tool_error(message)
                } else {
                    Response::Error(RpcError::internal(message))
                };
                Box::pin(async move { response })
            }
        }
    }
}

/// Replaces a result larger than `max` bytes (as JSON) by an error that says so: a tool
/// gets an `isError` result, a prompt or resource `-32603`. Keeps one oversized answer
/// from reaching a client (or a model's context).
#[derive(Debug, Clone)]
pub struct SizeLimit {
    max: usize,
}

impl SizeLimit {
    /// Results up to `max` bytes pass.
    pub fn new(max: usize) -> SizeLimit {
        SizeLimit { max }
    }
}

impl Middleware for SizeLimit {
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response> {
        let max = self.max;
        let tool = request.method == crate::protocol::methods::TOOLS_CALL;
        Box::pin(async move {
            let response = next.run(request).await;
            let size = response.size();
            if size <= max {
                return response;
            }
            let message = format!("The result is {size} bytes, over the limit of {max}");
            tracing::warn!(size, max, "result over the size limit");
            if tool {
                Response::tool_error(message)
            } else {
                Response::Error(RpcError::internal(message))
            }
        })
    }
}

/// Caches the results of read-only calls (tools with `readOnlyHint`, prompts and
/// resources) by item, arguments (canonical: key order does not matter) and caller, for
/// `ttl`; errors are not cached. At most `max` entries (default 10 000; the oldest go
/// first).
///
/// A handler that may ask the client for input ([`Request::may_ask`]) is never cached:
/// its result depends on the answers. Nor is anything else that is not the arguments or
/// the caller in the key: a handler whose result depends on the client (its info, its
/// `_meta`) is no candidate. When the server announces `notifications/resources/updated`
/// for a resource, a `Cache` among the server's middleware forgets that resource's
/// reads ([`Middleware::resource_updated`]); one on an item keeps them until `ttl`.
pub struct Cache {
    ttl: Duration,
    max: usize,
    entries: Arc<Mutex<Entries>>,
}

/// What a [`Cache`] holds, behind one lock: results by key, and resource updates by URI.
#[derive(Default)]
struct Entries {
    results: HashMap<String, (Instant, Value)>,
    /// Updates announced so far, by URI: a read that began before one of its resource
    /// does not keep what it read (it may be the old contents).
    updates: HashMap<String, u64>,
    /// Bumped when `updates` is emptied (it grew past the cache's size), so a read that
    /// began before still sees a change.
    epoch: u64,
}

impl Entries {
    /// Where updates of `uri` stand.
    fn updated(&self, uri: &str) -> (u64, u64) {
        (self.epoch, self.updates.get(uri).copied().unwrap_or(0))
    }
}

impl Cache {
    /// Keeps results for `ttl`.
    pub fn new(ttl: Duration) -> Cache {
        Cache {
            ttl,
            max: 10_000,
            entries: Arc::default(),
        }
    }
    /// Keeps at most `max` results.
    pub fn max_entries(mut self, max: usize) -> Cache {
        self.max = max.max(1);
        self
    }
}

impl Middleware for Cache {
    fn resource_updated(&self, uri: &str) {
        let prefix = format!("{}\0{uri}\0", crate::protocol::methods::RESOURCES_READ);
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.updates.len() >= self.max && !entries.updates.contains_key(uri) {
            entries.updates.clear();
            entries.epoch += 1;
        }
        *entries.updates.entry(uri.to_owned()).or_default() += 1;
        entries.results.retain(|key, _| !key.starts_with(&prefix));
    }

    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, Response> {
        if !request.read_only || request.may_ask() {
            return Box::pin(next.run(request));
        }
        let key = format!(
            "{}\0{}\0{}\0{}",
            request.method,
            request.target,
            request.caller_key().unwrap_or_default(),
            crate::mrtr::state::digest(&Value::Object(request.arguments.clone()))
        );
        let now = Instant::now();
        // A read's resource, whose updates it watches while it runs.
        let read = (request.method == crate::protocol::methods::RESOURCES_READ)
            .then(|| request.target.clone());
        let before = {
            let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, v)) = entries.results.get(&key)
                && now.duration_since(*at) < self.ttl
            {
                let hit = Response::Result(v.clone());
                return Box::pin(async move { hit });
            }
            read.as_deref().map(|uri| entries.updated(uri))
        };
        let entries = Arc::clone(&self.entries);
        let (ttl, max) = (self.ttl, self.max);
        Box::pin(async move {
            let response = next.run(request).await;
            if let Response::Result(v) = &response
                && !response.is_error()
            {
                let mut guard = entries.lock().unwrap_or_else(|e| e.into_inner());
                // Its resource updated while it read: what it read may be the old
                // contents, so it is not kept (the next read reads again).
                if read.as_deref().map(|uri| guard.updated(uri)) != before {
                    return response;
                }
                let entries = &mut guard.results;
                if entries.len() >= max {
                    entries.retain(|_, (at, _)| at.elapsed() < ttl);
                    if entries.len() >= max
                        && let Some(oldest) = entries
                            .iter()
                            .min_by_key(|(_, (at, _))| *at)
                            .map(|(k, _)| k.clone())
                    {
                        entries.remove(&oldest);
                    }
                }
                entries.insert(key, (Instant::now(), v.clone()));
            }
            response
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_buckets_stay_bounded() {
        let limit = RateLimit::new(5, Duration::from_secs(3600));
        for i in 0..MAX_RATE_BUCKETS + 10 {
            // Each key takes a token: none of these buckets is full, none can be
            // forgotten as full.
            assert!(limit.take(format!("k{i}")).is_ok());
        }
        let held = limit.buckets.lock().unwrap().len();
        assert!(held <= MAX_RATE_BUCKETS, "{held}");
        assert!(held >= MAX_RATE_BUCKETS / 2, "{held}");
        // The most recent keys are still counted.
        let last = format!("k{}", MAX_RATE_BUCKETS + 9);
        for _ in 0..4 {
            assert!(limit.take(last.clone()).is_ok());
        }
        assert!(limit.take(last).is_err());
    }
}
