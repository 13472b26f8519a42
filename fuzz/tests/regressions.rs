//! Every input kept under `regressions/<target>/` (crashes the fuzzer found, once fixed,
//! and hand-made hostile inputs), and every seed, run through its target: none may panic.

use std::collections::HashSet;

#[test]
fn kept_inputs_and_seeds_do_not_panic() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let mut ran = 0;
    for target in mcp_fuzz::TARGETS {
        for seed in mcp_fuzz::seeds(target) {
            assert!(mcp_fuzz::run(target, &seed).is_some());
            ran += 1;
        }
        let Ok(entries) = std::fs::read_dir(dir.join(target)) else {
            continue;
        };
        for e in entries.flatten() {
            let input = std::fs::read(e.path()).unwrap();
            assert!(
                mcp_fuzz::run(target, &input).is_some(),
                "{}",
                e.path().display()
            );
            ran += 1;
        }
    }
    assert!(ran > 20, "only {ran} inputs ran");
}

/// The driver keeps inputs by their outcome signal; if every input gave the same one the
/// fuzzer would be blind. The message seeds take different paths, so their signals differ.
#[test]
fn outcome_signals_tell_paths_apart() {
    let signals: HashSet<u64> = mcp_fuzz::seeds("message")
        .iter()
        .map(|s| mcp_fuzz::run("message", s).unwrap())
        .collect();
    assert!(signals.len() >= 6, "{signals:?}");
    let a = mcp_fuzz::run("message", b"{").unwrap();
    let b = mcp_fuzz::run("message", b"{    ").unwrap();
    let c = mcp_fuzz::run("message", br#"{"jsonrpc":"2.0","id":1}"#).unwrap();
    assert_eq!(a, b, "two parse errors of one class");
    assert_ne!(a, c);
}
