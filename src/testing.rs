//! What ccc's own integration tests (`tests/`), examples (`examples/`)
//! and benchmarks (`bench/*.rs`) reach inside the library, beyond the
//! command line ([`crate::cli`], [`crate::run`]) and the profiler's hooks
//! ([`crate::causal`]).
//!
//! This is not a stable API: it is whatever those programs need today,
//! re-exported from crate-private modules without a promise. Everything
//! else in the library is `pub(crate)`, so the layers the module list in
//! the crate's documentation describes hold; adding a name here is the one
//! way to open a hole in them, and it should stay small.

pub use crate::rng::SplitMix64;
pub use crate::site::fingerprint::is_fingerprinted;
pub use crate::spec::{Selector, satisfies};
pub use crate::units::human_size;

/// The catalog, opened and published into in-process: the examples' seed
/// and the benchmarks build catalogs without spawning `ccc publish`.
pub mod catalog {
    pub use crate::catalog::compression::GzipLevel;
    pub use crate::catalog::digest::{StoredDigests, xxh3_digest};
    pub use crate::catalog::lookup::AssetRecord;
    pub use crate::catalog::pieces::{Coding, PIECE_SIZE, piece_count};
    pub use crate::catalog::{
        Access, BROTLI_INDEX_SCHEMA, BROTLI_MADE_SCHEMA, BROTLI_SCHEMA, CHECK_DIGEST_SCHEMA,
        Catalog, DELTAS_SCHEMA, SCHEMA_VERSION, SqliteResult,
    };

    /// Publishing files as one version.
    pub mod publish {
        pub use crate::catalog::publish::{FileEntry, NoProgress, Options, Source, publish};
    }
}

/// The generated shell completions and man pages, which a test compares
/// with the files in the repository.
pub mod generate {
    pub use crate::cmd::generate::{OTHER_ENV, public_command, render};
}

/// The std-thread actor runtime, for the profiler's validation programs.
pub mod actor {
    pub use crate::actor::{Actor, Handle, Reply, Running, StartError, spawn};
}

/// The profiler's engine and driver, run in-process by the validation
/// tests and the overhead benchmark.
#[cfg(feature = "causal")]
pub mod causal {
    pub use crate::causal::driver::awake::IdleCores;
    pub use crate::causal::driver::plan::CellSpec;
    pub use crate::causal::driver::sweep::{Cell, LatencyCell, Points, Session, Timing, run_cell};
    pub use crate::causal::engine::{ExternalWake, Phase, SiteClock};
    pub use crate::causal::latency::Window;
    pub use crate::causal::{GLOBALS, measure_clock_cost, now_ns};

    /// The Coz profile `ccc causal --coz-out` writes.
    pub mod coz {
        pub use crate::causal::driver::coz::{Format, render};
    }

    /// The summary of a sweep's cells.
    pub mod report {
        pub use crate::causal::driver::report::{Summary, summarize};
    }
}

/// Prepared responses and the store actor, for the ceiling examples and
/// the store benchmarks.
pub mod serve {
    pub use crate::encoding::Encoding;
    pub use crate::serve::prepared::Prepared;
    pub use crate::serve::stored::{Dictionaries, StoredAsset, Stream, line_value};

    /// The store actor that owns the server's catalog connection.
    pub mod store {
        pub use crate::serve::store::{AssetKey, AssetKeyRef, Config, Handle, Running, start};
    }
}

/// The transport, served by the ceiling examples with a handler of their
/// own; and the open-files limit the attack tests raise.
pub mod transport {
    pub use crate::transport::limits::raise_open_files;
    pub use crate::transport::listen::bind;
    pub use crate::transport::{ConnStats, Delivery, Handler, Limits, Payload, Peer, Transport};
}
