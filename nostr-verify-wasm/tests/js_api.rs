//! The exported JavaScript API inside wasm (node and headless Chromium, `.ci/wasm.sh`), on
//! JavaScript values: `verifySignatures` against libsecp256k1 (compiled into the same module)
//! and its length errors, and `verifyEvents` / `verifyEvent` / `Verifier` on signed events
//! and on every kind of malformed event, with nostr-tools' `verifyEvent` verdicts as the
//! expectation (ids are computed here with the engine's own `JSON.stringify`).

#![cfg(target_arch = "wasm32")]
#![allow(unreachable_pub, missing_docs)]

#[path = "../../tests/common/sigs.rs"]
mod sigs;

use js_sys::{Array, Function, JsString, Object, Reflect, JSON};
use nostr_verify_wasm::{
    bench_libsecp_verify_each, verify_event, verify_events, verify_signatures, JsVerifier,
};
use rand::RngCore;
use secp256k1::{schnorr, Keypair, Secp256k1, XOnlyPublicKey};
use sha2::{Digest, Sha256};
use sigs::{Keys, Owned, ALL_CORRUPTIONS};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn libsecp(pk: &[u8; 32], msg: &[u8; 32], sig: &[u8; 64]) -> bool {
    let secp = Secp256k1::verification_only();
    let Ok(pk) = XOnlyPublicKey::from_byte_array(pk) else {
        return false;
    };
    secp.verify_schnorr(&schnorr::Signature::from_byte_array(*sig), msg, &pk)
        .is_ok()
}

fn set(o: &JsValue, k: &str, v: impl Into<JsValue>) {
    Reflect::set(o, &JsValue::from_str(k), &v.into()).expect("set");
}

fn get(o: &JsValue, k: &str) -> JsValue {
    Reflect::get(o, &JsValue::from_str(k)).expect("get")
}

fn tags(t: &[&[&str]]) -> Array {
    t.iter()
        .map(|tag| tag.iter().map(|s| JsValue::from_str(s)).collect::<Array>())
        .collect()
}

/// A signed event object; the id is the SHA-256 of the engine's
/// `JSON.stringify([0, pubkey, created_at, kind, tags, content])`, as nostr-tools computes it.
fn signed(
    kp: &Keypair,
    pubkey: &str,
    created_at: f64,
    kind: f64,
    t: Array,
    content: JsValue,
) -> Object {
    let ser: Array = [
        JsValue::from(0),
        JsValue::from_str(pubkey),
        JsValue::from(created_at),
        JsValue::from(kind),
        t.clone().into(),
        content.clone(),
    ]
    .iter()
    .collect();
    let json = String::from(JSON::stringify(&ser).expect("stringify"));
    let id: [u8; 32] = Sha256::digest(json.as_bytes()).into();
    let sig = Secp256k1::new().sign_schnorr_no_aux_rand(&id, kp);
    let e = Object::new();
    set(&e, "id", hex::encode(id));
    set(&e, "pubkey", pubkey);
    set(&e, "created_at", created_at);
    set(&e, "kind", kind);
    set(&e, "tags", t);
    set(&e, "content", content);
    set(&e, "sig", hex::encode(sig.to_byte_array()));
    e
}

fn plain(kp: &Keypair, r: &mut impl RngCore, content: &str) -> Object {
    let pk = hex::encode(kp.x_only_public_key().0.serialize());
    let created = f64::from(1_700_000_000 + r.next_u32() % 1_000_000);
    signed(
        kp,
        &pk,
        created,
        1.0,
        tags(&[&["t", "nostr"]]),
        content.into(),
    )
}

fn with(e: &Object, k: &str, v: impl Into<JsValue>) -> Object {
    let c = Object::assign(&Object::new(), e);
    set(&c, k, v);
    c
}

fn hexstr(o: &JsValue, k: &str) -> String {
    get(o, k).as_string().expect("string field")
}

/// Events of every kind with nostr-tools' verdict on each.
fn cases() -> Vec<(String, JsValue, u8)> {
    let mut r = sigs::rng(21);
    let s = Secp256k1::new();
    let kps: Vec<Keypair> = (0..8).map(|_| Keypair::new(&s, &mut r)).collect();
    let mut out: Vec<(String, JsValue, u8)> = Vec::new();
    let mut add = |what: &str, e: JsValue, want: u8| out.push((what.to_string(), e, want));
    for i in 0..24 {
        add(
            "valid",
            plain(&kps[i % 8], &mut r, &format!("hello {i}")).into(),
            1,
        );
    }
    let kp = &kps[0];
    let pk = hex::encode(kp.x_only_public_key().0.serialize());
    let base = plain(kp, &mut r, "base");
    // Serialization details that must match JSON.stringify and UTF-8 exactly.
    let lone = JsString::from_char_code(&[0x61, 0xd800, 0x62]);
    for (what, content) in [
        (
            "unicode content",
            JsValue::from_str("héllo 🌍 \u{2028} \u{7f}"),
        ),
        (
            "escaped content",
            JsValue::from_str("q\"b\\s/\n\r\t\u{1}\u{1f}"),
        ),
        ("lone surrogate content", lone.into()),
        ("empty content", JsValue::from_str("")),
    ] {
        add(
            what,
            signed(kp, &pk, 1.7e9, 1.0, tags(&[]), content).into(),
            1,
        );
    }
    add(
        "fractional created_at",
        signed(kp, &pk, 1.5, 1.0, tags(&[]), "x".into()).into(),
        1,
    );
    add(
        "huge kind",
        signed(kp, &pk, 1e21, 1e300, tags(&[]), "x".into()).into(),
        1,
    );
    add(
        "NaN kind",
        signed(kp, &pk, 0.0, f64::NAN, tags(&[]), "x".into()).into(),
        1,
    );
    add(
        "many tags",
        signed(
            kp,
            &pk,
            1.0,
            3.0,
            tags(&[&["p", &pk, "wss://r", ""], &[], &["e"]]),
            "x".into(),
        )
        .into(),
        1,
    );
    add("extra field", with(&base, "relay", "wss://x").into(), 1);
    let sig = hexstr(&base, "sig");
    add(
        "uppercase sig",
        with(&base, "sig", sig.to_uppercase()).into(),
        1,
    );
    // Signature-level failures: libsecp256k1's verdict on (pubkey, id, sig).
    let id_b: [u8; 32] = hex::decode(hexstr(&base, "id"))
        .unwrap()
        .try_into()
        .unwrap();
    let pk_b: [u8; 32] = hex::decode(&pk).unwrap().try_into().unwrap();
    for bit in [0usize, 255, 256, 511] {
        let mut sb: [u8; 64] = hex::decode(&sig).unwrap().try_into().unwrap();
        sb[bit / 8] ^= 1 << (bit % 8);
        let want = u8::from(libsecp(&pk_b, &id_b, &sb));
        add(
            &format!("sig bit {bit}"),
            with(&base, "sig", hex::encode(sb)).into(),
            want,
        );
    }
    let other = plain(&kps[1], &mut r, "other");
    add(
        "sig of another event",
        with(&base, "sig", hexstr(&other, "sig")).into(),
        0,
    );
    add(
        "id of another event",
        with(&base, "id", hexstr(&other, "id")).into(),
        0,
    );
    add(
        "uppercase id",
        with(&base, "id", hexstr(&base, "id").to_uppercase()).into(),
        0,
    );
    add("content changed", with(&base, "content", "based").into(), 0);
    add(
        "pubkey of another author",
        with(&base, "pubkey", hexstr(&other, "pubkey")).into(),
        0,
    );
    // Malformed: nostr-tools' getEventHash throws, verifyEvent returns false.
    let upper_pk = pk.to_uppercase();
    add(
        "uppercase pubkey (signed as such)",
        signed(kp, &upper_pk, 1.0, 1.0, tags(&[]), "x".into()).into(),
        0,
    );
    add("kind as string", with(&base, "kind", "1").into(), 0);
    add(
        "created_at as string",
        with(&base, "created_at", "1").into(),
        0,
    );
    add("content as number", with(&base, "content", 5).into(), 0);
    add("tags not an array", with(&base, "tags", "t").into(), 0);
    add(
        "tag not an array",
        with(&base, "tags", Array::of1(&"t".into())).into(),
        0,
    );
    add(
        "tag with a number",
        with(&base, "tags", Array::of1(&Array::of1(&5.into()))).into(),
        0,
    );
    add("short pubkey", with(&base, "pubkey", &pk[..62]).into(), 0);
    add("short sig", with(&base, "sig", &sig[..126]).into(), 0);
    add(
        "sig with a non-hex digit",
        with(&base, "sig", format!("z{}", &sig[1..])).into(),
        0,
    );
    // Of the hex fields the packer checks only the lengths (in UTF-16 units); the digits are
    // the Rust side's, non-ASCII ones included (U+0161's low byte is `a`, a digit).
    for (what, key) in [
        (
            "pubkey with a non-hex digit (signed as such)",
            format!("g{}", &pk[1..]),
        ),
        (
            "pubkey with a non-ASCII digit (signed as such)",
            format!("{}é", &pk[..63]),
        ),
        (
            "pubkey with U+0161 (signed as such)",
            format!("\u{161}{}", &pk[1..]),
        ),
    ] {
        add(
            what,
            signed(kp, &key, 1.0, 1.0, tags(&[]), "x".into()).into(),
            0,
        );
    }
    let id = hexstr(&base, "id");
    add(
        "id with a non-ASCII digit",
        with(&base, "id", format!("{}é", &id[..63])).into(),
        0,
    );
    add(
        "sig with U+0161",
        with(&base, "sig", format!("\u{161}{}", &sig[1..])).into(),
        0,
    );
    add(
        "sig with an emoji (two UTF-16 units)",
        with(&base, "sig", format!("{}🌍", &sig[..126])).into(),
        0,
    );
    let mut units: Vec<u16> = sig.encode_utf16().collect();
    units[127] = 0xdc00;
    add(
        "sig with a lone surrogate",
        with(&base, "sig", JsString::from_char_code(&units)).into(),
        0,
    );
    add("sig as number", with(&base, "sig", 7).into(), 0);
    add("id as number", with(&base, "id", 7).into(), 0);
    let missing = Object::assign(&Object::new(), &base);
    Reflect::delete_property(&missing, &"sig".into()).unwrap();
    add("sig missing", missing.into(), 0);
    let bare = Object::create(&JsValue::NULL.unchecked_into());
    Object::assign(&bare, &base);
    add("object without prototype", bare.into(), 0);
    let throwing = Object::assign(&Object::new(), &base);
    let desc = Object::new();
    set(
        &desc,
        "get",
        Function::new_no_args("throw new Error('getter')"),
    );
    Reflect::define_property(&throwing, &"content".into(), &desc).unwrap();
    add("throwing getter", throwing.into(), 0);
    for (what, v) in [
        ("null", JsValue::NULL),
        ("undefined", JsValue::UNDEFINED),
        ("number", JsValue::from(42)),
        ("string", JsValue::from_str("{}")),
        ("array", Array::new().into()),
    ] {
        add(what, v, 0);
    }
    // More valid ones after the malformed: none is lost.
    for i in 0..8 {
        add("valid after", plain(&kps[i], &mut r, "after").into(), 1);
    }
    out
}

#[wasm_bindgen_test]
fn events_in_one_call_alone_and_with_a_verifier() {
    let cases = cases();
    let arr: Array = cases.iter().map(|(_, e, _)| e.clone()).collect();
    let want: Vec<u8> = cases.iter().map(|c| c.2).collect();
    let got = verify_events(&arr).expect("an array");
    for (i, ((what, _, w), g)) in cases.iter().zip(&got).enumerate() {
        assert_eq!(g, w, "verifyEvents: event {i} ({what})");
    }
    assert_eq!(got.len(), want.len());
    let mut v = JsVerifier::new(None, None);
    assert_eq!(
        v.verify_events(&arr).expect("an array"),
        want,
        "Verifier.verifyEvents"
    );
    for (what, e, w) in &cases {
        assert_eq!(u8::from(verify_event(e)), *w, "verifyEvent ({what})");
        assert_eq!(
            u8::from(v.verify_event(e)),
            *w,
            "Verifier.verifyEvent ({what})"
        );
    }
}

#[wasm_bindgen_test]
fn events_argument_not_an_array_is_a_type_error() {
    for v in [JsValue::NULL, JsValue::from(3), Object::new().into()] {
        let err = verify_events(&v).expect_err("accepted a non-array");
        assert!(err.is_instance_of::<js_sys::TypeError>(), "{err:?}");
        let msg = get(&err, "message").as_string().unwrap();
        assert!(msg.starts_with("verifyEvents: expected an array"), "{msg}");
    }
    assert!(!verify_event(&JsValue::NULL));
}

fn flat(b: &[Owned]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    (
        b.iter().flat_map(|o| o.pk).collect(),
        b.iter().flat_map(|o| o.msg).collect(),
        b.iter().flat_map(|o| o.sig).collect(),
    )
}

#[wasm_bindgen_test]
fn signatures_against_libsecp256k1_and_length_errors() {
    let mut r = sigs::rng(22);
    let mut v = JsVerifier::new(Some(64), None);
    for n in [1usize, 4, 33, 130] {
        let mut b = sigs::batch(&mut r, n, Keys::Eight);
        for _ in 0..(n / 10 + 1) {
            let i = (r.next_u32() as usize) % n;
            let c = ALL_CORRUPTIONS[(r.next_u32() as usize) % ALL_CORRUPTIONS.len()];
            sigs::corrupt(&mut r, &mut b, i, c);
        }
        let want: Vec<u8> = b
            .iter()
            .map(|o| u8::from(libsecp(&o.pk, &o.msg, &o.sig)))
            .collect();
        let (p, m, s) = flat(&b);
        assert_eq!(
            verify_signatures(&p, &m, &s).ok().unwrap(),
            want,
            "verifySignatures n={n}"
        );
        assert_eq!(
            v.verify_signatures(&p, &m, &s).ok().unwrap(),
            want,
            "Verifier n={n}"
        );
    }
    let err: JsValue = verify_signatures(&[0; 32], &[0; 32], &[0; 65])
        .err()
        .unwrap()
        .into();
    assert!(err.is_instance_of::<js_sys::Error>());
    let msg = get(&err, "message").as_string().unwrap();
    assert!(msg.contains("got 32, 32 and 65 bytes"), "{msg}");
}

#[wasm_bindgen_test]
fn verifier_keeps_its_key_cache_across_calls() {
    let mut r = sigs::rng(23);
    let s = Secp256k1::new();
    let kps: Vec<Keypair> = (0..8).map(|_| Keypair::new(&s, &mut r)).collect();
    let batch = |r: &mut rand::rngs::StdRng| -> Array {
        (0..32)
            .map(|i| JsValue::from(plain(&kps[i % 8], r, "c")))
            .collect()
    };
    let stat = |v: &JsVerifier, k: &str| get(&v.stats(), k).as_f64().unwrap();
    let mut v = JsVerifier::new(None, None);
    assert_eq!(v.verify_events(&batch(&mut r)).unwrap(), vec![1; 32]);
    let (misses, hits) = (stat(&v, "keyCacheMisses"), stat(&v, "keyCacheHits"));
    assert!(misses >= 8.0, "8 new keys, {misses} misses");
    assert_eq!(v.verify_events(&batch(&mut r)).unwrap(), vec![1; 32]);
    assert_eq!(
        stat(&v, "keyCacheMisses"),
        misses,
        "the second call missed a cached key"
    );
    assert!(
        stat(&v, "keyCacheHits") > hits,
        "no cache hit on the second call"
    );
    assert!(stat(&v, "batchesHeld") >= 2.0);
}

#[wasm_bindgen_test]
fn bench_baseline_libsecp_each_equals_verify_signatures() {
    let mut r = sigs::rng(24);
    let mut invalid = 0;
    for n in [1usize, 7, 64, 130] {
        for keys in [Keys::Eight, Keys::Distinct] {
            let mut b = sigs::batch(&mut r, n, keys);
            let (p, m, s) = flat(&b);
            let each = bench_libsecp_verify_each(&p, &m, &s).ok().unwrap();
            assert_eq!(each, vec![1; n], "valid n={n} {keys:?}");
            assert_eq!(verify_signatures(&p, &m, &s).ok().unwrap(), each);
            // Every corruption at least once over the run, several per batch.
            for k in 0..(n / 8 + 2) {
                let i = (r.next_u32() as usize) % n;
                let c = ALL_CORRUPTIONS[(k + n) % ALL_CORRUPTIONS.len()];
                sigs::corrupt(&mut r, &mut b, i, c);
            }
            let (p, m, s) = flat(&b);
            let each = bench_libsecp_verify_each(&p, &m, &s).ok().unwrap();
            let want: Vec<u8> = b
                .iter()
                .map(|o| u8::from(libsecp(&o.pk, &o.msg, &o.sig)))
                .collect();
            assert_eq!(each, want, "mutated n={n} {keys:?}: against libsecp256k1");
            assert_eq!(
                verify_signatures(&p, &m, &s).ok().unwrap(),
                each,
                "mutated n={n} {keys:?}: against verifySignatures"
            );
            invalid += each.iter().filter(|&&g| g == 0).count();
        }
    }
    assert!(invalid >= 8, "only {invalid} invalid signatures made");
    assert!(bench_libsecp_verify_each(&[], &[], &[])
        .ok()
        .unwrap()
        .is_empty());
    let err: JsValue = bench_libsecp_verify_each(&[0; 32], &[0; 31], &[0; 64])
        .err()
        .unwrap()
        .into();
    let msg = get(&err, "message").as_string().unwrap();
    assert!(msg.contains("got 32, 31 and 64 bytes"), "{msg}");
}
