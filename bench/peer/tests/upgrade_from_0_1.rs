//! The program of the main crate's `tests/upgrade_from_0_1.rs`, compiled and run against the
//! crates.io `nostr-verify` 0.1.0: proof that it uses 0.1.0's API and nothing newer. CI lints
//! this target (`cargo clippy --manifest-path bench/peer/Cargo.toml --all-targets`), which
//! type-checks it against 0.1.0.

use nostr_verify_peer as v01;

include!("../../../tests/upgrade/v0_1_program.rs");

#[test]
fn program_runs_against_0_1() {
    let s = run_v0_1_program();
    assert_eq!(MIN_BATCH, 3);
    assert!(s.batches_passed >= 1);
}
