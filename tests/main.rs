//! Integration tests: one binary, topic modules inside. Tests run the real
//! `ccc` binary in temporary directories with a hermetic environment.

mod util;

mod generated;
mod publish;
