//! A NIP-17 inbox with `GiftUnwrapper` (feature `nip59`, on by default): open every gift wrap
//! addressed to you in one call, keep the senders' conversation keys for the next call, and
//! drop what does not open, with the reason.
//!
//! ```text
//! cargo run --example inbox
//! ```
//!
//! The wraps here are made on the spot by three senders (a real client fetches kind-1059 events
//! from its inbox relays); one is damaged in transit and one is addressed to someone else.

use nostr::event::{EventBuilder, FinalizeEvent, FinalizeUnsignedEvent, Kind, Tag};
use nostr::key::Keys;
use nostr::nips::nip59::GiftWrapBuilder;
use nostr_verify::nip59::GiftUnwrapper;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let me = Keys::generate();
    let someone_else = Keys::generate();
    let senders: Vec<Keys> = (0..3).map(|_| Keys::generate()).collect();

    let mut wraps = Vec::new();
    for i in 0..12 {
        let sender = &senders[i % 3];
        let to = if i == 9 { &someone_else } else { &me };
        let rumor = EventBuilder::new(Kind::PrivateDirectMessage, format!("message {i}"))
            .tags([Tag::public_key(to.public_key())])
            .finalize_unsigned(sender.public_key());
        wraps.push(GiftWrapBuilder::new(to.public_key(), rumor).finalize(sender)?);
    }
    wraps[5].content.pop(); // damaged in transit

    // Keep one per account: it holds the senders' conversation keys (zeroized when evicted and
    // on drop), so the next batch from the same senders skips their key derivation.
    let mut inbox = GiftUnwrapper::new(me);
    let mut opened = 0;
    for (i, result) in inbox.unwrap_gift_wraps(&wraps).iter().enumerate() {
        match result {
            Ok(gift) => {
                opened += 1;
                println!("{i}: from {}: {}", gift.sender.to_hex(), gift.rumor.content);
            }
            // `e` prints the layer that failed, then nostr's own message; `e.step()` gives
            // that layer as a value, `e.as_nostr()` the error `from_gift_wrap` returns.
            Err(e) => println!("{i}: dropped: {e}"),
        }
    }
    assert_eq!(opened, 10);

    // A later batch from the same senders: their conversation keys come from the cache.
    let rumor = EventBuilder::new(Kind::PrivateDirectMessage, "one more")
        .finalize_unsigned(senders[0].public_key());
    let later = GiftWrapBuilder::new(inbox.public_key(), rumor).finalize(&senders[0])?;
    let again = inbox.unwrap_gift_wraps(&[later]);
    println!(
        "later: {}",
        again[0].as_ref().map_err(|e| e.to_string())?.rumor.content
    );
    Ok(())
}
