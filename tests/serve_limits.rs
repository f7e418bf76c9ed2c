//! `ccc serve` against clients that misbehave: the accept loop outlives a
//! descriptor shortage, the connection cap answers 503, each timeout closes
//! its connection, clients that stop reading hold no worker, heads over the
//! limits are refused, and request bodies are never buffered.
//!
//! Raw sockets throughout: an HTTP library would not send these requests.
//! Timeouts are short here (1-3 s) and bounds generous, for a busy machine.

use crate::serve_util::{Client, RawResp, Server, parse_raw, poll_until, raw_get};
use crate::util::{Rng, Workspace, ccc_path, hermetic};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Bytes of the large asset: more than loopback socket buffers hold, so a
/// client that does not read leaves the server with bytes to send.
const BIG: usize = 16 << 20;

/// Publishes `site@1.0.0` with `v.txt` and, when asked, the large
/// incompressible `big.bin`.
fn site(ws: &Workspace, big: bool) {
    let mut files = vec![("v.txt".to_string(), b"1.0.0".to_vec())];
    if big {
        files.push(("big.bin".to_string(), Rng::new(7).bytes(BIG)));
    }
    ws.write_tree("site", &files);
    ws.publish("site@1.0.0", "site", &["--level", "1"]);
}

fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    stream
}

/// Sends `bytes`, then reads until the server closes: the answer, if any,
/// and how long the server took to close.
fn exchange(addr: SocketAddr, bytes: &[u8]) -> (Option<RawResp>, Duration) {
    let mut stream = connect(addr);
    let started = Instant::now();
    // The server may refuse and close before taking everything.
    let _ = stream.write_all(bytes);
    let all = read_until_closed(&mut stream);
    (parse_raw(&all), started.elapsed())
}

/// Everything the server sends until it closes (or resets) the connection.
fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut all = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return all,
            Ok(n) => all.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return all,
            Err(e) => panic!("the server did not close the connection: {e}"),
        }
    }
}

/// Reads one response off a kept-alive connection: its body is as long as
/// `Content-Length` says, and absent for a HEAD, a 204 or a 304.
fn read_answer(stream: &mut TcpStream, head_only: bool) -> RawResp {
    let mut all = Vec::new();
    let mut byte = [0u8; 1];
    while !all.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("a response head");
        assert_eq!(n, 1, "closed mid-head: {:?}", String::from_utf8_lossy(&all));
        all.push(byte[0]);
    }
    let head = parse_raw(&all).expect("an HTTP head");
    let length: usize = match head.status {
        204 | 304 => 0,
        _ if head_only => 0,
        _ => head
            .header("content-length")
            .and_then(|l| l.parse().ok())
            .expect("Content-Length"),
    };
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).expect("the body");
    all.extend_from_slice(&body);
    parse_raw(&all).expect("a response")
}

#[track_caller]
fn json_error(r: &RawResp, status: u16) {
    assert_eq!(r.status, status, "{r:?}");
    assert_eq!(r.header("connection"), Some("close"), "{r:?}");
    let json = r.json();
    assert_eq!(json["status"], status, "{json}");
}

/// 200 for a small asset, over a fresh connection.
#[track_caller]
fn still_serving(server: &Server) {
    let r = raw_get(server.addr, "GET", "/assets/site/1.0.0/v.txt", &[]);
    assert_eq!((r.status, r.body()), (200, b"1.0.0".to_vec()), "{r:?}");
}

/// Waits for `needle` on the server's stderr (the startup line comes just
/// after the address is printed).
#[track_caller]
fn stderr_shows(server: &Server, needle: &str) {
    let seen = poll_until(Duration::from_secs(10), || server.stderr().contains(needle));
    assert!(seen.is_some(), "no {needle:?} in: {}", server.stderr());
}

#[test]
fn accepting_survives_running_out_of_descriptors() {
    let ws = Workspace::new();
    site(&ws, false);
    // 64 descriptors, soft and hard (so raising them changes nothing),
    // and a cap far above what they allow.
    let mut cmd = std::process::Command::new("sh");
    hermetic(&mut cmd);
    cmd.current_dir(ws.path())
        .arg("-c")
        .arg("ulimit -n 64 && exec \"$0\" \"$@\"")
        .arg(ccc_path())
        .args(["serve", "--db"])
        .arg(ws.db())
        .args(["--port", "0", "--threads", "2", "--max-connections", "1000"]);
    let server = Server::start_with(&mut cmd);
    stderr_shows(&server, "open files 64");
    still_serving(&server);

    // Connections past the descriptors wait in the kernel's backlog while
    // `accept` fails with EMFILE.
    let held: Vec<TcpStream> = (0..100).map(|_| connect(server.addr)).collect();
    let failing = poll_until(Duration::from_secs(20), || {
        server.stderr().contains("accepting connections failed")
    });
    assert!(failing.is_some(), "no EMFILE: {}", server.stderr());
    assert!(
        server.stderr().contains("Too many open files"),
        "{}",
        server.stderr()
    );
    // The burst goes on (every retry fails) and is logged once, not once
    // per failure. A descriptor freed mid-burst (a connection thread
    // ending) lets one accept through and starts a new burst, so a loaded
    // machine may show a second line; never one per failure.
    std::thread::sleep(Duration::from_secs(1));
    let lines = server
        .stderr()
        .matches("accepting connections failed")
        .count();
    assert!(
        (1..=3).contains(&lines),
        "{lines} lines for one burst: {}",
        server.stderr()
    );

    // Descriptors come back: the same listener serves again.
    drop(held);
    still_serving(&server);
    let stats = server.stats();
    assert!(
        stats["connections"]["accept_errors"].as_u64() > Some(lines as u64),
        "fewer failed accepts than log lines: {stats}"
    );
}

#[test]
fn past_the_connection_cap_a_new_connection_gets_503_at_once() {
    let ws = Workspace::new();
    site(&ws, true);
    let server = Server::start(&ws, &["--max-connections", "4"]);
    stderr_shows(&server, "up to 4 connections");
    // Four connections answering a request: each takes nothing of a body
    // larger than the socket buffers, so its response stays in flight.
    let held: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = connect(server.addr);
            s.write_all(b"GET /assets/site/1.0.0/big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
                .expect("a request");
            // Its answer has begun: the request holds its place.
            s.read_exact(&mut [0; 12])
                .expect("the answer's first bytes");
            s
        })
        .collect();
    let (refused, took) = exchange(server.addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    let refused = refused.expect("an answer");
    json_error(&refused, 503);
    assert_eq!(refused.header("retry-after"), Some("1"), "{refused:?}");
    assert!(
        took < Duration::from_secs(3),
        "answered at once, took {took:?}"
    );

    drop(held);
    let back = poll_until(Duration::from_secs(10), || {
        exchange(
            server.addr,
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .0
        .is_some_and(|r| r.status == 200)
    });
    assert!(back.is_some(), "served again once the four closed");
    let stats = server.stats();
    assert!(
        stats["connections"]["refused"].as_u64() >= Some(1),
        "{stats}"
    );
    assert!(stats["by_status"]["503"].as_u64() >= Some(1), "{stats}");
}

#[test]
fn at_the_cap_connections_without_a_request_make_room_oldest_first() {
    let ws = Workspace::new();
    site(&ws, false);
    // A connection that has not sent a whole request yet, of each kind
    // (silent, half a head, part of the HTTP/2 preface), or that is idle
    // after one, gives its place to a newcomer at the cap.
    let starts: [&[u8]; 4] = [
        b"",
        b"GET /healthz HTTP/1.1\r\n",
        b"PRI * HTTP/2",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
    ];
    for start in starts {
        let server = Server::start(&ws, &["--max-connections", "2"]);
        let mut oldest = connect(server.addr);
        oldest.write_all(start).expect("a start");
        if start.ends_with(b"\r\n\r\n") {
            assert_eq!(read_answer(&mut oldest, false).status, 200);
        }
        std::thread::sleep(Duration::from_millis(100));
        let mut younger = connect(server.addr);
        younger.write_all(start).expect("a start");
        if start.ends_with(b"\r\n\r\n") {
            assert_eq!(read_answer(&mut younger, false).status, 200);
        }
        std::thread::sleep(Duration::from_millis(100));
        let (answer, took) = exchange(
            server.addr,
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        let what = String::from_utf8_lossy(start);
        let answer = answer.unwrap_or_else(|| panic!("{what:?}: no answer"));
        assert_eq!(answer.status, 200, "{what:?}: {answer:?}");
        assert!(took < Duration::from_secs(3), "{what:?}: took {took:?}");
        // The oldest was closed for it, not the younger one.
        let mut rest = Vec::new();
        oldest
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        assert!(
            matches!(oldest.read_to_end(&mut rest), Ok(_) | Err(_)),
            "the oldest connection was closed"
        );
        younger.set_nonblocking(true).expect("nonblocking");
        let mut byte = [0u8; 1];
        assert!(
            matches!(younger.read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{what:?}: the younger connection is still open"
        );
        // The answered connection's slot is given back just after its
        // close reaches the client; asking for the stats before would
        // find the cap reached and make room again.
        std::thread::sleep(Duration::from_millis(200));
        let stats = server.stats();
        assert_eq!(
            stats["connections"]["reclaimed"].as_u64(),
            Some(1),
            "{stats}"
        );
        assert_eq!(stats["connections"]["refused"].as_u64(), Some(0), "{stats}");
    }
}

#[test]
fn a_head_not_complete_in_time_closes_the_connection() {
    let ws = Workspace::new();
    site(&ws, false);
    let server = Server::start(
        &ws,
        &["--header-timeout", "1s", "--keepalive-timeout", "30s"],
    );

    // Nothing sent at all.
    let (answer, took) = exchange(server.addr, b"");
    assert!(answer.is_none(), "{answer:?}");
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(10),
        "closed after {took:?}"
    );

    // Half a head.
    let (answer, took) = exchange(server.addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\n");
    assert!(answer.is_none(), "{answer:?}");
    assert!(took < Duration::from_secs(10), "closed after {took:?}");

    // A byte every 200 ms: each read is quick, the head is not, and the
    // deadline is for the whole head.
    let mut stream = connect(server.addr);
    let mut dripper = stream.try_clone().expect("clone");
    let drip = std::thread::spawn(move || {
        for byte in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: yes\r\n\r\n" {
            if dripper.write_all(&[*byte]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let started = Instant::now();
    let all = read_until_closed(&mut stream);
    let took = started.elapsed();
    assert!(all.is_empty(), "{:?}", String::from_utf8_lossy(&all));
    assert!(
        took < Duration::from_secs(6),
        "closed after {took:?}, not after 10 s of drip"
    );
    drip.join().expect("dripper");

    still_serving(&server);
    let stats = server.stats();
    assert!(
        stats["connections"]["header_timeouts"].as_u64() >= Some(3),
        "{stats}"
    );
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_keepalive_timeout() {
    let ws = Workspace::new();
    site(&ws, false);
    let server = Server::start(
        &ws,
        &["--header-timeout", "1s", "--keepalive-timeout", "3s"],
    );
    let mut stream = connect(server.addr);
    // Busy for longer than the keep-alive timeout, one request every
    // 500 ms: only idle time counts.
    let busy = Instant::now();
    while busy.elapsed() < Duration::from_secs(4) {
        stream
            .write_all(b"GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("request");
        let r = read_answer(&mut stream, false);
        assert_eq!((r.status, r.body()), (200, b"1.0.0".to_vec()));
        std::thread::sleep(Duration::from_millis(500));
    }
    // Then idle: closed after the keep-alive timeout, not the header one.
    let idle = Instant::now();
    let rest = read_until_closed(&mut stream);
    let took = idle.elapsed();
    assert!(rest.is_empty(), "{:?}", String::from_utf8_lossy(&rest));
    assert!(
        took >= Duration::from_millis(2000) && took < Duration::from_secs(15),
        "closed after {took:?} idle"
    );
    let stats = server.stats();
    assert!(
        stats["connections"]["idle_closed"].as_u64() >= Some(1),
        "{stats}"
    );
}

#[test]
fn a_client_that_stops_reading_loses_its_connection_after_the_send_timeout() {
    let ws = Workspace::new();
    site(&ws, true);
    let server = Server::start(&ws, &["--send-timeout", "1s"]);
    let mut stream = connect(server.addr);
    stream
        .write_all(b"GET /assets/site/1.0.0/big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("request");
    let dropped = poll_until(Duration::from_secs(20), || {
        server.stats()["connections"]["send_timeouts"].as_u64() >= Some(1)
    });
    assert!(dropped.is_some(), "{}", server.stats());
    // What reached the socket buffers, and then the end: never the whole body.
    let got = read_until_closed(&mut stream);
    assert!(
        got.len() < BIG,
        "{} bytes: the response was cut off",
        got.len()
    );
    still_serving(&server);
}

#[test]
fn sixteen_clients_that_stop_reading_do_not_stop_four_workers() {
    let ws = Workspace::new();
    site(&ws, true);
    let server = Server::start(&ws, &["--threads", "4"]);
    // Warm the cache so the stalled responses come from memory.
    let client = Client::new();
    assert_eq!(
        client
            .get(&server.url("/assets/site/1.0.0/big.bin"), &[])
            .body
            .len(),
        BIG
    );

    let stalled: Vec<TcpStream> = (0..16)
        .map(|_| {
            let mut s = connect(server.addr);
            s.write_all(b"GET /assets/site/1.0.0/big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
                .expect("request");
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));

    // Every worker has had a stalled response to write; others are served.
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    for _ in 0..40 {
        let one = Instant::now();
        let r = client.get(&server.url("/assets/site/1.0.0/v.txt"), &[]);
        assert_eq!((r.status, r.text().as_str()), (200, "1.0.0"));
        slowest = slowest.max(one.elapsed());
    }
    assert!(
        slowest < Duration::from_secs(3),
        "slowest of 40 requests {slowest:?} ({:?} in all)",
        started.elapsed()
    );
    let stats = server.stats();
    assert!(stats["connections"]["open"].as_u64() >= Some(17), "{stats}");
    drop(stalled);
}

/// A refusal hyper answers itself, before ccc sees a request: the
/// status, and the connection closed (no body: hyper sends none).
#[track_caller]
fn refused_by_hyper(r: &RawResp, status: u16) {
    assert_eq!(r.status, status, "{r:?}");
    assert_eq!(r.header("connection"), Some("close"), "{r:?}");
}

#[test]
fn heads_over_the_limits_are_refused_then_closed() {
    let ws = Workspace::new();
    site(&ws, false);
    let server = Server::start(&ws, &[]);
    let request = |extra: &str| format!("GET /healthz HTTP/1.1\r\nHost: x\r\n{extra}\r\n");

    // A header line over 8 KiB in a head that fits: ccc's 431.
    let long = request(&format!("X-Long: {}\r\n", "v".repeat(9 * 1024)));
    let (answer, _) = exchange(server.addr, long.as_bytes());
    json_error(&answer.expect("an answer to a long line"), 431);

    // 100 header lines, Host among them, are the most a head may have.
    let most = request(
        &(0..98)
            .map(|i| format!("X-{i}: 1\r\n"))
            .chain(["Connection: close\r\n".to_string()])
            .collect::<String>(),
    );
    let (answer, _) = exchange(server.addr, most.as_bytes());
    assert_eq!(answer.expect("an answer to 100 lines").status, 200);
    // 101 header lines: hyper's 431.
    let many = request(
        &(0..101)
            .map(|i| format!("X-{i}: 1\r\n"))
            .collect::<String>(),
    );
    let (answer, _) = exchange(server.addr, many.as_bytes());
    refused_by_hyper(&answer.expect("an answer to 101 lines"), 431);
    // Five 7 KiB lines (each fits, the head of over 32 KiB does not):
    // hyper's 431 when the head passed its buffer in pieces, ccc's when
    // it came whole.
    let total = request(&format!("X-Seven: {}\r\n", "v".repeat(7 * 1024)).repeat(5));
    let (answer, _) = exchange(server.addr, total.as_bytes());
    let answer = answer.expect("an answer to a 35 KiB head");
    assert_eq!(
        (answer.status, answer.header("connection")),
        (431, Some("close")),
        "{answer:?}"
    );

    // A 1 MiB header line is refused once the head's 32 KiB arrived: the
    // server neither reads nor keeps the rest.
    let mut huge = request(&format!("X-Huge: {}\r\n", "h".repeat(1 << 20))).into_bytes();
    huge.truncate(huge.len() - 4);
    let (answer, _) = exchange(server.addr, &huge);
    refused_by_hyper(&answer.expect("an answer"), 431);

    // A request line that never ends is a head too large.
    let endless = format!("GET /{}", "a".repeat(64 * 1024));
    let (answer, _) = exchange(server.addr, endless.as_bytes());
    refused_by_hyper(&answer.expect("an answer"), 431);

    // A complete request with a target over 8 KiB: the router's 414.
    let target = format!(
        "GET /assets/{} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(9 * 1024)
    );
    let (answer, _) = exchange(server.addr, target.as_bytes());
    json_error(&answer.expect("an answer to a long target"), 414);

    // Bytes that are not HTTP/1.x (the HTTP/2 preface is HTTP/2: see
    // serve_protocol).
    for junk in [
        &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 a TLS hello"[..],
        b"hello, server\r\n\r\n",
        b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
    ] {
        let (answer, _) = exchange(server.addr, junk);
        let answer = answer.unwrap_or_else(|| panic!("no answer to {junk:?}"));
        refused_by_hyper(&answer, 400);
    }

    still_serving(&server);
    let stats = server.stats();
    assert_eq!(stats["by_status"]["431"], 5, "{stats}");
    assert_eq!(stats["by_status"]["414"], 1, "{stats}");
    assert_eq!(stats["by_status"]["400"], 3, "{stats}");
}

/// Peak resident memory of a process, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

#[test]
fn request_bodies_on_get_are_never_buffered() {
    let ws = Workspace::new();
    site(&ws, false);
    let server = Server::start(&ws, &[]);
    let asset = "GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\n";

    // A declared terabyte: answered at once, and the connection closed
    // rather than read to its end (tiny_http's server allocated the
    // declared size and aborted).
    let (answer, took) = exchange(
        server.addr,
        format!("{asset}Content-Length: 1000000000000\r\n\r\n").as_bytes(),
    );
    let answer = answer.expect("an answer");
    assert_eq!(
        (answer.status, answer.header("connection")),
        (200, Some("close")),
        "{answer:?}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    for bad in ["18446744073709551615", "-1", "1, 2"] {
        let (answer, _) = exchange(
            server.addr,
            format!("{asset}Content-Length: {bad}\r\n\r\n").as_bytes(),
        );
        let answer = answer.unwrap_or_else(|| panic!("no answer for {bad}"));
        // hyper's: 400, or 431 for a length past 64 bits.
        assert!(matches!(answer.status, 400 | 431), "{bad}: {answer:?}");
        assert_eq!(answer.header("connection"), Some("close"), "{bad}");
    }

    // Bodies of 1 MiB are never kept: each is answered, and memory does
    // not grow with them.
    let before = peak_rss_kib(server.pid());
    let body = vec![b'x'; 1 << 20];
    let senders: Vec<_> = (0..16)
        .map(|_| {
            let (addr, body) = (server.addr, body.clone());
            std::thread::spawn(move || {
                for _ in 0..2 {
                    let mut s = connect(addr);
                    let head = format!("{asset}Content-Length: {}\r\n\r\n", body.len());
                    s.write_all(head.as_bytes()).expect("head");
                    // The server may answer and close before taking it all.
                    let _ = s.write_all(&body);
                    let r = read_answer(&mut s, false);
                    assert_eq!((r.status, r.body()), (200, b"1.0.0".to_vec()));
                }
            })
        })
        .collect();
    for s in senders {
        s.join().expect("sender");
    }
    let grown_mib = (peak_rss_kib(server.pid()).saturating_sub(before)) / 1024;
    assert!(
        grown_mib < 12,
        "32 MiB of bodies raised the peak RSS by {grown_mib} MiB"
    );

    // A chunked body: answered, then the connection is closed (its end is
    // not looked for).
    let (answer, _) = exchange(
        server.addr,
        format!("{asset}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n").as_bytes(),
    );
    let answer = answer.expect("an answer");
    assert_eq!(
        (answer.status, answer.header("connection")),
        (200, Some("close"))
    );
    still_serving(&server);
}

#[test]
fn timeouts_must_be_durations_above_zero() {
    let ws = Workspace::new();
    site(&ws, false);
    for (flag, value) in [
        ("--header-timeout", "0s"),
        ("--keepalive-timeout", "soon"),
        ("--max-connections", "0"),
    ] {
        let out = ws
            .ccc_std()
            .args(["serve", "--port", "0", flag, value])
            .output()
            .expect("run ccc");
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(flag) && stderr.contains(value), "{stderr}");
    }
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let ws = Workspace::new();
    site(&ws, true);
    let server = Server::start(&ws, &["--threads", "4"]);
    let mut stream = connect(server.addr);
    // The first answer does not fit the socket buffers (a send thread
    // finishes it); the ones after it must wait their turn.
    let mut burst = Vec::new();
    for target in [
        "/assets/site/1.0.0/big.bin",
        "/assets/site/1.0.0/v.txt",
        "/assets/site/1.0.0/nope.txt",
        "/assets/site/1.0.0/big.bin",
        "/healthz",
    ] {
        burst.extend_from_slice(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
    }
    stream.write_all(&burst).expect("pipelined requests");
    let expected = Rng::new(7).bytes(BIG);
    let statuses: Vec<u16> = (0..5)
        .map(|i| {
            let r = read_answer(&mut stream, false);
            if i == 0 || i == 3 {
                assert!(r.body() == expected, "response {i}: the large body intact");
            }
            if i == 1 {
                assert_eq!(r.body(), b"1.0.0".to_vec());
            }
            r.status
        })
        .collect();
    assert_eq!(statuses, [200, 200, 404, 200, 200]);
}

/// Requests of every kind pipelined on one connection: the plain GETs and
/// HEADs ccc reads itself, and what it leaves to hyper (another method, a
/// body, a GET that declares an empty one, HTTP/1.0, bytes that are not
/// HTTP), are answered in order, each framed as sent, as the connection
/// goes from one reader to the other and back.
#[test]
fn requests_of_every_kind_on_one_connection_are_answered_in_order() {
    let ws = Workspace::new();
    site(&ws, false);
    let server = Server::start(&ws, &[]);
    let get = "GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\n\r\n";
    let burst = [
        get,
        "OPTIONS /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\n\r\n",
        get,
        "POST /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
        "GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
        "HEAD /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /assets/site/1.0.0/nope.txt HTTP/1.1\r\nHost: x\r\n\r\n",
        get,
        "GET /assets/site/1.0.0/v.txt HTTP/1.0\r\nHost: x\r\n\r\n",
    ]
    .concat();
    let mut stream = connect(server.addr);
    stream
        .write_all(burst.as_bytes())
        .expect("pipelined requests");
    let mut seen = Vec::new();
    for head_only in [false, false, false, false, false, true, false, false, false] {
        let r = read_answer(&mut stream, head_only);
        let body = String::from_utf8_lossy(&r.body()).into_owned();
        seen.push((
            r.status,
            r.header("content-length").map(str::to_string),
            body,
        ));
    }
    let v = |status| (status, Some("5".to_string()), "1.0.0".to_string());
    assert_eq!(seen[0], v(200));
    assert_eq!(seen[1].0, 204);
    assert_eq!(seen[2], v(200));
    assert_eq!(seen[3].0, 405);
    assert_eq!(seen[4], v(200));
    assert_eq!(seen[5], (200, Some("5".to_string()), String::new()));
    assert_eq!(seen[6].0, 404);
    assert_eq!(seen[7], v(200));
    assert_eq!(seen[8], v(200));
    // HTTP/1.0 without keep-alive: the connection ends with it.
    assert!(read_until_closed(&mut stream).is_empty());

    // A GET, then bytes that are not HTTP: the GET is answered, the rest
    // refused, and the connection closed.
    let mut stream = connect(server.addr);
    let mut wire = get.as_bytes().to_vec();
    wire.extend_from_slice(b"\x16\x03\x01 not http\r\n\r\n");
    stream.write_all(&wire).expect("a GET and garbage");
    assert_eq!(read_answer(&mut stream, false).status, 200);
    let refused = parse_raw(&read_until_closed(&mut stream));
    assert_eq!(refused.map(|r| r.status), Some(400));
    still_serving(&server);
}

/// A head is gathered whole before hyper gets the connection: one that
/// comes a few bytes at a time is answered as one sent at once, with the
/// request pipelined behind it; a request line that cannot be HTTP is
/// answered 400 at once, before any blank line and long before the
/// header timeout.
#[test]
fn heads_in_pieces_are_answered_and_broken_ones_at_once() {
    let ws = Workspace::new();
    site(&ws, false);
    let server = Server::start(&ws, &["--header-timeout", "30s"]);
    let mut stream = connect(server.addr);
    stream.set_nodelay(true).expect("nodelay");
    let heads = b"GET /assets/site/1.0.0/v.txt HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    for piece in heads.chunks(7) {
        stream.write_all(piece).expect("a piece of the head");
        std::thread::sleep(Duration::from_millis(5));
    }
    let first = read_answer(&mut stream, false);
    assert_eq!((first.status, first.body()), (200, b"1.0.0".to_vec()));
    assert_eq!(read_answer(&mut stream, false).status, 200);

    let started = Instant::now();
    let (answer, _) = exchange(
        server.addr,
        b"GET /healthz HTTP/1.1 and more\r\nHost: x\r\n",
    );
    let answer = answer.expect("an answer to a broken request line");
    assert_eq!(answer.status, 400, "{answer:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "answered after {:?}",
        started.elapsed()
    );
}

/// HTTP/1.1 requests that name their host or target the wrong way are
/// refused as nginx refuses them: two `Host` headers, a `Host` that is
/// not a host, `GET *` (400); CONNECT, for proxies (405 with `Allow`).
#[test]
fn hosts_and_targets_that_are_not_are_refused() {
    let ws = Workspace::new();
    site(&ws, false);
    let server = Server::start(&ws, &[]);
    for (head, want) in [
        ("GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400),
        ("GET /healthz HTTP/1.1\r\nHost: a b/c\r\n\r\n", 400),
        ("GET /healthz HTTP/1.1\r\nHost: x:80x\r\n\r\n", 400),
        (
            "GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            400,
        ),
        (
            "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\nConnection: close\r\n\r\n",
            405,
        ),
        (
            "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            204,
        ),
        (
            "GET /healthz HTTP/1.1\r\nHost: [::1]:8333\r\nConnection: close\r\n\r\n",
            200,
        ),
    ] {
        let (answer, _) = exchange(server.addr, head.as_bytes());
        let answer = answer.unwrap_or_else(|| panic!("no answer to {head:?}"));
        assert_eq!(answer.status, want, "{head:?}: {answer:?}");
        if want == 405 {
            assert!(
                answer.header("allow").is_some(),
                "405 names what is allowed"
            );
        }
    }
    still_serving(&server);
}

/// A client that sends part of the HTTP/2 preface (or of a head) and
/// closes is gone at once: 2,000 such connections leave none open a
/// second later, and the server idle.
#[test]
fn a_client_that_sends_part_of_a_preface_and_leaves_is_gone_at_once() {
    let ws = Workspace::new();
    site(&ws, false);
    let server = Server::start(&ws, &["--header-timeout", "60s"]);
    for i in 0..2000 {
        let mut s = connect(server.addr);
        let start: &[u8] = if i % 2 == 0 {
            b"P"
        } else {
            b"PRI * HTTP/2.0\r\n"
        };
        s.write_all(start).expect("a start");
    }
    std::thread::sleep(Duration::from_secs(1));
    let stats = server.stats();
    // The connection /_stats came on is the one left.
    assert_eq!(stats["connections"]["open"].as_u64(), Some(1), "{stats}");
    let cpu = |pid| crate::attack::procfs::cpu_ticks(pid).expect("/proc/PID/stat");
    let before = cpu(server.pid());
    std::thread::sleep(Duration::from_secs(2));
    let spent = cpu(server.pid()) - before;
    assert!(spent <= 5, "{spent} ticks of CPU in 2 s with no client");
}
