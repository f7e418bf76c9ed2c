//! Attacks a server on this machine while well-behaved clients measure what
//! users would see: the attack kit of ccc's tests (`tests/attack/`) as a
//! command, so that `bench/hardening.sh` runs the very same attacks against
//! ccc (before and after hardening) and nginx.
//!
//! ```text
//! cargo run --release --example attack -- --addr 127.0.0.1:8333 --pid $(pidof ccc) \
//!     --mode slow-readers --count 32 --target /assets/big/1.0.0/big.bin \
//!     --probe-file small-urls.txt --json -
//! ```
//!
//! One run is one scenario: `--warmup` and `--quiet` of probing alone (the
//! reference), then the attack (with `--also`, several at once: `--mode
//! idle-keepalive --count 10000 --also slowloris:3000`), up to `--ramp`
//! while it opens its connections, then `--attack`, `--settle` more while
//! its connections close, then `--after` of probing alone. It prints a summary and the criteria the
//! run misses (stderr); `--json FILE` appends the whole report as one line
//! of JSON, `--row LABEL` prints it as a markdown table row (`--row-header`
//! prints the header). `--strict` exits 1 when a criterion is missed. Only
//! loopback addresses are accepted: these are attacks.

#[path = "../tests/attack/mod.rs"]
mod attack;

use attack::{Attack, Bounds, ProbeConfig, Timing};
use clap::{Parser, ValueEnum};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Mode {
    /// Connections asking for --target that never read (--count of them).
    SlowReaders,
    /// Half-sent request heads, a header line every --trickle (--count).
    Slowloris,
    /// Connections that send nothing (--count).
    Flood,
    /// Connections that GET the first probe target, read the answer, then
    /// stay open sending nothing (--count).
    IdleKeepalive,
    /// Oversized heads and bytes that are not HTTP (--count at a time).
    Malformed,
    /// Ask for --target, read --read-bytes, reset (--count at a time).
    Reset,
    /// HTTP/2 connections with --streams streams on --target, initial
    /// window 0, never a WINDOW_UPDATE (--count).
    H2NoWindow,
    /// HTTP/2 connections with --streams streams on --target, default
    /// windows, never reading (--count).
    H2Stalled,
    /// Connect, send `P`, close, in a loop (--count threads).
    PrefaceCycles,
    /// Connections that send the start of a TLS ClientHello (--count).
    PartialTls,
    /// Keep-alive `Range: bytes=0-0` and HEAD of --target in turn
    /// (--count connections).
    TinyRanges,
}

/// Attack a local server and measure well-behaved clients meanwhile.
#[derive(Debug, Parser)]
struct Args {
    /// The server (a loopback address).
    #[arg(long, required = true)]
    addr: Option<SocketAddr>,
    /// Where the attack goes, when not --addr (a server's HTTP/2-only
    /// port: nginx's cleartext HTTP/2 listens apart).
    #[arg(long)]
    attack_addr: Option<SocketAddr>,
    /// HTTP/2 attacks: streams per connection.
    #[arg(long, default_value_t = 100)]
    streams: usize,
    /// The server's processes, for resident memory and threads (repeat for
    /// several, e.g. nginx's master and worker).
    #[arg(long = "pid")]
    pids: Vec<u32>,
    #[arg(long, value_enum, required = true)]
    mode: Option<Mode>,
    /// Connections (slow-readers, slowloris, flood, idle-keepalive) or
    /// connections at a time (malformed, reset).
    #[arg(long, default_value_t = 32)]
    count: usize,
    /// Another attack at the same time, as MODE:COUNT (repeatable), e.g.
    /// `slowloris:3000`.
    #[arg(long, value_name = "MODE:COUNT", value_parser = parse_also)]
    also: Vec<(Mode, usize)>,
    /// The large asset slow readers and resets ask for.
    #[arg(long)]
    target: Option<String>,
    /// Slowloris: pause between two header lines.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    trickle: Duration,
    /// Reset: bytes read before the reset.
    #[arg(long, default_value_t = 64 << 10)]
    read_bytes: usize,
    /// What the well-behaved clients ask for (repeatable).
    #[arg(long = "probe-target")]
    probe_targets: Vec<String>,
    /// A file of probe targets, one per line.
    #[arg(long)]
    probe_file: Option<std::path::PathBuf>,
    /// Well-behaved clients on a kept-alive connection.
    #[arg(long, default_value_t = 4)]
    keepalive: usize,
    /// Well-behaved clients opening a connection per request.
    #[arg(long, default_value_t = 2)]
    fresh: usize,
    /// Pause between two requests of one well-behaved client.
    #[arg(long, default_value = "20ms", value_parser = humantime::parse_duration)]
    pace: Duration,
    /// A well-behaved request slower than this is a timeout.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    timeout: Duration,
    /// Probing first, not counted (caches fill, connections open).
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// Probing alone, the reference.
    #[arg(long, default_value = "3s", value_parser = humantime::parse_duration)]
    quiet: Duration,
    /// Longest wait for the attack to hold all its connections before
    /// --attack is timed (probed and reported apart); 0 counts the ramp as
    /// part of the attack.
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    ramp: Duration,
    /// The attack.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    attack: Duration,
    /// After the attack stops, still counted as the attack.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    settle: Duration,
    /// Probing alone again: is the server back to full speed?
    #[arg(long, default_value = "3s", value_parser = humantime::parse_duration)]
    after: Duration,
    /// Append the report as one line of JSON to FILE (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
    /// Print the report as a row of a markdown table (`--row-header`
    /// prints its header), with LABEL in the first column.
    #[arg(long, value_name = "LABEL")]
    row: Option<String>,
    /// Print the header of the `--row` table and exit.
    #[arg(long, exclusive = true)]
    row_header: bool,
    /// Exit 1 when the run misses a criterion.
    #[arg(long)]
    strict: bool,
}

/// `MODE:COUNT` of `--also`.
fn parse_also(s: &str) -> Result<(Mode, usize), String> {
    let (mode, count) = s
        .split_once(':')
        .ok_or_else(|| format!("expected MODE:COUNT, like slowloris:3000, not {s:?}"))?;
    let mode = Mode::from_str(mode, true)?;
    let count = count
        .parse()
        .map_err(|_| format!("{count:?} is not a count"))?;
    Ok((mode, count))
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<ExitCode, String> {
    if args.row_header {
        println!("{}", attack::MARKDOWN_HEADER);
        return Ok(ExitCode::SUCCESS);
    }
    let (Some(addr), Some(mode)) = (args.addr, args.mode) else {
        return Err("give --addr and --mode".into());
    };
    if !addr.ip().is_loopback() {
        return Err(format!("{addr} is not a loopback address"));
    }
    let mut targets = args.probe_targets.clone();
    if let Some(file) = &args.probe_file {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("reading {}: {e}", file.display()))?;
        targets.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(String::from),
        );
    }
    if targets.is_empty() {
        return Err("give --probe-target or --probe-file".into());
    }
    let large = |mode: Mode| {
        args.target
            .clone()
            .ok_or_else(|| format!("--mode {mode:?} needs --target"))
    };
    let make = |mode: Mode, count: usize| -> Result<Attack, String> {
        Ok(match mode {
            Mode::SlowReaders => Attack::SlowReaders {
                count,
                target: large(mode)?,
            },
            Mode::Slowloris => Attack::Slowloris {
                count,
                trickle: args.trickle,
            },
            Mode::Flood => Attack::Flood { count },
            Mode::IdleKeepalive => Attack::IdleKeepAlive {
                count,
                target: targets[0].clone(),
            },
            Mode::Malformed => Attack::Malformed { workers: count },
            Mode::Reset => Attack::Reset {
                workers: count,
                target: large(mode)?,
                read_bytes: args.read_bytes,
            },
            Mode::H2NoWindow => Attack::H2NoWindow {
                count,
                streams: args.streams,
                target: large(mode)?,
            },
            Mode::H2Stalled => Attack::H2Stalled {
                count,
                streams: args.streams,
                target: large(mode)?,
            },
            Mode::PrefaceCycles => Attack::PrefaceCycles { workers: count },
            Mode::PartialTls => Attack::PartialTls { count },
            Mode::TinyRanges => Attack::TinyRanges {
                workers: count,
                target: large(mode)?,
            },
        })
    };
    let mut attack = make(mode, args.count)?;
    if !args.also.is_empty() {
        let mut all = vec![attack];
        for &(mode, count) in &args.also {
            all.push(make(mode, count)?);
        }
        attack = Attack::Together(all);
    }
    let mut probe = ProbeConfig::new(targets, args.keepalive, args.fresh);
    probe.pace = args.pace;
    probe.timeout = args.timeout;
    let timing = Timing {
        warmup: args.warmup,
        quiet: args.quiet,
        ramp: args.ramp,
        attack: args.attack,
        settle: args.settle,
        after: args.after,
    };
    eprintln!("attack: {}", attack.describe());
    let attack_addr = args.attack_addr.unwrap_or(addr);
    if !attack_addr.ip().is_loopback() {
        return Err(format!("{attack_addr} is not a loopback address"));
    }
    let report = attack::run_split(addr, attack_addr, &args.pids, &attack, &probe, timing);
    eprintln!("{}", report.summary());
    let violations = report.violations(&Bounds::default());
    for v in &violations {
        eprintln!("missed: {v}");
    }
    if let Some(path) = &args.json {
        let line = serde_json::to_string(&report).map_err(|e| e.to_string())?;
        if path.as_os_str() == "-" {
            println!("{line}");
        } else {
            use std::io::Write;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| writeln!(f, "{line}"))
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
        }
    }
    if let Some(label) = &args.row {
        println!("{}", report.markdown_row(label));
    }
    Ok(if args.strict && !violations.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
