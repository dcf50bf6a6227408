//! Mutated gift wraps, seals and rumors through `nostr_verify::nip59`, against nostr's
//! `UnwrappedGift::from_gift_wrap` (see docs/fuzzing.md).
//!
//! Keys are fixed and the NIP-44 conversation keys are derived once, so an input costs at most
//! two signatures per wrap (the layers it rebuilt) and no key derivation on the harness side.
//! Each input builds up to four wraps; per wrap one byte picks what is mutated:
//! the wrap's JSON (byte edits, then `Event::from_json`), the seal's JSON or the rumor's JSON
//! (byte edits, then re-encrypted and re-signed outward), raw seal or rumor plaintext, raw wrap
//! ciphertext, a seal signed by another sender than the rumor's author, a wrap for another
//! recipient, or nothing. The whole list goes through `unwrap_gift_wraps` (one call, default
//! options) and through a long-lived `GiftUnwrapper` on two threads with `always_split` (its
//! sender-key cache persists across inputs); each result must equal nostr's: the same `Ok`
//! value, or an error of the same kind and message.
#![no_main]

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use nostr::nips::nip44::v2::{encrypt_to_bytes_with_nonce, ConversationKey};
use nostr::prelude::*;
use nostr_verify::nip59::{unwrap_gift_wraps, GiftUnwrapper, UnwrapOptions};
use std::cell::RefCell;
use std::sync::LazyLock;

struct Fixed {
    recipient: Keys,
    other_recipient: Keys,
    senders: [Keys; 2],
    one_time: [Keys; 2],
    /// ck(one_time[i], recipient), ck(one_time[i], other_recipient).
    wrap_ck: [[ConversationKey; 2]; 2],
    /// ck(senders[j], recipient).
    seal_ck: [ConversationKey; 2],
    rumor: [String; 2],
    seal: [String; 2],
    wrap: [String; 2],
}

fn keys(hex_tail: u8) -> Keys {
    Keys::parse(&format!(
        "6b911fd37cdf5c81d4c0adb1ab7fa822ed253ab0ad9aa18d77257c88b29b71{hex_tail:02x}"
    ))
    .expect("key")
}

fn encrypt(ck: &ConversationKey, plaintext: &[u8], nonce: [u8; 32]) -> String {
    match encrypt_to_bytes_with_nonce(ck, plaintext, nonce) {
        Ok(bytes) => STANDARD.encode(bytes),
        // Empty or over-long plaintext: NIP-44 refuses it; an invalid payload then.
        Err(_) => "AA==".to_owned(),
    }
}

fn sign(keys: &Keys, kind: Kind, content: String, tags: Vec<Tag>) -> Event {
    EventBuilder::new(kind, content)
        .tags(tags)
        .custom_created_at(Timestamp::from_secs(1_700_000_000))
        .finalize(keys)
        .expect("sign")
}

static FIXED: LazyLock<Fixed> = LazyLock::new(|| {
    let recipient = keys(0x01);
    let other_recipient = keys(0x02);
    let senders = [keys(0x10), keys(0x11)];
    let one_time = [keys(0x20), keys(0x21)];
    let ck = |a: &Keys, b: &Keys| {
        ConversationKey::derive(a.secret_key(), &b.public_key()).expect("derive")
    };
    let wrap_ck = [
        [
            ck(&one_time[0], &recipient),
            ck(&one_time[0], &other_recipient),
        ],
        [
            ck(&one_time[1], &recipient),
            ck(&one_time[1], &other_recipient),
        ],
    ];
    let seal_ck = [ck(&senders[0], &recipient), ck(&senders[1], &recipient)];
    let rumor = [0, 1].map(|j| {
        let mut r = EventBuilder::new(Kind::PrivateDirectMessage, format!("hi {j} \u{1f600}"))
            .tag(Tag::public_key(recipient.public_key()))
            .custom_created_at(Timestamp::from_secs(1_700_000_000))
            .finalize_unsigned(senders[j].public_key());
        r.ensure_id();
        r.as_json()
    });
    let seal = [0, 1].map(|j| {
        sign(
            &senders[j],
            Kind::Seal,
            encrypt(&seal_ck[j], rumor[j].as_bytes(), [j as u8 + 1; 32]),
            vec![],
        )
        .as_json()
    });
    let wrap = [0, 1].map(|i| {
        sign(
            &one_time[i],
            Kind::GiftWrap,
            encrypt(&wrap_ck[i][0], seal[i].as_bytes(), [i as u8 + 7; 32]),
            vec![Tag::public_key(recipient.public_key())],
        )
        .as_json()
    });
    Fixed {
        recipient,
        other_recipient,
        senders,
        one_time,
        wrap_ck,
        seal_ck,
        rumor,
        seal,
        wrap,
    }
});

thread_local! {
    static UNWRAPPER: RefCell<GiftUnwrapper> = RefCell::new(GiftUnwrapper::with_options(
        FIXED.recipient.clone(),
        UnwrapOptions::default().threads(2).always_split(true),
    ));
}

fn take<'a>(data: &mut &'a [u8], n: usize) -> &'a [u8] {
    let n = n.min(data.len());
    let (a, b) = data.split_at(n);
    *data = b;
    a
}

fn byte(data: &mut &[u8]) -> u8 {
    take(data, 1).first().copied().unwrap_or(0)
}

/// Up to 8 byte edits (position, value) on `text`; `None` if the result is not UTF-8.
fn edit(text: &str, data: &mut &[u8]) -> Option<String> {
    let mut bytes = text.as_bytes().to_vec();
    let n = byte(data) % 8;
    for _ in 0..n {
        let pos = u16::from_le_bytes([byte(data), byte(data)]) as usize;
        let v = byte(data);
        if bytes.is_empty() {
            break;
        }
        match v {
            // 0xfe / 0xff: delete / duplicate the byte (lengths change too).
            0xfe => {
                bytes.remove(pos % bytes.len());
            }
            0xff => {
                let p = pos % bytes.len();
                let b = bytes[p];
                bytes.insert(p, b);
            }
            _ => {
                let p = pos % bytes.len();
                bytes[p] = v;
            }
        }
    }
    String::from_utf8(bytes).ok()
}

/// Seal plaintext -> a wrap around it by one-time key `i` for recipient `to` (0: ours).
fn wrap_seal(f: &Fixed, i: usize, to: usize, seal: &[u8], nonce: u8) -> Event {
    let recipient = if to == 0 {
        &f.recipient
    } else {
        &f.other_recipient
    };
    sign(
        &f.one_time[i],
        Kind::GiftWrap,
        encrypt(&f.wrap_ck[i][to], seal, [nonce; 32]),
        vec![Tag::public_key(recipient.public_key())],
    )
}

/// Rumor plaintext -> a seal by sender `j`, encrypted for us.
fn seal_rumor(f: &Fixed, j: usize, rumor: &[u8], nonce: u8) -> String {
    sign(
        &f.senders[j],
        Kind::Seal,
        encrypt(&f.seal_ck[j], rumor, [nonce; 32]),
        vec![],
    )
    .as_json()
}

fn one_wrap(f: &Fixed, data: &mut &[u8]) -> Option<Event> {
    let op = byte(data);
    let i = (op >> 4) as usize & 1;
    let j = (op >> 5) as usize & 1;
    let nonce = byte(data);
    Some(match op % 10 {
        0 => Event::from_json(edit(&f.wrap[i], data)?).ok()?,
        1 => wrap_seal(f, i, 0, edit(&f.seal[j], data)?.as_bytes(), nonce),
        2 => {
            let seal = seal_rumor(f, j, edit(&f.rumor[j], data)?.as_bytes(), nonce);
            wrap_seal(f, i, 0, seal.as_bytes(), nonce)
        }
        3 => {
            let n = byte(data) as usize;
            wrap_seal(f, i, 0, take(data, n), nonce)
        }
        4 => {
            let n = byte(data) as usize;
            let seal = seal_rumor(f, j, take(data, n), nonce);
            wrap_seal(f, i, 0, seal.as_bytes(), nonce)
        }
        5 => {
            // The seal signed by the other sender around this sender's rumor.
            let seal = seal_rumor(f, 1 - j, f.rumor[j].as_bytes(), nonce);
            wrap_seal(f, i, 0, seal.as_bytes(), nonce)
        }
        6 => wrap_seal(f, i, 1, f.seal[j].as_bytes(), nonce),
        7 => {
            let n = byte(data) as usize;
            let raw = String::from_utf8_lossy(take(data, n)).into_owned();
            sign(&f.one_time[i], Kind::GiftWrap, raw, vec![])
        }
        8 => {
            // A seal with another kind or with tags.
            let seal = sign(
                &f.senders[j],
                Kind::from(u16::from(nonce)),
                encrypt(&f.seal_ck[j], f.rumor[j].as_bytes(), [nonce; 32]),
                if nonce & 1 == 1 {
                    vec![Tag::public_key(f.recipient.public_key())]
                } else {
                    vec![]
                },
            );
            wrap_seal(f, i, 0, seal.as_json().as_bytes(), nonce)
        }
        _ => Event::from_json(&f.wrap[i]).expect("fixed wrap"),
    })
}

fuzz_target!(|input: &[u8]| {
    let f = &*FIXED;
    let mut data = input;
    let count = 1 + byte(&mut data) as usize % 4;
    let wraps: Vec<Event> = (0..count).filter_map(|_| one_wrap(f, &mut data)).collect();
    let theirs: Vec<Result<UnwrappedGift, nostr::error::Error>> = wraps
        .iter()
        .map(|w| UnwrappedGift::from_gift_wrap(&f.recipient, w))
        .collect();
    let check = |ours: Vec<Result<UnwrappedGift, nostr_verify::nip59::Error>>, what: &str| {
        assert_eq!(ours.len(), theirs.len(), "{what}: one result per wrap");
        for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{what} wrap {k}: different Ok values"),
                (Err(a), Err(b)) => {
                    assert_eq!(
                        a.as_nostr(),
                        b,
                        "{what} wrap {k}: different errors ({a} vs {b})"
                    );
                    assert_eq!(a.as_nostr().to_string(), b.to_string(), "{what} wrap {k}");
                }
                (a, b) => panic!("{what} wrap {k}: ours {a:?}, nostr {b:?}"),
            }
        }
    };
    check(unwrap_gift_wraps(&f.recipient, &wraps), "unwrap_gift_wraps");
    if input.first().is_some_and(|b| b & 0x80 != 0) {
        let ours = UNWRAPPER.with(|u| u.borrow_mut().unwrap_gift_wraps(&wraps));
        check(ours, "GiftUnwrapper (2 threads, always_split)");
    }
});
