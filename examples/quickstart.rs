//! Quickstart: verify a file of Nostr events (one JSON event per line) in one batch.
//!
//! ```text
//! cargo run --example quickstart                      # a few events it signs itself
//! cargo run --example quickstart -- events.jsonl      # your own file
//! cargo run --release --example quickstart -- events.jsonl      # optimized: the real speed
//! ```
//!
//! Each line is an event object, or a relay message carrying one (`["EVENT",<sub>,{…}]` as relays
//! send them, `["EVENT",{…}]` as clients publish them), as `nostr-verify check` reads them. Every
//! event is parsed with `nostr`; all of them are then checked by one call of `verify_batch()`
//! (ids recomputed, signatures batch-verified), with exactly `Event::verify`'s verdicts. It
//! prints every rejected line, the first few accepted ones, and a one-line summary.

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
        match parse_line(line) {
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
        "{} lines: {valid} valid, {bad_id} invalid id, {bad_sig} invalid signature, \
         {unparseable} unparseable; verify_batch took {:.2} ms",
        events.len() + unparseable,
        took.as_secs_f64() * 1e3,
    );
    if cfg!(debug_assertions) {
        println!("(an unoptimized build: add --release for the real speed)");
    }
    Ok(())
}

/// One line: an event object, `["EVENT",<sub>,{event}]` or `["EVENT",{event}]`. Errors name
/// the problem without serde_json's "at line 1 column N" (every line is line 1 to the parser,
/// which reads wrongly beside the file's own line numbers).
fn parse_line(line: &str) -> Result<Event, String> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
        let msg = e.to_string();
        let at = format!(" at line {} column {}", e.line(), e.column());
        let msg = msg.strip_suffix(&at).unwrap_or(&msg).to_owned();
        format!("not JSON ({msg}, at byte column {})", e.column())
    })?;
    let object = match value {
        serde_json::Value::Array(mut items) => {
            let is_event_message = items.first().and_then(|v| v.as_str()) == Some("EVENT")
                && (items.len() == 2 || (items.len() == 3 && items[1].is_string()));
            match items.pop() {
                Some(event) if is_event_message => event,
                _ => return Err("not an event: an array that is not an EVENT message".into()),
            }
        }
        other => other,
    };
    if !object.is_object() {
        return Err("not an event: not a JSON object".into());
    }
    serde_json::from_value::<Event>(object).map_err(|e| format!("not a Nostr event: {e}"))
}

/// Twelve lines: eleven events signed here by three keys (nine untouched, one of them sent as a
/// relay's `["EVENT",<sub>,{…}]` message; one edited after signing: wrong id; one with the
/// signature of another event: wrong signature), and one that is not an event at all.
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
    lines[2] = format!(r#"["EVENT","sub1",{}]"#, lines[2]); // as a relay sends it
    lines.push(r#"{"id":"not an event"}"#.to_owned());
    Ok(lines)
}
