//! Loads one page in a fresh headless Chromium and prints how long its
//! module graph took, as one JSON line: the driver of `bench/h2_latency.sh`.
//!
//! ```text
//! cargo run --release --example page_load -- URL [-- CHROMIUM-SWITCH...]
//! page_load https://10.203.0.1:8443/assets/page/1.0.0/index.html -- --disable-http2
//! ```
//!
//! Chromium is started as `tests/chromium.rs` starts it (a new profile in a
//! temporary folder, no background networking), with the switches after
//! `--` added (a certificate to trust, `--disable-http2`), and loads the
//! page once: its caches are empty, so every request goes to the server
//! (`cached` counts the module entries that did not: 0 expected). The
//! DevTools network domain stays off: with it on, the events of 640
//! requests added about a second to a load on a 2-core machine.
//!
//! The page is expected to set `window.loadedAt = performance.now()` once
//! its module script ran, which is when every module of the static import
//! graph was fetched and evaluated; `performance.now()` counts from the
//! navigation's start, so the time includes the page's own connection and
//! TLS handshake. Printed, in milliseconds from the navigation's start:
//! `loaded_ms` (that moment), `dcl_ms` and `load_ms` (the end of the
//! DOMContentLoaded and load events), `page_response_ms` (the page's last
//! byte) and `last_module_ms` (the last module's last byte); and the
//! number of module requests the page's resource timing saw (`modules`,
//! URLs under `/lodash-es/` by default, `--match` to change) with their
//! compressed bytes, the protocols they and the page went over
//! (`nextHopProtocol`), the number of exports, and the console errors and
//! warnings.
//!
//! Every wait is bounded (`tests/chromium.rs`: 60 s each); a page that
//! never sets `window.loadedAt` within `--wait` seconds (default 60)
//! exits 1.

#[path = "../tests/chromium.rs"]
mod chromium;

use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn fail(code: i32, message: String) -> ! {
    eprintln!("page_load: {message}");
    std::process::exit(code)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut url = None;
    let mut matching = "/lodash-es/".to_string();
    let mut wait = Duration::from_secs(60);
    let mut switches = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--" => {
                switches.extend(args.by_ref());
            }
            "--match" => {
                matching = args
                    .next()
                    .unwrap_or_else(|| fail(2, "--match needs a value".into()))
            }
            "--wait" => {
                let secs = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| fail(2, "--wait needs seconds".into()));
                wait = Duration::from_secs(secs);
            }
            _ if url.is_none() && !arg.starts_with('-') => url = Some(arg),
            _ => fail(
                2,
                format!(
                    "unexpected {arg:?}; usage: page_load URL [--match TEXT] [--wait SECS] [-- CHROMIUM-SWITCH...]"
                ),
            ),
        }
    }
    let url = url.unwrap_or_else(|| fail(2, "usage: page_load URL [-- CHROMIUM-SWITCH...]".into()));

    let mut browser = chromium::Browser::launch_with(&switches);
    let reports = browser.goto(&url);

    let until = Instant::now() + wait;
    let loaded = loop {
        let at = browser.eval("window.loadedAt || 0");
        if at.as_f64().is_some_and(|t| t > 0.0) {
            break at;
        }
        if Instant::now() > until {
            fail(1, format!("{url}: window.loadedAt not set within {wait:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let timing = browser.eval(&format!(
        "(() => {{
            const n = performance.getEntriesByType('navigation')[0];
            const m = performance.getEntriesByType('resource')
                .filter(e => e.name.includes({matching:?}));
            return {{
                dcl_ms: n.domContentLoadedEventEnd,
                load_ms: n.loadEventEnd,
                page_response_ms: n.responseEnd,
                page_protocol: n.nextHopProtocol,
                modules: m.length,
                protocols: [...new Set(m.map(e => e.nextHopProtocol))].sort().join('+'),
                last_module_ms: Math.max(0, ...m.map(e => e.responseEnd)),
                // Fetched from a cache, not the network (none expected).
                cached: m.filter(e => e.transferSize === 0).length,
                module_bytes: m.reduce((sum, e) => sum + e.encodedBodySize, 0),
                exports: window.exportCount ?? null,
            }};
        }})()"
    ));
    let problems: Vec<String> = reports
        .iter()
        .filter(|r| matches!(r.level.as_str(), "error" | "exception" | "warning"))
        .map(|r| format!("{}: {}", r.level, r.text))
        .collect();
    let mut line = json!({
        "url": url,
        "switches": switches,
        "loaded_ms": loaded,
        "problems": problems,
    });
    if let (Value::Object(line), Value::Object(timing)) = (&mut line, timing) {
        line.extend(timing);
    }
    println!("{line}");
}
