//! Arbitrary relay frames through the SDK tap's whole per-connection stream (`TapStream`:
//! frame scanner, batch verification, delivery), against `RelayMessage::from_json` (nostr
//! 0.44, what the SDK parses with). See docs/fuzzing.md.
//!
//! The input is split at `\n` into text frames (lossy UTF-8), read by one tap connection with
//! the subscription `bv:1` registered. The reference reads every frame with
//! `RelayMessage::from_json` and says what the SDK would see:
//! - the events the tap delivers are, in order, frames that parse as `["EVENT","bv:1",event]`
//!   whose event passes `Event::verify`, the SDK's limits and expiry: never a different event,
//!   never one the SDK would refuse;
//! - of those, every frame of exactly three elements whose third element's own text is read by
//!   `Event::from_json` (the tap's stated rule: it parses the object's text, and drops frames
//!   with extra elements) is delivered: no event is lost;
//! - `EOSE`/`CLOSED` of `bv:1` are delivered in order with the events;
//! - every frame that parses as anything but an `EVENT` comes out unchanged, in order, and
//!   nothing comes out that was not a frame (so no frame is lost behind another);
//! - every frame is accounted for: forwarded, delivered, or counted in a drop counter.
#![no_main]

use async_wsocket::Message;
use futures::StreamExt;
use libfuzzer_sys::fuzz_target;
use nostr_sdk::prelude::{JsonUtil, RelayLimits, RelayMessage, RelayUrl, SubscriptionId};
use nostr_verify_sdk::{BatchVerifyTransport, TapEvent};

const OURS: &str = "bv:1";

/// What the SDK would do with one frame, as far as the tap is concerned.
enum Want {
    /// An event of `bv:1` the SDK would accept: delivered by the tap if `.1` (the tap reads
    /// the frame's object text on its own), may be dropped otherwise.
    Deliver(Box<nostr_sdk::prelude::Event>, bool),
    /// An event of a `bv:` subscription the tap drops (invalid, over a limit, expired,
    /// unrouted): consumed.
    Drop,
    /// EOSE or CLOSED of `bv:1`: delivered and forwarded.
    Control,
    /// An `EVENT` of another subscription: forwarded, or dropped by the pass-through guard.
    Passthrough,
    /// Anything else that parses: forwarded unchanged.
    Forward,
    /// Does not parse: the tap may drop it (as unparsable) or forward it for the SDK to report.
    Unparsable,
}

fn want(frame: &str, limits: &RelayLimits) -> Want {
    match RelayMessage::from_json(frame) {
        Ok(RelayMessage::Event {
            subscription_id,
            event,
        }) => {
            if subscription_id.as_str() != OURS {
                return if subscription_id.as_str().starts_with("bv:") {
                    Want::Drop
                } else {
                    Want::Passthrough
                };
            }
            let ev = event.into_owned();
            let too_large = limits
                .events
                .get_max_size(&ev.kind)
                .is_some_and(|m| ev.as_json().len() > m as usize);
            let too_many = limits
                .events
                .get_max_num_tags(&ev.kind)
                .is_some_and(|m| ev.tags.len() > m as usize);
            let msg_too_large = limits
                .messages
                .max_size
                .is_some_and(|m| frame.trim().len() > m as usize);
            if ev.verify().is_ok() && !too_large && !too_many && !msg_too_large && !ev.is_expired()
            {
                let own_text = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(frame)
                    .ok()
                    .filter(|parts| parts.len() == 3)
                    .is_some_and(|parts| {
                        nostr_sdk::prelude::Event::from_json(parts[2].get()).is_ok()
                    });
                Want::Deliver(Box::new(ev), own_text)
            } else {
                Want::Drop
            }
        }
        Ok(RelayMessage::EndOfStoredEvents(id)) if id.as_str() == OURS => Want::Control,
        Ok(RelayMessage::Closed {
            subscription_id, ..
        }) if subscription_id.as_str() == OURS => Want::Control,
        Ok(_) => Want::Forward,
        Err(_) => Want::Unparsable,
    }
}

fuzz_target!(|data: &[u8]| {
    let frames: Vec<String> = data
        .split(|&b| b == b'\n')
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let tap = BatchVerifyTransport::default();
    let limits = tap.options().limits.clone();
    let wants: Vec<Want> = frames.iter().map(|f| want(f, &limits)).collect();

    let (tx, mut rx) = tokio::sync::mpsc::channel(frames.len() + 2);
    tap.register(SubscriptionId::new(OURS), tx);
    let url = RelayUrl::parse("wss://relay.example.com").expect("url");
    let inner = futures::stream::iter(
        frames
            .clone()
            .into_iter()
            .map(|f| Ok::<_, _>(Message::Text(f))),
    )
    .boxed();
    let out: Vec<_> = futures::executor::block_on(tap.wrap_stream(url, inner).collect());
    let mut forwarded: Vec<String> = Vec::new();
    for m in out {
        match m {
            Ok(Message::Text(t)) => forwarded.push(t),
            other => panic!("the tap made up a message: {other:?}"),
        }
    }
    let mut delivered = Vec::new();
    let mut controls = 0usize;
    while let Ok(ev) = rx.try_recv() {
        match ev {
            TapEvent::Event {
                subscription_id,
                event,
                ..
            } => {
                assert_eq!(subscription_id.as_str(), OURS);
                delivered.push(event);
            }
            TapEvent::Eose { .. } | TapEvent::Closed { .. } => controls += 1,
            TapEvent::Disconnected { .. } => {}
        }
    }

    if std::env::var_os("FUZZ_DEBUG").is_some() {
        eprintln!(
            "frames {}, forwarded {}, delivered {}, controls {controls}, {:?}",
            frames.len(),
            forwarded.len(),
            delivered.len(),
            tap.stats()
        );
    }
    // Delivered events: a subsequence of the SDK-acceptable events of bv:1, in order, that
    // holds every one the tap must read.
    let got: Vec<&nostr_sdk::prelude::Event> = delivered.iter().map(|e| &**e).collect();
    // Not a greedy match: two frames may carry the same event, the first one optional (e.g.
    // with a duplicate key, which `RelayMessage::from_json` reads through a `Value`, keeping
    // the last, and `Event::from_json` rejects) and the second one required, and matching the
    // delivery to the first would report the second as lost. `reach[k]`: some way of reading
    // the frames so far accounts for the first `k` deliveries.
    let mut reach = vec![false; got.len() + 1];
    reach[0] = true;
    for (f, w) in frames.iter().zip(&wants) {
        if let Want::Deliver(e, must) = w {
            let mut next = vec![false; got.len() + 1];
            for k in 0..=got.len() {
                if reach[k] {
                    if got.get(k) == Some(&&**e) {
                        next[k + 1] = true;
                    }
                    if !must {
                        next[k] = true;
                    }
                }
            }
            assert!(next.contains(&true), "event lost: {f:?}");
            reach = next;
        }
    }
    assert!(
        reach[got.len()],
        "delivered an event the SDK would not accept, or out of order: {:?}",
        got.get(reach.iter().rposition(|&r| r).unwrap_or(0))
    );
    let want_controls = wants.iter().filter(|w| matches!(w, Want::Control)).count();
    assert_eq!(
        controls, want_controls,
        "EOSE/CLOSED deliveries lost or made up"
    );

    // Forwarded frames: a subsequence of the input that holds every frame the SDK must see.
    let mut next = 0usize;
    for f in &forwarded {
        let at = frames[next..]
            .iter()
            .position(|g| g == f)
            .unwrap_or_else(|| panic!("forwarded a frame out of order or made up: {f:?}"));
        for (skipped, w) in frames[next..next + at].iter().zip(&wants[next..next + at]) {
            assert!(
                !matches!(w, Want::Forward | Want::Control),
                "frame lost (not forwarded): {skipped:?}"
            );
        }
        next += at + 1;
    }
    for (skipped, w) in frames[next..].iter().zip(&wants[next..]) {
        assert!(
            !matches!(w, Want::Forward | Want::Control),
            "frame lost at the end (not forwarded): {skipped:?}"
        );
    }

    // Every frame accounted for.
    let s = tap.stats();
    let drops = s.message_too_large
        + s.unparsable
        + s.event_too_large
        + s.too_many_tags
        + s.expired
        + s.invalid_id
        + s.invalid_signature
        + s.unrouted
        + s.passthrough_invalid_id
        + s.passthrough_invalid_signature;
    assert_eq!(
        forwarded.len() as u64 + delivered.len() as u64 + drops,
        frames.len() as u64,
        "frames unaccounted for: {} forwarded, {} delivered, {drops} dropped ({s:?})",
        forwarded.len(),
        delivered.len(),
    );
});
