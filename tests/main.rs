//! Integration tests: one binary, topic modules inside. Tests run the real
//! `ccc` binary in temporary directories with a hermetic environment.

mod attack;
mod chromium;
mod chromium_deltas;
mod chromium_sites;
mod serve_util;
mod util;

mod access_log;
mod archive;
mod backup;
mod bad_input;
mod big_files;
mod brotli;
mod browse;
mod catalog;
#[cfg(feature = "causal")]
mod causal_coz;
#[cfg(not(feature = "causal"))]
mod causal_off;
#[cfg(feature = "causal")]
mod causal_smoke;
#[cfg(feature = "causal")]
mod causal_validation;
mod check;
mod churn;
mod completion;
mod deltas;
mod deploy_replicas;
mod deploy_varnish;
mod diff;
mod exit_codes;
mod export;
mod gc;
mod generated;
mod importmap;
mod integrity;
mod json_docs;
mod ls_inspect;
mod metrics;
mod npm_ranges;
mod publish;
mod publish_api;
mod publish_ci;
mod purge;
mod readme;
mod restarts;
mod serve;
mod serve_aliases;
mod serve_cors;
mod serve_deltas;
mod serve_faults;
mod serve_h2_limits;
mod serve_limits;
mod serve_logs;
#[cfg(target_os = "linux")]
pub mod serve_memory;
mod serve_protocol;
mod serve_ranges;
mod sites;
mod tags;
mod under_attack;
mod verify;
mod words;
