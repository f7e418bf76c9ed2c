//! `ccc serve` when its output goes nowhere: stdout on a full disk, a
//! closed pipe (`ccc serve --access-log | head -1`), a pipe nobody reads.
//! Requests are answered regardless, and every answer is checked.

use crate::serve_util::{Client, STARTUP, get, poll_until, sigterm, wait_timeout};
use crate::util::Workspace;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the log may take to flow again once read.
const RECOVERY: Duration = Duration::from_secs(5);

/// `app@1.0.0` with one small file; returns its bytes.
fn publish_one(ws: &Workspace) -> Vec<u8> {
    let body = b"version 1\n".to_vec();
    ws.write("dist/v.txt", &body);
    ws.publish("app@1.0.0", "dist", &[]);
    body
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// A `ccc serve --access-log` whose stdout (and stderr) the test wires
/// itself; a piped stderr is collected. Killed and reaped on drop.
struct Bare {
    child: Child,
    stderr: Arc<Mutex<String>>,
    base: String,
}

impl Bare {
    /// Spawns `ccc serve --port PORT --access-log` with stdout and stderr
    /// going to `stdout` and `stderr`; call [`Bare::wait_ready`] once `base`
    /// is known.
    fn spawn_with(ws: &Workspace, port: u16, stdout: Stdio, stderr: Stdio) -> Bare {
        let mut child = ws
            .ccc_std()
            .args(["serve", "--port", &port.to_string(), "--access-log"])
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .expect("spawn ccc serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(pipe) = child.stderr.take() {
            let buf = stderr.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    let mut all = buf.lock().expect("stderr");
                    all.push_str(&line);
                    all.push('\n');
                }
            });
        }
        Bare {
            child,
            stderr,
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    /// [`Bare::spawn_with`] stderr piped and collected.
    fn spawn(ws: &Workspace, port: u16, stdout: Stdio) -> Bare {
        Bare::spawn_with(ws, port, stdout, Stdio::piped())
    }

    /// Spawns on a port found free (stdout may not show the address) and
    /// waits until the server answers.
    fn start(ws: &Workspace, stdout: Stdio) -> Bare {
        Bare::start_with(ws, stdout, Stdio::piped())
    }

    fn start_with(ws: &Workspace, stdout: Stdio, stderr: Stdio) -> Bare {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut bare = Bare::spawn_with(ws, port, stdout, stderr);
        bare.wait_ready();
        bare
    }

    fn wait_ready(&mut self) {
        let url = format!("{}/healthz", self.base);
        let up = poll_until(STARTUP, || {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("ccc serve exited with {status}: {}", self.stderr());
            }
            ureq::get(&url).call().is_ok()
        });
        assert!(up.is_some(), "ccc serve did not answer: {}", self.stderr());
    }

    fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr").clone()
    }

    fn stats(&self) -> Value {
        get(&format!("{}/_stats", self.base), &[]).json()
    }

    /// SIGTERM; the exit must be clean and prompt. Returns stderr.
    fn stop(mut self) -> String {
        sigterm(self.child.id());
        let status = wait_timeout(&mut self.child, STARTUP).expect("exits after SIGTERM");
        assert!(status.success(), "{status}: {}", self.stderr());
        // Give the collector the last lines.
        std::thread::sleep(Duration::from_millis(100));
        self.stderr()
    }
}

impl Drop for Bare {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `n` requests for a real file, every answer checked.
fn serve_some(base: &str, expected: &[u8], n: usize) {
    let client = Client::new();
    for _ in 0..n {
        let r = client.get(&format!("{base}/assets/app/1.0.0/v.txt"), &[]);
        assert_eq!((r.status, &r.body[..]), (200, expected));
    }
}

#[test]
fn serving_goes_on_when_stdout_is_a_full_disk() {
    let ws = Workspace::new();
    let body = publish_one(&ws);
    let server = Bare::start(&ws, dev_full());
    serve_some(&server.base, &body, 50);
    // One line per answered request (the readiness probes too), written
    // by the log's own thread.
    let dropped = |stats: &Value| stats["log"]["stdout"]["dropped"].as_u64() >= Some(51);
    assert!(poll_until(RECOVERY, || dropped(&server.stats())).is_some());
    let stats = server.stats();
    assert_eq!(stats["log"]["stdout"]["written"], 0, "{stats}");
    let stderr = server.stop();
    assert_eq!(
        count(&stderr, "warning: stdout is not writable"),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("No space left on device"), "{stderr}");
}

fn dev_full() -> Stdio {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    Stdio::from(full)
}

#[test]
fn serving_goes_on_when_stdout_and_stderr_are_both_full() {
    // Nobody can be told; the counters still say what was lost.
    let ws = Workspace::new();
    let body = publish_one(&ws);
    let server = Bare::start_with(&ws, dev_full(), dev_full());
    serve_some(&server.base, &body, 20);
    // stderr had the startup line and the warning about stdout.
    let lost = |stats: &Value| {
        stats["log"]["stdout"]["dropped"].as_u64() >= Some(21)
            && stats["log"]["stderr"]["dropped"].as_u64() >= Some(2)
    };
    let seen = poll_until(RECOVERY, || lost(&server.stats()));
    assert!(seen.is_some(), "{}", server.stats());
    let stats = server.stats();
    assert_eq!(stats["log"]["stderr"]["written"], 0, "{stats}");
    server.stop();
}

#[test]
fn serving_goes_on_when_stdout_is_a_closed_pipe() {
    // `ccc serve --access-log | head -1`
    let ws = Workspace::new();
    let body = publish_one(&ws);
    let mut server = Bare::spawn(&ws, 0, Stdio::piped());
    // stdout holds the log alone: the address is on stderr.
    let listening = poll_until(STARTUP, || server.stderr().contains("listening on "));
    assert!(listening.is_some(), "{}", server.stderr());
    let stderr = server.stderr();
    server.base = stderr
        .lines()
        .find_map(|l| l.strip_prefix("listening on "))
        .expect("the listening line")
        .to_string();
    server.wait_ready();
    let mut out = BufReader::new(server.child.stdout.take().expect("stdout"));
    let mut first = String::new();
    out.read_line(&mut first).expect("the first log line");
    assert!(
        first.contains("\"GET /healthz HTTP/1.1\" 200 "),
        "{first:?}"
    );
    drop(out); // what `head -1` does once it has its line
    serve_some(&server.base, &body, 50);
    let dropped = |stats: &Value| stats["log"]["stdout"]["dropped"].as_u64() >= Some(50);
    assert!(
        poll_until(RECOVERY, || dropped(&server.stats())).is_some(),
        "{}",
        server.stats()
    );
    let stderr = server.stop();
    assert_eq!(
        count(&stderr, "warning: stdout is not writable"),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("Broken pipe"), "{stderr}");
}

#[test]
fn a_stdout_nobody_reads_never_stalls_the_server() {
    // `ccc serve --access-log | less`, and nobody scrolls: the pipe fills
    // (64 KiB), then the log's queue (1 MiB); requests go on regardless.
    let ws = Workspace::new();
    let body = publish_one(&ws);
    let mut server = Bare::start(&ws, Stdio::piped());
    let unread = server.child.stdout.take().expect("stdout");
    // Lines of ~8 KiB: a request target just under the server's limit.
    let long = format!("/assets/app/1.0.0/{}", "x".repeat(8000));
    let client = Client::new();
    let started = Instant::now();
    let n = 300; // 2.4 MB of log lines
    for _ in 0..n {
        let r = client.get(&format!("{}{long}", server.base), &[]);
        assert_eq!(r.status, 404);
    }
    serve_some(&server.base, &body, 5);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(60), "{n} requests took {took:?}");
    let stats = server.stats();
    assert!(
        stats["log"]["stdout"]["dropped"].as_u64() > Some(0),
        "{stats}"
    );
    let warned = poll_until(RECOVERY, || {
        server
            .stderr()
            .contains("warning: stdout is not keeping up")
    });
    assert!(warned.is_some(), "{}", server.stderr());
    // Once read again, the log flows: what was queued, then new lines.
    let drain = std::thread::spawn(move || {
        let mut unread = unread;
        let mut log = Vec::new();
        let _ = unread.read_to_end(&mut log);
        log
    });
    let flowing = poll_until(RECOVERY, || {
        serve_some(&server.base, &body, 1);
        server.stderr().contains("note: stdout is working again")
    });
    assert!(flowing.is_some(), "{}", server.stderr());
    let stderr = server.stop();
    assert_eq!(
        count(&stderr, "warning: stdout is not keeping up"),
        1,
        "one episode: {stderr}"
    );
    let log = String::from_utf8(drain.join().expect("reader")).expect("UTF-8 log");
    // Log lines alone, the server's own lines on stderr.
    assert!(
        log.lines().all(|l| l.starts_with("127.0.0.1 - - [")),
        "{}",
        &log[..80.min(log.len())]
    );
    assert!(
        log.contains("\"GET /assets/app/1.0.0/v.txt HTTP/1.1\" 200 "),
        "new lines are written"
    );
}
