//! `frames::verify_frames` (the tap worker's Rust reader) against a reference built from other
//! parts: each event's serialization by `serde_json::Value`, hashed by `sha2`, checked by
//! libsecp256k1, on the 300 real events of `tests/data/events-sample.jsonl` (with their
//! expected verdicts from its index) written as relay frames, and on altered copies of them.
//! Natively and inside wasm32 (`.ci/wasm.sh`). That every frame it decides gets the verdict
//! `JSON.parse` + nostr-tools would give, and that it leaves the rest undecided, is tested in
//! JavaScript (`wasm/test/node.test.mjs`, `tap.test.mjs`).

#![allow(unreachable_pub, missing_docs)]

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use nostr_verify::Verifier;
use nostr_verify_wasm::frames::{verify_frames, FrameVerdicts, UNDECIDED};
use nostr_verify_wasm::verdict::{INVALID_ID, INVALID_SIG, MALFORMED, VALID};
use nostr_verify_wasm::SeenSignatures;
use secp256k1::{schnorr, Secp256k1, XOnlyPublicKey};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const SAMPLE: &str = include_str!("../../tests/data/events-sample.jsonl");
const INDEX: &str = include_str!("../../tests/data/events-sample.index.tsv");

/// The reference verdict on an event object.
fn reference(e: &Value) -> u8 {
    let hex_of = |k: &str, n: usize| -> Option<Vec<u8>> {
        let s = e[k].as_str()?;
        (s.len() == 2 * n).then(|| hex::decode(s).ok()).flatten()
    };
    let (Some(id), Some(pk), Some(sig)) =
        (hex_of("id", 32), hex_of("pubkey", 32), hex_of("sig", 64))
    else {
        return MALFORMED;
    };
    if e["id"]
        .as_str()
        .unwrap()
        .bytes()
        .any(|b| b.is_ascii_uppercase())
    {
        return MALFORMED;
    }
    let ser = json!([
        0,
        e["pubkey"],
        e["created_at"],
        e["kind"],
        e["tags"],
        e["content"]
    ]);
    let hash: [u8; 32] = Sha256::digest(serde_json::to_vec(&ser).unwrap()).into();
    if hash[..] != id[..] {
        return INVALID_ID;
    }
    let ok = XOnlyPublicKey::from_byte_array(&pk.try_into().unwrap()).is_ok_and(|pk| {
        Secp256k1::verification_only()
            .verify_schnorr(
                &schnorr::Signature::from_byte_array(sig.try_into().unwrap()),
                &hash,
                &pk,
            )
            .is_ok()
    });
    if ok {
        VALID
    } else {
        INVALID_SIG
    }
}

/// Frames joined as the tap joins them, with UTF-16 ends.
fn joined(frames: &[String]) -> (String, Vec<u32>) {
    let mut s = String::new();
    let mut ends = Vec::new();
    let mut units = 0u32;
    for f in frames {
        s.push_str(f);
        units += f.encode_utf16().count() as u32;
        ends.push(units);
    }
    (s, ends)
}

fn run(v: &mut Verifier, seen: Option<&mut SeenSignatures>, frames: &[String]) -> FrameVerdicts {
    let (s, ends) = joined(frames);
    verify_frames(v, seen, s.as_bytes(), &ends, [0x1234_5678, 0x9abc_def0])
}

fn sample() -> Vec<Value> {
    SAMPLE
        .lines()
        .map(|l| serde_json::from_str(l).expect("sample line"))
        .collect()
}

fn frame(e: &Value) -> String {
    serde_json::to_string(&json!(["EVENT", "sub", e])).unwrap()
}

#[test]
fn real_events_as_frames_get_the_reference_verdicts_and_their_keys() {
    let events = sample();
    assert_eq!(events.len(), 300);
    // The index's expected verdicts (id_ok, sig_ok) agree with the reference.
    for (line, e) in INDEX.lines().skip(1).zip(&events) {
        let cols: Vec<&str> = line.split('\t').collect();
        let want = match (cols[3], cols[4]) {
            ("1", "1") => VALID,
            ("0", _) => INVALID_ID,
            _ => INVALID_SIG,
        };
        assert_eq!(reference(e), want, "index line {}", cols[0]);
    }
    let frames: Vec<String> = events.iter().map(frame).collect();
    let mut v = Verifier::new();
    let got = run(&mut v, None, &frames);
    let keys: Vec<&str> = got.keys.split('\n').collect();
    assert_eq!(keys.len(), events.len());
    for (i, e) in events.iter().enumerate() {
        assert_eq!(got.codes[i], reference(e), "event {i}");
        if got.codes[i] == VALID {
            let key = keys[i];
            assert_eq!(&key[..64], e["id"].as_str().unwrap());
            let (a, b) = key[64..].split_once('.').expect("two numbers");
            assert!(
                u32::from_str_radix(a, 36).is_ok() && u32::from_str_radix(b, 36).is_ok(),
                "{key}"
            );
        } else {
            assert_eq!(keys[i], "");
        }
    }
    assert!(got.codes.iter().filter(|&&c| c == VALID).count() >= 290);
}

#[test]
fn altered_copies_get_the_reference_verdicts() {
    let events = sample();
    let mut frames = Vec::new();
    let mut want = Vec::new();
    for (i, e) in events.iter().enumerate().take(120) {
        let mut e = e.clone();
        match i % 6 {
            0 => e["content"] = json!(format!("{}!", e["content"].as_str().unwrap())),
            1 => {
                let s = e["sig"].as_str().unwrap();
                let d = if s.as_bytes()[70] == b'0' { "1" } else { "0" };
                e["sig"] = json!(format!("{}{d}{}", &s[..70], &s[71..]));
            }
            2 => e["created_at"] = json!(e["created_at"].as_u64().unwrap() + 1),
            3 => e["tags"] = json!([["t", "added"]]),
            4 => e["sig"] = json!(e["sig"].as_str().unwrap().to_uppercase()),
            _ => e["pubkey"] = json!(events[(i + 1) % events.len()]["pubkey"]),
        }
        want.push(reference(&e));
        frames.push(frame(&e));
    }
    let mut v = Verifier::new();
    let got = run(&mut v, None, &frames);
    assert_eq!(got.codes, want);
    assert!(want.contains(&VALID) && want.contains(&INVALID_ID) && want.contains(&INVALID_SIG));
}

#[test]
fn seen_pairs_and_keys_do_not_change_verdicts_across_batches() {
    let frames: Vec<String> = sample().iter().take(64).map(frame).collect();
    let mut v = Verifier::new();
    let mut seen = SeenSignatures::new(1024);
    let first = run(&mut v, Some(&mut seen), &frames);
    let again = run(&mut v, Some(&mut seen), &frames);
    assert_eq!(first, again);
    assert!(seen.len() >= 60);
    // Another tap's seeds: other fingerprints, the same ids.
    let (s, ends) = joined(&frames);
    let other = verify_frames(&mut v, None, s.as_bytes(), &ends, [1, 2]);
    assert_eq!(other.codes, first.codes);
    for (a, b) in first.keys.split('\n').zip(other.keys.split('\n')) {
        assert_eq!(a.get(..64), b.get(..64));
        if !a.is_empty() {
            assert_ne!(a, b);
        }
    }
}

#[test]
fn frames_it_cannot_read_as_json_parse_does_are_left_undecided() {
    let e = &sample()[0];
    let text = serde_json::to_string(e).unwrap();
    let frames = vec![
        format!(r#"["EVENT","s",{text}]"#),
        format!(r#"["EVENT","s",{text},]"#),
        format!(r#"["EVENT",1,{text}]"#),
        r#"["EVENT","s"]"#.to_string(),
        r#"["EVENT","s",[1,2]]"#.to_string(),
        text.replace(r#""kind":"#, r#""kind":1.0,"kind":"#),
        format!(
            r#"["EVENT","s",{}]"#,
            text.replacen('{', r#"{"content":"x","#, 1)
        ),
        format!(
            r#"["EVENT","s",{}]"#,
            text.replacen('{', r#"{"created_at":1.5,"#, 1)
        ),
        format!(
            r#"["EVENT","s",{}]"#,
            text.replacen('{', r#"{"content":"\ud800","#, 1)
        ),
        "not json".to_string(),
        String::new(),
        format!(r#"["EVENT","s",{text}]"#),
    ];
    let mut v = Verifier::new();
    let got = run(&mut v, None, &frames);
    let mut want = vec![UNDECIDED; frames.len()];
    want[0] = VALID;
    want[11] = VALID;
    assert_eq!(got.codes, want);
    assert_eq!(got.keys.split('\n').count(), frames.len());
    // Bytes that are not UTF-8: every frame undecided, one (empty) key each.
    let (s, ends) = joined(&frames);
    let mut bytes = s.into_bytes();
    bytes.insert(3, 0xff);
    let got = verify_frames(&mut v, None, &bytes, &ends, [1, 2]);
    assert_eq!(got.codes, vec![UNDECIDED; frames.len()]);
    assert_eq!(got.keys, "\n".repeat(frames.len() - 1));
}
