//! ccc: an asset catalog with a built-in CDN server.
//!
//! The library holds everything; `src/main.rs` only parses arguments, calls
//! [`run`] and prints errors. What is public is what the binary needs
//! ([`cli`], [`run`], [`Error`]) and the causal profiler's hooks
//! ([`causal`]), whose macros expand in the crate that uses them. Every
//! other module is `pub(crate)`, and `unreachable_pub` keeps the items in
//! them so. ccc's own tests, examples and benchmarks reach further only
//! through `testing`, which is not a stable API. Modules:
//!
//! - `catalog`: the SQLite catalog (schema, publish from directories and
//!   archives, queries, diff, gc, verify, backup, export);
//!   `follow`: a replica's catalog kept up to date from Litestream's
//!   files (`ccc follow`);
//! - `refs`: what a version's files reference and whether it resolves
//!   (`ccc check`, publish); `importmap`: import maps from the catalog
//!   (`ccc importmap`, serve's `?importmap`);
//! - `actor`: the std-thread actor runtime;
//! - `http`: routing, content negotiation and conditional requests as pure
//!   functions; `transport`: hyper's HTTP/1.1 and HTTP/2 connections
//!   on tokio, TLS, and ccc's limits, deadlines and drain around them;
//!   `serve`: the handler that answers requests, response building, the
//!   store actor that owns the server's catalog connection, and the cache
//!   requests read; `site`: a host served from one package at a
//!   dist-tag: its `_redirects` and `_headers` rules, and which files
//!   carry a content hash;
//! - [`causal`]: the causal profiler: the hooks the serve path compiles
//!   in, and the driver behind `ccc causal` (sweep, load, reports);
//! - `delta`: the deltas of RFC 9842 (dcb, dcz), families of names and
//!   the URL patterns a file is offered as a dictionary for;
//! - `encoding`: the content codings, one type from the tables to the
//!   wire;
//! - `spec`: package names, versions, selectors and `PKG@VERSION/PATH`;
//! - `units`: sizes, durations, times and counted nouns as people type
//!   and read them; `page`: a window of a long listing;
//! - [`cli`]: the command line's top; `cmd`: one module per subcommand,
//!   with its flags;
//! - `output`: tables, JSON and progress bars; `outcome`: the words a
//!   change to the catalog says it did, on the command line and from the
//!   write API alike; `log`: the server's log output, which never blocks
//!   or fails the server;
//! - `remote`: the client of serve's write API (`publish`, `tag` and
//!   `rm` with `--to`) and its flags;
//! - `purge`: purging removed and replaced versions from HTTP caches
//!   (`--purge`); `spool`: long lists kept in a temporary file rather
//!   than in memory; `file_id`: which file a path names; `rng`: the
//!   one seeded random generator;
//! - `error`: the error type ([`Error`]) and exit codes; `interrupt`:
//!   how long commands stop on Ctrl-C.
//! - `testing`: what ccc's own tests, examples and benchmarks reach
//!   inside the library, re-exported (hidden from these docs).

#![warn(unreachable_pub)]

pub(crate) mod actor;
// Items `testing` re-exports from these two keep their docs' links to
// private items: those docs are for the crate's developers (the private
// docs), and `testing` is hidden from the public ones.
#[allow(rustdoc::private_intra_doc_links)]
pub(crate) mod catalog;
pub mod causal;
// clap shows the flags' doc comments (in `cli` and beside each command
// in `cmd`) as `--help`, where URLs and `[time]` are text, not rustdoc's
// links.
#[allow(rustdoc::bare_urls, rustdoc::broken_intra_doc_links)]
pub mod cli;
#[allow(rustdoc::bare_urls, rustdoc::broken_intra_doc_links)]
pub(crate) mod cmd;
pub(crate) mod delta;
pub(crate) mod encoding;
pub(crate) mod error;
pub(crate) mod file_id;
pub(crate) mod follow;
pub(crate) mod http;
pub(crate) mod importmap;
pub(crate) mod interrupt;
pub(crate) mod log;
pub(crate) mod outcome;
pub(crate) mod output;
pub(crate) mod page;
pub(crate) mod purge;
pub(crate) mod refs;
pub(crate) mod remote;
pub(crate) mod rng;
pub(crate) mod serve;
#[allow(rustdoc::private_intra_doc_links)]
pub(crate) mod site;
pub(crate) mod spec;
pub(crate) mod spool;
// Not in the public documentation: the items it re-exports are documented
// where they are defined, for the crate's own developers.
#[doc(hidden)]
pub mod testing;
pub(crate) mod transport;
pub(crate) mod units;

pub use error::{Error, Result};

use cli::{Cli, Command, Invocation};
use std::process::ExitCode;

/// Runs one parsed command line. An error's [`Error::exit_code`] is the
/// process's exit code.
pub fn run(cli: Cli) -> Result<ExitCode> {
    let db = cli.db.as_path();
    let command = match cli.command {
        Invocation::Public(command) => command,
        Invocation::Generate(args) => return cmd::generate::run(args),
    };
    // The long commands stop at a safe point on Ctrl-C or SIGTERM; the quick
    // ones are left to the signal's default action (see `interrupt`).
    if matches!(
        command,
        Command::Publish(_)
            | Command::Gc(_)
            | Command::Deltas(_)
            | Command::Recompress(_)
            | Command::Verify(_)
            | Command::Check(_)
            | Command::Backup(_)
            | Command::Follow(_)
            | Command::Serve(_)
            | Command::Export(_)
            | Command::Causal(_)
    ) {
        interrupt::watch()?;
    }
    let result = match command {
        Command::Publish(args) => cmd::publish::run(db, args),
        Command::Ls(args) => cmd::ls::run(db, args),
        Command::Inspect(args) => cmd::inspect::run(db, args),
        Command::Diff(args) => cmd::diff::run(db, args),
        Command::Cat(args) => cmd::cat::run(db, args),
        Command::Tag(args) => cmd::tag::run(db, args),
        Command::Site(args) => cmd::site::run(db, args),
        Command::Rm(args) => cmd::rm::run(db, args),
        Command::Gc(args) => cmd::gc::run(db, args),
        Command::Deltas(args) => cmd::deltas::run(db, args),
        Command::Recompress(args) => cmd::recompress::run(db, args),
        Command::Verify(args) => cmd::verify::run(db, args),
        Command::Check(args) => cmd::check::run(db, args),
        Command::Importmap(args) => cmd::importmap::run(db, args),
        Command::Backup(args) => cmd::backup::run(db, args),
        Command::Follow(args) => cmd::follow::run(db, args),
        Command::Serve(args) => cmd::serve::run(db, *args),
        Command::Token(args) => cmd::token::run(db, args),
        Command::Audit(args) => cmd::audit::run(db, args),
        Command::Export(args) => cmd::export::run(db, args),
        Command::Causal(args) => cmd::causal::run(db, args.0),
    };
    result.map_err(|e| cmd::suggest_paths(db, cmd::suggest_packages(db, e)))
}
