//! The churn soak: for about two minutes, well-behaved clients check every
//! body `ccc serve` sends against the catalog, while other `ccc` processes
//! publish, remove, gc and force-republish versions in a loop and the
//! attacks of `under_attack` take turns on the same server.
//!
//! The catalog: `stable@1.0.0` and `stable@1.1.0` (never touched), `big@1.0.0`
//! (16 MiB of noise, for slow readers and resets) and `churn@1.0.N`, one new
//! version per churn round. Round N publishes `churn@1.0.N`, republishes
//! `churn@1.0.(N-1)` with `--force` and new contents, removes
//! `churn@1.0.(N-2)` every third round, runs `gc --keep 3` every fourth
//! (which prunes all but the three newest churn versions; the others have
//! at most three) and a plain `gc` (orphan blobs, VACUUM) every round. Every
//! file's contents are unique to its version and generation, and half the
//! requests accept gzip, half do not, so both representations are checked.
//!
//! What counts as right, exactly (GRACE is 1.5 s: the documented second
//! within which a removed version stops being served, plus scheduling slack
//! on a loaded machine). For a request sent at `s` and answered at `d`:
//! - a stable file: only a 200 whose body has the catalog's sha256;
//! - a 200 for a churn file: the body's sha256 matches its ETag and one of
//!   the generations published at that path; that generation was current at
//!   some moment of [s - GRACE, d] (it had started publishing before `d`,
//!   and was not replaced, nor the version removed, before `s - GRACE`);
//!   an unknown digest is a wrong byte, a known one outside its time is an
//!   unexpected status;
//! - a 404 for a churn file: only when the version was not surely there
//!   during the whole request: its first publish had not returned by
//!   `s - GRACE`, or a removal (`rm`, or a `gc --keep` that prunes it) had
//!   begun before `d`;
//! - a 503 with `Retry-After` as a new connection's first answer (the
//!   connection cap under a flood); nothing else.
//!
//! It passes with 0 wrong bytes, 0 unexpected answers, no refused, timed
//! out or broken request, a flat resident set (the peak of the second attack
//! cycle within 1.25x + 16 MiB of the first's: both see every attack), and
//! `ccc verify` clean once the churn stops. `#[ignore]`: `.ci/run` runs it in
//! a step of its own:
//!
//! ```text
//! cargo test --locked --release --test main churn -- --ignored --nocapture
//! ```

use crate::attack::digest::asset_digest;
use crate::attack::probe::{Check, Verdict};
use crate::attack::wire::Response;
use crate::attack::{Attack, Phases, Probe, ProbeConfig, ProbeReport, procfs};
use crate::serve_util::asset_path;
use crate::under_attack::serve;
use crate::util::{Rng, Workspace, sha256_hex};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const GRACE: Duration = Duration::from_millis(1500);
/// Before the first attack, and the length of one cycle of all five.
const WARMUP: Duration = Duration::from_secs(10);
const ATTACK_ON: Duration = Duration::from_secs(8);
const ATTACK_OFF: Duration = Duration::from_secs(2);
const CYCLES: u32 = 2;
/// After the last attack cycle, the churn and the clients go on this long.
const TAIL: Duration = Duration::from_secs(8);

/// The files of every churn version.
const CHURN_FILES: [&str; 5] = [
    "app.js",
    "css/site.css",
    "data/routes.json",
    "img/photo.bin",
    "vendor/big.js",
];

/// One content of a churn version's files.
struct Generation {
    digests: HashMap<String, String>,
    /// When its publish began.
    started: Instant,
    /// When the publish of the next generation returned.
    replaced: Option<Instant>,
}

#[derive(Default)]
struct Churned {
    /// When the first publish returned.
    published: Option<Instant>,
    /// When a removal began, and when it returned.
    removing: Option<Instant>,
    removed: Option<Instant>,
    generations: Vec<Generation>,
}

/// What the churner did, when: the judge's reference.
#[derive(Default)]
struct Timeline {
    versions: BTreeMap<u32, Churned>,
}

/// Contents of `churn@1.0.N`, generation `g`: unique to both.
fn churn_files(n: u32, g: u32) -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng::new(u64::from(n) << 16 | u64::from(g));
    CHURN_FILES
        .iter()
        .map(|path| {
            let mut body = format!("/* churn 1.0.{n} generation {g} {path} */\n").into_bytes();
            let more = match *path {
                "img/photo.bin" => rng.bytes(16 << 10),
                "vendor/big.js" => rng.text(200 << 10),
                _ => {
                    let len = 2048 + rng.below(30 << 10);
                    rng.text(len)
                }
            };
            body.extend_from_slice(&more);
            (path.to_string(), body)
        })
        .collect()
}

/// The judge (see the module doc).
struct Judge {
    stable: HashMap<String, String>,
    timeline: Arc<Mutex<Timeline>>,
}

/// `(N, path)` of a churn target.
fn churn_target(target: &str) -> Option<(u32, &str)> {
    let rest = target.strip_prefix("/assets/churn/1.0.")?;
    let (n, path) = rest.split_once('/')?;
    Some((n.parse().ok()?, path))
}

impl Check for Judge {
    fn check(&self, target: &str, response: &Response, sent: Instant, done: Instant) -> Verdict {
        if let Some(want) = self.stable.get(target) {
            if response.status != 200 {
                return Verdict::Unexpected(format!(
                    "status {} for a stable file",
                    response.status
                ));
            }
            return match asset_digest(response) {
                Ok(got) if &got == want => Verdict::Fine,
                Ok(got) => Verdict::WrongBytes(format!("sha256 {got}, the catalog says {want}")),
                Err(why) => Verdict::WrongBytes(why),
            };
        }
        let Some((n, path)) = churn_target(target) else {
            return Verdict::Unexpected("a target outside the catalog".into());
        };
        let timeline = self.timeline.lock().expect("timeline");
        let Some(version) = timeline.versions.get(&n) else {
            return Verdict::Unexpected(format!("churn@1.0.{n} was never published"));
        };
        let since = sent.checked_sub(GRACE).unwrap_or(sent);
        let removal_begun_by = |t: Instant| version.removing.is_some_and(|r| r < t);
        match response.status {
            200 => {
                let got = match asset_digest(response) {
                    Ok(got) => got,
                    Err(why) => return Verdict::WrongBytes(why),
                };
                let Some(generation) = version
                    .generations
                    .iter()
                    .position(|g| g.digests.get(path) == Some(&got))
                else {
                    return Verdict::WrongBytes(format!(
                        "sha256 {got} was never published at churn@1.0.{n}/{path}"
                    ));
                };
                let g = &version.generations[generation];
                if g.started > done {
                    return Verdict::WrongBytes(format!(
                        "generation {generation} served before its publish began"
                    ));
                }
                if g.replaced.is_some_and(|r| r < since) {
                    return Verdict::Unexpected(format!(
                        "generation {generation} served more than {GRACE:?} after it was replaced"
                    ));
                }
                if version.removed.is_some_and(|r| r < since) {
                    return Verdict::Unexpected(format!(
                        "served more than {GRACE:?} after churn@1.0.{n} was removed"
                    ));
                }
                Verdict::Fine
            }
            404 => {
                let surely_there = version.published.is_some_and(|p| p <= since);
                if !surely_there || removal_begun_by(done) {
                    Verdict::Fine
                } else {
                    Verdict::Unexpected(format!(
                        "404 for churn@1.0.{n}, published {:?} before the request and not removed",
                        sent - version.published.unwrap_or(sent)
                    ))
                }
            }
            other => Verdict::Unexpected(format!("status {other}")),
        }
    }
}

/// Counts of what the churner did.
#[derive(Debug, Default)]
struct ChurnDone {
    rounds: u32,
    publishes: u32,
    forced: u32,
    removed: u32,
    gcs: u32,
    pruned: u32,
    errors: Vec<String>,
}

/// Runs churn rounds until `stop` (see the module doc).
fn churn(ws: &Workspace, timeline: &Mutex<Timeline>, stop: &AtomicBool) -> ChurnDone {
    let mut done = ChurnDone::default();
    let run = |done: &mut ChurnDone, args: &[&str]| -> Option<Vec<u8>> {
        let out = ws.ccc().args(args).output().expect("run ccc");
        if out.status.success() {
            Some(out.stdout)
        } else {
            done.errors.push(format!(
                "ccc {args:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            None
        }
    };
    let publish = |done: &mut ChurnDone, n: u32, g: u32, force: bool| {
        let files = churn_files(n, g);
        let dir = format!("src-churn/{n}-{g}");
        ws.write_tree(&dir, &files);
        let digests = files
            .iter()
            .map(|(p, b)| (p.clone(), sha256_hex(b)))
            .collect();
        let started = Instant::now();
        timeline
            .lock()
            .expect("timeline")
            .versions
            .entry(n)
            .or_default()
            .generations
            .push(Generation {
                digests,
                started,
                replaced: None,
            });
        let target = format!("churn@1.0.{n}");
        let mut args = vec!["publish", &target, &dir, "--quiet", "--level", "1"];
        if force {
            args.push("--force");
        }
        let ok = run(done, &args).is_some();
        let now = Instant::now();
        let mut t = timeline.lock().expect("timeline");
        let v = t.versions.entry(n).or_default();
        if ok {
            if g == 0 {
                v.published = Some(now);
            } else if let Some(previous) = v.generations.get_mut(g as usize - 1) {
                previous.replaced = Some(now);
            }
        }
        let _ = std::fs::remove_dir_all(ws.path().join(&dir));
    };
    let mut n = 0u32;
    while !stop.load(Ordering::Relaxed) {
        publish(&mut done, n, 0, false);
        done.publishes += 1;
        if n >= 1 {
            let g = timeline.lock().expect("timeline").versions[&(n - 1)]
                .generations
                .len() as u32;
            publish(&mut done, n - 1, g, true);
            done.forced += 1;
        }
        if n >= 2 && n.is_multiple_of(3) {
            let gone = n - 2;
            timeline
                .lock()
                .expect("timeline")
                .versions
                .entry(gone)
                .or_default()
                .removing = Some(Instant::now());
            if run(&mut done, &["rm", &format!("churn@1.0.{gone}")]).is_some() {
                done.removed += 1;
            }
            timeline
                .lock()
                .expect("timeline")
                .versions
                .entry(gone)
                .or_default()
                .removed = Some(Instant::now());
        }
        if n % 4 == 3 {
            // Every churn version still there but the three newest goes.
            let doomed: Vec<u32> = {
                let mut t = timeline.lock().expect("timeline");
                let present: Vec<u32> = t
                    .versions
                    .iter()
                    .filter(|(_, v)| v.published.is_some() && v.removing.is_none())
                    .map(|(n, _)| *n)
                    .collect();
                let doomed = present[..present.len().saturating_sub(3)].to_vec();
                let now = Instant::now();
                for d in &doomed {
                    t.versions.entry(*d).or_default().removing = Some(now);
                }
                doomed
            };
            if let Some(out) = run(&mut done, &["gc", "--keep", "3", "--json"]) {
                let report: serde_json::Value =
                    serde_json::from_slice(&out).expect("gc --json prints JSON");
                let mut pruned: Vec<u32> = report["versions"]
                    .as_array()
                    .expect("gc --json lists versions")
                    .iter()
                    .map(|v| {
                        assert_eq!(v["package"], "churn", "gc --keep 3 pruned {v}");
                        let version = v["version"].as_str().expect("version");
                        version
                            .strip_prefix("1.0.")
                            .and_then(|n| n.parse().ok())
                            .expect("a churn version")
                    })
                    .collect();
                pruned.sort_unstable();
                if pruned != doomed {
                    done.errors.push(format!(
                        "gc --keep 3 pruned {pruned:?}, expected {doomed:?}"
                    ));
                }
                done.pruned += pruned.len() as u32;
            }
            let now = Instant::now();
            let mut t = timeline.lock().expect("timeline");
            for d in &doomed {
                t.versions.entry(*d).or_default().removed = Some(now);
            }
        }
        if run(&mut done, &["gc", "--json"]).is_some() {
            done.gcs += 1;
        }
        done.rounds += 1;
        n += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    done
}

#[test]
#[ignore = "a two-minute soak: .ci/run runs it in a step of its own"]
fn churn_soak_serves_no_wrong_byte() {
    let ws = Workspace::new();
    let mut rng = Rng::new(5);
    for version in ["1.0.0", "1.1.0"] {
        let files: Vec<(String, Vec<u8>)> = (0..12)
            .map(|i| {
                let body = if i == 0 {
                    rng.bytes(64 << 10)
                } else {
                    let len = 2048 + rng.below(24 << 10);
                    rng.text(len)
                };
                (format!("f/{i}.js"), body)
            })
            .collect();
        let dir = format!("src-stable/{version}");
        ws.write_tree(&dir, &files);
        ws.publish(&format!("stable@{version}"), &dir, &[]);
    }
    ws.write("src-big/big.bin", rng.bytes(16 << 20));
    ws.publish("big@1.0.0", "src-big", &["--level", "1"]);
    let mut stable = HashMap::new();
    for version in ["1.0.0", "1.1.0"] {
        let inspected = ws.json(&["inspect", &format!("stable@{version}"), "--json"]);
        for a in inspected["files"].as_array().expect("files") {
            let path = a["path"].as_str().expect("path");
            stable.insert(
                asset_path("stable", version, path),
                a["sha256"].as_str().expect("sha256").to_string(),
            );
        }
    }
    let large = asset_path("big", "1.0.0", "big.bin");

    let server = serve(&ws, None, &["--cache-bytes", "32MiB"]);
    let pid = server.pid();
    let timeline = Arc::new(Mutex::new(Timeline::default()));
    let stop_churn = Arc::new(AtomicBool::new(false));
    std::thread::scope(|scope| {
        let churner = scope.spawn(|| churn(&ws, &timeline, &stop_churn));
        // Let the first churn version exist before the clients ask for one.
        crate::serve_util::poll_until(Duration::from_secs(30), || {
            timeline
                .lock()
                .expect("timeline")
                .versions
                .values()
                .any(|v| v.published.is_some())
        })
        .expect("the first churn version was published");

        let stable_targets: Vec<String> = stable.keys().cloned().collect();
        let pick_timeline = timeline.clone();
        let mut probe = ProbeConfig::new(stable_targets.clone(), 4, 2);
        probe.pace = Duration::from_millis(10);
        probe.accept_encodings = vec!["gzip", "identity"];
        probe.pick = Some(Arc::new(move |r: u64| {
            if r % 100 < 60 {
                return stable_targets[(r >> 8) as usize % stable_targets.len()].clone();
            }
            let t = pick_timeline.lock().expect("timeline");
            let recent: Vec<u32> = t.versions.keys().rev().take(5).copied().collect();
            let n = recent[(r >> 8) as usize % recent.len()];
            let path = CHURN_FILES[(r >> 16) as usize % CHURN_FILES.len()];
            asset_path("churn", &format!("1.0.{n}"), path)
        }));
        probe.check = Some(Arc::new(Judge {
            stable: stable.clone(),
            timeline: timeline.clone(),
        }));

        // Phases: 0 warm-up, 1 first attack cycle, 2 second cycle and tail.
        let phases = Phases::new(CYCLES as usize + 1);
        let sampler = procfs::Sampler::start(vec![pid], phases.clone(), Duration::from_millis(100));
        let clients = Probe::start(server.addr, &probe, phases.clone());
        std::thread::sleep(WARMUP);
        let attacks = [
            Attack::SlowReaders {
                count: 32,
                target: large.clone(),
            },
            Attack::Slowloris {
                count: 1000,
                trickle: Duration::from_secs(1),
            },
            Attack::Flood { count: 300 },
            Attack::Malformed { workers: 4 },
            Attack::Reset {
                workers: 4,
                target: large.clone(),
                read_bytes: 64 << 10,
            },
        ];
        let mut attack_reports = Vec::new();
        for cycle in 0..CYCLES {
            phases.set(cycle as usize + 1);
            for attack in &attacks {
                let running = attack.start(server.addr);
                std::thread::sleep(ATTACK_ON);
                attack_reports.push(running.finish());
                std::thread::sleep(ATTACK_OFF);
            }
        }
        std::thread::sleep(TAIL);
        stop_churn.store(true, Ordering::Relaxed);
        let done = churner.join().expect("the churner panicked");
        // One more second of clients after the last change settles.
        std::thread::sleep(GRACE);
        let report = ProbeReport::combined(clients.finish());
        let footprints = sampler.finish();
        let verify = ws
            .ccc()
            .args(["verify", "--quiet"])
            .output()
            .expect("run ccc verify");

        println!(
            "churn: {} rounds ({} publishes, {} forced, {} removed, {} pruned by gc --keep, {} gc)",
            done.rounds, done.publishes, done.forced, done.removed, done.pruned, done.gcs
        );
        println!(
            "clients: {} ok, statuses {:?}, {} capped, {} failures, {} stale keep-alive retries, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            report.ok,
            report.statuses,
            report.capped,
            report.failures(),
            report.stale,
            report.p50_ms,
            report.p99_ms,
            report.max_ms
        );
        for (i, f) in footprints.iter().enumerate() {
            println!(
                "server, {}: peak RSS {:.1} MiB, peak threads {}",
                ["warm-up", "attack cycle 1", "attack cycle 2 and tail"][i.min(2)],
                f.peak_rss_kib as f64 / 1024.0,
                f.peak_threads
            );
        }
        for a in &attack_reports {
            println!(
                "  {}: {} opened, {} closed by the server, answers {:?}",
                a.mode, a.opened, a.closed_by_server, a.answers
            );
        }

        assert!(
            done.errors.is_empty(),
            "churn commands failed: {:#?}",
            done.errors
        );
        assert!(done.rounds >= 10, "only {} churn rounds ran", done.rounds);
        assert_eq!(report.wrong_bytes, 0, "WRONG BYTES: {:#?}", report.problems);
        assert_eq!(report.failures(), 0, "{:#?}", report.problems);
        assert!(report.ok >= 1000, "only {} answers were checked", report.ok);
        assert!(
            procfs::read(&[pid]).is_some(),
            "the server died; stderr:\n{}",
            server.stderr()
        );
        let (early, late) = (footprints[1].peak_rss_kib, footprints[2].peak_rss_kib);
        assert!(
            late as f64 <= early as f64 * 1.25 + 16.0 * 1024.0,
            "resident set grew from {early} KiB (first attack cycle) to {late} KiB (second)"
        );
        assert!(
            verify.status.success(),
            "ccc verify after the churn:\n{}{}",
            String::from_utf8_lossy(&verify.stdout),
            String::from_utf8_lossy(&verify.stderr)
        );
    });
}

/// The judge itself, on answers made up to be right and wrong (fast, not
/// ignored): a soak whose judge let everything through would prove nothing.
#[test]
fn the_churn_judge_tells_right_from_wrong() {
    use sha2::{Digest, Sha256};
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let files = churn_files(7, 0);
    let (path, body) = &files[0];
    let newer = churn_files(7, 1);
    let digests = |files: &[(String, Vec<u8>)]| {
        files
            .iter()
            .map(|(p, b)| (p.clone(), sha256_hex(b)))
            .collect::<HashMap<_, _>>()
    };
    let mut timeline = Timeline::default();
    let v = timeline.versions.entry(7).or_default();
    v.published = Some(at(1_000));
    v.generations.push(Generation {
        digests: digests(&files),
        started: at(500),
        replaced: Some(at(10_000)),
    });
    v.generations.push(Generation {
        digests: digests(&newer),
        started: at(9_000),
        replaced: None,
    });
    v.removing = Some(at(20_000));
    v.removed = Some(at(20_500));
    let judge = Judge {
        stable: HashMap::new(),
        timeline: Arc::new(Mutex::new(timeline)),
    };
    let ok = |body: &[u8]| Response {
        status: 200,
        headers: vec![(
            "etag".into(),
            format!("\"{}\"", hex::encode(Sha256::digest(body))),
        )],
        body: body.to_vec(),
        close: false,
    };
    let status = |status: u16| Response {
        status,
        headers: vec![],
        body: vec![],
        close: false,
    };
    let target = asset_path("churn", "1.0.7", path);
    let judge_at = |r: &Response, sent: u64| judge.check(&target, r, at(sent), at(sent + 5));
    let fine = |v: Verdict| matches!(v, Verdict::Fine);
    let wrong = |v: Verdict| matches!(v, Verdict::WrongBytes(_));
    let unexpected = |v: Verdict| matches!(v, Verdict::Unexpected(_));

    assert!(fine(judge_at(&ok(body), 5_000)), "the current generation");
    assert!(fine(judge_at(&ok(body), 11_000)), "replaced, within GRACE");
    assert!(unexpected(judge_at(&ok(body), 12_000)), "replaced long ago");
    assert!(
        fine(judge_at(&ok(&newer[0].1), 12_000)),
        "the new generation"
    );
    let mut flipped = body.clone();
    flipped[40] ^= 1;
    assert!(wrong(judge_at(&ok(&flipped), 5_000)), "a changed byte");
    let mut lying = ok(body);
    lying.body = flipped;
    assert!(
        wrong(judge_at(&lying, 5_000)),
        "a body its ETag does not name"
    );
    assert!(
        fine(judge_at(&status(404), 1_200)),
        "404 just after the publish"
    );
    assert!(
        unexpected(judge_at(&status(404), 5_000)),
        "404 for a published version"
    );
    assert!(
        fine(judge_at(&status(404), 19_999)),
        "404 once the removal began"
    );
    assert!(
        fine(judge_at(&ok(&newer[0].1), 21_000)),
        "200 within GRACE of removal"
    );
    assert!(
        unexpected(judge_at(&ok(&newer[0].1), 23_000)),
        "200 long after removal"
    );
    assert!(unexpected(judge_at(&status(500), 5_000)), "a 500");
}
