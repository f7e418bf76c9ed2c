//! Built without the `causal` feature: the profiler's vocabulary is free
//! and `ccc causal` says why it cannot run.

use crate::util::Workspace;

#[test]
fn stamps_are_zero_sized_and_sites_compile_to_nothing() {
    assert_eq!(std::mem::size_of::<ccc::causal::Stamp>(), 0);
    let guard = ccc::causal::site!(SQLITE_QUERY);
    assert_eq!(std::mem::size_of_val(&guard), 0);
}

#[test]
fn the_causal_command_explains_the_missing_feature() {
    let ws = Workspace::new();
    ws.ccc()
        .args(["causal", "--port", "0"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("without the `causal` feature"));
}
