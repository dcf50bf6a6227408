//! Helpers for the nostr tests: one `Version` trait so every differential test runs against
//! nostr 0.45 and nostr 0.44 alike, JSON-level event construction and mutation. Included by
//! path (`#[path = "common/nostr.rs"] mod nostr_support;`) by the suites that need it, like
//! `sigs.rs`; until issue 49 it was `tests/nostr_support/`.
#![allow(dead_code)]

use nostr_verify::EventView;
use nostr_verify::Verdict;
use rand::{Rng, RngCore};
use secp256k1::{Keypair, Secp256k1, SecretKey};
use serde_json::{json, Value};
use std::path::Path;

/// A nostr release: how to parse an event and what its own `Event::verify` says.
pub trait Version {
    type Event: EventView + Clone + Ord + std::hash::Hash + std::fmt::Debug + Send + 'static;
    const NAME: &'static str;
    fn parse(json: &str) -> Result<Self::Event, String>;
    /// `Event::verify`, cross-checked with `verify_id` / `verify_signature`.
    fn reference(e: &Self::Event) -> Verdict;
    /// The release's own id computation.
    fn reference_id(e: &Self::Event) -> [u8; 32];
    /// The release's `Event::verify` error message, if any.
    fn reference_message(e: &Self::Event) -> Option<String>;
}

/// The verdict `Event::verify`'s message says, cross-checked with `verify_id`.
fn verdict_from(id_ok: bool, msg: Option<String>) -> Verdict {
    let v = match msg.as_deref() {
        None => Verdict::Valid,
        Some("Invalid event ID") => Verdict::InvalidId,
        Some(_) => Verdict::InvalidSignature,
    };
    assert_eq!(
        id_ok,
        v != Verdict::InvalidId,
        "Event::verify disagrees with verify_id"
    );
    match (&v, msg.as_deref()) {
        (Verdict::Valid, None)
        | (Verdict::InvalidId, Some("Invalid event ID"))
        | (Verdict::InvalidSignature, Some("Invalid signature")) => v,
        other => panic!("Event::verify disagrees with verify_id/verify_signature: {other:?}"),
    }
}

pub struct V045;

impl Version for V045 {
    type Event = nostr::event::Event;
    const NAME: &'static str = "nostr 0.45";
    fn parse(json: &str) -> Result<Self::Event, String> {
        nostr::event::Event::from_json(json).map_err(|e| e.to_string())
    }
    fn reference(e: &Self::Event) -> Verdict {
        verdict_from(e.verify_id(), Self::reference_message(e))
    }
    fn reference_id(e: &Self::Event) -> [u8; 32] {
        nostr::event::EventId::compute(&e.pubkey, &e.created_at, &e.kind, &e.tags, &e.content)
            .to_bytes()
    }
    fn reference_message(e: &Self::Event) -> Option<String> {
        e.verify().err().map(|e| e.to_string())
    }
}

#[cfg(feature = "nostr-0-44")]
pub struct V044;

#[cfg(feature = "nostr-0-44")]
impl Version for V044 {
    type Event = nostr044::Event;
    const NAME: &'static str = "nostr 0.44";
    fn parse(json: &str) -> Result<Self::Event, String> {
        use nostr044::JsonUtil;
        nostr044::Event::from_json(json).map_err(|e| e.to_string())
    }
    fn reference(e: &Self::Event) -> Verdict {
        verdict_from(e.verify_id(), Self::reference_message(e))
    }
    fn reference_id(e: &Self::Event) -> [u8; 32] {
        nostr044::EventId::new(&e.pubkey, &e.created_at, &e.kind, &e.tags, &e.content).to_bytes()
    }
    fn reference_message(e: &Self::Event) -> Option<String> {
        e.verify().err().map(|e| e.to_string())
    }
}

/// Lines of a data file (`None`: data missing, test skipped loudly by `data_dir`).
pub fn lines(dir: &Path, name: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("read {name}: {e}"))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `(id_ok, sig_ok)` per line of an `*.index.tsv` file (header skipped), by line number.
pub fn index(dir: &Path, name: &str) -> Vec<(usize, bool, bool)> {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut rows = text.lines();
    let header: Vec<&str> = rows.next().expect("header").split('\t').collect();
    let col = |n: &str| {
        header
            .iter()
            .position(|h| *h == n)
            .unwrap_or_else(|| panic!("column {n}"))
    };
    let (line, id_ok, sig_ok) = (col("line"), col("id_ok"), col("sig_ok"));
    rows.map(|r| {
        let f: Vec<&str> = r.split('\t').collect();
        (
            f[line].parse().expect("line"),
            f[id_ok] == "1",
            f[sig_ok] == "1",
        )
    })
    .collect()
}

/// Signs events built as JSON: the id comes from nostr 0.45's `EventId::compute`.
pub struct Signer {
    secp: Secp256k1<secp256k1::All>,
    pub keypair: Keypair,
}

impl Signer {
    pub fn new(rng: &mut impl RngCore) -> Self {
        let secp = Secp256k1::new();
        let sk = SecretKey::new(rng);
        Signer {
            keypair: Keypair::from_secret_key(&secp, &sk),
            secp,
        }
    }

    pub fn pubkey_hex(&self) -> String {
        hex::encode(self.keypair.x_only_public_key().0.serialize())
    }

    /// A valid event with these fields, as a JSON value.
    pub fn event(&self, created_at: u64, kind: u16, tags: &[Vec<String>], content: &str) -> Value {
        let mut v = json!({
            "id": "00".repeat(32),
            "pubkey": self.pubkey_hex(),
            "created_at": created_at,
            "kind": kind,
            "tags": tags,
            "content": content,
            "sig": "00".repeat(64),
        });
        self.resign(&mut v);
        v
    }

    /// Recomputes the id of `v` (nostr 0.45 reference) and signs it.
    pub fn resign(&self, v: &mut Value) {
        let e = V045::parse(&v.to_string()).expect("constructed event parses");
        let id = V045::reference_id(&e);
        let sig = self.secp.sign_schnorr_no_aux_rand(&id, &self.keypair);
        v["id"] = json!(hex::encode(id));
        v["sig"] = json!(hex::encode(sig.to_byte_array()));
    }
}

/// Every character a JSON string may need escaped, plus the ones it must not escape.
pub fn tricky_strings() -> Vec<String> {
    let mut out: Vec<String> = (0u32..0x20)
        .map(|c| char::from_u32(c).unwrap().to_string())
        .collect();
    out.extend(
        [
            "\u{7f}",
            "\u{2028}",
            "\u{2029}",
            "\"",
            "\\",
            "/",
            "\\/",
            "\\u0000",
            "😀",
            "𝄞",
            "\u{10ffff}",
            "\u{fffd}",
            "é",
            "日本",
            "",
            " ",
            "\u{0}\u{1}\u{1f}\"\\\n\r\t\u{8}\u{c}",
        ]
        .map(str::to_owned),
    );
    out.push((0u32..0x80).map(|c| char::from_u32(c).unwrap()).collect());
    out
}

/// A random string mixing every class of character, `0..max_len` chars.
pub fn random_string(rng: &mut impl Rng, max_len: usize) -> String {
    let n = rng.gen_range(0..max_len);
    (0..n)
        .map(|_| match rng.gen_range(0..8) {
            0 => char::from_u32(rng.gen_range(0..0x20)).unwrap(),
            1 => ['"', '\\', '/', '\u{7f}', '\u{2028}'][rng.gen_range(0..5)],
            2 => char::from_u32(rng.gen_range(0x80..0x800)).unwrap(),
            3 => char::from_u32(rng.gen_range(0x10000..0x110000)).unwrap(),
            4 => loop {
                if let Some(c) = char::from_u32(rng.gen_range(0x800..0x10000)) {
                    break c;
                }
            },
            _ => char::from_u32(rng.gen_range(0x20..0x7f)).unwrap(),
        })
        .collect()
}

/// Flips one random bit of the hex string field `key` (same length, still hex).
pub fn flip_hex_bit(v: &mut Value, key: &str, rng: &mut impl Rng) {
    let mut bytes = hex::decode(v[key].as_str().expect("hex field")).expect("hex");
    let i = rng.gen_range(0..bytes.len());
    bytes[i] ^= 1 << rng.gen_range(0..8);
    v[key] = json!(hex::encode(bytes));
}

/// The kinds of mutation applied to a valid event (JSON level).
pub const MUTATIONS: &[&str] = &[
    "content",
    "content-escape",
    "tags-add",
    "tags-edit",
    "tags-remove",
    "created_at",
    "kind",
    "id",
    "sig",
    "sig-r-p",
    "sig-s-n",
    "pubkey",
    "pubkey-other",
    "id+sig",
    "resigned-wrong-key",
];

/// Applies mutation `m` to a copy of `v`.
pub fn mutate(v: &Value, m: &str, rng: &mut impl Rng, other: &Signer) -> Value {
    let mut v = v.clone();
    match m {
        "content" => {
            let c = v["content"].as_str().unwrap_or("").to_owned() + "x";
            v["content"] = json!(c);
        }
        "content-escape" => {
            let c =
                v["content"].as_str().unwrap_or("").to_owned() + &random_string(rng, 4) + "\u{1}";
            v["content"] = json!(c);
        }
        "tags-add" => v["tags"]
            .as_array_mut()
            .expect("tags")
            .push(json!(["t", random_string(rng, 6)])),
        "tags-edit" => {
            let tags = v["tags"].as_array_mut().expect("tags");
            if let Some(t) = tags.first_mut().and_then(Value::as_array_mut) {
                let s = t[0].as_str().unwrap_or("").to_owned() + "\n";
                t[0] = json!(s);
            } else {
                tags.push(json!(["e"]));
            }
        }
        "tags-remove" => {
            let tags = v["tags"].as_array_mut().expect("tags");
            if tags.pop().is_none() {
                tags.push(json!(["p", ""]));
            }
        }
        "created_at" => v["created_at"] = json!(v["created_at"].as_u64().unwrap() ^ 1),
        "kind" => v["kind"] = json!(v["kind"].as_u64().unwrap() ^ 1),
        "id" => flip_hex_bit(&mut v, "id", rng),
        "sig" => flip_hex_bit(&mut v, "sig", rng),
        "sig-r-p" => {
            let s = v["sig"].as_str().unwrap().to_owned();
            v["sig"] = json!(format!(
                "fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f{}",
                &s[64..]
            ));
        }
        "sig-s-n" => {
            let s = v["sig"].as_str().unwrap().to_owned();
            v["sig"] = json!(format!(
                "{}fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141",
                &s[..64]
            ));
        }
        "pubkey" => flip_hex_bit(&mut v, "pubkey", rng),
        "pubkey-other" => v["pubkey"] = json!(other.pubkey_hex()),
        "id+sig" => {
            flip_hex_bit(&mut v, "id", rng);
            flip_hex_bit(&mut v, "sig", rng);
        }
        "resigned-wrong-key" => {
            // Right id for the claimed pubkey, signature by another key.
            let claimed = v["pubkey"].clone();
            v["pubkey"] = json!(other.pubkey_hex());
            other.resign(&mut v);
            v["pubkey"] = claimed;
            let e = V045::parse(&v.to_string()).expect("parses");
            v["id"] = json!(hex::encode(V045::reference_id(&e)));
        }
        _ => unreachable!("unknown mutation {m}"),
    }
    v
}
