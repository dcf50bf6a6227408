//! `use nostr_verify::*;` must not shadow the `nostr` crate: a glob import of this crate next
//! to code that names `nostr::...` has to compile (a public module named `nostr` broke it).

#![allow(unused_imports)]

use nostr_verify::*;

#[test]
fn nostr_paths_resolve_to_the_nostr_crate_under_a_glob_import() {
    use nostr::event::FinalizeEvent as _;
    // `nostr::key::Keys` exists only in the nostr crate; a module of ours named `nostr` would
    // take precedence over the extern crate here and fail to resolve it.
    let keys =
        nostr::key::Keys::parse("6b911fd37cdf5c81d4c0adb1ab7fa822ed253ab0ad9aa18d77257c88b29b718e")
            .expect("valid secret key");
    let event = nostr::event::EventBuilder::new(nostr::event::Kind::TextNote, "glob")
        .finalize(&keys)
        .expect("signed");
    let events = [event];
    assert_eq!(events.verify_batch(), [Verdict::Valid]);
    assert_eq!(compute_id(&events[0]), events[0].id.to_bytes());
}
