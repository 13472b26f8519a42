//! Real services for the fleet tests: a `redis-server` (the shared store of several server
//! processes) and an `nginx` (the load balancer in front of them), each started as a child
//! process of the test on a free port of 127.0.0.1, with its files in a temporary directory of
//! its own, and stopped (SIGTERM, then SIGKILL after 2 s) and cleaned up on drop. Nothing is
//! left running and no system-wide instance or configuration is used.
//!
//! Both programs come from the Debian packages `redis-server` and `nginx-light`, which
//! `.ci/run` installs (its "services (install)" step) and then sets `MCP_FLEET=required` on CI;
//! a test calls [`have`] first and skips with a message when they are missing, unless
//! `MCP_FLEET=required` (then it fails).
//!
//! Include it with `#[path = "common/fleet.rs"] mod fleet;`. Only std is used; Unix-only
//! (signals go through the `kill` program, child processes are found under /proc).
#![allow(dead_code)]

use std::fs::{self, File};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a service may take to accept connections after it was started.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a service has to exit after SIGTERM before it gets SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// Start attempts (each on a new free port: another process may take the port in between).
const START_ATTEMPTS: usize = 3;

/// The path of program `cmd`: `cmd` itself when it contains a `/`, otherwise the first
/// executable file named `cmd` in `$PATH`, /usr/sbin or /usr/bin.
pub fn find_program(cmd: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if cmd.contains('/') {
        let p = PathBuf::from(cmd);
        return executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|dir| dir.join(cmd))
        .find(|p| executable(p))
}

/// Whether program `cmd` is on `$PATH` or in /usr/sbin or /usr/bin.
pub fn have(cmd: &str) -> bool {
    find_program(cmd).is_some()
}

/// Whether every program of `programs` is installed; when one is not, says the test is
/// skipped, or fails under `MCP_FLEET=required` (CI).
pub fn available(programs: &[&str]) -> bool {
    let missing: Vec<&str> = programs.iter().copied().filter(|p| !have(p)).collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var("MCP_FLEET").as_deref() != Ok("required"),
        "MCP_FLEET=required but {missing:?} not installed"
    );
    eprintln!("skipped: {missing:?} not installed");
    false
}

/// A TCP port of 127.0.0.1 that was free a moment ago (bound to port 0, read, released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// Waits until 127.0.0.1:`port` accepts a TCP connection; false when `timeout` passed first.
pub fn wait_port(port: u16, timeout: Duration) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + timeout;
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A new empty directory under the system temp dir, unique within and across processes.
fn temp_dir(kind: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mcp-fleet-{kind}-{}-{n}", std::process::id()));
    let _ = fs::remove_dir_all(&dir); // left over by an earlier process with the same pid
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    dir
}

/// A log file for a child's stdout and stderr.
fn log_to(path: &Path) -> (Stdio, Stdio) {
    let f = File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    let g = f.try_clone().expect("dup log file");
    (Stdio::from(f), Stdio::from(g))
}

fn read_lossy(path: &Path) -> String {
    fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// Sends signal `sig` (e.g. "TERM") to process `pid` with the `kill` program.
fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// The pids of the direct children of `pid` (from /proc/*/stat).
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| {
            // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
            fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

/// Waits up to `limit` for `child` to exit; true when it did.
fn wait_exit(child: &mut Child, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return true,
            Ok(None) if Instant::now() >= deadline => return false,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// SIGTERM, then SIGKILL (to it and to its children, e.g. nginx's workers) after
/// [`STOP_GRACE`]; always reaps the child.
fn stop(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    signal(child.id(), "TERM");
    if !wait_exit(child, STOP_GRACE) {
        for pid in children_of(child.id()) {
            signal(pid, "KILL");
        }
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// Waits until the freshly spawned `child` accepts on `port`. Err(log) when it exited first
/// (the log says why, e.g. the port was taken) or did not listen within [`START_TIMEOUT`].
fn await_listening(child: &mut Child, port: u16, log: &Path) -> Result<(), String> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "exited ({status}) before listening:\n{}",
                read_lossy(log)
            ));
        }
        if wait_port(port, Duration::from_millis(100)) {
            // Still ours? (another process may have taken the port in the meantime)
            return match child.try_wait() {
                Ok(None) => Ok(()),
                _ => Err(format!(
                    "exited after the port opened:\n{}",
                    read_lossy(log)
                )),
            };
        }
        if Instant::now() >= deadline {
            stop(child);
            return Err(format!(
                "not listening on {port} after {START_TIMEOUT:?}:\n{}",
                read_lossy(log)
            ));
        }
    }
}

/// A `redis-server` child on 127.0.0.1:`port`: no persistence (`--save ""`, no AOF), its
/// working directory and log (`redis.log`) in a temp dir. Killed and cleaned up on drop.
pub struct Redis {
    pub port: u16,
    child: Child,
    dir: PathBuf,
}

impl Redis {
    /// Starts `redis-server` on a free port and waits until it accepts connections.
    /// Panics (with its log) when it cannot be started.
    pub fn start() -> Redis {
        let bin = find_program("redis-server").expect("redis-server is not installed");
        let dir = temp_dir("redis");
        let log = dir.join("redis.log");
        let mut last = String::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port();
            let (out, err) = log_to(&log);
            let mut child = Command::new(&bin)
                .arg("--port")
                .arg(port.to_string())
                .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(&dir)
                .args(["--daemonize", "no", "--protected-mode", "yes"])
                .current_dir(&dir)
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .spawn()
                .unwrap_or_else(|e| panic!("spawn {}: {e}", bin.display()));
            match await_listening(&mut child, port, &log) {
                Ok(()) => return Redis { port, child, dir },
                Err(why) => last = why,
            }
        }
        let _ = fs::remove_dir_all(&dir);
        panic!("redis-server did not start: {last}");
    }

    /// `redis://127.0.0.1:PORT/`
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// What redis-server wrote to stdout and stderr so far.
    pub fn log(&self) -> String {
        read_lossy(&self.dir.join("redis.log"))
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        stop(&mut self.child);
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// An `nginx` child (master plus one worker) on 127.0.0.1:`port`, load-balancing round-robin
/// over upstream ports of 127.0.0.1 (`max_fails=3 fail_timeout=2s` each, a retry on the next
/// one on connect errors and timeouts, keep-alive upstream connections, no buffering in
/// either direction, every response carrying an `X-Upstream` header). Its prefix directory
/// (nginx.conf, logs, temp files) is a temp dir. Stopped and cleaned up on drop.
pub struct Nginx {
    pub port: u16,
    child: Child,
    dir: PathBuf,
}

impl Nginx {
    /// Writes the configuration, checks it (`nginx -t`), starts nginx on a free port in front
    /// of `upstreams` and waits until it accepts connections. Panics (with its error log)
    /// when it cannot be started.
    pub fn start(upstreams: &[u16]) -> Nginx {
        assert!(
            !upstreams.is_empty(),
            "Nginx::start needs at least one upstream"
        );
        let bin = find_program("nginx").expect("nginx is not installed");
        let dir = temp_dir("nginx");
        fs::create_dir_all(dir.join("tmp")).expect("create nginx tmp/");
        let prefix = format!("{}/", dir.display());
        let conf = dir.join("nginx.conf");
        let error_log = dir.join("error.log");
        let mut last = String::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port();
            fs::write(&conf, Self::config(port, upstreams)).expect("write nginx.conf");
            let test = Command::new(&bin)
                .args(["-t", "-q", "-p", &prefix, "-c"])
                .arg(&conf)
                .arg("-e")
                .arg(&error_log)
                .stdin(Stdio::null())
                .output()
                .unwrap_or_else(|e| panic!("spawn {}: {e}", bin.display()));
            if !test.status.success() {
                let _ = fs::remove_dir_all(&dir);
                panic!(
                    "nginx -t rejected the configuration:\n{}{}\n{}",
                    String::from_utf8_lossy(&test.stdout),
                    String::from_utf8_lossy(&test.stderr),
                    Self::config(port, upstreams)
                );
            }
            let (out, err) = log_to(&dir.join("nginx.out"));
            let mut child = Command::new(&bin)
                .args(["-p", &prefix, "-c"])
                .arg(&conf)
                .arg("-e")
                .arg(&error_log)
                .current_dir(&dir)
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .spawn()
                .unwrap_or_else(|e| panic!("spawn {}: {e}", bin.display()));
            match await_listening(&mut child, port, &error_log) {
                Ok(()) => return Nginx { port, child, dir },
                Err(why) => last = why,
            }
        }
        let _ = fs::remove_dir_all(&dir);
        panic!("nginx did not start: {last}");
    }

    /// nginx.conf for listening on `port` in front of `upstreams`. Relative paths are
    /// resolved against the prefix (`-p`).
    fn config(port: u16, upstreams: &[u16]) -> String {
        let servers: String = upstreams
            .iter()
            .map(|p| format!("        server 127.0.0.1:{p} max_fails=3 fail_timeout=2s;\n"))
            .collect();
        format!(
            r#"worker_processes 1;
daemon off;
pid nginx.pid;
error_log error.log warn;

events {{
    worker_connections 512;
}}

http {{
    # status, Mcp-Method request header ("-" when absent), request line, upstream(s) tried
    log_format fleet '$status $http_mcp_method "$request" $upstream_addr';
    access_log access.log fleet;

    client_body_temp_path tmp/client_body;
    proxy_temp_path tmp/proxy;
    fastcgi_temp_path tmp/fastcgi;
    uwsgi_temp_path tmp/uwsgi;
    scgi_temp_path tmp/scgi;

    upstream fleet {{
{servers}        keepalive 16;
        # Shorter than the servers' idle timeout (10 s): nginx closes an idle upstream
        # connection before the server would, so no request is sent on a closing one.
        keepalive_timeout 4s;
    }}

    server {{
        listen 127.0.0.1:{port};

        location / {{
            proxy_pass http://fleet;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_cache off;
            proxy_request_buffering off;
            proxy_read_timeout 3600s;
            proxy_send_timeout 3600s;
            proxy_next_upstream error timeout;
            add_header X-Upstream $upstream_addr always;
        }}
    }}
}}
"#
        )
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The access log so far, one line per finished request:
    /// `STATUS MCP-METHOD "REQUEST LINE" UPSTREAM[, UPSTREAM...]` (`-` for an absent value).
    /// nginx writes a line after the response went out, so a client that just read its
    /// response may not find it yet: see [`Nginx::wait_access_log`].
    pub fn access_log(&self) -> String {
        read_lossy(&self.dir.join("access.log"))
    }

    /// The access log once it has at least `lines` lines, or as it is after `timeout`.
    pub fn wait_access_log(&self, lines: usize, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let log = self.access_log();
            if log.lines().count() >= lines || Instant::now() >= deadline {
                return log;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The error log so far (level warn and above).
    pub fn error_log(&self) -> String {
        read_lossy(&self.dir.join("error.log"))
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        stop(&mut self.child);
        let _ = fs::remove_dir_all(&self.dir);
    }
}
