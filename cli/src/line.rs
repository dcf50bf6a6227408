//! One input line → one event, or the reason it is not one.
//!
//! Accepted forms (surrounding whitespace ignored):
//! - an event object `{"id":…,"pubkey":…,…}`;
//! - a relay message `["EVENT", <subscription id>, {event}]`;
//! - a client message `["EVENT", {event}]`.
//!
//! The event object itself is decoded by `nostr::event::Event::from_json`, so "is this an event"
//! means exactly what it means to rust-nostr (hex lengths, field types, x-only public key on the
//! curve, …); its error text is kept in the reason. On top of that, `id`, `pubkey` and `sig` must
//! be lowercase hex of exactly 64, 64 and 128 characters, as NIP-01 defines them: rust-nostr also
//! accepts bech32 (`npub1…`, `note1…`), `nostr:` URIs and over-long hex there, which other
//! relays and tools reject, so such lines are reported rather than passed on as valid.
//!
//! Two readings a `serde_json::Value` would change are nostr 0.45's here too: an object with
//! a duplicate key is rejected, and a number beyond `f64` (`1e400`) in a field events do not
//! have is skipped (the `cli_line` fuzz target's reference once parsed through a `Value` and
//! reported the second as a divergence).

use core::fmt;
use nostr::event::Event;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// Why a line does not hold an event. `Display` gives the text written to `--rejects` files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The line has more bytes than the cap (the first field); the second field is its length.
    TooLong {
        /// The cap in bytes.
        cap: usize,
        /// The line's length in bytes, without the line ending.
        len: u64,
    },
    /// The line is not UTF-8; the field is the offset of the first bad byte.
    InvalidUtf8(usize),
    /// The line is not JSON (serde_json's message).
    NotJson(String),
    /// JSON, but not an event object nor an `EVENT` message.
    NotEvent(String),
    /// An event object that `Event::from_json` rejects (its message).
    BadEvent(String),
    /// The worker processing this line's chunk failed unexpectedly (should never happen).
    Internal,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::TooLong { cap, len } => {
                write!(f, "unparseable: line too long ({len} bytes, limit {cap})")
            }
            Problem::InvalidUtf8(at) => write!(f, "unparseable: invalid UTF-8 at byte {at}"),
            Problem::NotJson(e) => write!(f, "unparseable: not JSON: {e}"),
            Problem::NotEvent(e) => write!(f, "unparseable: not an event: {e}"),
            Problem::BadEvent(e) => write!(f, "unparseable: bad event: {e}"),
            Problem::Internal => {
                f.write_str("unparseable: internal error while processing this line")
            }
        }
    }
}

/// A decoded event and the byte range of its JSON object within the line.
#[derive(Debug)]
pub struct Found {
    /// The event, not yet verified.
    pub event: Event,
    /// Start and end of the event object in the line (for `--valid` output).
    pub span: (usize, usize),
}

/// Decodes one line. `Ok(None)` for a blank (whitespace-only) line.
///
/// # Errors
/// The [`Problem`] that keeps the line from being an event.
pub fn parse_line(bytes: &[u8]) -> Result<Option<Found>, Problem> {
    let text = core::str::from_utf8(bytes).map_err(|e| Problem::InvalidUtf8(e.valid_up_to()))?;
    let trimmed = text.trim_ascii();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let object: &str = match trimmed.as_bytes()[0] {
        b'{' => trimmed,
        b'[' => event_in_message(trimmed)?,
        _ => {
            // Report serde_json's own words for non-JSON; valid JSON scalars are "not an event".
            return Err(match serde_json::from_str::<&RawValue>(trimmed) {
                Ok(_) => Problem::NotEvent("expected an object or an EVENT message".into()),
                Err(e) => Problem::NotJson(e.to_string()),
            });
        }
    };
    let event = Event::from_json(object).map_err(|e| Problem::BadEvent(e.to_string()))?;
    check_hex_fields(object)?;
    // `object` is a sub-slice of `text`, so its offset is a pointer difference.
    let start = object.as_ptr() as usize - text.as_ptr() as usize;
    Ok(Some(Found {
        event,
        span: (start, start + object.len()),
    }))
}

/// The three hex fields of an event object, borrowed where possible; other fields are skipped.
#[derive(Deserialize)]
struct HexFields<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    pubkey: Cow<'a, str>,
    #[serde(borrow)]
    sig: Cow<'a, str>,
}

/// NIP-01's encoding of `id`, `pubkey` and `sig`: lowercase hex of 64, 64 and 128 characters.
fn check_hex_fields(object: &str) -> Result<(), Problem> {
    let fields: HexFields<'_> =
        serde_json::from_str(object).map_err(|e| Problem::BadEvent(e.to_string()))?;
    for (name, value, want) in [
        ("id", &fields.id, 64),
        ("pubkey", &fields.pubkey, 64),
        ("sig", &fields.sig, 128),
    ] {
        let lower_hex = value
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if value.len() != want || !lower_hex {
            let shown: String = value.chars().take(16).collect();
            return Err(Problem::BadEvent(format!(
                "{name} must be {want} lowercase hex characters, got {} characters \"{shown}…\"",
                value.chars().count()
            )));
        }
    }
    Ok(())
}

/// The event object inside `["EVENT", sub, {…}]` or `["EVENT", {…}]`.
fn event_in_message(text: &str) -> Result<&str, Problem> {
    let parts: Vec<&RawValue> =
        serde_json::from_str(text).map_err(|e| Problem::NotJson(e.to_string()))?;
    let label = parts
        .first()
        .and_then(|v| serde_json::from_str::<String>(v.get()).ok());
    if label.as_deref() != Some("EVENT") {
        let shown = parts.first().map_or("[]", |v| v.get());
        let shown: String = shown.chars().take(40).collect();
        return Err(Problem::NotEvent(format!(
            "array starting with {shown} is not an EVENT message"
        )));
    }
    match parts.len() {
        2 => Ok(parts[1].get()),
        3 => {
            if serde_json::from_str::<String>(parts[1].get()).is_err() {
                return Err(Problem::NotEvent(
                    "EVENT message subscription id is not a string".into(),
                ));
            }
            Ok(parts[2].get())
        }
        n => Err(Problem::NotEvent(format!(
            "EVENT message with {n} elements (expected 2 or 3)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVENT: &str = r#"{"id":"b0d9c5d2f4c2ad7f0d5c5e6b1d0f4a7f4f5e8f7c3b3f0b1c5d5e7a8f9a0b1c2d","pubkey":"79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798","created_at":1,"kind":1,"tags":[],"content":"x","sig":"00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"}"#;

    /// Where a `serde_json::Value` would read differently, nostr 0.45's message parsers and
    /// the classifier agree: `1e400` in an unknown field is skipped, a duplicate key rejected.
    #[test]
    fn numbers_beyond_f64_and_duplicate_keys_as_nostr_reads_them() {
        use nostr::prelude::*;
        let big = EVENT.replacen("\"kind\"", "\"x\":1e400,\"kind\"", 1);
        assert!(serde_json::from_str::<serde_json::Value>(&big).is_err());
        for line in [
            big.clone(),
            format!("[\"EVENT\",\"sub\",{big}]"),
            format!("[\"EVENT\",{big}]"),
        ] {
            let found = parse_line(line.as_bytes())
                .expect("read")
                .expect("not blank");
            assert_eq!(&line[found.span.0..found.span.1], big);
        }
        assert!(RelayMessage::from_json(format!("[\"EVENT\",\"sub\",{big}]")).is_ok());
        assert!(ClientMessage::from_json(format!("[\"EVENT\",{big}]")).is_ok());
        let twice = EVENT.replacen("\"kind\":1", "\"kind\":7,\"kind\":1", 1);
        for line in [
            twice.clone(),
            format!("[\"EVENT\",\"sub\",{twice}]"),
            format!("[\"EVENT\",{twice}]"),
        ] {
            let err = parse_line(line.as_bytes()).unwrap_err();
            assert!(
                matches!(&err, Problem::BadEvent(e) if e.contains("duplicate")),
                "{err}"
            );
        }
        assert!(RelayMessage::from_json(format!("[\"EVENT\",\"sub\",{twice}]")).is_err());
        assert!(ClientMessage::from_json(format!("[\"EVENT\",{twice}]")).is_err());
    }

    #[test]
    fn three_forms_give_the_same_event_and_span() {
        let plain = parse_line(EVENT.as_bytes())
            .expect("parses")
            .expect("not blank");
        assert_eq!(plain.span, (0, EVENT.len()));
        for wrapped in [
            format!(" [\"EVENT\",\"sub\",{EVENT}] "),
            format!("[\"EVENT\", {EVENT}]\t"),
        ] {
            let found = parse_line(wrapped.as_bytes())
                .expect("parses")
                .expect("not blank");
            assert_eq!(found.event, plain.event);
            assert_eq!(&wrapped[found.span.0..found.span.1], EVENT);
        }
    }

    #[test]
    fn blank_and_bad_lines() {
        assert!(parse_line(b"").expect("blank").is_none());
        assert!(parse_line(b" \t ").expect("blank").is_none());
        assert_eq!(parse_line(b"ab\xffc").unwrap_err(), Problem::InvalidUtf8(2));
        assert!(matches!(
            parse_line(b"hello").unwrap_err(),
            Problem::NotJson(_)
        ));
        assert!(matches!(
            parse_line(b"42").unwrap_err(),
            Problem::NotEvent(_)
        ));
        assert!(matches!(
            parse_line(b"[]").unwrap_err(),
            Problem::NotEvent(_)
        ));
        assert!(matches!(
            parse_line(b"[\"NOTICE\",\"x\"]").unwrap_err(),
            Problem::NotEvent(_)
        ));
        assert!(matches!(
            parse_line(b"[\"EVENT\"]").unwrap_err(),
            Problem::NotEvent(_)
        ));
        let sub_not_string = format!("[\"EVENT\",1,{EVENT}]");
        assert!(matches!(
            parse_line(sub_not_string.as_bytes()).unwrap_err(),
            Problem::NotEvent(_)
        ));
        assert!(matches!(
            parse_line(b"[\"EVENT\",{}]").unwrap_err(),
            Problem::BadEvent(_)
        ));
        assert!(matches!(
            parse_line(&EVENT.as_bytes()[..100]).unwrap_err(),
            Problem::BadEvent(_)
        ));
    }

    #[test]
    fn hex_fields_must_be_nip01_hex() {
        // Each edit below still parses with `Event::from_json`; the NIP-01 check rejects it.
        let edits = [
            ("\",\"created_at\"", "00\",\"created_at\""), // pubkey of 66 characters
            ("\"pubkey\":\"79be", "\"pubkey\":\"79BE"),   // uppercase hex
            ("\"id\":\"b0d9", "\"id\":\"B0d9"),           // uppercase in the id
        ];
        for (from, to) in edits {
            let edited = EVENT.replacen(from, to, 1);
            assert_ne!(edited, EVENT);
            assert!(
                Event::from_json(&edited).is_ok(),
                "rust-nostr accepts {edited}"
            );
            let err = parse_line(edited.as_bytes()).unwrap_err();
            assert!(
                matches!(&err, Problem::BadEvent(m) if m.contains("lowercase hex")),
                "{err}"
            );
        }
        // An escaped hex digit is still the same string.
        let escaped = EVENT.replacen("\"id\":\"b", "\"id\":\"\\u0062", 1);
        assert_ne!(escaped, EVENT);
        let found = parse_line(escaped.as_bytes()).expect("still an event");
        assert!(found.is_some());
    }
}
