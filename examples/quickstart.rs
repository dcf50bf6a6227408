//! Quickstart: verify a file of Nostr events (one JSON event per line) in one batch.
//!
//! ```text
//! cargo run --example quickstart                      # a few events it signs itself
//! cargo run --example quickstart -- events.jsonl      # your own file
//! cargo run --release --example quickstart -- events.jsonl      # optimized: the real speed
//! ```
//!
//! Each line is parsed with `nostr::Event::from_json`; all parsed events are then checked by
//! one call of `verify_batch()` (ids recomputed, signatures batch-verified), with exactly
//! `Event::verify`'s verdicts. It prints every rejected line, the first few accepted ones, and
//! a one-line summary.

use nostr::event::{Event, EventBuilder, FinalizeEvent, Kind};
use nostr::key::Keys;
use nostr_verify::{Verdict, VerifyBatchExt};
use std::time::Instant;

/// Accepted events printed before the summary (rejected ones are always printed).
const SHOW_VALID: usize = 5;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let lines = match std::env::args().nth(1) {
        Some(path) => std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {path}: {e}"))?
            .lines()
            .map(str::to_owned)
            .collect(),
        None => demo_lines()?,
    };

    // Parse every line; a line that does not parse is reported, never fatal.
    let mut events = Vec::new();
    let mut line_of = Vec::new();
    let mut report = Vec::new(); // (line, what), printed in line order
    for (no, line) in lines.iter().enumerate().map(|(i, l)| (i + 1, l.trim())) {
        if line.is_empty() {
            continue;
        }
        match Event::from_json(line) {
            Ok(event) => {
                events.push(event);
                line_of.push(no);
            }
            Err(e) => report.push((no, format!("unparseable: {e}"))),
        }
    }
    let unparseable = report.len();

    // One call verifies them all: ids first, then the signatures in one batch.
    let start = Instant::now();
    let verdicts: Vec<Verdict> = events.verify_batch();
    let took = start.elapsed();

    let (mut valid, mut bad_id, mut bad_sig) = (0, 0, 0);
    for ((event, verdict), no) in events.iter().zip(&verdicts).zip(&line_of) {
        let what = match verdict {
            Verdict::Valid => {
                valid += 1;
                "valid"
            }
            Verdict::InvalidId => {
                bad_id += 1;
                "INVALID ID (not the hash of the event)"
            }
            Verdict::InvalidSignature => {
                bad_sig += 1;
                "INVALID SIGNATURE"
            }
        };
        if !verdict.is_valid() || valid <= SHOW_VALID {
            report.push((*no, format!("{} kind {}: {what}", event.id, event.kind)));
        }
    }
    report.sort_unstable();
    for (no, what) in &report {
        println!("line {no}: {what}");
    }
    println!(
        "{} events: {valid} valid, {bad_id} invalid id, {bad_sig} invalid signature, \
         {unparseable} unparseable; verify_batch took {:.2} ms",
        events.len() + unparseable,
        took.as_secs_f64() * 1e3,
    );
    if cfg!(debug_assertions) {
        println!("(an unoptimized build: add --release for the real speed)");
    }
    Ok(())
}

/// Twelve events signed here by three keys, as JSON lines: nine untouched, one edited after
/// signing (wrong id), one with a signature from another key (wrong signature), one not an
/// event at all.
fn demo_lines() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let keys: Vec<Keys> = (0..3).map(|_| Keys::generate()).collect();
    let mut events: Vec<Event> = (0..11)
        .map(|i| {
            EventBuilder::new(Kind::TextNote, format!("hello nostr #{i}")).finalize(&keys[i % 3])
        })
        .collect::<Result<_, _>>()?;
    events[4].content.push('!'); // edited after signing: the id no longer matches
    let other = EventBuilder::new(Kind::TextNote, "someone else").finalize(&keys[1])?;
    events[7].sig = other.sig; // a valid signature, but of another event
    let mut lines: Vec<String> = events.iter().map(|e| e.as_json()).collect();
    lines.push(r#"{"id":"not an event"}"#.to_owned());
    Ok(lines)
}
