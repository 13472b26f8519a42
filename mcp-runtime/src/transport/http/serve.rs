//! The accept loop: connections served with their deadlines and the connection cap, then
//! the lame duck, the sweep of the listen backlog, and the drain.

use super::{DEFAULT_MAX_HEADERS, HttpServer, conn, handle};
use crate::server::slot::Slot;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// The most connections still waiting in the listen backlog when a lame duck ends that are
/// accepted and answered once instead of being reset by the listener's close.
const MAX_SWEPT: u32 = 1024;

/// What tells the accept loop to stop: it resolves with the lame duck time to observe.
pub(super) type Shutdown<'a> = Pin<Box<dyn Future<Output = Duration> + Send + 'a>>;

impl HttpServer {
    /// Serves until `shutdown` resolves with the lame duck time to observe.
    ///
    /// Boxed, and not generic over the shutdown future: an `async fn`'s body is compiled
    /// in every crate that polls it, so the accept loop would otherwise be compiled again
    /// in the application's crate (once per shutdown future type), beside this one.
    pub(super) fn serve_inner<'a>(
        self,
        listener: TcpListener,
        shutdown: Shutdown<'a>,
    ) -> Pin<Box<dyn Future<Output = io::Result<()>> + Send + 'a>> {
        Box::pin(self.accept_loop(listener, shutdown))
    }

    async fn accept_loop(
        self,
        listener: TcpListener,
        mut shutdown: Shutdown<'_>,
    ) -> io::Result<()> {
        use hyper_util::rt::{TokioExecutor, TokioIo};
        use hyper_util::server::graceful::GracefulShutdown;
        use hyper_util::service::TowerToHyperService;

        self.config
            .check(false)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        self.server
            .check_multi_instance()
            .map_err(io::Error::other)?;
        let local = listener.local_addr()?;
        let drain = self.config.drain;
        let server = self.server.clone();
        let sessions = Arc::clone(&self.sessions);
        let lifecycle = Arc::clone(&self.lifecycle);
        let cfg = self.config.clone();
        let health = cfg.health.is_some().then(|| self.health_router());
        let router = match health {
            Some(h) => self.into_router().merge(h),
            None => self.into_router(),
        };
        let graceful = GracefulShutdown::new();
        let mut builder = hyper::server::conn::http1::Builder::new();
        // The header deadline is `conn::Deadlines`' (one timer per connection, not one per
        // request as hyper's would be).
        builder.header_read_timeout(None).keep_alive(true);
        // A request's header section is capped at 64 KiB: a larger one is 431.
        builder.max_header_size(cfg.max_header_size);
        if cfg.max_headers != DEFAULT_MAX_HEADERS {
            builder.max_headers(cfg.max_headers);
        }
        let connections = Arc::new(tokio::sync::Semaphore::new(cfg.max_connections));
        let _ = TokioExecutor::new();
        tracing::info!("serving MCP on http://{local}/mcp");
        if !local.ip().is_loopback() && cfg.allowed_hosts.as_ref().is_some_and(Vec::is_empty) {
            // S-1: a bind beyond loopback with no Host allowed beyond it serves only clients
            // that name the server by a loopback name; anyone else gets 403.
            tracing::warn!(
                "{local} is not a loopback address, but only loopback Host names are allowed: \
                 requests naming this machine otherwise are refused (403); allow the names \
                 clients use with `allow_host` (and browser origins with `allow_origin`)"
            );
        }
        // Serves one accepted connection, holding `permit` until it closes.
        let serve_connection =
            |stream: tokio::net::TcpStream,
             peer: SocketAddr,
             permit: tokio::sync::OwnedSemaphorePermit| {
                let _ = stream.set_nodelay(true);
                // The connection is busy while one of its requests is served (until its
                // response is fully sent); silence is then expected, and the idle deadline
                // sleeps.
                let busy = Arc::new(conn::Busy::default());
                let counted = Arc::clone(&busy);
                let router = router.clone();
                let going = Arc::clone(&lifecycle);
                let service =
                    tower::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        use std::sync::atomic::Ordering;
                        let number = counted.started.fetch_add(1, Ordering::Release) + 1;
                        let held = Slot::enter(&counted.serving);
                        let mut router = router.clone();
                        let going = Arc::clone(&going);
                        // Its head carried Content-Length and Transfer-Encoding (S-3):
                        // refused, and the connection closed (hyper closes it after such a
                        // request too).
                        let conflict = counted.framing_conflict.load(Ordering::Acquire) == number;
                        async move {
                            if conflict {
                                drop(req);
                                let mut resp = handle::refuse(
                                    hyper::StatusCode::BAD_REQUEST,
                                    crate::protocol::RpcError::invalid_request(
                                        "Content-Length and Transfer-Encoding together",
                                    ),
                                );
                                resp.headers_mut().insert(
                                    hyper::header::CONNECTION,
                                    hyper::header::HeaderValue::from_static("close"),
                                );
                                return Ok(resp.map(|b| conn::holding(b, held)));
                            }
                            let mut resp = tower::Service::call(&mut router, req).await?;
                            if going.closing() {
                                // Draining: this connection ends after this response.
                                resp.headers_mut().insert(
                                    hyper::header::CONNECTION,
                                    hyper::header::HeaderValue::from_static("close"),
                                );
                            }
                            Ok::<_, std::convert::Infallible>(resp.map(|b| conn::holding(b, held)))
                        }
                    });
                let io = conn::Deadlines::new(
                    stream,
                    cfg.idle_timeout,
                    cfg.header_read_timeout,
                    cfg.write_stall_timeout,
                    busy,
                );
                let conn =
                    builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!(%peer, "connection ended: {e}");
                    }
                    drop(permit);
                });
            };
        // Set once shutdown began: when the lame duck time ends.
        let mut stop_at: Option<tokio::time::Instant> = None;
        let mut lame = Duration::ZERO;
        // Set when the loop ends because the lame duck time is over.
        let mut lame_ended = false;
        loop {
            let until = stop_at;
            let lame_over = async move {
                match until {
                    Some(t) => tokio::time::sleep_until(t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::pin!(lame_over);
            // At the cap, stop accepting: new connections wait in the backlog.
            let next = async {
                let permit = Arc::clone(&connections).acquire_owned().await.ok()?;
                Some((permit, listener.accept().await))
            };
            let (permit, accepted) = tokio::select! {
                next = next => match next {
                    Some(next) => next,
                    None => break,
                },
                d = &mut shutdown, if stop_at.is_none() => {
                    lame = d;
                    match lifecycle.lame_duck_until(d) {
                        None => break,
                        until => { stop_at = until; continue }
                    }
                }
                () = &mut lame_over => {
                    lame_ended = true;
                    break;
                }
            };
            let (stream, peer): (tokio::net::TcpStream, SocketAddr) = match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors and the like: back off instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    drop(permit);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            serve_connection(stream, peer, permit);
        }
        lifecycle.going_away();
        lifecycle.close_connections();
        // After a lame duck, a balancer may have connected meanwhile and sent its request:
        // closing the listener would reset what still waits in the backlog, and a balancer
        // does not send a POST again once it reached an instance. So what waits there now
        // is accepted and answered once (`Connection: close`), past the cap too (up to
        // `MAX_SWEPT`), counted by `swept` for the drain. Best effort: a connection that
        // arrives while the listener closes is still reset. Without a lame duck (SIGINT,
        // or none set), the process is wanted gone at once, and nothing is swept.
        let swept = Arc::new(tokio::sync::Semaphore::new(MAX_SWEPT as usize));
        if lame_ended {
            match listener.into_std() {
                Ok(waiting) => sweep(&waiting, &connections, &swept, serve_connection),
                Err(e) => tracing::warn!("could not sweep the listen backlog: {e}"),
            }
        } else {
            drop(listener);
        }
        tracing::info!("shutting down; draining open connections");
        // Listen streams end with their result, and legacy sessions' GET streams end, so
        // their connections can close. The sessions' requests in flight finish with the
        // drain, as modern ones do; the sessions end after it.
        server.close_subscriptions();
        let all = u32::try_from(cfg.max_connections).unwrap_or(u32::MAX);
        let started = tokio::time::Instant::now();
        if !lame.is_zero() {
            // Open connections end after their next response; idle ones are left for the
            // client (a balancer's pool) to close, so none is cut while a request is on
            // its way. Whatever is left at the end of the drain is closed below.
            let all_closed = async {
                let _ = connections.acquire_many(all).await;
                let _ = swept.acquire_many(MAX_SWEPT).await;
            };
            let _ = tokio::time::timeout(drain, all_closed).await;
        }
        let left = drain.saturating_sub(started.elapsed());
        if tokio::time::timeout(left, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("connections still open after {drain:?}; closing");
        }
        sessions.close_all();
        // Tasks running here get what is left of the drain to end; those that do not are
        // recorded as failed.
        server
            .drain_tasks(drain.saturating_sub(started.elapsed()))
            .await;
        tracing::info!(drained_in = ?started.elapsed(), "stopped");
        Ok(())
    }
}

/// Accepts what waits in `waiting`'s backlog (up to [`MAX_SWEPT`]) and serves each with a
/// permit of `connections`, or past the cap one of `swept`. Ends when the backlog is empty,
/// or on an error that is not about one connection (out of descriptors), said as a warning.
fn sweep(
    waiting: &std::net::TcpListener,
    connections: &Arc<tokio::sync::Semaphore>,
    swept: &Arc<tokio::sync::Semaphore>,
    serve: impl Fn(tokio::net::TcpStream, SocketAddr, tokio::sync::OwnedSemaphorePermit),
) {
    use io::ErrorKind::{ConnectionAborted, ConnectionReset, Interrupted, WouldBlock};
    for _ in 0..MAX_SWEPT {
        let (stream, peer) = match waiting.accept() {
            Ok(a) => a,
            Err(e) if e.kind() == WouldBlock => break,
            // That connection's own end (its client gave up): on to the next.
            Err(e) if matches!(e.kind(), ConnectionAborted | ConnectionReset | Interrupted) => {
                continue;
            }
            Err(e) => {
                tracing::warn!("sweeping the listen backlog stopped: {e}");
                break;
            }
        };
        let Ok(stream) = stream
            .set_nonblocking(true)
            .and_then(|()| tokio::net::TcpStream::from_std(stream))
        else {
            continue;
        };
        let permit = Arc::clone(connections)
            .try_acquire_owned()
            .or_else(|_| Arc::clone(swept).try_acquire_owned());
        if let Ok(permit) = permit {
            serve(stream, peer, permit);
        }
    }
}
