//! `ccc causal` end to end on a small catalog: it serves, drives its own
//! load, sweeps, and writes a table, JSON, a Coz profile and a plot. No
//! numeric bounds: the timing scenarios in `causal_validation` check the
//! numbers; this checks the product around them.

use crate::causal_coz::viewer::Profile;
use crate::util::{Workspace, repo_root};

#[test]
fn a_short_sweep_writes_every_output() {
    let ws = Workspace::new();
    ws.ccc()
        .args(["publish", "-q", "demo-site@1.0.0"])
        .arg(repo_root().join("examples/site"))
        .assert()
        .success();
    let out = ws
        .ccc()
        .args([
            "causal",
            "--port",
            "0",
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
            "--json",
            "run.json",
            "--coz-out",
            "run.coz",
            "--plot",
            "run.svg",
            "--ledger",
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run ccc causal");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("ccc causal: 2 sites x {0,25,50}% x 1 rounds"),
        "{stdout}"
    );
    assert!(
        stdout.contains("cache-lookup") && stdout.contains("sqlite-query"),
        "{stdout}"
    );
    assert!(stdout.contains("Σcredited"), "the ledger table: {stdout}");

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
    }
    assert_eq!(json["config"]["seed"], 7);
    assert!(
        json["summary"]["lines"]
            .as_array()
            .is_some_and(|l| l.len() == 6)
    );

    let coz = std::fs::read_to_string(ws.path().join("run.coz")).expect("coz");
    assert!(coz.starts_with("startup\ttime="), "{coz}");
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

#[test]
fn bad_plans_are_refused_before_serving() {
    let ws = Workspace::new();
    for (args, expect) in [
        (vec!["--sites", "nope"], "unknown site `nope`"),
        (vec!["--load", "builtin:x"], "invalid --load"),
        (vec!["--speedups", "0,150"], "from 0 to 100"),
    ] {
        ws.ccc()
            .args(["causal", "--port", "0"])
            .args(args)
            .assert()
            .failure()
            .stderr(predicates::str::contains(expect));
    }
}
