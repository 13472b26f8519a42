//! One instance of a fleet: run several behind a round-robin balancer, sharing a key ring
//! and Redis, and every request may land on any of them.
//!
//! ```text
//! MCP_REQUEST_STATE_KEYS=k1=$(head -c32 /dev/urandom | base64 | tr '+/' '-_' | tr -d =) \
//! REDIS_URL=redis://127.0.0.1:6379/ PORT=3521 INSTANCE=a cargo run --example fleet
//! ```
//!
//! - `transfer` asks twice (amount, then a final confirmation): a three-round flow whose
//!   `requestState` is single use (a replayed confirmation is refused).
//! - `cart_new` / `cart_add` / `cart_show` / `cart_list` keep a cart behind a handle.
//! - `enable_reports` switches on the standby tool `report` on every instance.
//! - `export` runs only as a task (the tasks extension): polled and cancelled anywhere.
//! - `whoami` names the instance that answered.
//!
//! `/healthz` and `/readyz` (not ready while Redis does not answer) are served beside
//! `/mcp`; with `MCP_METRICS=1`, `/metrics` too. After SIGTERM it is a lame duck for
//! `MCP_LAME_DUCK_MS` (default 5 s).
//!
//! Without `REDIS_URL` everything stays in this process (one instance only).

use mcp_runtime::config::{RequestState, Tasks};
use mcp_runtime::store::{HandleError, Handles, MemoryReplayStore};
use mcp_runtime::{Context, Error, Form, Input, Progress, Server, tool, tools};
use serde::{Deserialize, Serialize};
use std::time::Duration;

fn instance() -> String {
    std::env::var("INSTANCE").unwrap_or_else(|_| "solo".into())
}

/// Names the instance that answered.
#[tool(annotations(read_only_hint = true))]
async fn whoami() -> String {
    instance()
}

#[derive(Deserialize, schemars::JsonSchema, Form)]
struct Amount {
    /// How much to send
    amount: u32,
}

#[derive(Deserialize, schemars::JsonSchema, Form)]
struct Sure {
    /// Send it now
    ok: bool,
}

/// Sends money: asks how much, then for a final confirmation.
#[tool(annotations(destructive_hint = true))]
async fn transfer(input: Input, to: String) -> Result<String, Error> {
    let amount: Amount = input
        .elicit("amount", format!("How much to send to {to}?"))
        .await?
        .accepted()?;
    let sure: Sure = input
        .elicit("sure", format!("Send {} to {to}?", amount.amount))
        .await?
        .accepted()?;
    if !sure.ok {
        return Ok("cancelled".into());
    }
    Ok(format!(
        "sent {} to {to} (confirmed on {})",
        amount.amount,
        instance()
    ))
}

#[derive(Serialize, Deserialize)]
struct Cart {
    items: Vec<String>,
}

/// Starts a cart; returns its handle.
#[tool]
async fn cart_new(handles: Handles, item: String) -> Result<String, HandleError> {
    handles.mint(&Cart { items: vec![item] }).await
}

/// Adds an item to a cart.
#[tool]
async fn cart_add(handles: Handles, cart: String, item: String) -> Result<String, HandleError> {
    // One step against concurrent adds on any instance (read, then `update`, loses one).
    let c: Cart = handles
        .modify(&cart, |c: &mut Cart| c.items.push(item.clone()))
        .await?;
    Ok(c.items.join(","))
}

/// Shows a cart's items.
#[tool(annotations(read_only_hint = true))]
async fn cart_show(handles: Handles, cart: String) -> Result<String, HandleError> {
    let c: Cart = handles.get(&cart).await?;
    Ok(c.items.join(","))
}

/// Lists the caller's carts (their handles).
#[tool(annotations(read_only_hint = true))]
async fn cart_list(handles: Handles) -> Result<String, HandleError> {
    let all = handles.list::<Cart>().await?;
    Ok(all
        .into_iter()
        .map(|(id, _)| id)
        .collect::<Vec<_>>()
        .join(","))
}

/// Exports `items` items, one every 50 ms, reporting progress; runs only as a task
/// (started on one instance, polled and cancelled through any).
#[tool(task = "required")]
async fn export(items: u32, progress: Progress) -> Result<String, Error> {
    if items > 10_000 {
        return Err(Error::new("at most 10000 items"));
    }
    for i in 0..items {
        progress.report(
            f64::from(i),
            Some(f64::from(items)),
            Some(&format!("item {i}")),
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(format!("exported {items} items on {}", instance()))
}

/// Switches the `report` tool on, on every instance.
#[tool]
async fn enable_reports(cx: Context) -> Result<String, Error> {
    let server = cx.server().ok_or_else(|| Error::new("shutting down"))?;
    let added = server.enable_tool("report").map_err(Error::new)?;
    Ok(if added { "enabled" } else { "already enabled" }.into())
}

/// Reports which instance served it.
#[tool(annotations(read_only_hint = true))]
async fn report() -> String {
    format!("report from {}", instance())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    mcp_runtime::telemetry::init();
    let mut builder = Server::builder("fleet", env!("CARGO_PKG_VERSION"))
        .tools(tools![
            whoami,
            transfer,
            cart_new,
            cart_add,
            cart_show,
            cart_list,
            enable_reports,
            export
        ])
        .standby_tools(tools![report]);
    // The key ring comes from MCP_REQUEST_STATE_KEYS (the same on every instance).
    // A task whose instance dies fails once its lease runs out (MCP_TASK_LEASE_MS).
    let mut tasks = Tasks::default();
    if let Some(ms) = std::env::var("MCP_TASK_LEASE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        tasks = tasks.lease(Duration::from_millis(ms));
    }
    let redis = match std::env::var("REDIS_URL") {
        Ok(url) => Some(mcp_runtime::store::redis::RedisStore::connect(&url).await?),
        Err(_) => None,
    };
    builder = match &redis {
        Some(redis) => builder
            .handle_store(redis.clone())
            .notification_bus(redis.clone())
            .tasks(tasks.store(redis.clone()))
            .request_state(RequestState::default().single_use(redis.clone())),
        None => builder
            .tasks(tasks)
            .request_state(RequestState::single_instance().single_use(MemoryReplayStore::new())),
    };
    let server = builder.build()?;
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    let lame = std::env::var("MCP_LAME_DUCK_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(mcp_runtime::http::DEFAULT_LAME_DUCK, Duration::from_millis);
    let mut http = server.http().lame_duck(lame);
    if let Some(redis) = redis {
        // Not ready while Redis does not answer.
        http = http.readiness_check(move || {
            let redis = redis.clone();
            async move { redis.ping().await.map_err(|e| e.to_string()) }
        });
    }
    if std::env::var_os("MCP_METRICS").is_some() {
        http = http.metrics(mcp_runtime::metrics::Metrics::install()?);
    }
    http.serve_until_signal(listener).await?;
    Ok(())
}
