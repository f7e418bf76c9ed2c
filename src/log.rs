//! The server's log output: the access log and the startup and final lines
//! on stdout, warnings and errors on stderr, written so that no state of
//! those streams can stop, stall or crash the server.
//!
//! `println!` and `eprintln!` panic when a write fails (a closed pipe, as in
//! `ccc serve --access-log | head -1`, or a full disk) and block while
//! nobody reads the pipe (`ccc serve --access-log | less`); either would take
//! a worker or the store actor down with it. Instead each stream has its own
//! writer thread behind a queue bounded in bytes:
//!
//! - callers never block and never fail: a line that does not fit in the
//!   queue ([`QUEUE_BYTES`]) is dropped and counted;
//! - a write that fails drops its lines and counts them; the writer keeps
//!   trying with the next lines, so a disk that gets space back, or a pipe
//!   reader that catches up, is used again;
//! - each episode of trouble is reported once on stderr when it starts and
//!   once when it ends, with the number of lines lost (when stderr itself
//!   is the stream in trouble, nobody can be told: it is only counted);
//! - [`stats`] gives the counters; `/_stats` shows them under `log`.
//!
//! stdout and stderr belong to the whole process, so their writers are
//! process-wide too: any module logs through [`out`] and [`err`] without
//! being handed a logger.
//!
//! The access log goes through [`access`]: to stdout, or, once
//! [`access_to_file`] names one, to a file of its own with a writer of
//! its own (the same queue, counters and reports, as stream
//! `access_log`). [`reopen_access`] opens the file at its path again,
//! which is how log rotation works with nginx: logrotate renames the
//! file, sends SIGUSR1, and the lines after it go to a new file at the
//! old name, none lost (the writer switches between two lines).

use serde::Serialize;
use std::fmt::Display;
use std::io::Write;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// Bytes a stream may hold waiting for its writer; past this, lines are
/// dropped. 1 MiB holds about ten thousand access log lines.
pub(crate) const QUEUE_BYTES: usize = 1 << 20;

/// Writes at most this much per system call, gathered from queued lines.
const BATCH_BYTES: usize = 64 << 10;

/// Counters of one stream since the process started.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct StreamStats {
    /// Lines written.
    pub written: u64,
    /// Lines lost: the queue was full or the write failed.
    pub dropped: u64,
}

/// Counters of both streams, and of the access log's file when it has
/// one.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct LogStats {
    pub stdout: StreamStats,
    pub stderr: StreamStats,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_log: Option<StreamStats>,
}

/// Queues `line` (a newline is added) for stdout.
pub(crate) fn out(line: impl Display) {
    stdout().send(line);
}

/// Queues `line` (a newline is added) for stderr.
pub(crate) fn err(line: impl Display) {
    stderr().send(line);
}

/// Queues an access-log line (a newline is added): for the file
/// [`access_to_file`] named, else for stdout.
pub(crate) fn access(line: impl Display) {
    match ACCESS.get() {
        Some(file) => file.sink.send(line),
        None => stdout().send(line),
    }
}

/// The access log's file, once named.
struct AccessFile {
    path: PathBuf,
    sink: Sink,
    /// The file the writer writes to; [`reopen_access`] swaps it.
    file: Arc<Mutex<std::fs::File>>,
}

static ACCESS: OnceLock<AccessFile> = OnceLock::new();

/// Opens `path` for appending (creating it), as the access log's file.
fn open_log(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

/// Sends the access log to the file at `path` from now on, appended to
/// (created when missing). Fails when the file cannot be opened; once
/// one is named, it stays the one.
pub(crate) fn access_to_file(path: &Path) -> std::io::Result<()> {
    let file = Arc::new(Mutex::new(open_log(path)?));
    let writer = SharedFile(file.clone());
    let sink = Sink::start("access_log", Ok(writer), err, |_| {
        Err(std::io::Error::other("no writer thread"))
    });
    let _ = ACCESS.set(AccessFile {
        path: path.to_path_buf(),
        sink,
        file,
    });
    Ok(())
}

/// Opens the access log's file at its path again (after log rotation
/// renamed it): Ok(None) when the access log goes to stdout, the path on
/// success; on failure the file open before is kept, and the error says
/// why.
pub(crate) fn reopen_access() -> Result<Option<PathBuf>, (PathBuf, std::io::Error)> {
    let Some(access) = ACCESS.get() else {
        return Ok(None);
    };
    let fresh = open_log(&access.path).map_err(|e| (access.path.clone(), e))?;
    // Between two batches: no line is split between the files.
    *access.file.lock().unwrap_or_else(PoisonError::into_inner) = fresh;
    Ok(Some(access.path.clone()))
}

/// The file a sink writes to, shared with [`reopen_access`].
struct SharedFile(Arc<Mutex<std::fs::File>>);

impl Write for SharedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        // One lock for a whole batch: a reopen lands between batches.
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .flush()
    }
}

/// The counters of both streams (and the access log's file).
pub(crate) fn stats() -> LogStats {
    LogStats {
        stdout: stdout().stats(),
        stderr: stderr().stats(),
        access_log: ACCESS.get().map(|a| a.sink.stats()),
    }
}

/// Waits until every queued line is written or dropped, for at most
/// `limit` (a stalled reader cannot hold the process up).
pub(crate) fn flush(limit: Duration) {
    let deadline = Instant::now() + limit;
    if let Some(access) = ACCESS.get() {
        access.sink.flush_until(deadline);
    }
    for sink in [stdout(), stderr()] {
        sink.flush_until(deadline);
    }
}

/// Starts both writers now, while descriptors are surely available; they
/// would otherwise start with the first line.
pub(crate) fn start() {
    stdout();
    stderr();
}

fn stdout() -> &'static Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    SINK.get_or_init(|| {
        // A duplicate of the descriptor, written without std's buffer: a
        // failed write must not leave bytes behind to resurface later.
        let file = std::io::stdout().as_fd().try_clone_to_owned();
        Sink::start("stdout", file.map(std::fs::File::from), err, |bytes| {
            std::io::stdout().lock().write_all(bytes)
        })
    })
}

fn stderr() -> &'static Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    SINK.get_or_init(|| {
        let file = std::io::stderr().as_fd().try_clone_to_owned();
        // Trouble with stderr cannot be reported on stderr.
        Sink::start(
            "stderr",
            file.map(std::fs::File::from),
            |_| {},
            |bytes| std::io::stderr().lock().write_all(bytes),
        )
    })
}

/// One stream: a queue, its writer thread and its counters.
struct Sink {
    /// None when no writer thread could be started: lines are then written
    /// by the caller through `fallback`.
    queue: Option<Mutex<Sender<String>>>,
    fallback: fn(&[u8]) -> std::io::Result<()>,
    state: std::sync::Arc<State>,
}

/// What the caller side and the writer thread share.
struct State {
    name: &'static str,
    /// Bytes queued and not yet written or dropped.
    queued: AtomicUsize,
    written: AtomicU64,
    dropped: AtomicU64,
    /// While trouble is being reported: the dropped count when it began.
    trouble: Mutex<Option<u64>>,
    report: fn(String),
}

impl Sink {
    /// Starts a writer thread for `target`; when the stream could not be
    /// duplicated or no thread started, callers write through `fallback`.
    fn start(
        name: &'static str,
        target: std::io::Result<impl Write + Send + 'static>,
        report: fn(String),
        fallback: fn(&[u8]) -> std::io::Result<()>,
    ) -> Sink {
        let state = std::sync::Arc::new(State {
            name,
            queued: AtomicUsize::new(0),
            written: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            trouble: Mutex::new(None),
            report,
        });
        let queue = target.ok().and_then(|target| {
            let (tx, rx) = mpsc::channel();
            let shared = state.clone();
            std::thread::Builder::new()
                .name(format!("log-{name}"))
                .spawn(move || write_loop(&shared, target, rx))
                .ok()
                .map(|_| Mutex::new(tx))
        });
        Sink {
            queue,
            fallback,
            state,
        }
    }

    fn send(&self, line: impl Display) {
        let mut text = line.to_string();
        text.push('\n');
        let Some(queue) = &self.queue else {
            self.state.count(1, (self.fallback)(text.as_bytes()));
            return;
        };
        let len = text.len();
        let queued = self.state.queued.fetch_add(len, Ordering::AcqRel);
        if queued + len > QUEUE_BYTES {
            self.state.queued.fetch_sub(len, Ordering::AcqRel);
            self.state.dropped.fetch_add(1, Ordering::Relaxed);
            self.state
                .trouble_begins("is not keeping up (is anyone reading it?)", 1);
            return;
        }
        let sent = queue
            .lock()
            .map(|tx| tx.send(text).is_ok())
            .unwrap_or(false);
        if !sent {
            // The writer thread is gone; nothing will ever write this.
            self.state.queued.fetch_sub(len, Ordering::AcqRel);
            self.state.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn stats(&self) -> StreamStats {
        StreamStats {
            written: self.state.written.load(Ordering::Relaxed),
            dropped: self.state.dropped.load(Ordering::Relaxed),
        }
    }

    fn flush_until(&self, deadline: Instant) {
        while self.state.queued.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl State {
    /// Counts `lines` written or, on error, dropped, and reports the start
    /// and the end of trouble.
    fn count(&self, lines: u64, result: std::io::Result<()>) {
        match result {
            Ok(()) => {
                self.written.fetch_add(lines, Ordering::Relaxed);
                self.trouble_ends();
            }
            Err(e) => {
                self.dropped.fetch_add(lines, Ordering::Relaxed);
                self.trouble_begins(&format!("is not writable ({e})"), lines);
            }
        }
    }

    /// Reports trouble unless it is already being reported; `lost` lines
    /// were just counted as dropped because of it.
    fn trouble_begins(&self, what: &str, lost: u64) {
        let Ok(mut trouble) = self.trouble.lock() else {
            return;
        };
        if trouble.is_none() {
            let dropped = self.dropped.load(Ordering::Relaxed);
            *trouble = Some(dropped.saturating_sub(lost));
            (self.report)(format!(
                "warning: {} {what}; its lines are dropped until it recovers (counted under `log` in /_stats)",
                self.name
            ));
        }
    }

    fn trouble_ends(&self) {
        let Ok(mut trouble) = self.trouble.lock() else {
            return;
        };
        if let Some(dropped_before) = trouble.take() {
            let lost = self.dropped.load(Ordering::Relaxed) - dropped_before;
            (self.report)(format!(
                "note: {} is working again; {lost} lines were dropped",
                self.name
            ));
        }
    }
}

/// The writer thread: gathers queued lines into one write, counts the
/// outcome, and lets the queue's byte count go.
fn write_loop(state: &State, mut target: impl Write, queue: Receiver<String>) {
    while let Ok(first) = queue.recv() {
        let mut batch = first;
        let mut lines = 1;
        while batch.len() < BATCH_BYTES {
            match queue.try_recv() {
                Ok(line) => {
                    batch.push_str(&line);
                    lines += 1;
                }
                Err(_) => break,
            }
        }
        let result = target.write_all(batch.as_bytes());
        state.count(lines, result);
        state.queued.fetch_sub(batch.len(), Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    /// A target that fails while `broken` is set and records what it got.
    #[derive(Clone, Default)]
    struct Target {
        broken: Arc<AtomicBool>,
        got: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Target {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.broken.load(Ordering::Relaxed) {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            self.got.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    static REPORTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn settle(sink: &Sink) {
        sink.flush_until(Instant::now() + Duration::from_secs(10));
    }

    #[test]
    fn failed_writes_are_counted_and_reported_once_per_episode() {
        let target = Target::default();
        let sink = Sink::start(
            "test",
            Ok(target.clone()),
            |r| REPORTS.lock().unwrap().push(r),
            |_| Ok(()),
        );
        sink.send("one");
        settle(&sink);
        target.broken.store(true, Ordering::Relaxed);
        for i in 0..5 {
            sink.send(i);
            settle(&sink);
        }
        target.broken.store(false, Ordering::Relaxed);
        sink.send("two");
        settle(&sink);
        assert_eq!(&*target.got.lock().unwrap(), b"one\ntwo\n");
        let stats = sink.stats();
        assert_eq!((stats.written, stats.dropped), (2, 5));
        let reports = REPORTS.lock().unwrap().clone();
        assert_eq!(reports.len(), 2, "{reports:?}");
        assert!(
            reports[0].starts_with("warning: test is not writable") && reports[0].contains("pipe"),
            "{reports:?}"
        );
        assert_eq!(
            reports[1],
            "note: test is working again; 5 lines were dropped"
        );
    }

    #[test]
    fn a_reopened_file_takes_the_lines_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("access.log");
        let file = Arc::new(Mutex::new(open_log(&path).unwrap()));
        let sink = Sink::start("test", Ok(SharedFile(file.clone())), |_| {}, |_| Ok(()));
        sink.send("one");
        settle(&sink);
        // logrotate: rename, then reopen at the old name.
        std::fs::rename(&path, dir.path().join("access.log.1")).unwrap();
        *file.lock().unwrap() = open_log(&path).unwrap();
        sink.send("two");
        settle(&sink);
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert_eq!(read("access.log.1"), "one\n");
        assert_eq!(read("access.log"), "two\n");
    }

    #[test]
    fn a_stalled_writer_never_blocks_the_caller() {
        /// A target that blocks until released, like a pipe nobody reads.
        struct Stalled(Arc<Mutex<()>>);
        impl Write for Stalled {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                drop(self.0.lock());
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let gate = Arc::new(Mutex::new(()));
        let held = gate.lock().unwrap();
        let sink = Sink::start("stalled", Ok(Stalled(gate.clone())), |_| {}, |_| Ok(()));
        let line = "x".repeat(1000);
        let started = Instant::now();
        let n = 3 * QUEUE_BYTES / line.len();
        for _ in 0..n {
            sink.send(&line);
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        let dropped = sink.stats().dropped;
        assert!(
            dropped as usize >= n - QUEUE_BYTES / 1001 - 1,
            "only {dropped} of {n} dropped"
        );
        assert!(sink.state.queued.load(Ordering::Relaxed) <= QUEUE_BYTES);
        drop(held);
        settle(&sink);
        assert_eq!(sink.stats().written + dropped, n as u64);
    }
}
