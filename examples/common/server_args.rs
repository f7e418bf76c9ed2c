//! The flags both ceiling servers take: `--bind`, `--port`, `--size` (the
//! body's bytes, default the seeded catalog's median stored size) and
//! `--threads` (default one per available core, as `ccc serve`), plus the
//! switches a server names itself.

pub struct ServerArgs {
    pub bind: String,
    pub port: u16,
    pub size: usize,
    pub threads: usize,
    /// The switches from `switches` that were given.
    pub switches: Vec<&'static str>,
}

/// Parses the process's arguments for the server `name` listening on
/// `port` by default; `-h` prints the usage and exits.
pub fn parse(name: &str, port: u16, switches: &[&'static str]) -> Result<ServerArgs, String> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut args = ServerArgs {
        bind: "127.0.0.1".into(),
        port,
        size: 2218,
        threads: cores,
        switches: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--bind" => args.bind = value()?,
            "--port" => args.port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--size" => args.size = value()?.parse().map_err(|e| format!("--size: {e}"))?,
            "--threads" => {
                args.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?
            }
            "-h" | "--help" => {
                let extra: String = switches.iter().map(|s| format!(" [{s}]")).collect();
                println!(
                    "usage: {name} [--bind ADDR] [--port N] [--size BYTES] [--threads N]{extra}"
                );
                std::process::exit(0);
            }
            other => match switches.iter().find(|s| **s == other) {
                Some(s) => args.switches.push(s),
                None => return Err(format!("unknown argument {other}")),
            },
        }
    }
    Ok(args)
}

impl ServerArgs {
    /// The runtime the server runs on: with `--current-thread` (when the
    /// server names that switch), one current-thread runtime, the main
    /// thread serving; else a multi-thread runtime of `--threads` threads.
    pub fn runtime(&self) -> std::io::Result<tokio::runtime::Runtime> {
        let mut builder = if self.switches.contains(&"--current-thread") {
            tokio::runtime::Builder::new_current_thread()
        } else {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(self.threads.max(1));
            builder
        };
        builder.enable_all().build()
    }
}
