//! `nostr-verify`: check and ingest Nostr event dumps (issue 7).

fn main() {
    eprintln!("usage: nostr-verify <check|ingest|count> ...");
    std::process::exit(2);
}
