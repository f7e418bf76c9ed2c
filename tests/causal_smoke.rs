//! `ccc causal` end to end on a small catalog: it serves, drives its own
//! load, sweeps, and writes a table, JSON, a Coz profile and a plot. No
//! numeric bounds: the timing scenarios in `causal_validation` check the
//! numbers; this checks the product around them.

use crate::causal_coz::viewer::Profile;
use crate::util::{Workspace, ccc_path, hermetic, repo_root};

#[test]
fn a_short_sweep_writes_every_output() {
    let ws = Workspace::new();
    ws.ccc()
        .args(["publish", "-q", "demo-site@1.0.0"])
        .arg(repo_root().join("examples/site"))
        .assert()
        .success();
    // serve's default port, taken when it is free (another process may
    // hold it: causal must not use it either way).
    let serve_default = std::net::TcpListener::bind("127.0.0.1:8333").ok();
    let out = ws
        .ccc()
        .args([
            // No --port: causal picks a free one, even with serve's
            // default taken (below).
            "causal",
            "--rounds",
            "1",
            "--window",
            "200ms",
            "--warmup",
            "300ms",
            "--settle",
            "20ms",
            "--min-delta",
            "5",
            "--sites",
            "cache-lookup,sqlite-query",
            "--load",
            "builtin:2",
            "--seed",
            "7",
            "--json-out",
            "run.json",
            "--coz-out",
            "run.coz",
            "--plot",
            "run.svg",
            "--ledger",
            "--site-clock",
            "cpu",
            "--threads",
            "2",
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run ccc causal");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains("profiling http://127.0.0.1:"), "{stderr}");
    assert!(
        !stderr.contains("profiling http://127.0.0.1:8333 "),
        "{stderr}"
    );
    drop(serve_default);
    assert!(
        stdout.contains("ccc causal: 2 sites x {0,25,50}% x 1 round,"),
        "{stdout}"
    );
    assert!(
        stdout.contains("cache-lookup") && stdout.contains("sqlite-query"),
        "{stdout}"
    );
    assert!(stdout.contains("Σcredited"), "the ledger table: {stdout}");
    // One round: every change is a single measurement, and says so.
    let flagged = stdout
        .lines()
        .filter(|l| (l.contains(" 25% ") || l.contains(" 50% ")) && l.contains(" R1"))
        .count();
    assert_eq!(flagged, 4, "{stdout}");
    assert!(
        stdout.contains("R1 one round: a single measurement"),
        "{stdout}"
    );

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ws.path().join("run.json")).expect("json"))
            .expect("parse");
    let cells = json["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 6, "2 sites x 3 speedups x 1 round");
    for cell in cells {
        for key in [
            "round",
            "site",
            "speedup_pct",
            "elapsed_ns",
            "delay_ns",
            "duration_ns",
            "delta",
            "reliable",
            "ledger",
        ] {
            assert!(cell.get(key).is_some(), "cell without {key}: {cell}");
        }
        assert!(
            !cell["ledger"].as_array().expect("rows").is_empty(),
            "registered threads audited"
        );
        // Cells name their site (ids indexed a list they were not in), and
        // count rounds from 1 as the table does.
        let site = cell["site"].as_str().expect("the site's name");
        assert!(["cache-lookup", "sqlite-query"].contains(&site), "{cell}");
        assert_eq!(cell["round"], 1, "{cell}");
        assert!(cell["no_visits"].is_boolean(), "{cell}");
        // Every request a worker handled is at the latency point, and two
        // closed-loop clients have at most two in flight.
        let latency = &cell["latency"];
        assert_eq!(latency["name"], "request", "{cell}");
        let arrivals = latency["arrivals"].as_u64().expect("arrivals");
        // A request is an arrival when a worker takes it and progress only
        // after its response is out and the worker has paid its delays, so
        // the client may already be on its next request: what an edge of
        // the window splits is bounded by the workers (2), not the clients.
        // The two counters are read one after the other, and on a busy
        // machine the controller can be preempted between the reads: 1%
        // of the window's requests is allowed for that.
        let delta = cell["delta"].as_u64().expect("delta");
        assert!(arrivals.abs_diff(delta) <= 2 + delta / 100, "{cell}");
        let in_flight = latency["mean_in_flight"].as_f64().expect("L");
        assert!(in_flight > 0.0 && in_flight < 2.2, "2 clients: {cell}");
        assert!(latency["mean_latency_ns"].as_f64().is_some_and(|w| w > 0.0));
    }
    assert!(stdout.contains("Δlatency"), "{stdout}");
    assert!(stdout.contains("mean latency at request: "), "{stdout}");
    assert_eq!(json["config"]["seed"], 7);
    assert_eq!(json["config"]["load"], "builtin:2");
    // Visits timed on the thread CPU clock still measure the work.
    assert_eq!(json["config"]["site_clock"], "cpu");
    for cell in cells.iter().filter(|c| c["site"] == "sqlite-query") {
        if cell["visits"].as_u64().is_some_and(|v| v > 0) {
            assert!(cell["visit_ns"].as_u64().is_some_and(|ns| ns > 0), "{cell}");
        }
    }
    assert!(
        json["summary"]["lines"]
            .as_array()
            .is_some_and(|l| l.len() == 6)
    );

    let coz = std::fs::read_to_string(ws.path().join("run.coz")).expect("coz");
    assert!(coz.starts_with("startup\ttime="), "{coz}");
    assert_eq!(
        coz.matches("\nlatency-point\tname=request\t").count(),
        coz.matches("\nexperiment\t").count(),
        "{coz}"
    );
    let profile = Profile::load(&coz).expect("the viewer parses it");
    assert!(profile.warnings.is_empty(), "{:?}", profile.warnings);

    let svg = std::fs::read_to_string(ws.path().join("run.svg")).expect("svg");
    assert!(
        svg.starts_with("<svg") || svg.starts_with("<?xml"),
        "{}",
        &svg[..svg.len().min(80)]
    );
    assert!(svg.contains("cache-lookup") && svg.contains("sqlite-query"));
}

/// `ccc causal` on the demo site with short cells and `extra` flags.
fn quick_causal(ws: &Workspace, extra: &[&str]) -> std::process::Command {
    // SIGINT and SIGTERM at their default action, whatever this test
    // process inherited (a shell ignores SIGINT in background jobs, and
    // ccc honours that): one test here stops ccc with Ctrl-C.
    let mut cmd = std::process::Command::new("env");
    hermetic(&mut cmd);
    cmd.arg("--default-signal=INT,TERM")
        .arg(ccc_path())
        .current_dir(ws.path())
        .env("CCC_DB_PATH", ws.db());
    cmd.args([
        "causal",
        "--port",
        "0",
        "--window",
        "100ms",
        "--max-window",
        "200ms",
        "--warmup",
        "200ms",
        "--settle",
        "10ms",
        "--min-delta",
        "5",
        "--seed",
        "3",
    ])
    .args(extra);
    cmd
}

fn demo_site() -> Workspace {
    let ws = Workspace::new();
    ws.ccc()
        .args(["publish", "-q", "demo-site@1.0.0"])
        .arg(repo_root().join("examples/site"))
        .assert()
        .success();
    ws
}

#[test]
fn unvisited_sites_and_failed_requests_are_reported() {
    let ws = demo_site();
    // The built-in clients accept gzip, so nothing is ever decoded; one URL
    // in two does not exist.
    ws.write(
        "urls.txt",
        "/assets/demo-site/1.0.0/index.html\n/assets/demo-site/1.0.0/missing.js\n",
    );
    let out = quick_causal(
        &ws,
        &[
            "--sites",
            "gzip-decode",
            "--speedups",
            "0,50",
            "--rounds",
            "1",
            "--load",
            "builtin:1",
            "--urls",
            "urls.txt",
            "--json-out",
            "run.json",
        ],
    )
    .env("COLUMNS", "80")
    .output()
    .expect("run ccc causal");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");

    // The table fits 80 columns, saying which detail it left out for that
    // (the command line at the end is for copying, and stays whole).
    assert!(
        stdout
            .lines()
            .filter(|l| !l.contains("; command: "))
            .all(|l| l.chars().count() <= 80),
        "{stdout}"
    );
    assert!(stdout.contains("(not shown in 80 columns: "), "{stdout}");
    // Warnings wrap too, their lines after the first indented.
    assert!(stderr.lines().all(|l| l.chars().count() <= 80), "{stderr}");

    // The table flags both cells, and says what the flag means.
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("gzip-decode"))
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert!(rows.iter().all(|r| r.contains("N(1)")), "{stdout}");
    assert!(
        stdout.contains("N(k) the site was not visited in k cells"),
        "{stdout}"
    );
    assert!(
        stderr.contains("warning: gzip-decode was never visited in 2 cells"),
        "{stderr}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ws.path().join("run.json")).expect("json"))
            .expect("parse");
    for cell in json["cells"].as_array().expect("cells") {
        assert_eq!(cell["site"], "gzip-decode", "{cell}");
        assert_eq!(cell["no_visits"], true, "{cell}");
    }
    for line in json["summary"]["lines"].as_array().expect("lines") {
        assert_eq!(line["no_visits"], 1, "{line}");
    }

    // Half the requests failed, and the summary says how.
    let unwrapped = stderr.replace("\n  ", " ");
    let failed = unwrapped
        .lines()
        .find(|l| l.contains("built-in requests failed"))
        .unwrap_or_else(|| panic!("no summary of failed requests:\n{stderr}"));
    assert!(failed.contains("× HTTP 404"), "{failed}");
    let warnings = json["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().is_some_and(|w| w.contains("× HTTP 404"))),
        "{warnings:?}"
    );
}

#[test]
fn a_load_that_only_fails_is_an_error_that_says_why() {
    let ws = demo_site();
    ws.write("urls.txt", "/assets/demo-site/9.9.9/index.html\n");
    let out = quick_causal(
        &ws,
        &["--load", "builtin:1", "--urls", "urls.txt", "--rounds", "1"],
    )
    .output()
    .expect("run ccc causal");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let error = stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line:\n{stderr}"));
    assert!(
        error.contains("no asset was served at http://127.0.0.1:"),
        "{error}"
    );
    assert!(error.contains("built-in requests failed: "), "{error}");
    assert!(error.contains("× HTTP 404"), "{error}");
    assert!(stderr.contains("hint: "), "{stderr}");
}

#[test]
fn ctrl_c_mid_sweep_reports_the_cells_done_and_exits_130() {
    use std::io::{BufRead, BufReader};
    let ws = demo_site();
    let mut child = quick_causal(
        &ws,
        &[
            "--sites",
            "cache-lookup,sqlite-query",
            "--rounds",
            "20",
            "--load",
            "builtin:1",
        ],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("start ccc causal");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut seen = String::new();
    for line in stderr.by_ref() {
        let line = line.expect("stderr line");
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("[  2/") {
            break;
        }
    }
    assert!(seen.contains("[  2/120]"), "{seen}");
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
    let out = child.wait_with_output().expect("wait for ccc causal");
    for line in stderr.map_while(Result::ok) {
        seen.push_str(&line);
        seen.push('\n');
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{seen}\n{stdout}");
    assert!(seen.contains("interrupted after "), "{seen}");
    assert!(seen.contains(" of 120: reporting those"), "{seen}");
    assert!(
        stdout.contains("ccc causal: 2 sites"),
        "the table: {stdout}"
    );
}

#[test]
fn bad_plans_are_usage_errors_that_say_what_is_allowed() {
    let ws = Workspace::new();
    for (args, expect) in [
        (
            vec!["--sites", "nope"],
            "possible values: cache-lookup, cache-insert",
        ),
        (
            vec!["--load", "builtin:x"],
            "`x` is not a number of clients",
        ),
        (vec!["--load", "builtin:0"], "at least 1 client"),
        (vec!["--load", "wrk"], "expected `external` or `builtin:N`"),
        (
            vec!["--speedups", "0,150"],
            "a speedup is a whole number from 0 to 100",
        ),
        (vec!["--rounds", "0"], "must be at least 1"),
        (vec!["--window", "0s"], "must be longer than zero"),
        (vec!["--warmup", "0ms"], "must be longer than zero"),
        (vec!["--min-delta", "1"], "must be at least 5"),
        (
            vec!["--window", "2s", "--max-window", "1s"],
            "--max-window 1s is shorter than --window 2s",
        ),
        (
            vec!["--load", "external", "--urls", "urls.txt"],
            "with --load external",
        ),
    ] {
        let out = ws
            .ccc()
            .args(["causal", "--port", "0"])
            .args(&args)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .expect("run ccc causal");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
        // Numbers out of range are said in words, not as Rust ranges
        // (`1 is not in 5..18446744073709551615`).
        assert!(
            !stderr.contains("not in ") && !stderr.contains("..1"),
            "{args:?}: {stderr}"
        );
        // Refused before serving: nothing was bound or profiled.
        assert!(!stderr.contains("profiling"), "{args:?}: {stderr}");
    }
}
