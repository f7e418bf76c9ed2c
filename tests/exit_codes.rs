//! The exit code of every subcommand, in one table (README, "Exit codes"):
//! 0 success, 1 a failure, 2 a command line that is wrong, 128 + N for a
//! command stopped by signal N (130 for Ctrl-C, 143 for SIGTERM).
//!
//! Interrupted commands are caught waiting for the catalog's lock, which the
//! test holds: a deterministic moment, and the one where a user is most
//! likely to press Ctrl-C. Commands that stop at safe points exit 130 at
//! once instead of waiting out the lock; the quick ones die by the signal
//! itself, which shells report as 130 too.

use crate::serve_util::{Server, wait_timeout};
use crate::util::{Workspace, ccc_path, hermetic};
use rusqlite::Connection;
use std::io::{BufRead, BufReader};
use std::ops::Range;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How a command must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Code(i32),
    /// Killed by this signal (the shell shows 128 + N).
    Signal(i32),
}

/// Whether a row runs against a workspace with a catalog (`app@1.0.0`
/// published from `dist/`), or one with nothing in it.
#[derive(Debug, Clone, Copy)]
enum Setup {
    Catalog,
    Empty,
}

fn workspace(setup: Setup) -> Workspace {
    let ws = Workspace::new();
    ws.write("dist/index.html", "<p>hello</p>\n");
    ws.write("dist/app.js", "console.log(1);\n");
    ws.write(
        "dist/package.json",
        "{\"name\": \"app\", \"main\": \"app.js\"}\n",
    );
    ws.write("a-file", "not a directory\n");
    if let Setup::Catalog = setup {
        ws.publish("app@1.0.0", "dist", &[]);
    }
    ws
}

fn end_of(status: ExitStatus) -> End {
    match (status.code(), status.signal()) {
        (Some(code), _) => End::Code(code),
        (None, Some(signal)) => End::Signal(signal),
        (None, None) => panic!("an exit status without code or signal: {status}"),
    }
}

/// Every subcommand (and ccc itself) with a success, a usage error and a
/// failure; `{busy}` stands for a port something already listens on.
fn table() -> Vec<(Setup, Vec<&'static str>, End)> {
    use End::Code;
    use Setup::{Catalog, Empty};
    let mut rows = vec![
        // ccc itself
        (Empty, vec!["--version"], Code(0)),
        (Empty, vec!["help", "publish"], Code(0)),
        (Empty, vec![], Code(2)),
        (Empty, vec!["frobnicate"], Code(2)),
        (Empty, vec!["--db"], Code(2)),
        // publish
        (Empty, vec!["publish", "app@1.0.0", "dist", "-q"], Code(0)),
        (Empty, vec!["publish", "rxjs@1.0", "dist"], Code(2)),
        (Empty, vec!["publish", "rxjs@1.0.0"], Code(2)),
        (
            Empty,
            vec!["publish", "app@1.0.0", "dist", "--exclude", "["],
            Code(2),
        ),
        (Empty, vec!["publish", "app@1.0.0", "no-such-dir"], Code(1)),
        (Catalog, vec!["publish", "app@1.0.0", "dist"], Code(1)),
        // check
        (Empty, vec!["check", "dist"], Code(0)),
        (Empty, vec!["check", "no-such-dir/"], Code(1)),
        (Empty, vec!["check", "no-such.tgz"], Code(1)),
        (Empty, vec!["check", "nope"], Code(2)),
        (Catalog, vec!["check", "app@9.9.9"], Code(1)),
        // ls
        (Catalog, vec!["ls", "app@latest"], Code(0)),
        (Catalog, vec!["ls", "@App/app"], Code(2)),
        (Catalog, vec!["ls", "app@1.0.0/index.html"], Code(2)),
        (Catalog, vec!["ls", "nope"], Code(1)),
        (Empty, vec!["ls"], Code(1)),
        // inspect
        (Catalog, vec!["inspect", "app@1.0.0/app.js"], Code(0)),
        (Catalog, vec!["inspect", "app"], Code(2)),
        (Catalog, vec!["inspect", "app@9.9.9"], Code(1)),
        // cat
        (Catalog, vec!["cat", "app@1.0.0/index.html"], Code(0)),
        (Catalog, vec!["cat", "rxjs@1.0.0"], Code(2)),
        (Catalog, vec!["cat", "app@1.0.0/nope.js"], Code(1)),
        // rm
        (Catalog, vec!["rm", "app@1.0.0", "--dry-run"], Code(0)),
        (Catalog, vec!["rm", "app"], Code(2)),
        (Catalog, vec!["rm", "app@1.0.0", "--all"], Code(2)),
        (Catalog, vec!["rm", "app@^1"], Code(2)),
        (Catalog, vec!["rm", "app@9.9.9"], Code(1)),
        // gc
        (Catalog, vec!["gc", "--dry-run"], Code(0)),
        (Catalog, vec!["gc", "--older-than", "soon"], Code(2)),
        (Empty, vec!["gc"], Code(1)),
        // verify
        (Catalog, vec!["verify", "-q"], Code(0)),
        (Catalog, vec!["verify", "--fast"], Code(2)),
        (Empty, vec!["verify"], Code(1)),
        // importmap (1 also when a specifier is unresolved: tests/importmap.rs)
        (Catalog, vec!["importmap", "app@1.0.0"], Code(0)),
        (Catalog, vec!["importmap", "app"], Code(2)),
        (
            Catalog,
            vec!["importmap", "app@1.0.0", "--base", "cdn.example.com"],
            Code(2),
        ),
        (Catalog, vec!["importmap", "nope@1.0.0"], Code(1)),
        (Empty, vec!["importmap", "app@1.0.0"], Code(1)),
        // backup
        (Catalog, vec!["backup", "-q", "copy.db"], Code(0)),
        (Catalog, vec!["backup"], Code(2)),
        (Catalog, vec!["backup", "a-file"], Code(1)),
        (Empty, vec!["backup", "copy.db"], Code(1)),
        // serve (success and Ctrl-C: `serve_stops_with_0_on_ctrl_c`)
        (Catalog, vec!["serve", "--port", "http"], Code(2)),
        (Catalog, vec!["serve", "--port", "{busy}"], Code(1)),
        (Empty, vec!["serve", "--port", "0"], Code(1)),
        // token and audit
        (
            Catalog,
            vec!["token", "create", "ci", "--scope", "publish:app"],
            Code(0),
        ),
        (
            Catalog,
            vec!["token", "create", "ci", "--scope", "push:app"],
            Code(2),
        ),
        (Catalog, vec!["token", "create", "bad name"], Code(2)),
        (
            Empty,
            vec!["token", "create", "ci", "--scope", "publish:app"],
            Code(0),
        ),
        (Catalog, vec!["token", "revoke", "nope"], Code(1)),
        (Catalog, vec!["token", "ls", "--json"], Code(0)),
        (Empty, vec!["token", "ls"], Code(1)),
        (Catalog, vec!["audit", "--json"], Code(0)),
        (Catalog, vec!["audit", "--since", "soon"], Code(2)),
        (Empty, vec!["audit"], Code(1)),
        // --to: no token is a usage error; a server that is not there, 1
        (
            Catalog,
            vec!["publish", "--to", "http://127.0.0.1:1", "app@2.0.0", "dist"],
            Code(2),
        ),
        (
            Catalog,
            vec![
                "publish",
                "--to",
                "http://127.0.0.1:1",
                "app@2.0.0",
                "dist",
                "--token-file",
                "a-file",
            ],
            Code(1),
        ),
        (
            Catalog,
            vec![
                "tag",
                "rm",
                "--to",
                "https://cdn.example.com",
                "app",
                "beta",
                "--token-file",
                "nope",
            ],
            Code(1),
        ),
        // export
        (Catalog, vec!["export", "out"], Code(0)),
        (Catalog, vec!["export", "app@1.0.0", "out2"], Code(0)),
        (Catalog, vec!["export"], Code(2)),
        (Catalog, vec!["export", "app", "out", "more"], Code(2)),
        (Catalog, vec!["export", "app@1.0.0/app.js", "out"], Code(2)),
        (Catalog, vec!["export", "nope", "out"], Code(1)),
        (Catalog, vec!["export", "app", "a-file"], Code(1)),
        // causal (usage errors are found before the profiler is needed)
        (Catalog, vec!["causal", "--rounds", "0"], Code(2)),
        (
            Catalog,
            vec!["causal", "--window", "1s", "--max-window", "500ms"],
            Code(2),
        ),
        // generate (hidden, for maintainers)
        (Empty, vec!["generate", "--out", "generated"], Code(0)),
        (Empty, vec!["generate", "--out"], Code(2)),
        (Empty, vec!["generate", "--out", "a-file"], Code(1)),
    ];
    if cfg!(feature = "causal") {
        let quick = [
            "--rounds",
            "1",
            "--sites",
            "cache-lookup",
            "--speedups",
            "0",
            "--window",
            "50ms",
            "--max-window",
            "100ms",
            "--warmup",
            "100ms",
            "--settle",
            "10ms",
            "--min-delta",
            "5",
            "--load",
            "builtin:1",
        ];
        let mut ok = vec!["causal", "--port", "0"];
        ok.extend_from_slice(&quick);
        rows.push((Catalog, ok, Code(0)));
        rows.push((Catalog, vec!["causal", "--port", "{busy}"], Code(1)));
        rows.push((Empty, vec!["causal", "--port", "0"], Code(1)));
    } else {
        // This build has no profiler, which is not the user's doing either.
        rows.push((Catalog, vec!["causal", "--port", "0"], Code(2)));
    }
    rows
}

#[test]
fn every_subcommand_exits_with_the_documented_code() {
    // A port something listens on, for the bind failures.
    let busy = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let busy_port = busy.local_addr().expect("local addr").port().to_string();
    let mut wrong = Vec::new();
    for (setup, args, want) in table() {
        let ws = workspace(setup);
        let args: Vec<&str> = args
            .iter()
            .map(|a| {
                if *a == "{busy}" {
                    busy_port.as_str()
                } else {
                    a
                }
            })
            .collect();
        let out = ws
            .ccc()
            .args(&args)
            .timeout(Duration::from_secs(60))
            .output()
            .expect("run ccc");
        let got = end_of(out.status);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if got != want {
            wrong.push(format!("ccc {args:?}: {got:?}, want {want:?}\n{stderr}"));
        } else if matches!(want, End::Code(1 | 2)) && !stderr.contains("error:") {
            wrong.push(format!("ccc {args:?}: no `error:` line\n{stderr}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_bind_failure_names_the_address() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let port = busy.local_addr().expect("local addr").port().to_string();
    let ws = workspace(Setup::Catalog);
    let holder = format!(
        "(pid {}) listens on port {port}; pick another with --port",
        std::process::id()
    );
    // The holder is named: this test's own process. A child that another
    // test is starting holds a copy of every socket until it runs its
    // program, and may be named instead; a few tries see past that.
    let mut stderr = String::new();
    for _ in 0..5 {
        let out = ws.fails(&["serve", "--port", &port], 1);
        stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            stderr.contains(&format!(
                "error: cannot listen on http://127.0.0.1:{port}: "
            )),
            "{stderr}"
        );
        if stderr.contains(&holder) {
            break;
        }
    }
    assert!(stderr.contains(&holder), "{stderr}");
}

/// Holds the catalog's lock until dropped: no other connection can read or
/// write it meanwhile.
fn hold_lock(ws: &Workspace) -> Connection {
    let conn = ws.conn();
    conn.execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;")
        .expect("lock the catalog");
    let _: i64 = conn
        .query_row("SELECT count(*) FROM blobs", [], |r| r.get(0))
        .expect("read under the lock");
    conn
}

/// `ccc ARGS` with SIGINT and SIGTERM at their default action, whatever the
/// test process inherited (a shell ignores SIGINT in background jobs, and
/// ccc honours that).
fn spawn(ws: &Workspace, args: &[&str]) -> Child {
    let mut cmd = std::process::Command::new("env");
    hermetic(&mut cmd);
    cmd.arg("--default-signal=INT,TERM")
        .arg(ccc_path())
        .args(args)
        .current_dir(ws.path())
        .env("CCC_DB_PATH", ws.db())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ccc")
}

/// Whether process `pid` has a handler for signal `signal` (SigCgt in
/// /proc/PID/status).
fn catches(pid: u32, signal: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (signal - 1)) != 0)
}

/// Sends `signal` (`INT`, `TERM`) to `pid` through kill(1).
fn send(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid} failed");
}

/// Starts `ccc ARGS` while the catalog is locked, sends `signal` once the
/// command is running (once it catches the signal, when `catches_it`), and
/// returns how it ended, its stderr, and how long it took after the signal.
fn interrupt_while_locked(
    args: &[&str],
    signal: (&str, i32),
    catches_it: bool,
) -> (End, String, Duration) {
    let ws = workspace(Setup::Catalog);
    let before = ws.snapshot();
    let lock = hold_lock(&ws);
    let mut child = spawn(&ws, args);
    let pid = child.id();
    let started = Instant::now();
    if catches_it {
        while !catches(pid, signal.1) {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "ccc {args:?} installed no handler for SIG{} in 20 s",
                signal.0
            );
            if let Some(status) = child.try_wait().expect("try_wait") {
                panic!("ccc {args:?} ended ({status}) before it was interrupted");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    } else {
        std::thread::sleep(Duration::from_millis(200));
    }
    send(pid, signal.0);
    let signalled = Instant::now();
    let status = wait_timeout(&mut child, Duration::from_secs(30))
        .unwrap_or_else(|| panic!("ccc {args:?} still runs 30 s after SIG{}", signal.0));
    let took = signalled.elapsed();
    let mut stderr = String::new();
    if let Some(pipe) = child.stderr.take() {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            stderr.push_str(&line);
            stderr.push('\n');
        }
    }
    drop(lock);
    assert_eq!(ws.snapshot(), before, "ccc {args:?} changed the catalog");
    (end_of(status), stderr, took)
}

#[test]
fn long_commands_stop_at_once_on_ctrl_c_and_exit_130() {
    for args in [
        &["publish", "app@2.0.0", "dist"][..],
        &["gc", "--keep", "1"],
        &["verify"],
        &["export", "out"],
    ] {
        let (end, stderr, took) = interrupt_while_locked(args, ("INT", libc::SIGINT), true);
        assert_eq!(end, End::Code(130), "ccc {args:?}\n{stderr}");
        assert!(
            stderr.contains("error: interrupted by SIGINT (Ctrl-C)"),
            "ccc {args:?}: {stderr}"
        );
        // The lock would have been waited for 10 s.
        assert!(took < Duration::from_secs(5), "ccc {args:?} took {took:?}");
    }
}

/// The stderr of a finished child.
fn stderr_of(child: &mut Child) -> String {
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("stderr");
    stderr
}

#[test]
fn a_publish_waits_for_the_lock_as_long_as_it_takes_and_says_so() {
    let ws = workspace(Setup::Catalog);
    ws.write("dist2/app.js", "console.log(2);\n");
    let lock = hold_lock(&ws);
    let mut child = spawn(&ws, &["publish", "app@2.0.0", "dist2"]);
    // Longer than any other command waits (10 s).
    std::thread::sleep(Duration::from_secs(12));
    assert!(child.try_wait().expect("try_wait").is_none(), "gave up");
    drop(lock);
    let status = wait_timeout(&mut child, Duration::from_secs(30)).expect("publishes");
    let stderr = stderr_of(&mut child);
    assert_eq!(end_of(status), End::Code(0), "{stderr}");
    assert_eq!(
        stderr
            .matches("Blocking: waiting for another ccc to release its lock on the catalog")
            .count(),
        1,
        "{stderr}"
    );
    assert!(ws.versions("app").contains(&"2.0.0".to_string()));
}

/// Runs `publish --wait BOUND` against the lock `hold` takes (held until
/// it returns) and checks that it said it waited, gave up as busy within
/// `within` of starting, and wrote nothing.
fn publish_gives_up(
    ws: &Workspace,
    hold: fn(&Workspace) -> Connection,
    bound: &str,
    within: Range<Duration>,
) {
    ws.write("dist2/app.js", "console.log(2);\n");
    let before = ws.snapshot();
    let lock = hold(ws);
    let started = Instant::now();
    let mut child = spawn(ws, &["publish", "app@2.0.0", "dist2", "--wait", bound]);
    let status = wait_timeout(&mut child, Duration::from_secs(30)).expect("gives up");
    let took = started.elapsed();
    let stderr = stderr_of(&mut child);
    drop(lock);
    assert_eq!(end_of(status), End::Code(1), "{stderr}");
    // Said even when the bound is a second or less.
    assert!(
        stderr.contains(&format!("Blocking: waiting for up to {bound}")),
        "{stderr}"
    );
    assert!(stderr.contains("is busy"), "{stderr}");
    assert!(within.contains(&took), "{took:?} not in {within:?}");
    assert_eq!(ws.snapshot(), before, "nothing written");
}

#[test]
fn publish_wait_bounds_the_wait_for_the_lock() {
    let ws = workspace(Setup::Catalog);
    publish_gives_up(
        &ws,
        hold_lock,
        "2s",
        Duration::from_secs(2)..Duration::from_secs(10),
    );
}

/// Holds the catalog's write lock (`BEGIN IMMEDIATE`, as another writer
/// does) until dropped; readers go on.
fn hold_write_lock(ws: &Workspace) -> Connection {
    let conn = ws.conn();
    conn.execute_batch("BEGIN IMMEDIATE;")
        .expect("take the write lock");
    conn
}

#[test]
fn publish_wait_is_one_deadline_for_the_whole_publish() {
    let ws = workspace(Setup::Catalog);
    // Not a second wait after the first (the closing checkpoint's).
    publish_gives_up(
        &ws,
        hold_write_lock,
        "1s",
        Duration::from_secs(1)..Duration::from_millis(1800),
    );
}

#[test]
fn a_publish_whose_wait_ends_before_its_deadline_publishes() {
    let ws = workspace(Setup::Catalog);
    ws.write("dist2/app.js", "console.log(2);\n");
    let lock = hold_write_lock(&ws);
    let started = Instant::now();
    let mut child = spawn(&ws, &["publish", "app@2.0.0", "dist2", "--wait", "3s"]);
    std::thread::sleep(Duration::from_millis(1500));
    lock.execute_batch("COMMIT;")
        .expect("release the write lock");
    let status = wait_timeout(&mut child, Duration::from_secs(30)).expect("publishes");
    let took = started.elapsed();
    let stderr = stderr_of(&mut child);
    assert_eq!(end_of(status), End::Code(0), "{stderr}");
    assert!(
        stderr.contains("Blocking: waiting for up to 3s"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert!(ws.versions("app").contains(&"2.0.0".to_string()));
}

#[test]
fn ctrl_c_after_the_commit_ends_the_closing_checkpoint_and_exits_0() {
    let ws = workspace(Setup::Catalog);
    ws.write("dist2/app.js", "console.log(2);\n");
    // A reader on the catalog as it was: the publish's closing checkpoint
    // waits for it to leave the log (a second), as it would for a long
    // copy of a big publish's log into the file.
    let reader = ws.conn();
    reader
        .execute_batch("BEGIN; SELECT count(*) FROM versions;")
        .expect("read transaction");
    let mut child = spawn(&ws, &["publish", "app@2.0.0", "dist2"]);
    let pid = child.id();
    let watcher = ws.conn();
    let started = Instant::now();
    // The commit is seen by a new read: the publish is now past it.
    loop {
        let committed: bool = watcher
            .query_row(
                "SELECT count(*) > 0 FROM versions WHERE version = '2.0.0'",
                [],
                |r| r.get(0),
            )
            .expect("read versions");
        if committed {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no commit in 20 s"
        );
        assert!(child.try_wait().expect("try_wait").is_none(), "ended early");
        std::thread::sleep(Duration::from_millis(2));
    }
    send(pid, "INT");
    send(pid, "INT");
    let signalled = Instant::now();
    let status = wait_timeout(&mut child, Duration::from_secs(20)).expect("exits");
    let took = signalled.elapsed();
    let stderr = stderr_of(&mut child);
    drop(reader);
    assert_eq!(end_of(status), End::Code(0), "{stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");
    // The checkpoint's wait for the reader is a second.
    assert!(took < Duration::from_millis(500), "{took:?}: {stderr}");
    assert!(ws.versions("app").contains(&"2.0.0".to_string()));
}

#[test]
fn a_second_ctrl_c_during_a_first_publish_says_so_and_leaves_no_catalog() {
    let ws = workspace(Setup::Empty);
    // An archive from stdin that never comes: the publish has created the
    // catalog and waits in a read, where the first Ctrl-C cannot stop it.
    let mut cmd = std::process::Command::new("env");
    hermetic(&mut cmd);
    let mut child = cmd
        .arg("--default-signal=INT,TERM")
        .arg(ccc_path())
        .args(["publish", "app@1.0.0", "-"])
        .current_dir(ws.path())
        .env("CCC_DB_PATH", ws.db())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ccc");
    let pid = child.id();
    let started = Instant::now();
    while !(ws.db().exists() && catches(pid, libc::SIGINT)) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no catalog in 20 s"
        );
        assert!(child.try_wait().expect("try_wait").is_none(), "ended early");
        std::thread::sleep(Duration::from_millis(2));
    }
    send(pid, "INT");
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        child.try_wait().expect("try_wait").is_none(),
        "one Ctrl-C in a read"
    );
    send(pid, "INT");
    let status = wait_timeout(&mut child, Duration::from_secs(20)).expect("exits at once");
    let stderr = stderr_of(&mut child);
    assert_eq!(end_of(status), End::Code(130), "{stderr}");
    assert_eq!(
        stderr
            .matches("error: interrupted by SIGINT (Ctrl-C)")
            .count(),
        1,
        "{stderr}"
    );
    for suffix in ["", "-wal", "-shm"] {
        let mut path = ws.db().into_os_string();
        path.push(suffix);
        assert!(
            !std::path::Path::new(&path).exists(),
            "{path:?} left behind"
        );
    }
    drop(child.stdin.take());
}

#[test]
fn sigterm_exits_143() {
    let (end, stderr, _) = interrupt_while_locked(
        &["publish", "app@2.0.0", "dist"],
        ("TERM", libc::SIGTERM),
        true,
    );
    assert_eq!(end, End::Code(143), "{stderr}");
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
}

#[test]
fn quick_commands_end_by_the_signal_itself() {
    for args in [
        &["ls"][..],
        &["inspect", "app@1.0.0"],
        &["cat", "app@1.0.0/app.js"],
        &["rm", "app@1.0.0"],
    ] {
        let (end, stderr, _) = interrupt_while_locked(args, ("INT", libc::SIGINT), false);
        assert_eq!(end, End::Signal(libc::SIGINT), "ccc {args:?}\n{stderr}");
    }
}

#[test]
fn serve_stops_with_0_on_ctrl_c() {
    let ws = workspace(Setup::Catalog);
    let mut cmd = std::process::Command::new("env");
    hermetic(&mut cmd);
    cmd.arg("--default-signal=INT,TERM")
        .arg(ccc_path())
        .args(["serve", "--port", "0"])
        .current_dir(ws.path())
        .env("CCC_DB_PATH", ws.db());
    let mut server = Server::start_with(&mut cmd);
    send(server.pid(), "INT");
    let status = server
        .wait_exit(Duration::from_secs(20))
        .expect("ccc serve stops within 20 s of SIGINT");
    assert_eq!(status.code(), Some(0), "{status}\n{}", server.stderr());
    assert!(
        server.stdout().contains("stopped after "),
        "{}",
        server.stdout()
    );
}

#[cfg(feature = "causal")]
#[test]
fn causal_waiting_for_external_load_stops_at_once_on_ctrl_c() {
    let ws = workspace(Setup::Catalog);
    let mut child = spawn(&ws, &["causal", "--port", "0", "--load", "external"]);
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.expect("stderr line");
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("waiting for load") {
            break;
        }
    }
    assert!(seen.contains("waiting for load"), "{seen}");
    send(child.id(), "INT");
    let signalled = Instant::now();
    let status = wait_timeout(&mut child, Duration::from_secs(20))
        .expect("ccc causal stops within 20 s of SIGINT");
    let took = signalled.elapsed();
    for line in lines.map_while(Result::ok) {
        seen.push_str(&line);
        seen.push('\n');
    }
    assert_eq!(status.code(), Some(130), "{status}\n{seen}");
    assert!(
        seen.contains("error: interrupted by SIGINT (Ctrl-C)"),
        "{seen}"
    );
    // It used to wait out its 30 s patience, then fail with exit 1.
    assert!(took < Duration::from_secs(5), "took {took:?}\n{seen}");
}
