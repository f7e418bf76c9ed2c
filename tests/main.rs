//! Integration tests: one binary, topic modules inside. Tests run the real
//! `ccc` binary in temporary directories with a hermetic environment.

mod serve_util;
mod util;

mod bad_input;
mod catalog;
mod export;
mod gc;
mod generated;
mod ls_inspect;
mod publish;
mod serve;
mod verify;
