//! A headless Chromium driven over the Chrome DevTools Protocol, for the
//! browse UI tests: load a page, read what the console and the network
//! said, run a script in the page, click, and take screenshots.
//!
//! Chromium is started with a fresh profile and every background service
//! off (no network of its own), prints the DevTools address on stderr, and
//! is spoken to over one WebSocket with a flat session for one tab. Every
//! wait is bounded; the browser is killed when the value is dropped.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

/// Where Debian's `chromium` package puts the browser.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// Longest wait for the browser to start, a page to load or a reply.
pub const WAIT: Duration = Duration::from_secs(60);

/// What a page said while it loaded and ran: console messages, uncaught
/// exceptions, and the browser's own log (failed loads, CSP refusals).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub level: String,
    pub text: String,
}

pub struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    socket: WebSocket<TcpStream>,
    session: String,
    next_id: u64,
    /// Events read while waiting for something else, oldest first.
    events: Vec<Value>,
}

impl Browser {
    /// Starts Chromium headless (as root: `--no-sandbox`) with one blank
    /// tab and the page, runtime and log domains on.
    pub fn launch() -> Browser {
        Browser::launch_with(&[])
    }

    /// [`Browser::launch`] with more command-line switches (a certificate
    /// to trust, say).
    pub fn launch_with(extra: &[String]) -> Browser {
        let profile = tempfile::tempdir().expect("profile dir");
        let mut child = Command::new(CHROMIUM)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
            ])
            .args(extra)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {CHROMIUM}: {e}"));
        let stderr = child.stderr.take().expect("stderr pipe");
        let (tx, rx) = mpsc::channel();
        // Reads the address, then keeps draining stderr so the browser
        // never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ")
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let Ok(url) = rx.recv_timeout(WAIT) else {
            let _ = child.kill();
            panic!("chromium printed no DevTools address within {WAIT:?}");
        };
        let host = url
            .strip_prefix("ws://")
            .and_then(|rest| rest.split('/').next())
            .expect("a ws:// address")
            .to_string();
        let stream = TcpStream::connect(&host).expect("connect to DevTools");
        stream.set_read_timeout(Some(WAIT)).expect("read timeout");
        let (socket, _) = tungstenite::client(url.as_str(), stream).expect("DevTools handshake");
        // From now on a read gives up after a moment, so waits can check
        // their deadline.
        socket
            .get_ref()
            .set_read_timeout(Some(Duration::from_millis(200)))
            .expect("read timeout");
        let mut browser = Browser {
            child,
            _profile: profile,
            socket,
            session: String::new(),
            next_id: 0,
            events: Vec::new(),
        };
        let target = browser.call_browser("Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().expect("targetId").to_string();
        let attached = browser.call_browser(
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        browser.session = attached["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_string();
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            browser.call(domain, json!({}));
        }
        browser.call(
            "Emulation.setFocusEmulationEnabled",
            json!({"enabled": true}),
        );
        browser
    }

    /// Lets pages of `origin` use the clipboard without a prompt.
    pub fn grant_clipboard(&mut self, origin: &str) {
        self.call_browser(
            "Browser.grantPermissions",
            json!({
                "origin": origin,
                "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"],
            }),
        );
    }

    /// Sets the viewport (CSS pixels) the next screenshots and layouts use.
    pub fn viewport(&mut self, width: u32, height: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
    }

    /// Loads `url` and waits for its load event; returns what the page
    /// reported meanwhile, and the navigation's HTTP status.
    pub fn goto(&mut self, url: &str) -> Vec<Report> {
        self.events.clear();
        let navigated = self.call("Page.navigate", json!({"url": url}));
        assert!(
            navigated.get("errorText").is_none(),
            "loading {url}: {navigated}"
        );
        self.wait_for(|e| e["method"] == "Page.loadEventFired", url);
        // Let late console messages and log entries arrive.
        self.drain(Duration::from_millis(300));
        self.reports()
    }

    /// Everything reported since the last navigation.
    pub fn reports(&self) -> Vec<Report> {
        let mut out = Vec::new();
        for e in &self.events {
            let params = &e["params"];
            match e["method"].as_str() {
                Some("Runtime.consoleAPICalled") => out.push(Report {
                    level: params["type"].as_str().unwrap_or("").to_string(),
                    text: params["args"]
                        .as_array()
                        .map(|args| {
                            args.iter()
                                .map(|a| a["value"].to_string())
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                        .unwrap_or_default(),
                }),
                Some("Runtime.exceptionThrown") => out.push(Report {
                    level: "exception".into(),
                    text: params["exceptionDetails"].to_string(),
                }),
                Some("Log.entryAdded") => out.push(Report {
                    level: params["entry"]["level"].as_str().unwrap_or("").to_string(),
                    text: format!(
                        "{} {}",
                        params["entry"]["text"].as_str().unwrap_or(""),
                        params["entry"]["url"].as_str().unwrap_or("")
                    ),
                }),
                _ => {}
            }
        }
        out
    }

    /// Turns the network domain on: from then on the events say what each
    /// request was sent, answered with and transferred ([`Browser::events`]).
    pub fn enable_network(&mut self) {
        self.call("Network.enable", json!({}));
    }

    /// Every event read since the last navigation, oldest first.
    pub fn events(&self) -> &[Value] {
        &self.events
    }

    /// Evaluates `expression` in the page (awaiting a promise) and returns
    /// its value; an exception fails the test.
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expression}: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// A real mouse click (press and release) at page coordinates, as a
    /// person's: it gives the page user activation and focus.
    pub fn click(&mut self, x: f64, y: f64) {
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    /// A PNG of the viewport.
    pub fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine;
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("screenshot data"))
            .expect("base64 PNG")
    }

    /// Waits up to `limit` for events, keeping them.
    pub fn drain(&mut self, limit: Duration) {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if let Some(message) = self.read() {
                self.events.push(message);
            }
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(method, params, Some(&session))
    }

    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, None)
    }

    fn send(&mut self, method: &str, params: Value, session: Option<&str>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket
            .send(Message::text(message.to_string()))
            .unwrap_or_else(|e| panic!("sending {method}: {e}"));
        let reply = self.wait_for(|m| m["id"] == id, method);
        if let Some(error) = reply.get("error") {
            panic!("{method}: {error}");
        }
        reply["result"].clone()
    }

    /// Reads until a message matches `wanted`; others are kept as events.
    fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool, what: &str) -> Value {
        let until = Instant::now() + WAIT;
        loop {
            assert!(
                Instant::now() < until,
                "no answer to {what} within {WAIT:?}"
            );
            let Some(message) = self.read() else {
                continue;
            };
            if wanted(&message) {
                return message;
            }
            self.events.push(message);
        }
    }

    /// One message, or None after the socket's read timeout.
    fn read(&mut self) -> Option<Value> {
        match self.socket.read() {
            Ok(Message::Text(text)) => {
                Some(serde_json::from_str(text.as_str()).expect("DevTools sends JSON"))
            }
            Ok(_) => None,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(e) => panic!("DevTools connection: {e}"),
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
