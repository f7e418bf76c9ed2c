//! The HTTP/2 limits of `ccc serve`, tested from the wire: the settings it
//! advertises (128 concurrent streams, a 32 KiB header list), what happens
//! to a client that goes past them (streams refused, 431, the connection
//! sent away with GOAWAY), and that the server serves everyone else
//! afterwards. The attacks are the known ones against HTTP/2 servers:
//! opening more streams than allowed, provoking resets without end, the
//! rapid reset (CVE-2023-44487), header blocks that decode far larger than
//! they are sent, and the CONTINUATION flood (CVE-2024-27316).
//!
//! A library client would refuse to send these frames, so the tests write
//! them by hand on a plain TCP socket (cleartext HTTP/2 with prior
//! knowledge, to 127.0.0.1 only). Every flood is bounded in frames, bytes
//! and time, so a limit that does not hold fails the test instead of
//! hanging it.

use crate::attack::h2::*;
use crate::attack::procfs::cpu_ticks;
use crate::serve_util::{Server, get};
use crate::util::Workspace;
use std::time::{Duration, Instant};

/// The asset every test asks for, and its body.
const ASSET: &str = "/assets/site/1.0.0/v.txt";
const BODY: &[u8] = b"1.0.0";

// ---------------------------------------------------------------- the server

fn site(ws: &Workspace) {
    ws.write("dist/v.txt", BODY);
    ws.publish("site@1.0.0", "dist", &[]);
}

/// The server answers others promptly after an attack: a new HTTP/2
/// connection and an HTTP/1.1 request are both served within 4 s.
#[track_caller]
fn still_serves(server: &Server, after: &str) {
    let started = Instant::now();
    let answer = h2_get(server.addr, ASSET);
    assert_eq!(
        answer,
        Ok((200, BODY.to_vec())),
        "after {after}: a new HTTP/2 connection"
    );
    let one = get(&server.url("/healthz"), &[]);
    assert_eq!(one.status, 200, "after {after}: HTTP/1.1 /healthz");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "after {after}: the two requests took {:?}",
        started.elapsed()
    );
}

/// How a flood ended: the GOAWAY the server sent, if one was read, and
/// whether the connection was closed.
#[derive(Debug)]
struct Ended {
    goaway: Option<Frame>,
    closed: bool,
}

/// Reads what the server sent within `wait` (each frame shown to `seen`):
/// Some when it sent GOAWAY or closed the connection (then reads on to the
/// close, up to 5 s).
fn ended(c: &mut H2, wait: Duration, mut seen: impl FnMut(&Frame)) -> Option<Ended> {
    loop {
        match c.next(wait) {
            Got::Frame(f) if f.kind == GOAWAY => {
                let closed = c.closes();
                return Some(Ended {
                    goaway: Some(f),
                    closed,
                });
            }
            Got::Frame(f) => seen(&f),
            Got::Quiet => return None,
            Got::Closed => {
                return Some(Ended {
                    goaway: None,
                    closed: true,
                });
            }
        }
    }
}

/// Asserts the flood ended the connection: the server sent GOAWAY with an
/// error code (not NO_ERROR) and closed the connection.
#[track_caller]
fn assert_sent_away(end: &Option<Ended>, what: &str) -> u32 {
    let Some(Ended {
        goaway: Some(goaway),
        closed,
    }) = end
    else {
        panic!("{what}: no GOAWAY ({end:?})");
    };
    assert_ne!(goaway.code(), NO_ERROR, "{what}: {goaway:?}");
    assert!(
        closed,
        "{what}: the connection stayed open after {goaway:?}"
    );
    goaway.code()
}

// ---------------------------------------------------------------- the tests

/// 144 requests at once, on a connection whose client takes no response
/// body yet (initial window 0), so that every answered stream stays open:
/// exactly the first 128 are answered, the 16 past them are refused with
/// RST_STREAM REFUSED_STREAM (RFC 9113 5.1.2), and once the window opens
/// all 128 bodies arrive and the connection takes new streams.
#[test]
fn streams_past_128_at_once_are_refused_and_the_first_128_answered() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let mut c = H2::open(server.addr, &[(INITIAL_WINDOW_SIZE, 0)]);
    let advertised = c.settings();
    assert_eq!(
        setting(&advertised, MAX_CONCURRENT_STREAMS),
        Some(128),
        "{advertised:?}"
    );
    let (allowed, extra) = (128u32, 16u32);
    let mut burst = Vec::new();
    for n in 0..allowed + extra {
        burst.extend(header_frames(2 * n + 1, &request(ASSET, &[]), true));
    }
    c.send(&burst).expect("the burst");

    let (mut answered, mut refused, mut other) = (Vec::new(), Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(15);
    while answered.len() + refused.len() + other.len() < (allowed + extra) as usize
        && Instant::now() < deadline
    {
        match c.next(Duration::from_millis(100)) {
            Got::Frame(f) if f.kind == HEADERS && status(&f.payload) == Some(200) => {
                answered.push(f.stream)
            }
            Got::Frame(f) if f.kind == RST_STREAM && f.code() == REFUSED_STREAM => {
                refused.push(f.stream)
            }
            Got::Frame(f) if matches!(f.kind, SETTINGS | PING | WINDOW_UPDATE) => {}
            Got::Frame(f) => other.push(f),
            Got::Quiet => {}
            Got::Closed => panic!("the connection was closed"),
        }
    }
    answered.sort_unstable();
    refused.sort_unstable();
    let first: Vec<u32> = (0..allowed).map(|n| 2 * n + 1).collect();
    let rest: Vec<u32> = (allowed..allowed + extra).map(|n| 2 * n + 1).collect();
    assert!(other.is_empty(), "unexpected frames: {other:?}");
    assert_eq!(answered, first, "the first 128 streams are answered");
    assert_eq!(refused, rest, "the streams past 128 are refused");

    // Opening the window lets the 128 bodies through.
    c.send(&settings(&[(INITIAL_WINDOW_SIZE, 65_535)]))
        .expect("settings");
    let mut finished = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    while finished.len() < allowed as usize && Instant::now() < deadline {
        match c.next(Duration::from_millis(100)) {
            Got::Frame(f) if f.kind == DATA => {
                assert_eq!(f.payload, BODY, "stream {}", f.stream);
                assert!(f.flags & END_STREAM != 0, "one DATA frame per body");
                finished.push(f.stream);
            }
            Got::Frame(f) if matches!(f.kind, SETTINGS | PING | WINDOW_UPDATE) => {}
            Got::Frame(f) => panic!("unexpected {f:?}"),
            Got::Quiet => {}
            Got::Closed => panic!("the connection was closed"),
        }
    }
    finished.sort_unstable();
    assert_eq!(finished, first, "every answered stream gets its body");

    // The connection is not spoilt: a new stream is answered.
    let next = 2 * (allowed + extra) + 1;
    c.send(&header_frames(next, &request(ASSET, &[]), true))
        .expect("one more");
    assert_eq!(answer(&mut c, next), Ok((200, BODY.to_vec())));
    drop(c);
    still_serves(&server, "too many streams");
}

/// A client that keeps opening streams while it holds 128 open gets them
/// refused, but not without end: the server refuses 256 on one connection
/// (`H2_MAX_LOCAL_RESETS`), then sends GOAWAY ENHANCE_YOUR_CALM and closes
/// it.
#[test]
fn a_client_that_keeps_opening_refused_streams_is_sent_away() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let mut c = H2::open(server.addr, &[(INITIAL_WINDOW_SIZE, 0)]);
    c.settings();
    let total = 128 + 400;
    let mut burst = Vec::new();
    for n in 0..total {
        burst.extend(header_frames(2 * n + 1, &request(ASSET, &[]), true));
    }
    // The server may close the connection before it has read them all.
    let _ = c.send(&burst);
    let (mut refused, mut end) = (Vec::new(), None);
    let deadline = Instant::now() + Duration::from_secs(15);
    while end.is_none() && Instant::now() < deadline {
        end = ended(&mut c, Duration::from_millis(100), |f| {
            if f.kind == RST_STREAM && f.code() == REFUSED_STREAM {
                refused.push(f.stream);
            }
        });
    }
    let code = assert_sent_away(&end, "refused streams without end");
    eprintln!(
        "{} streams refused (the first {:?}, the last {:?}), then GOAWAY code {code:#x}",
        refused.len(),
        refused.first(),
        refused.last()
    );
    // The first 128 streams are held open, the next 256 refused.
    let expected: Vec<u32> = (128..128 + 256).map(|n| 2 * n + 1).collect();
    assert_eq!(
        refused, expected,
        "the server refuses 256 streams, then no more"
    );
    assert_eq!(code, ENHANCE_YOUR_CALM);
    still_serves(&server, "refused streams without end");
}

/// SETTINGS_MAX_HEADER_LIST_SIZE is 32768: a request whose header list
/// (RFC 9113 6.5.2: names, values and 32 bytes a field) is 28 KiB is
/// served, one of 36 KiB is refused (431, or the stream reset) and the
/// connection serves the next request. A header block that decodes to more
/// than four times the limit (one 4 KB field in the HPACK table, then
/// referenced by its index, one byte each) ends the connection.
#[test]
fn a_header_list_past_32_kib_is_refused_and_the_connection_lives_on() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let mut c = H2::open(server.addr, &[]);
    let advertised = c.settings();
    assert_eq!(
        setting(&advertised, MAX_HEADER_LIST_SIZE),
        Some(32_768),
        "{advertised:?}"
    );
    let value = vec![b'v'; 4000];
    let padded = |fields: usize| {
        let names: Vec<String> = (0..fields).map(|i| format!("x-pad-{i}")).collect();
        let extra: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &value[..])).collect();
        request(ASSET, &extra)
    };

    let mut answers = Vec::new();
    for (stream, block) in [(1, padded(7)), (3, padded(9)), (5, request(ASSET, &[]))] {
        c.send(&header_frames(stream, &block, true))
            .expect("a request");
        answers.push(answer(&mut c, stream));
    }
    let ok = Ok((200, BODY.to_vec()));
    eprintln!("28 KiB, 36 KiB, small header lists: {answers:?}");
    assert_eq!(answers[0], ok, "a 28 KiB header list is served");
    assert!(
        matches!(&answers[1], Ok((431, _)))
            || answers[1]
                .as_ref()
                .is_err_and(|e| e.starts_with("RST_STREAM")),
        "a 36 KiB header list is refused: {:?}",
        answers[1]
    );
    assert_eq!(answers[2], ok, "the connection serves on");
    drop(c);

    // A 4 KB field added to the HPACK table (literal with incremental
    // indexing, RFC 7541 6.2.1), then 40 one-byte references to it (index
    // 62, the table's first entry): 4 KB sent, 160 KB decoded.
    let mut bomb = request(ASSET, &[]);
    field_head(&mut bomb, 0x40, "x-bomb", value.len());
    bomb.extend_from_slice(&value);
    bomb.extend([0x80 | 62; 40]);
    let mut c = H2::open(server.addr, &[]);
    c.settings();
    c.send(&header_frames(1, &bomb, true)).expect("the bomb");
    let end = ended(&mut c, Duration::from_secs(10), |_| {});
    let code = assert_sent_away(&end, "a header list decoding to 160 KB");
    eprintln!("HPACK bomb: GOAWAY code {code:#x}");
    still_serves(&server, "header lists too large");
}

/// The rapid reset (CVE-2023-44487): streams opened and reset at once, 50
/// at a time, never waiting for an answer. The server sends GOAWAY long
/// before 10,000 of them (it holds at most 20 reset streams it has not
/// taken up yet, `H2_MAX_PENDING_RESETS`), uses little CPU for them, and
/// serves a new connection at once. (A client that waits for each stream
/// to be taken up before resetting it is not sent away: each stream then
/// costs the server what a request costs, and the client's own pace
/// bounds them.)
#[test]
fn rapid_reset_gets_the_connection_closed_and_others_are_served() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let cpu_before = cpu_ticks(server.pid());
    let mut c = H2::open(server.addr, &[]);
    c.settings();
    let block = request(ASSET, &[]);
    let started = Instant::now();
    let (mut sent, mut end) = (0u32, None);
    while end.is_none() && sent < 10_000 && started.elapsed() < Duration::from_secs(20) {
        let mut batch = Vec::new();
        for _ in 0..50 {
            let id = 2 * sent + 1;
            batch.extend(header_frames(id, &block, true));
            batch.extend(rst_stream(id, CANCEL));
            sent += 1;
        }
        if c.send(&batch).is_err() {
            // Closed: what arrived before the close is still to be read.
            end = ended(&mut c, Duration::from_secs(1), |_| {}).or(Some(Ended {
                goaway: None,
                closed: true,
            }));
            break;
        }
        end = ended(&mut c, Duration::from_millis(5), |_| {});
    }
    let code = assert_sent_away(&end, &format!("{sent} streams opened and reset"));
    // Client streams are odd: the last one the server processed is the
    // (id + 1) / 2th.
    let taken = end
        .as_ref()
        .and_then(|e| e.goaway.as_ref())
        .map_or(0, |g| g.last_stream().div_ceil(2));
    let cpu = cpu_before.zip(cpu_ticks(server.pid())).map(|(a, b)| b - a);
    eprintln!(
        "rapid reset: {sent} streams sent (opened and reset) in {:?}; GOAWAY code {code:#x} \
         after {taken} of them; server CPU {cpu:?} ticks",
        started.elapsed()
    );
    assert_eq!(code, ENHANCE_YOUR_CALM);
    assert!(sent < 10_000 && taken < 1_000, "{sent} sent, {taken} taken");
    if let Some(cpu) = cpu {
        assert!(cpu < 200, "the server used {cpu} ticks of CPU");
    }
    still_serves(&server, "a rapid reset");
}

/// The CONTINUATION flood (CVE-2024-27316 and its kin): a HEADERS frame
/// without END_HEADERS, then CONTINUATION frames without end, either
/// full 16 KiB ones carrying a header value declared 16 MiB long, or empty
/// ones. The server does not buffer it all: a header block may take as
/// many frames as the 32 KiB header list needs and a few more (five
/// CONTINUATION frames without END_HEADERS), then the server sends GOAWAY
/// and closes the connection, well before the 64 full frames (1 MiB) or
/// 200 empty ones the test would send.
#[test]
fn a_continuation_flood_is_cut_off_within_the_header_list_limit() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    let cpu_before = cpu_ticks(server.pid());

    // A header value that never ends: 16 MiB declared, 16 KiB a frame.
    let mut endless = request(ASSET, &[]);
    field_head(&mut endless, 0x00, "x-flood", 16 << 20);
    endless.resize(MAX_FRAME, b'a');
    let full = frame(CONTINUATION, 0, 1, &[b'a'; MAX_FRAME]);
    // A complete header block whose end is never marked.
    let empty = frame(CONTINUATION, 0, 1, &[]);
    for (what, first, next, max_frames) in [
        ("16 KiB CONTINUATION frames", &endless, &full, 64),
        (
            "empty CONTINUATION frames",
            &request(ASSET, &[]),
            &empty,
            200,
        ),
    ] {
        let mut c = H2::open(server.addr, &[]);
        c.settings();
        c.send(&frame(HEADERS, END_STREAM, 1, first))
            .expect("HEADERS");
        let (mut sent, mut frames, mut end) = (first.len() + 9, 0, None);
        let started = Instant::now();
        while end.is_none() && frames < max_frames && started.elapsed() < Duration::from_secs(20) {
            // One frame, then a moment for the server to answer, so that
            // `sent` is close to what the server read before it refused.
            if c.send(next).is_err() {
                end = ended(&mut c, Duration::from_secs(1), |_| {}).or(Some(Ended {
                    goaway: None,
                    closed: true,
                }));
                break;
            }
            sent += next.len();
            frames += 1;
            end = ended(&mut c, Duration::from_millis(50), |_| {});
        }
        let code = assert_sent_away(&end, what);
        eprintln!(
            "{what}: GOAWAY code {code:#x} after {frames} CONTINUATION frames, \
             {sent} bytes sent"
        );
        assert_eq!(code, ENHANCE_YOUR_CALM, "{what}");
        assert!(
            frames <= 16 && sent <= 256 << 10,
            "{what}: {frames} frames, {sent} bytes sent"
        );
    }
    let cpu = cpu_before.zip(cpu_ticks(server.pid())).map(|(a, b)| b - a);
    eprintln!("CONTINUATION floods: server CPU {cpu:?} ticks");
    if let Some(cpu) = cpu {
        assert!(cpu < 200, "the server used {cpu} ticks of CPU");
    }
    still_serves(&server, "a CONTINUATION flood");
}

/// SIGTERM drains an HTTP/2 connection: GOAWAY with NO_ERROR (first with
/// the largest stream id, then naming the last stream taken, RFC 9113
/// 6.8), the stream in flight is still answered in full, and the server
/// exits 0 once it is.
#[test]
fn a_drain_sends_goaway_and_finishes_the_stream_in_flight() {
    let ws = Workspace::new();
    site(&ws);
    let mut server = Server::start(&ws, &[]);
    // A client that takes no body yet (window 0): stream 1 stays in flight.
    let mut c = H2::open(server.addr, &[(INITIAL_WINDOW_SIZE, 0)]);
    c.send(&header_frames(1, &request(ASSET, &[]), true))
        .expect("request");
    std::thread::sleep(Duration::from_millis(300));
    crate::serve_util::sigterm(server.pid());
    let mut goaways = Vec::new();
    let mut status = None;
    let deadline = Instant::now() + Duration::from_secs(10);
    while goaways.is_empty() && Instant::now() < deadline {
        match c.next(Duration::from_millis(100)) {
            Got::Frame(f) if f.kind == GOAWAY => goaways.push(f),
            Got::Frame(f) if f.stream == 1 && f.kind == HEADERS => {
                status = self::status(&f.payload);
            }
            Got::Closed => panic!("closed without GOAWAY"),
            _ => {}
        }
    }
    assert!(!goaways.is_empty(), "no GOAWAY after SIGTERM");
    // The window opens: the stream in flight is answered in full.
    let mut open = frame(WINDOW_UPDATE, 0, 1, &(1u32 << 20).to_be_bytes());
    open.extend(frame(WINDOW_UPDATE, 0, 0, &(1u32 << 20).to_be_bytes()));
    c.send(&open).expect("window update");
    let mut body = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline, "stream 1 not finished");
        match c.next(Duration::from_millis(100)) {
            Got::Frame(f) if f.kind == GOAWAY => goaways.push(f),
            Got::Frame(f) if f.stream == 1 && f.kind == HEADERS => {
                status = self::status(&f.payload)
            }
            Got::Frame(f) if f.stream == 1 && f.kind == DATA => {
                body.extend(&f.payload);
                if f.flags & END_STREAM != 0 {
                    break;
                }
            }
            Got::Frame(f) if f.stream == 1 && f.kind == RST_STREAM => panic!("{f:?}"),
            Got::Closed => panic!("closed before stream 1 finished"),
            _ => {}
        }
    }
    assert_eq!((status, body), (Some(200), BODY.to_vec()));
    for goaway in &goaways {
        assert_eq!(goaway.code(), NO_ERROR, "{goaway:?}");
        assert!(goaway.last_stream() >= 1, "{goaway:?}");
    }
    let exit = server
        .wait_exit(Duration::from_secs(20))
        .expect("the server exits");
    assert_eq!(exit.code(), Some(0), "{}", server.stderr());
}

/// Requests that name their host or target the wrong way are refused as
/// nginx refuses them: `:authority` and `host` that disagree, two `host`
/// headers, a host that is not one, `:path *` on a GET (400); CONNECT,
/// which is for proxies (405). The connection serves on afterwards.
#[test]
fn hosts_and_targets_that_are_not_are_refused() {
    let ws = Workspace::new();
    site(&ws);
    let server = Server::start(&ws, &[]);
    fn get(path: &str) -> Vec<(&str, &str)> {
        vec![
            (":method", "GET"),
            (":scheme", "http"),
            (":authority", "127.0.0.1"),
            (":path", path),
        ]
    }
    let cases: Vec<(Vec<u8>, u16, &str)> = vec![
        (
            request_with(&get(ASSET), &[("host", b"other.example")]),
            400,
            ":authority and host disagree",
        ),
        (
            request_with(
                &get(ASSET),
                &[("host", b"127.0.0.1"), ("host", b"127.0.0.1")],
            ),
            400,
            "two host headers",
        ),
        (
            request_with(
                &[(":method", "GET"), (":scheme", "http"), (":path", ASSET)],
                &[("host", b"a b/c")],
            ),
            400,
            "a host that is not one",
        ),
        (request_with(&get("*"), &[]), 400, ":path * on a GET"),
        (
            request_with(
                &[(":method", "CONNECT"), (":authority", "127.0.0.1:443")],
                &[],
            ),
            405,
            "CONNECT",
        ),
        (
            request_with(&get(ASSET), &[("host", b"127.0.0.1")]),
            200,
            "the same host twice over",
        ),
    ];
    for (stream, (block, want, what)) in (1u32..).step_by(2).zip(cases) {
        let mut c = H2::open(server.addr, &[]);
        c.send(&header_frames(stream, &block, true)).expect("send");
        let got = answer(&mut c, stream);
        assert_eq!(got.as_ref().map(|(s, _)| *s), Ok(want), "{what}: {got:?}");
    }
    still_serves(&server, "the refused requests");
}

/// A client that gives its streams no flow-control window (initial window
/// 0, never a WINDOW_UPDATE) has them reset (CANCEL) after
/// `--send-timeout`, and the connection, whose streams all stalled, sent
/// away with GOAWAY: serve holds none of it for longer, and counts them.
#[test]
fn streams_the_client_gives_no_window_are_reset_after_the_send_timeout() {
    let ws = Workspace::new();
    ws.write_tree(
        "big",
        &[("big.bin".into(), crate::util::Rng::new(4).bytes(3 << 20))],
    );
    ws.publish("big@1.0.0", "big", &["--level", "1"]);
    site(&ws);
    let server = Server::start(&ws, &["--send-timeout", "1s"]);
    let started = Instant::now();
    let mut c = H2::open(server.addr, &[(INITIAL_WINDOW_SIZE, 0)]);
    let streams: Vec<u32> = (1..=41).step_by(2).collect();
    for &stream in &streams {
        let block = request("/assets/big/1.0.0/big.bin", &[]);
        c.send(&header_frames(stream, &block, true))
            .expect("request");
    }
    let (mut reset, mut goaway) = (Vec::new(), None);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match c.next(Duration::from_millis(100)) {
            Got::Frame(f) if f.kind == RST_STREAM => reset.push((f.stream, f.code())),
            Got::Frame(f) if f.kind == GOAWAY => goaway = Some(started.elapsed()),
            Got::Frame(f) if f.kind == DATA => panic!("data sent without a window: {f:?}"),
            Got::Closed => break,
            _ => {}
        }
    }
    let closed = started.elapsed();
    reset.sort();
    let want: Vec<(u32, u32)> = streams.iter().map(|s| (*s, CANCEL)).collect();
    assert_eq!(reset, want, "every stream reset with CANCEL");
    let goaway = goaway.expect("GOAWAY once every stream stalled");
    assert!(
        goaway >= Duration::from_millis(900),
        "after the timeout: {goaway:?}"
    );
    assert!(closed < Duration::from_secs(5), "closed after {closed:?}");
    let stats = server.stats();
    assert_eq!(
        stats["connections"]["stalled_streams"].as_u64(),
        Some(21),
        "{stats}"
    );
    assert_eq!(stats["cut_short"].as_u64(), Some(21), "{stats}");
    still_serves(&server, "the stalled streams");
}
