//! `ccc serve --access-log`: nginx's `combined` lines and JSON lines, one
//! per request, from a real server, including what hostile clients put in
//! request lines and headers.

use crate::serve_util::{STARTUP, Server, parse_raw, poll_until, sigterm};
use crate::util::Workspace;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, SystemTime};

/// `app@1.0.0` with `v.txt` (10 bytes).
fn site() -> Workspace {
    let ws = Workspace::new();
    ws.write("dist/v.txt", "version 1\n");
    ws.publish("app@1.0.0", "dist", &[]);
    ws
}

/// Sends `head` (the request line and headers, each ending in CRLF; the
/// blank line and `Connection: close` are added) as raw bytes; returns the
/// status and body length.
fn send(server: &Server, head: &[u8]) -> (u16, usize) {
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    let mut message = head.to_vec();
    message.extend_from_slice(b"Host: x\r\nConnection: close\r\n\r\n");
    stream.write_all(&message).expect("send");
    let mut all = Vec::new();
    stream.read_to_end(&mut all).expect("the answer");
    let r = parse_raw(&all).unwrap_or_else(|| panic!("no answer: {all:?}"));
    (r.status, r.after_headers.len())
}

/// The access log lines on stdout so far (stdout holds nothing else).
fn log_lines(server: &Server) -> Vec<String> {
    server.stdout().lines().map(String::from).collect()
}

/// The request lines, in order; each waits for its log line (lines of
/// concurrent requests could come in either order).
fn requests(server: &Server, heads: &[&[u8]]) -> Vec<(String, (u16, usize))> {
    let mut out = Vec::new();
    for (i, head) in heads.iter().enumerate() {
        let answer = send(server, head);
        let line = poll_until(STARTUP, || log_lines(server).len() > i)
            .map(|_| log_lines(server)[i].clone())
            .unwrap_or_else(|| panic!("no log line for {:?}", String::from_utf8_lossy(head)));
        out.push((line, answer));
    }
    out
}

/// `30/Nov/2026:12:53:31 +0000` as a time.
fn time_local(text: &str) -> SystemTime {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (date, rest) = text.split_once(':').expect("date:time");
    let (time, zone) = rest.split_once(' ').expect("time zone");
    assert_eq!(zone, "+0000", "UTC: {text}");
    let [day, month, year] = date.split('/').collect::<Vec<_>>()[..] else {
        panic!("{text}")
    };
    let month = MONTHS.iter().position(|m| *m == month).expect("month") + 1;
    humantime::parse_rfc3339(&format!("{year}-{month:02}-{day}T{time}Z"))
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

const UA: &[u8] = b"User-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0\r\n";

#[test]
fn combined_lines_are_nginx_combined() {
    let ws = site();
    let server = Server::start(&ws, &["--access-log"]);
    let before = SystemTime::now() - Duration::from_secs(1);
    let got = requests(
        &server,
        &[
            &[b"GET /assets/app/1.0.0/v.txt HTTP/1.1\r\n".as_slice(), UA].concat(),
            b"HEAD /assets/app/1.0.0/v.txt HTTP/1.0\r\nReferer: https://example.com/a?b=1\r\n",
            b"GET /assets/app/latest/v.txt?v=2 HTTP/1.1\r\nUser-Agent:\r\n",
            b"GET /assets/app/1.0.0/nope.txt HTTP/1.1\r\n",
        ],
    );
    let after = SystemTime::now() + Duration::from_secs(1);
    let ua = "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0";
    let want = [
        format!("\"GET /assets/app/1.0.0/v.txt HTTP/1.1\" 200 10 \"-\" \"{ua}\""),
        "\"HEAD /assets/app/1.0.0/v.txt HTTP/1.0\" 200 0 \"https://example.com/a?b=1\" \"-\""
            .into(),
        "\"GET /assets/app/latest/v.txt?v=2 HTTP/1.1\" 302 0 \"-\" \"\"".into(),
        format!(
            "\"GET /assets/app/1.0.0/nope.txt HTTP/1.1\" 404 {} \"-\" \"-\"",
            got[3].1.1
        ),
    ];
    for ((line, (status, _)), want) in got.iter().zip(want) {
        let rest = line
            .strip_prefix("127.0.0.1 - - [")
            .unwrap_or_else(|| panic!("`{line}`: addr - user [time]"));
        let (time, rest) = rest.split_once("] ").expect("[time]");
        let time = time_local(time);
        assert!(before <= time && time <= after, "{line}: time");
        // Then `$request_time`: seconds to the millisecond.
        let (rest, seconds) = rest.rsplit_once(' ').expect("request time");
        let (whole, millis) = seconds.split_once('.').expect("s.mmm");
        assert!(whole.parse::<u64>().is_ok() && millis.len() == 3, "{line}");
        assert!(seconds.parse::<f64>().expect("seconds") < 5.0, "{line}");
        assert_eq!(rest, want, "{line}");
        assert!(rest.contains(&format!("\" {status} ")), "{line}");
    }
}

#[test]
fn behind_a_trusted_proxy_the_log_records_the_client_it_forwarded() {
    let ws = site();
    let head = |extra: &str| format!("GET /assets/app/1.0.0/v.txt HTTP/1.1\r\n{extra}");
    let client = |server: &Server, heads: &[String]| -> Vec<String> {
        let heads: Vec<&[u8]> = heads.iter().map(|h| h.as_bytes()).collect();
        requests(server, &heads)
            .into_iter()
            .map(|(line, _)| line.split(' ').next().unwrap_or_default().to_string())
            .collect()
    };
    let heads = [
        head("X-Forwarded-For: 203.0.113.7\r\n"),
        head("X-Forwarded-For: 198.51.100.1, 203.0.113.7, 127.0.0.9\r\n"),
        head("Forwarded: for=\"[2001:db8::17]:4711\";proto=https\r\n"),
        head("X-Forwarded-For: not-an-address\r\n"),
        head(""),
    ];
    // Trusted: the client each names, read from the right.
    let server = Server::start(&ws, &["--access-log", "--trust-proxy", "127.0.0.0/8"]);
    assert_eq!(
        client(&server, &heads),
        [
            "203.0.113.7",
            "203.0.113.7",
            "2001:db8::17",
            "127.0.0.1",
            "127.0.0.1"
        ]
    );
    // Not trusted (another block, or none): the peer, whatever it says.
    for flags in [&["--trust-proxy", "10.0.0.0/8"][..], &[]] {
        let server = Server::start(&ws, &[&["--access-log"], flags].concat());
        assert!(client(&server, &heads).iter().all(|c| c == "127.0.0.1"));
    }
    // A value that is no address is refused when the server starts.
    let out = ws.fails(&["serve", "--trust-proxy", "localhost"], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`localhost` is neither an address nor a CIDR block"),
        "{stderr}"
    );
}

#[test]
fn hostile_request_lines_and_agents_cannot_forge_lines() {
    let ws = site();
    for format in ["combined", "json"] {
        let server = Server::start(&ws, &["--access-log", "--log-format", format]);
        let got = requests(
            &server,
            &[
                b"GET /assets/app/1.0.0/a\"b\\c HTTP/1.1\r\nUser-Agent: x\" 200 0 \"-\" \"y\\\t\xff\xc3\xa9\r\nReferer: \"\r\n",
            ],
        );
        let (line, (status, body)) = &got[0];
        assert_eq!(*status, 404, "{line}");
        match format {
            "combined" => {
                let (_, rest) = line.split_once("] ").expect("[time]");
                let (rest, _request_time) = rest.rsplit_once(' ').expect("request time");
                assert_eq!(
                    rest,
                    format!(
                        "\"GET /assets/app/1.0.0/a\\x22b\\x5Cc HTTP/1.1\" 404 {body} \"\\x22\" \"x\\x22 200 0 \\x22-\\x22 \\x22y\\x5C\\x09\\xFF\\xC3\\xA9\""
                    )
                );
            }
            _ => {
                let v: Value = serde_json::from_str(line).expect("one JSON object");
                assert_eq!(v["target"], "/assets/app/1.0.0/a\"b\\c");
                assert_eq!(v["user_agent"], "x\" 200 0 \"-\" \"y\\\t\u{fffd}é");
                assert_eq!(v["referer"], "\"");
                assert_eq!(v["status"], 404);
            }
        }
    }
}

#[test]
fn json_lines_carry_every_field() {
    let ws = site();
    let server = Server::start(&ws, &["--access-log", "--log-format", "json"]);
    let before = SystemTime::now();
    let got = requests(
        &server,
        &[
            &[b"GET /assets/app/1.0.0/v.txt HTTP/1.1\r\n".as_slice(), UA].concat(),
            b"HEAD /assets/app/1.0.0/v.txt HTTP/1.0\r\nReferer: https://example.com/\r\n",
        ],
    );
    let after = SystemTime::now();
    let lines: Vec<Value> = got
        .iter()
        .map(|(line, _)| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect();
    for v in &lines {
        let at = humantime::parse_rfc3339(v["received_at"].as_str().expect("received_at"))
            .expect("RFC 3339");
        // Milliseconds: the stamp may be up to 1 ms before `before`.
        assert!(
            at + Duration::from_millis(1) >= before && at <= after,
            "{v}"
        );
        assert_eq!(v["remote_addr"], "127.0.0.1");
        let ms = v["duration_ms"].as_f64().expect("duration_ms");
        assert!((0.0..10_000.0).contains(&ms), "{v}");
    }
    let fields = |v: &Value| {
        let mut v = v.clone();
        let map = v.as_object_mut().expect("object");
        map.remove("received_at");
        map.remove("duration_ms");
        v
    };
    assert_eq!(
        fields(&lines[0]),
        serde_json::json!({
            "remote_addr": "127.0.0.1",
            "method": "GET",
            "target": "/assets/app/1.0.0/v.txt",
            "protocol": "HTTP/1.1",
            "status": 200,
            "body_bytes": 10,
            "complete": true,
            "referer": null,
            "user_agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0",
        })
    );
    assert_eq!(
        fields(&lines[1]),
        serde_json::json!({
            "remote_addr": "127.0.0.1",
            "method": "HEAD",
            "target": "/assets/app/1.0.0/v.txt",
            "protocol": "HTTP/1.0",
            "status": 200,
            "body_bytes": 0,
            "complete": true,
            "referer": "https://example.com/",
            "user_agent": null,
        })
    );
}

#[test]
fn heads_refused_before_their_line_is_read_are_logged_as_nginx_logs_them() {
    let ws = site();
    // A control character in a header value: hyper answers 400 itself.
    let garbage: &[u8] = b"GET /assets/app/1.0.0/v.txt HTTP/1.1\r\nUser-Agent: a\x01b\r\n";
    for format in ["combined", "json"] {
        let server = Server::start(&ws, &["--access-log", "--log-format", format]);
        let got = requests(
            &server,
            &[garbage, b"GET /assets/app/1.0.0/v.txt HTTP/1.1\r\n"],
        );
        assert_eq!(got[0].1.0, 400, "{format}");
        let (refused, served) = (&got[0].0, &got[1].0);
        if format == "combined" {
            assert!(refused.starts_with("127.0.0.1 - - ["), "{refused}");
            assert!(
                refused.contains("] \"-\" 400 0 \"-\" \"-\" 0.000"),
                "{refused}"
            );
            assert!(
                served.contains("\"GET /assets/app/1.0.0/v.txt HTTP/1.1\" 200 10"),
                "{served}"
            );
        } else {
            let v: Value =
                serde_json::from_str(refused).unwrap_or_else(|e| panic!("{refused}: {e}"));
            assert_eq!(v["status"], 400, "{v}");
            assert_eq!(v["remote_addr"], "127.0.0.1", "{v}");
            for field in ["method", "target", "protocol", "user_agent"] {
                assert_eq!(v[field], Value::Null, "{field}: {v}");
            }
            let v: Value = serde_json::from_str(served).unwrap_or_else(|e| panic!("{served}: {e}"));
            assert_eq!(v["status"], 200, "{v}");
        }
    }
}

#[test]
fn a_json_log_keeps_stdout_for_its_lines_alone() {
    // `ccc serve --access-log --log-format json | jq .`: every stdout line
    // is a log object, from the first to the last; the lines about the
    // server itself go to stderr.
    let ws = site();
    let mut server = Server::start(&ws, &["--access-log", "--log-format", "json"]);
    requests(
        &server,
        &[
            b"GET /assets/app/1.0.0/v.txt HTTP/1.1\r\n",
            b"GET /assets/app/1.0.0/missing.txt HTTP/1.1\r\n",
        ],
    );
    sigterm(server.pid());
    let status = server.wait_exit(STARTUP).expect("serve stops on SIGTERM");
    assert!(status.success(), "{}", server.stderr());
    let stdout = server.stdout();
    let objects: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?}: {e}")))
        .collect();
    assert_eq!(objects.len(), 2, "{stdout}");
    assert!(objects.iter().all(Value::is_object), "{stdout}");
    assert_eq!(objects[1]["status"], 404);
    let stderr = server.stderr();
    assert!(
        stderr.contains(&format!("listening on http://{}\n", server.addr)),
        "{stderr}"
    );
    assert!(stderr.contains("\nstopped after "), "{stderr}");
}

#[test]
fn a_log_format_needs_the_access_log() {
    let ws = site();
    let out = ws
        .ccc()
        .args(["serve", "--port", "0", "--log-format", "json"])
        .output()
        .expect("run ccc serve");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--access-log"), "{stderr}");
    let out = ws
        .ccc()
        .args([
            "serve",
            "--port",
            "0",
            "--access-log",
            "--log-format",
            "nginx",
        ])
        .output()
        .expect("run ccc serve");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("combined") && stderr.contains("json"),
        "{stderr}"
    );
}

/// `ccc serve --access-log | goaccess -`: in `combined` as in `json`,
/// stdout holds log lines alone; the server's own lines (where it
/// listens, the closing counters) go to stderr.
#[test]
fn a_combined_log_keeps_stdout_for_its_lines_alone() {
    let ws = site();
    let mut server = Server::start(&ws, &["--access-log"]);
    requests(&server, &[b"GET /assets/app/1.0.0/v.txt HTTP/1.1\r\n"]);
    sigterm(server.pid());
    let status = server.wait_exit(STARTUP).expect("serve stops on SIGTERM");
    assert!(status.success(), "{}", server.stderr());
    let stdout = server.stdout();
    assert!(
        stdout.lines().count() == 1 && stdout.starts_with("127.0.0.1 - - ["),
        "{stdout}"
    );
    let stderr = server.stderr();
    assert!(
        stderr.contains(&format!("listening on http://{}\n", server.addr))
            && stderr.contains("\nstopped after "),
        "{stderr}"
    );
}

/// `--access-log PATH` appends to a file, which SIGUSR1 opens again at
/// its path, as nginx's does for logrotate: lines before the rename stay
/// in the renamed file, lines after go to the new one, none lost. stdout
/// keeps the server's own lines. A file that cannot be opened stops the
/// start, naming it.
#[test]
fn a_log_file_is_reopened_on_sigusr1() {
    let ws = site();
    let log = ws.path().join("logs/access.log");
    std::fs::create_dir_all(log.parent().expect("folder")).expect("mkdir");
    std::fs::write(&log, "an older line\n").expect("an existing log");
    let mut server = Server::start(&ws, &["--access-log", log.to_str().expect("UTF-8")]);
    let get = |path: &str| crate::serve_util::get(&server.url(path), &[]).status;
    let lines = |path: &std::path::Path| -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    };
    assert_eq!(get("/assets/app/1.0.0/v.txt"), 200);
    assert!(
        poll_until(STARTUP, || lines(&log).len() == 2).is_some(),
        "{:?}",
        lines(&log)
    );
    assert_eq!(lines(&log)[0], "an older line", "appended to");
    // logrotate: rename, then the signal.
    let rotated = ws.path().join("logs/access.log.1");
    std::fs::rename(&log, &rotated).expect("rotate");
    assert_eq!(get("/assets/app/1.0.0/gone.txt"), 404);
    assert!(poll_until(STARTUP, || lines(&rotated).len() == 3).is_some());
    let pid = rustix::process::Pid::from_raw(server.pid() as i32).expect("pid");
    rustix::process::kill_process(pid, rustix::process::Signal::USR1).expect("SIGUSR1");
    assert!(
        poll_until(STARTUP, || server.stderr().contains("SIGUSR1: access log")).is_some(),
        "{}",
        server.stderr()
    );
    for _ in 0..3 {
        assert_eq!(get("/assets/app/1.0.0/v.txt"), 200);
    }
    assert!(
        poll_until(STARTUP, || lines(&log).len() == 3).is_some(),
        "{:?}",
        lines(&log)
    );
    assert_eq!(lines(&rotated).len(), 3, "{:?}", lines(&rotated));
    assert!(lines(&rotated)[2].contains("\"GET /assets/app/1.0.0/gone.txt HTTP/1.1\" 404 "));
    assert!(lines(&log).iter().all(|l| l.contains(" 200 ")));
    let stats = server.stats();
    assert_eq!(stats["log"]["access_log"]["written"], 5, "{stats}");
    sigterm(server.pid());
    assert!(server.wait_exit(STARTUP).expect("stops").success());
    assert!(
        server.stdout().starts_with("listening on http://"),
        "{}",
        server.stdout()
    );

    let out = ws.fails(
        &[
            "serve",
            "--port",
            "0",
            "--access-log",
            "no/such/folder/access.log",
        ],
        1,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: no/such/folder/access.log: No such file or directory"),
        "{stderr}"
    );
}

/// `--log-exclude GLOB` leaves requests out of the access log by path (a
/// load balancer's `/healthz` every second, Prometheus's `/metrics`);
/// they are still counted.
#[test]
fn excluded_paths_are_left_out_of_the_log() {
    let ws = site();
    let server = Server::start(
        &ws,
        &[
            "--access-log",
            "--log-exclude",
            "/healthz",
            "--log-exclude",
            "/assets/*/v.txt",
        ],
    );
    for path in [
        "/healthz",
        "/healthz?probe=1",
        "/assets/app/1.0.0/v.txt",
        "/_stats",
    ] {
        crate::serve_util::get(&server.url(path), &[]);
    }
    assert!(poll_until(STARTUP, || !log_lines(&server).is_empty()).is_some());
    std::thread::sleep(Duration::from_millis(200));
    let lines = log_lines(&server);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("\"GET /_stats HTTP/1.1\" 200 "),
        "{lines:?}"
    );
    let stats = server.stats();
    assert!(stats["requests"].as_u64() >= Some(4), "{stats}");
    let out = ws.fails(&["serve", "--port", "0", "--log-exclude", "/healthz"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--access-log"));
}

/// A response cut short is logged with the body bytes that did reach the
/// client, as nginx logs it, and `"complete": false`: an HTTP/1.1 client
/// that closes mid-body, an HTTP/2 client that resets its stream. /_stats
/// counts the same bytes and the responses cut short.
#[test]
fn a_response_cut_short_is_logged_with_the_bytes_that_left() {
    use crate::attack::h2::*;
    let ws = site();
    // Larger than twice what the kernel may take into the server's send
    // buffer and the client's receive buffer (Linux's tcp_wmem allows a
    // socket up to 4 MiB), so that bytes written are told from the body.
    const BIG: usize = 16 << 20;
    ws.write_tree(
        "big",
        &[("big.bin".into(), crate::util::Rng::new(5).bytes(BIG))],
    );
    ws.publish("big@1.0.0", "big", &["--level", "1"]);
    let server = Server::start(&ws, &["--access-log", "--log-format", "json"]);
    let line = |n: usize| -> Value {
        let got = poll_until(STARTUP, || log_lines(&server).len() >= n);
        assert!(got.is_some(), "no log line {n}: {}", server.stdout());
        serde_json::from_str(&log_lines(&server)[n - 1]).expect("JSON")
    };

    // HTTP/1.1: read 100 KB of the 16 MiB body, then reset the connection.
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("socket");
    socket.set_recv_buffer_size(64 << 10).expect("rcvbuf");
    socket.connect(&server.addr.into()).expect("connect");
    let mut h1: TcpStream = socket.into();
    h1.write_all(b"GET /assets/big/1.0.0/big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("request");
    let mut taken = 0;
    let mut chunk = [0u8; 16 << 10];
    while taken < 100_000 {
        taken += h1.read(&mut chunk).expect("the body");
    }
    socket2::SockRef::from(&h1)
        .set_linger(Some(Duration::ZERO))
        .expect("linger");
    drop(h1);
    let cut = line(1);
    assert_eq!(cut["status"], 200, "{cut}");
    assert_eq!(cut["complete"], false, "{cut}");
    let sent = cut["body_bytes"].as_u64().expect("body_bytes");
    assert!(
        (100_000..BIG as u64 / 2).contains(&sent),
        "what reached the socket, not the 16 MiB body: {cut}"
    );

    // HTTP/2: the default 64 KiB window lets that much through; then the
    // client resets the stream.
    let mut c = H2::open(server.addr, &[]);
    c.send(&header_frames(
        1,
        &request("/assets/big/1.0.0/big.bin", &[]),
        true,
    ))
    .expect("request");
    let mut data = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while data < 65_535 && std::time::Instant::now() < deadline {
        if let Got::Frame(f) = c.next(Duration::from_millis(100))
            && f.kind == DATA
        {
            data += f.payload.len();
        }
    }
    c.send(&rst_stream(1, CANCEL)).expect("reset");
    let reset = line(2);
    assert_eq!(reset["protocol"], "HTTP/2.0", "{reset}");
    assert_eq!(reset["complete"], false, "{reset}");
    assert_eq!(reset["body_bytes"].as_u64(), Some(data as u64), "{reset}");

    let stats = server.stats();
    assert_eq!(stats["cut_short"].as_u64(), Some(2), "{stats}");
    assert_eq!(
        stats["bytes_sent"].as_u64(),
        Some(sent + data as u64),
        "{stats}"
    );
}
