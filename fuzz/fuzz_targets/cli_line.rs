//! Arbitrary lines through the CLI's line classifier (`parse_line`), against parsing with nostr
//! 0.45 (see docs/fuzzing.md).
//!
//! The reference decodes the trimmed line as nostr does: an object with `Event::from_json`,
//! `["EVENT",sub,{…}]` with `RelayMessage::from_json`, `["EVENT",{…}]` with
//! `ClientMessage::from_json`. Then:
//! - an event from `parse_line` is the reference's event, and its span cuts out text that
//!   `Event::from_json` reads as the same event;
//! - an event the reference reads is found by `parse_line` too, unless the classifier's stated
//!   stricter rules reject it: `id`/`pubkey`/`sig` not NIP-01 lowercase hex of 64/64/128
//!   characters, or a message with other than 2 or 3 elements;
//! - invalid UTF-8 is reported at the offset `str::from_utf8` gives, blank lines are blank.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nostr::prelude::*;
use nostr_verify_cli::__fuzz::parse_line;
use nostr_verify_cli::line::Problem;

/// The reference's event, if any, and whether a NIP-01 rule of the classifier may reject it.
///
/// No `serde_json::Value` on the way: it refuses numbers beyond `f64` (`1e400`) that nostr's
/// parsers skip in fields events do not have (found by this target, in its own earlier
/// reference), and it keeps the last of duplicate keys, which nostr 0.45 rejects.
fn reference(trimmed: &str) -> Option<(Event, bool)> {
    let (event, object) = if trimmed.starts_with('{') {
        (Event::from_json(trimmed).ok()?, trimmed)
    } else {
        let parts: Vec<&serde_json::value::RawValue> = serde_json::from_str(trimmed).ok()?;
        let event = match parts.len() {
            2 => match ClientMessage::from_json(trimmed).ok()? {
                ClientMessage::Event(e) => e.into_owned(),
                _ => return None,
            },
            _ => match RelayMessage::from_json(trimmed).ok()? {
                RelayMessage::Event { event, .. } => event.into_owned(),
                _ => return None,
            },
        };
        if !(2..=3).contains(&parts.len()) {
            return Some((event, true));
        }
        (event, parts[parts.len() - 1].get())
    };
    // The three hex fields as written (other fields skipped).
    #[derive(serde::Deserialize)]
    struct Hex {
        id: Option<serde_json::Value>,
        pubkey: Option<serde_json::Value>,
        sig: Option<serde_json::Value>,
    }
    let nip01 = serde_json::from_str::<Hex>(object).is_ok_and(|h| {
        [(&h.id, 64), (&h.pubkey, 64), (&h.sig, 128)]
            .iter()
            .all(|&(v, n)| {
                v.as_ref().and_then(|s| s.as_str()).is_some_and(|s| {
                    s.len() == n
                        && s.bytes()
                            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                })
            })
    });
    Some((event, !nip01))
}

fuzz_target!(|data: &[u8]| {
    let got = parse_line(data);
    let text = match core::str::from_utf8(data) {
        Ok(t) => t,
        Err(e) => {
            assert_eq!(got.unwrap_err(), Problem::InvalidUtf8(e.valid_up_to()));
            return;
        }
    };
    let trimmed = text.trim_ascii();
    if trimmed.is_empty() {
        assert!(matches!(got, Ok(None)), "blank line not blank: {got:?}");
        return;
    }
    let want = reference(trimmed);
    match (got, want) {
        (Ok(Some(found)), Some((event, _))) => {
            assert_eq!(found.event, event, "a different event than nostr's");
            let (a, b) = found.span;
            let object = text
                .get(a..b)
                .expect("span inside the line, on char boundaries");
            assert_eq!(
                Event::from_json(object).expect("the span is an event"),
                event,
                "the span holds another event"
            );
        }
        (Ok(Some(found)), None) => {
            panic!(
                "classifier found an event nostr does not read: {:?}",
                found.event
            )
        }
        (Ok(None), _) => panic!("non-blank line classified as blank"),
        (Err(p), Some((_, may_reject))) => {
            assert!(
                may_reject,
                "nostr reads an event here, the classifier says {p}"
            );
        }
        (Err(_), None) => {}
    }
});
