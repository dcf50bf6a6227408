//! The tap's stream logic on synthetic frames (no network): routing, ordering, every drop
//! reason, the pass-through guard, the verified (id, signature) cache, and verdicts against
//! `Event::verify`.

mod common;

use async_wsocket::Message;
use futures::StreamExt;
use nostr_sdk::pool::transport::websocket::WebSocketStream;
use nostr_sdk::prelude::*;
use nostr_verify_sdk::{
    BatchVerifyTransport, DefaultWebsocketTransport, DropReason, TapEvent, TapOptions,
};
use tokio::sync::mpsc;

use common::{bad_id, bad_sig, mangled_sig, scale, signed_events};

fn ev_frame(sub: &str, ev: &Event) -> String {
    RelayMessage::event(SubscriptionId::new(sub), ev.clone()).as_json()
}

fn eose_frame(sub: &str) -> String {
    RelayMessage::eose(SubscriptionId::new(sub)).as_json()
}

fn url() -> RelayUrl {
    RelayUrl::parse("ws://127.0.0.1:1").unwrap()
}

/// With the pass-through guard off, every frame (no subscription of ours) goes through as it
/// came.
async fn assert_unguarded_forwards_all(frames: Vec<String>) {
    let opts = TapOptions {
        check_passthrough_ids: false,
        ..TapOptions::default()
    };
    let open = BatchVerifyTransport::with_options(DefaultWebsocketTransport, opts);
    let (fwd, _) = run(&open, &[], frames.clone()).await;
    assert_eq!(fwd, frames);
}

/// Runs `frames` through a tap stream; returns the forwarded texts and the delivered tap events.
async fn run(
    tap: &BatchVerifyTransport,
    subs: &[&str],
    frames: Vec<String>,
) -> (Vec<String>, Vec<TapEvent>) {
    let (tx, mut rx) = mpsc::channel(100_000);
    for s in subs {
        tap.register(SubscriptionId::new(*s), tx.clone());
    }
    drop(tx);
    let inner: WebSocketStream = Box::pin(futures::stream::iter(
        frames.into_iter().map(|f| Ok(Message::Text(f))),
    ));
    let stream = tap.wrap_stream(url(), inner);
    let forwarded: Vec<String> = stream
        .map(|m| match m {
            Ok(Message::Text(t)) => t,
            other => panic!("unexpected {other:?}"),
        })
        .collect()
        .await;
    for s in subs {
        tap.unregister(&SubscriptionId::new(*s));
    }
    let mut got = Vec::new();
    while let Some(e) = rx.recv().await {
        got.push(e);
    }
    (forwarded, got)
}

fn event_ids(got: &[TapEvent]) -> Vec<EventId> {
    got.iter()
        .filter_map(|e| match e {
            TapEvent::Event { event, .. } => Some(event.id),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn routes_orders_and_drops_forged_events() {
    let evs = signed_events(8, 3, 1_000);
    let tap = BatchVerifyTransport::default();
    let notice = RelayMessage::notice("hi").as_json();
    let sdk_event = ev_frame("0123456789abcdef0123456789abcdef", &evs[2]);
    let frames = vec![
        ev_frame("bv:a", &evs[0]),
        ev_frame("bv:a", &evs[1]),
        notice.clone(),
        sdk_event.clone(),
        ev_frame("bv:a", &bad_id(evs[3].clone())),
        ev_frame("bv:a", &bad_sig(evs[4].clone(), &evs[5])),
        eose_frame("bv:a"),
        ev_frame("bv:a", &evs[6]),
    ];
    let (fwd, got) = run(&tap, &["bv:a"], frames).await;
    // Everything not ours passes unchanged; our EOSE is forwarded to the SDK too.
    assert_eq!(fwd, vec![notice, sdk_event, eose_frame("bv:a")]);
    // Wire order: events before their EOSE, the later event after it, then the disconnect.
    assert!(matches!(got[0], TapEvent::Event { ref event, .. } if event.id == evs[0].id));
    assert!(matches!(got[1], TapEvent::Event { ref event, .. } if event.id == evs[1].id));
    assert!(
        matches!(got[2], TapEvent::Eose { ref subscription_id, .. } if subscription_id.as_str() == "bv:a")
    );
    assert!(matches!(got[3], TapEvent::Event { ref event, .. } if event.id == evs[6].id));
    assert!(matches!(got[4], TapEvent::Disconnected { .. }));
    assert_eq!(got.len(), 5);
    let st = tap.stats();
    assert_eq!(st.dropped(DropReason::InvalidId), 1);
    assert_eq!(st.dropped(DropReason::InvalidSignature), 1);
    assert_eq!(st.delivered, 3);
}

#[tokio::test]
async fn every_drop_reason_is_counted() {
    let keys = Keys::generate();
    let ok = signed_events(2, 1, 2_000);
    let big = EventBuilder::new(Kind::TextNote, "x".repeat(3_000))
        .sign_with_keys(&keys)
        .unwrap();
    let many_tags = EventBuilder::new(Kind::TextNote, "tags")
        .tags((0..4).map(|i| Tag::hashtag(format!("t{i}"))))
        .sign_with_keys(&keys)
        .unwrap();
    let expired = EventBuilder::new(Kind::TextNote, "old")
        .tag(Tag::expiration(Timestamp::from(1)))
        .sign_with_keys(&keys)
        .unwrap();
    let huge_kind = EventBuilder::new(Kind::Custom(30_001), "y".repeat(600))
        .sign_with_keys(&keys)
        .unwrap();
    let mut opts = TapOptions::default();
    opts.limits.messages.max_size = Some(2_000);
    opts.limits.events.max_num_tags = Some(3);
    opts.limits.events = opts
        .limits
        .events
        .clone()
        .set_max_size_per_kind(Kind::Custom(30_001), Some(500));
    let tap = BatchVerifyTransport::with_options(DefaultWebsocketTransport, opts);
    let frames = vec![
        ev_frame("bv:b", &ok[0]),
        ev_frame("bv:b", &big),
        ev_frame("bv:b", &many_tags),
        ev_frame("bv:b", &expired),
        ev_frame("bv:b", &huge_kind),
        r#"["EVENT","bv:b",{"not":"an event"}]"#.to_owned(),
        ev_frame("bv:unregistered", &ok[1]),
        ev_frame("bv:b", &ok[1]),
    ];
    let (fwd, got) = run(&tap, &["bv:b"], frames).await;
    assert!(fwd.is_empty(), "{fwd:?}");
    assert_eq!(event_ids(&got), vec![ok[0].id, ok[1].id]);
    let st = tap.stats();
    for (r, n) in [
        (DropReason::MessageTooLarge, 1),
        (DropReason::TooManyTags, 1),
        (DropReason::Expired, 1),
        (DropReason::EventTooLarge, 1),
        (DropReason::Unparsable, 1),
        (DropReason::Unrouted, 1),
        (DropReason::InvalidId, 0),
        (DropReason::InvalidSignature, 0),
    ] {
        assert_eq!(st.dropped(r), n, "{r:?}");
    }
}

#[tokio::test]
async fn passthrough_id_guard() {
    let evs = signed_events(3, 1, 3_000);
    let sdk = "0123456789abcdef0123456789abcdef";
    let forged = ev_frame(sdk, &bad_id(evs[0].clone()));
    let bad_signature = ev_frame(sdk, &bad_sig(evs[1].clone(), &evs[2]));
    let good = ev_frame(sdk, &evs[2]);
    let frames = vec![forged.clone(), bad_signature.clone(), good.clone()];

    let guarded = BatchVerifyTransport::default();
    let (fwd, _) = run(&guarded, &[], frames.clone()).await;
    // The guard only recomputes ids; signatures stay the SDK's job.
    assert_eq!(fwd, vec![bad_signature.clone(), good.clone()]);
    assert_eq!(guarded.stats().passthrough_invalid_id, 1);

    assert_unguarded_forwards_all(frames).await;
}

#[tokio::test]
async fn escaped_subscription_id_is_still_ours() {
    let evs = signed_events(1, 1, 4_000);
    let json = ev_frame("bv:e", &evs[0]).replacen("bv:e", "bv\\u003ae", 1);
    let tap = BatchVerifyTransport::default();
    let (fwd, got) = run(&tap, &["bv:e"], vec![json]).await;
    assert!(fwd.is_empty());
    assert_eq!(event_ids(&got), vec![evs[0].id]);
}

#[tokio::test]
async fn cache_skips_signatures_but_never_ids() {
    let evs = signed_events(20, 4, 5_000);
    let tap = BatchVerifyTransport::default();
    let frames: Vec<String> = evs.iter().map(|e| ev_frame("bv:c", e)).collect();
    run(&tap, &["bv:c"], frames.clone()).await;
    assert_eq!(tap.stats().signatures_checked, 20);
    // Same events again: cache hits, no signature checks.
    let (_, got) = run(&tap, &["bv:c"], frames).await;
    assert_eq!(event_ids(&got).len(), 20);
    let st = tap.stats();
    assert_eq!((st.signatures_checked, st.cache_hits), (20, 20));
    // Tampered copies claiming the genuine ids: id recomputed, dropped.
    let tampered: Vec<String> = evs
        .iter()
        .map(|e| {
            let mut t = e.clone();
            t.content = "tampered".into();
            ev_frame("bv:c", &t)
        })
        .collect();
    let (_, got) = run(&tap, &["bv:c"], tampered).await;
    assert!(event_ids(&got).is_empty());
    assert_eq!(tap.stats().dropped(DropReason::InvalidId), 20);
    // A cleared cache checks signatures again.
    tap.clear_cache();
    run(
        &tap,
        &["bv:c"],
        evs.iter().map(|e| ev_frame("bv:c", e)).collect(),
    )
    .await;
    assert_eq!(tap.stats().signatures_checked, 40);
}

fn delivered(got: &[TapEvent]) -> Vec<(EventId, Signature)> {
    got.iter()
        .filter_map(|e| match e {
            TapEvent::Event { event, .. } => Some((event.id, event.sig)),
            _ => None,
        })
        .collect()
}

/// Copies of the events with other signature bytes under the same (genuine) id: every other
/// one carries another event's signature, the rest a signature with one bit flipped.
fn same_id_other_sig(evs: &[Event]) -> Vec<Event> {
    evs.iter()
        .enumerate()
        .map(|(i, e)| {
            if i % 2 == 0 {
                bad_sig(e.clone(), &evs[(i + 1) % evs.len()])
            } else {
                mangled_sig(e)
            }
        })
        .collect()
}

/// The cache is keyed by (id, signature): a copy of a verified event whose signature bytes
/// differ is checked on its own, never delivered on the strength of the genuine copy's verdict.
#[tokio::test]
async fn cache_is_keyed_by_id_and_signature() {
    let evs = signed_events(12, 3, 7_000);
    let genuine: Vec<(EventId, Signature)> = evs.iter().map(|e| (e.id, e.sig)).collect();
    let forged = same_id_other_sig(&evs);
    let frames = |v: &[Event]| v.iter().map(|e| ev_frame("bv:k", e)).collect::<Vec<_>>();

    let tap = BatchVerifyTransport::default();
    let (_, got) = run(&tap, &["bv:k"], frames(&evs)).await;
    assert_eq!(delivered(&got), genuine);
    // The genuine ids are cached; copies with other signature bytes are still checked.
    let (_, got) = run(&tap, &["bv:k"], frames(&forged)).await;
    assert!(delivered(&got).is_empty(), "forged copies delivered");
    let st = tap.stats();
    assert_eq!(st.dropped(DropReason::InvalidSignature), 12);
    assert_eq!((st.signatures_checked, st.cache_hits), (24, 0));
    // The genuine copies are still cache hits.
    let (_, got) = run(&tap, &["bv:k"], frames(&evs)).await;
    assert_eq!(delivered(&got), genuine);
    let st = tap.stats();
    assert_eq!((st.signatures_checked, st.cache_hits), (24, 12));

    // Genuine and forged copies interleaved on one connection, for several batch sizes: a
    // forged copy of an id verified in the same or an earlier batch (or still in flight) is
    // rejected, its genuine twin delivered, in wire order.
    let mut mixed = Vec::new();
    for (g, f) in evs.iter().zip(&forged) {
        if g.created_at.as_secs() % 2 == 0 {
            mixed.extend([g.clone(), f.clone()]);
        } else {
            mixed.extend([f.clone(), g.clone()]);
        }
    }
    for batch_size in [1, 2, 3, 1024] {
        let opts = TapOptions {
            batch_size,
            ..TapOptions::default()
        };
        let tap = BatchVerifyTransport::with_options(DefaultWebsocketTransport, opts);
        let (_, got) = run(&tap, &["bv:k"], frames(&mixed)).await;
        assert_eq!(delivered(&got), genuine, "batch size {batch_size}");
        let st = tap.stats();
        assert_eq!(
            st.dropped(DropReason::InvalidSignature),
            12,
            "batch size {batch_size}"
        );
        assert_eq!(st.signatures_checked, 24, "batch size {batch_size}");
    }
}

/// The pass-through guard forwards a copy of an id with other signature bytes only after
/// checking that signature: the SDK would skip its own check for an id it has verified.
#[tokio::test]
async fn passthrough_guard_checks_other_signature_bytes() {
    let evs = signed_events(2, 1, 8_000);
    let forged = same_id_other_sig(&evs);
    let sdk = "0123456789abcdef0123456789abcdef";
    let f = |e: &Event| ev_frame(sdk, e);
    let frames = vec![
        f(&evs[0]),    // first copy of id 0: forwarded, the SDK verifies it
        f(&forged[0]), // other bytes under id 0: checked here, invalid, dropped
        f(&evs[0]),    // the bytes forwarded before: forwarded
        f(&forged[1]), // first copy of id 1: forwarded, the SDK verifies (and rejects) it
        f(&evs[1]),    // other bytes under id 1: checked here, valid, forwarded
        f(&forged[1]), // no longer the bytes on record: checked here, invalid, dropped
    ];
    let tap = BatchVerifyTransport::default();
    let (fwd, _) = run(&tap, &[], frames.clone()).await;
    assert_eq!(fwd, vec![f(&evs[0]), f(&evs[0]), f(&forged[1]), f(&evs[1])]);
    let st = tap.stats();
    assert_eq!(st.passthrough_signatures_checked, 3);
    assert_eq!(st.passthrough_invalid_signature, 2);
    assert_eq!(st.passthrough_invalid_id, 0);
    assert_eq!(st.signatures_checked, 0);

    assert_unguarded_forwards_all(frames).await;
}

/// Random mixes of valid and forged events, every batch size from 1 to 9: the tap delivers
/// exactly the events `Event::verify` accepts, in order, each before the EOSE.
#[tokio::test]
async fn verdicts_match_event_verify_for_every_batch_size() {
    let n = 40 * scale();
    let evs = signed_events(n, 5, 6_000);
    let mut wire = Vec::with_capacity(n);
    for (i, e) in evs.iter().enumerate() {
        wire.push(match i % 5 {
            1 => bad_id(e.clone()),
            3 => bad_sig(e.clone(), &evs[(i + 1) % n]),
            _ => e.clone(),
        });
    }
    let expected: Vec<EventId> = wire
        .iter()
        .filter(|e| e.verify().is_ok())
        .map(|e| e.id)
        .collect();
    for batch_size in 1..=9 {
        let opts = TapOptions {
            batch_size,
            ..TapOptions::default()
        };
        let tap = BatchVerifyTransport::with_options(DefaultWebsocketTransport, opts);
        let mut frames: Vec<String> = wire.iter().map(|e| ev_frame("bv:d", e)).collect();
        frames.push(eose_frame("bv:d"));
        let (_, got) = run(&tap, &["bv:d"], frames).await;
        assert_eq!(event_ids(&got), expected, "batch size {batch_size}");
        assert!(matches!(got[expected.len()], TapEvent::Eose { .. }));
        let st = tap.stats();
        assert_eq!(
            st.invalid_id + st.invalid_signature + st.delivered,
            n as u64,
            "batch size {batch_size}"
        );
    }
}

/// Found by `fuzz/fuzz_targets/relay_frame.rs`: the tap trimmed frames with `str::trim`, which
/// also strips Unicode spaces (U+00A0, U+2028, ...), and so delivered events from frames that
/// `RelayMessage::from_json` (serde_json) rejects. Only JSON whitespace is skipped now: such a
/// frame goes to the SDK as it came (which reports it), and nothing is delivered from it.
#[tokio::test]
async fn frames_with_non_json_whitespace_are_not_ours() {
    let evs = signed_events(2, 1, 3_000);
    let plain = ev_frame("bv:a", &evs[0]);
    assert!(RelayMessage::from_json(format!("\n {plain}\t\r")).is_ok());
    // Before the frame: not an EVENT frame to the scanner, forwarded to the SDK as it came.
    // After the head (at the end, or before the closing bracket): the tap's frame, but
    // unparsable, so dropped and counted.
    let odd = [
        (format!("\u{a0}{plain}"), true),
        (format!("{plain}\u{2028}"), false),
        (format!("\u{c}{plain}"), true),
        (format!("{}\u{a0}]", &plain[..plain.len() - 1]), false),
    ];
    for (frame, forwarded) in odd {
        assert!(RelayMessage::from_json(&frame).is_err(), "{frame:?}");
        let tap = BatchVerifyTransport::default();
        let frames = vec![frame.clone(), format!("\n {plain}\t\r")];
        let (fwd, got) = run(&tap, &["bv:a"], frames).await;
        let want: Vec<String> = if forwarded {
            vec![frame.clone()]
        } else {
            vec![]
        };
        assert_eq!(fwd, want, "{frame:?}");
        assert_eq!(tap.stats().unparsable, u64::from(!forwarded), "{frame:?}");
        // Only the well-formed frame's event is delivered.
        assert_eq!(event_ids(&got), vec![evs[0].id], "{frame:?}");
    }
}

/// Found by fuzz/fuzz_targets/relay_frame.rs: the tap's fast path read an event with an unknown
/// field `"cont":266e04470951` (`Event::from_json` skips unknown fields without reading their
/// numbers) and delivered it, while `RelayMessage::from_json` (serde_json, through a `Value`)
/// rejects the frame: the number is out of an f64's range. Such objects (and unpaired surrogate
/// escapes, and deep nesting, which `Event::from_json` also skips unchecked) now take the SDK's
/// own parse: nothing is delivered from a frame the SDK rejects, and the same extras in a form
/// the SDK accepts still deliver the event.
#[tokio::test]
async fn unknown_fields_are_judged_by_the_sdk_parse() {
    let evs = signed_events(2, 1, 3_100);
    let plain = ev_frame("bv:a", &evs[0]);
    let with = |extra: &str| plain.replacen(r#""bv:a",{"#, &format!(r#""bv:a",{{"x":{extra},"#), 1);
    let deep = format!("{}0{}", "[".repeat(130), "]".repeat(130));
    let rejected = [
        "266e04470951".to_string(),
        "-1E400".to_string(),
        format!("1{}", "0".repeat(400)),
        r#""\ud83d""#.to_string(),
        r#""a\udc00""#.to_string(),
        deep,
    ];
    for extra in &rejected {
        let frame = with(extra);
        assert!(frame.contains(extra.as_str()), "{frame}");
        assert!(RelayMessage::from_json(&frame).is_err(), "{extra}");
        assert!(Event::from_json(&frame[frame.find('{').unwrap()..frame.len() - 1]).is_ok());
        let tap = BatchVerifyTransport::default();
        let (fwd, got) = run(&tap, &["bv:a"], vec![frame.clone(), plain.clone()]).await;
        // Forwarded for the SDK to report, and only the well-formed frame's event delivered.
        assert_eq!(fwd, vec![frame.clone()], "{extra}");
        assert_eq!(event_ids(&got), vec![evs[0].id], "{extra}");
    }
    let accepted = [
        "2.5e3",
        "1e-400",
        r#""\ud83d\ude00""#,
        r#"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[0]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"#,
    ];
    for extra in accepted {
        let frame = with(extra);
        assert!(RelayMessage::from_json(&frame).is_ok(), "{extra}");
        let tap = BatchVerifyTransport::default();
        let (fwd, got) = run(&tap, &["bv:a"], vec![frame.clone()]).await;
        assert!(fwd.is_empty(), "{extra}");
        assert_eq!(event_ids(&got), vec![evs[0].id], "{extra}");
    }
}
