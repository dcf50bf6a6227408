//! The upgrade path from crates.io `nostr-verify` 0.1.0: a program written against 0.1.0's
//! public API (every call of its README and examples) builds and runs against this crate
//! unchanged. The program lives in `tests/upgrade/v0_1_program.rs`; `bench/peer` compiles the
//! same file against the crates.io 0.1.0 (CI lints it there), so it uses 0.1.0's API and no
//! other. See the README, "Migrating from 0.1.0".

use nostr_verify as v01;

include!("upgrade/v0_1_program.rs");

#[test]
fn program_written_for_0_1_runs_unchanged() {
    let s = run_v0_1_program();
    // This crate's MIN_BATCH is 4 (0.1.0's: 3); the program reads it, never hard-codes it.
    assert_eq!(MIN_BATCH, 4);
    assert!(s.batches_passed >= 1);
}

/// 0.1.0's README, "With rust-nostr", as written there, but for one path: it imports
/// `nostr::Event`, which nostr 0.45 (the version whose secp256k1 0.30 that README names) does
/// not export at its root; nostr 0.45 spells it `nostr::event::Event` (or `nostr::prelude::*`).
#[cfg(feature = "nostr")]
mod with_rust_nostr {
    use nostr::event::Event;
    use nostr_verify::{SigRef, Verifier};
    use std::cell::RefCell;

    thread_local! {
        static VERIFIER: RefCell<Verifier> = RefCell::new(Verifier::new());
    }

    /// Whether each event's signature is valid, in order. Check `event.verify_id()` first.
    fn signatures(events: &[&Event]) -> Vec<bool> {
        let sigs: Vec<SigRef> = events
            .iter()
            .map(|e| SigRef {
                pubkey: e.pubkey.as_bytes(),
                msg: e.id.as_bytes(),
                sig: e.sig.as_bytes(),
            })
            .collect();
        let mut ok = Vec::new();
        VERIFIER.with_borrow_mut(|v| v.verify_batch(&sigs, &mut ok));
        ok
    }

    #[test]
    fn readme_snippet_with_rust_nostr() {
        use nostr::event::{EventBuilder, FinalizeEvent, Kind};
        use nostr::key::Keys;
        let keys = Keys::generate();
        let mut events: Vec<Event> = (0..16)
            .map(|i| {
                EventBuilder::new(Kind::TextNote, format!("note {i}"))
                    .finalize(&keys)
                    .unwrap()
            })
            .collect();
        events[5].sig = events[4].sig;
        let refs: Vec<&Event> = events.iter().collect();
        let ok = signatures(&refs);
        let expected: Vec<bool> = events.iter().map(|e| e.verify_signature()).collect();
        assert_eq!(ok, expected);
        assert!(!ok[5] && ok.iter().filter(|&&v| v).count() == 15);
    }
}
