//! Mounting the MCP router into an existing axum app, and graceful shutdown.

mod common;

use axum::Router;
use axum::routing::get;
use common::*;
use mcp_runtime::{Server, tool, tools};
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Says hi.
#[tool]
async fn hi() -> &'static str {
    "hi"
}

fn server() -> Server {
    Server::builder("mounted", "1.0")
        .tools(tools![hi])
        .build()
        .unwrap()
}

#[test]
fn the_router_nests_into_an_existing_app_with_its_layers() {
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .nest("/api", server().router())
        .layer(axum::middleware::from_fn(
            |req, next: axum::middleware::Next| async move {
                let mut res = next.run(req).await;
                res.headers_mut()
                    .insert("x-app-layer", "yes".parse().unwrap());
                res
            },
        ));
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = std_listener.local_addr().unwrap();
    std_listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        tokio::runtime::Runtime::new()
            .unwrap()
            .block_on(async move {
                let l = tokio::net::TcpListener::from_std(std_listener).unwrap();
                axum::serve(l, app).await.unwrap();
            })
    });
    let body = request(json!(1), "tools/call", json!({"name": "hi"}));
    let text = body.to_string();
    let headers = standard_headers(&body);
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let req = post_bytes(addr, text.as_bytes(), &h);
    let req = String::from_utf8(req)
        .unwrap()
        .replacen("POST /mcp", "POST /api/mcp", 1);
    let r = raw(addr, req.as_bytes());
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-app-layer"), Some("yes"));
    assert_eq!(r.json()["result"]["content"][0]["text"], "hi");
    let health = raw(
        addr,
        format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    assert_eq!(health.text(), "ok");
}

/// A `server/discover` POSTed to `addr` (from the blocking pool) is answered 200.
async fn discover_is_answered(addr: std::net::SocketAddr) {
    let r = tokio::task::spawn_blocking(move || {
        post(addr, &request(json!(1), "server/discover", json!({})))
    })
    .await
    .unwrap();
    assert_eq!(r.status, 200);
}

/// `serve`'s shutdown future need not be `Send` (the accept loop, boxed and `Send`, is told
/// of its end): one holding an `Rc` stops it, the server awaited on this thread.
#[tokio::test]
async fn serve_stops_on_a_shutdown_future_that_is_not_send() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = std::rc::Rc::new(tokio::sync::Notify::new());
    let stopping = std::rc::Rc::clone(&stop);
    let serving = server()
        .http()
        .drain_timeout(Duration::from_secs(2))
        .serve(listener, async move { stopping.notified().await });
    let client = async {
        discover_is_answered(addr).await;
        stop.notify_one();
    };
    let (served, ()) = tokio::time::timeout(Duration::from_secs(5), async {
        tokio::join!(serving, client)
    })
    .await
    .expect("serve returned");
    served.unwrap();
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "no longer accepting"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_stops_on_a_cancellation_token() {
    let token = CancellationToken::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(
        server()
            .http()
            .drain_timeout(Duration::from_secs(2))
            .serve(listener, token.clone().cancelled_owned()),
    );
    discover_is_answered(addr).await;
    token.cancel();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("serve returned")
        .unwrap()
        .unwrap();
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "no longer accepting"
    );
}
