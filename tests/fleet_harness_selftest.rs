//! The fleet harness itself (tests/common/fleet.rs): a real redis-server answers PING, and a
//! real nginx in front of two tiny HTTP upstreams spreads requests over both and logs them.
//!
//! Needs `redis-server` and `nginx` (Debian: redis-server, nginx-light; `.ci/run` installs
//! them). Without them the test skips with a message, unless `MCP_FLEET=required` (set by
//! `.ci/run` on CI).

#[path = "common/fleet.rs"]
mod fleet;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// An HTTP upstream on a free port that answers every request with `upstream-<port>` and
/// closes the connection; lives until the test process exits.
fn upstream() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind upstream");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
                // Read the request head (GETs carry no body) before answering.
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let body = format!("upstream-{port}");
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

/// One GET through nginx on a fresh connection; the whole response as text.
fn get(port: u16, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to nginx");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Method: tools/list\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read response");
    out
}

#[test]
fn redis_and_nginx_start_and_stop() {
    let missing: Vec<&str> = ["redis-server", "nginx"]
        .into_iter()
        .filter(|c| !fleet::have(c))
        .collect();
    if !missing.is_empty() {
        let why = format!(
            "{} not installed (Debian packages redis-server and nginx-light; .ci/run installs them)",
            missing.join(" and ")
        );
        if std::env::var("MCP_FLEET").as_deref() == Ok("required") {
            panic!("MCP_FLEET=required but {why}");
        }
        println!("skipped: {why}");
        return;
    }

    // Redis: PING -> +PONG.
    let redis = fleet::Redis::start();
    assert_eq!(redis.url(), format!("redis://127.0.0.1:{}/", redis.port));
    let mut s = TcpStream::connect(("127.0.0.1", redis.port)).expect("connect to redis");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"PING\r\n").unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).expect("read PONG");
    let reply = String::from_utf8_lossy(&buf[..n]);
    assert!(
        reply.starts_with("+PONG"),
        "redis answered {reply:?}\n{}",
        redis.log()
    );
    drop(s);

    // nginx over two upstreams: round robin reaches both.
    let (a, b) = (upstream(), upstream());
    let nginx = fleet::Nginx::start(&[a, b]);
    let mut seen = Vec::new();
    for i in 0..4 {
        let resp = get(nginx.port, &format!("/r{i}"));
        assert!(
            resp.starts_with("HTTP/1.1 200"),
            "response {i}: {resp}\nerror log:\n{}",
            nginx.error_log()
        );
        let upstream: u16 = resp
            .rsplit("upstream-")
            .next()
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("no upstream in response {i}: {resp}"));
        let header = resp
            .lines()
            .find_map(|l| l.strip_prefix("X-Upstream: "))
            .unwrap_or_else(|| panic!("no X-Upstream header in response {i}: {resp}"));
        assert_eq!(header.trim(), format!("127.0.0.1:{upstream}"));
        seen.push(upstream);
    }
    assert!(
        seen.contains(&a) && seen.contains(&b),
        "not round robin over {a} and {b}: {seen:?}"
    );

    // The access log has one line per request, with the status, Mcp-Method and upstream.
    let log = nginx.wait_access_log(4, Duration::from_secs(5));
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 4, "access log:\n{log}");
    for (line, upstream) in lines.iter().zip(&seen) {
        assert!(
            line.starts_with("200 tools/list \"GET /r"),
            "access log line: {line}"
        );
        assert!(
            line.ends_with(&format!(" 127.0.0.1:{upstream}")),
            "access log line: {line}"
        );
    }
    println!(
        "redis on {}, nginx on {} over {a} and {b}: {seen:?}",
        redis.port, nginx.port
    );
    println!("access log:\n{log}");

    // Dropping stops both and frees their ports.
    let (rport, nport) = (redis.port, nginx.port);
    drop(nginx);
    drop(redis);
    assert!(
        TcpStream::connect(("127.0.0.1", rport)).is_err(),
        "redis still listening"
    );
    assert!(
        TcpStream::connect(("127.0.0.1", nport)).is_err(),
        "nginx still listening"
    );
}
