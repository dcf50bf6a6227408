//! Preparing a batch: grouping by key, duplicates, pre-checks, the shared key cache, the
//! lifts of nonces and cold keys, the challenges, and the weights, on one thread or two
//! (one fork/join: each thread stages one half).

use super::equation::Threads;
use super::work::{BatchKey, Prepared};
use super::{weights, Verifier, TWO_THREADS_MIN_LIFTS};
use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::AffinePoint;
use crate::arithmetic::scalar::Scalar;
use crate::backend;
use crate::bip340::{challenge_hashes, SigRef};
use crate::key_cache::{CachedKey, SharedKeyCache};
use crate::spawn::try_spawn_scoped;

/// Whether two byte arrays (of a multiple of 8 bytes) are equal, compared as 64-bit words
/// with no early exit: inlined, where `==` on arrays calls `memcmp`.
#[inline]
fn eq_words<const N: usize>(a: &[u8; N], b: &[u8; N]) -> bool {
    const { assert!(N % 8 == 0) };
    a.chunks_exact(8)
        .zip(b.chunks_exact(8))
        .fold(0u64, |d, (x, y)| {
            let x = u64::from_ne_bytes(x.try_into().unwrap_or_default());
            let y = u64::from_ne_bytes(y.try_into().unwrap_or_default());
            d | (x ^ y)
        })
        == 0
}

/// The two 32-byte halves of a 64-byte signature: `r` and `s`.
fn halves(sig: &[u8; 64]) -> (&[u8; 32], &[u8; 32]) {
    let (r, s) = sig.split_at(32);
    (
        r.try_into().unwrap_or(&[0xff; 32]),
        s.try_into().unwrap_or(&[0xff; 32]),
    )
}

/// One half of a batch's per-signature work, run by one thread or two (one half each):
/// for each entry of `prep` (whose nonce x goes to the same index of `xs`), parses r and s
/// (r ≥ p or s ≥ n leaves it unparsed: `false` for that signature alone) and sets the
/// challenge `eᵢ`; lifts all of `xs` (which may hold cold keys after the nonces); sets `Rᵢ`.
/// Returns the digest of the half's transcript, `digest(eᵢ) ‖ sᵢ` of each parsed entry in
/// order (the unreduced challenge digest commits to `r`, the key and the message; see
/// [`transcript_digest`]).
fn stage(
    prep: &mut [Prepared],
    xs: &mut [FieldElement],
    ys: &mut [FieldElement],
    lifted: &mut [bool],
    sigs: &[SigRef<'_>],
) -> [u8; 32] {
    // Parse; then every parsed entry's challenge in one call (in vector lanes on CPUs without
    // SHA instructions, see `backend::sha`); then the transcript in entry order.
    let mut msgs: Vec<[u8; 96]> = Vec::with_capacity(prep.len());
    for (p, x) in prep.iter_mut().zip(xs.iter_mut()) {
        let sig = &sigs[p.idx as usize];
        let (r_bytes, s_bytes) = halves(sig.sig);
        let (Some(r), Some(s)) = (
            FieldElement::from_bytes(r_bytes),
            Scalar::from_bytes_checked(s_bytes),
        ) else {
            continue;
        };
        let mut m = [0u8; 96];
        m[..32].copy_from_slice(r_bytes);
        m[32..64].copy_from_slice(sig.pubkey);
        m[64..].copy_from_slice(sig.msg);
        msgs.push(m);
        *x = r;
        p.parsed = true;
        p.s = s;
    }
    let mut es = vec![[0u8; 32]; msgs.len()];
    challenge_hashes(&msgs, &mut es);
    let mut transcript = Vec::with_capacity(64 * es.len());
    for (p, e) in prep.iter_mut().filter(|p| p.parsed).zip(&es) {
        let (_, s_bytes) = halves(sigs[p.idx as usize].sig);
        transcript.extend_from_slice(e);
        transcript.extend_from_slice(s_bytes);
        p.e = Scalar::from_bytes_reduced(e);
    }
    backend::lift_x_many_vartime(xs, ys, lifted);
    for ((p, (x, y)), &ok) in prep
        .iter_mut()
        .zip(xs.iter().zip(ys.iter()))
        .zip(lifted.iter())
    {
        if p.parsed && ok {
            p.r = AffinePoint {
                x: *x,
                y: *y,
                infinity: false,
            };
        }
    }
    transcript_digest(&transcript)
}

/// Parts a long transcript is hashed in (see [`transcript_digest`]). Fixed, so that the
/// weights do not depend on the SHA-256 path.
const TRANSCRIPT_PARTS: usize = 4;

/// Transcripts of fewer entries are hashed whole (see [`transcript_digest`]).
const TRANSCRIPT_SPLIT_MIN: usize = 64;

/// The digest of a staging transcript (64-byte entries). From [`TRANSCRIPT_SPLIT_MIN`] entries
/// on: its entries split into [`TRANSCRIPT_PARTS`] consecutive runs of equal count (the last
/// ones shorter or empty), each run's SHA-256 computed in one call (side by side in vector
/// lanes where the SHA-256 path has them, instead of one serial hash: a compression per
/// signature), then the SHA-256 of those digests in order. Below, the SHA-256 of the whole
/// transcript (the three extra compressions would cost more than the lanes save). Either way
/// a hash of a shape fixed by the entry count: a collision needs a SHA-256 collision, so the
/// digest commits to every entry and their order as one hash would.
fn transcript_digest(transcript: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    let entries = transcript.len() / 64;
    if entries < TRANSCRIPT_SPLIT_MIN {
        return sha2::Sha256::digest(transcript).into();
    }
    let per = entries.div_ceil(TRANSCRIPT_PARTS) * 64;
    let parts: [&[u8]; TRANSCRIPT_PARTS] = core::array::from_fn(|k| {
        let start = (k * per).min(transcript.len());
        &transcript[start..(start + per).min(transcript.len())]
    });
    let mut digests = [[0u8; 32]; TRANSCRIPT_PARTS];
    crate::backend::sha::compute_ids(&parts, &mut digests);
    sha2::Sha256::digest(digests.as_flattened()).into()
}

impl Verifier {
    /// Parses, pre-checks, lifts, hashes and weighs `sigs` into `self.work.prep` (the ones that
    /// pass the pre-checks, grouped by key). Returns how many distinct signatures there are.
    pub(super) fn prepare(&mut self, sigs: &[SigRef<'_>], threads: Threads) -> usize {
        let w = &mut self.work;
        w.order.clear();
        w.dup_of.clear();
        w.dup_of.resize(sigs.len(), u32::MAX);
        w.keys.clear();
        w.prep.clear();
        w.xs.clear();
        // At most one entry each per signature: reserved once, so that a fresh verifier's
        // buffers do not grow (and copy themselves) push by push.
        w.order.reserve(sigs.len());
        w.prep.reserve(sigs.len());
        w.xs.reserve(sigs.len());
        // Group by key (and put identical signatures next to each other): sort on a prefix of
        // the key and of r. Keys whose prefixes collide may form several groups, which is
        // correct, only slower.
        for (i, s) in sigs.iter().enumerate() {
            let kp = u64::from_be_bytes(s.pubkey[..8].try_into().unwrap_or_default());
            let rp = u64::from_be_bytes(s.sig[..8].try_into().unwrap_or_default());
            w.order.push((((kp as u128) << 64) | rp as u128, i as u32));
        }
        w.order.sort_unstable();
        // Whole inputs are compared only where the prefixes match (identical signatures, keys
        // shared); elsewhere the prefixes already tell them apart.
        let mut unique = 0;
        let mut prev: Option<(usize, u128)> = None;
        let mut rep: usize = 0;
        for oi in 0..w.order.len() {
            let (prefix, i) = w.order[oi];
            let i = i as usize;
            let s = &sigs[i];
            let same_key = match prev {
                Some((p, pp)) if (pp >> 64) == (prefix >> 64) => {
                    let q = &sigs[p];
                    if pp == prefix
                        && eq_words(q.sig, s.sig)
                        && eq_words(q.msg, s.msg)
                        && eq_words(q.pubkey, s.pubkey)
                    {
                        w.dup_of[i] = rep as u32;
                        continue;
                    }
                    eq_words(q.pubkey, s.pubkey)
                }
                _ => false,
            };
            prev = Some((i, prefix));
            rep = i;
            unique += 1;
            if !same_key {
                let point = self.cache.get(s.pubkey).copied();
                let invalid = match point {
                    Some(_) => {
                        self.stats.key_hits += 1;
                        false
                    }
                    None => {
                        self.stats.key_misses += 1;
                        FieldElement::from_bytes(s.pubkey).is_none()
                    }
                };
                w.keys.push(BatchKey {
                    pk: *s.pubkey,
                    point,
                    invalid,
                });
            }
            let key = w.keys.len() - 1;
            if w.keys[key].invalid {
                continue;
            }
            // r and s are parsed later, with the lifts (see `stage`).
            w.xs.push(FieldElement::ZERO);
            w.prep.push(Prepared {
                idx: i as u32,
                key: key as u32,
                parsed: false,
                r: AffinePoint::IDENTITY,
                a: 0,
                s: Scalar::ZERO,
                e: Scalar::ZERO,
            });
        }
        // Keys missing here may be in the shared cache: one read lock for all of them.
        if let Some(shared) = &self.shared {
            if w.keys.iter().any(|k| k.point.is_none() && !k.invalid) {
                let found = shared.read();
                for k in w.keys.iter_mut() {
                    if k.point.is_none() && !k.invalid {
                        if let Some(p) = found.peek(&k.pk) {
                            let c = CachedKey::new(*p);
                            self.cache.insert(&k.pk, c);
                            k.point = Some(c);
                            self.stats.shared_cache_hits += 1;
                        }
                    }
                }
            }
        }
        // Lift every nonce and every cold key in one call.
        let nr = w.xs.len();
        for k in &w.keys {
            if k.point.is_none() && !k.invalid {
                // from_bytes succeeded above.
                w.xs.push(FieldElement::from_bytes(&k.pk).unwrap_or(FieldElement::ZERO));
            }
        }
        w.ys.clear();
        w.ys.resize(w.xs.len(), FieldElement::ZERO);
        w.lifted.clear();
        w.lifted.resize(w.xs.len(), false);
        // Parsing, challenges, transcript digests and lifts in two halves (see `stage`): the
        // nonces of prep[..half] with xs[..half], then the other nonces with the rest of xs
        // (the cold keys at its end). `half` splits the lifts evenly; each thread takes one
        // half when there are two.
        let half = (w.xs.len() / 2).min(nr);
        // The weights: a seed committing to the secret, the counter and every input (the
        // digests cover each parsed signature's challenge digest and s, including the few
        // dropped below, which only adds inputs), then 128-bit weights from
        // SHA-256(seed ‖ pair index) over the entries in this order (before the dropped ones
        // are removed); a₁ = 1. The equation multiplies each weight into s and e.
        self.counter += 1;
        // Two threads: one fork/join for staging. Each thread stages its half; the helper
        // returns its digest through `join` (a blocking wait, no handover, no spinning), and
        // this thread weighs the whole batch (one SHA-256 compression per two signatures).
        let staged: Option<([u8; 32], [u8; 32])> =
            if threads == Threads::Two && w.xs.len() >= TWO_THREADS_MIN_LIFTS {
                let (xs0, xs1) = w.xs.split_at_mut(half);
                let (ys0, ys1) = w.ys.split_at_mut(half);
                let (ok0, ok1) = w.lifted.split_at_mut(half);
                let (prep0, prep1) = w.prep.split_at_mut(half);
                std::thread::scope(|scope| {
                    // The OS may refuse a thread: then everything is done below, on this one.
                    let h = try_spawn_scoped(scope, move || stage(prep1, xs1, ys1, ok1, sigs))?;
                    let d0 = stage(prep0, xs0, ys0, ok0, sigs);
                    h.join().ok().map(|d1| (d0, d1))
                })
            } else {
                None
            };
        // One thread; or no helper thread could be started; or the helper failed, which cannot
        // happen short of a bug, and then everything is redone here (staging is idempotent).
        let (d0, d1) = match staged {
            Some(digests) => digests,
            None => {
                let (xs0, xs1) = w.xs.split_at_mut(half);
                let (ys0, ys1) = w.ys.split_at_mut(half);
                let (ok0, ok1) = w.lifted.split_at_mut(half);
                let (prep0, prep1) = w.prep.split_at_mut(half);
                let d0 = stage(prep0, xs0, ys0, ok0, sigs);
                (d0, stage(prep1, xs1, ys1, ok1, sigs))
            }
        };
        let seed = weights::seed(&self.secret, self.counter, nr, half, (&d0, &d1));
        weights::weigh(&mut w.prep, &seed);
        let mut j = nr;
        let mut to_share = self
            .shared
            .as_ref()
            .filter(|_| w.xs.len() > nr)
            .map(SharedKeyCache::write);
        for k in w.keys.iter_mut() {
            if k.point.is_none() && !k.invalid {
                if w.lifted[j] {
                    let p = AffinePoint {
                        x: w.xs[j],
                        y: w.ys[j],
                        infinity: false,
                    };
                    let c = CachedKey::new(p);
                    self.cache.insert(&k.pk, c);
                    if let Some(shared) = &mut to_share {
                        shared.insert(&k.pk, p);
                    }
                    k.point = Some(c);
                } else {
                    k.invalid = true;
                }
                j += 1;
            }
        }
        drop(to_share);
        // Keep the signatures that parsed and whose nonce and key lifted.
        let mut keep = 0;
        for t in 0..nr {
            let p = &w.prep[t];
            if !p.parsed || !w.lifted[t] || w.keys[p.key as usize].invalid {
                continue;
            }
            if keep != t {
                w.prep[keep] = w.prep[t];
            }
            keep += 1;
        }
        w.prep.truncate(keep);
        unique
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use secp256k1::XOnlyPublicKey;

    #[test]
    fn transcript_digest_shapes_and_sensitivity() {
        use sha2::{Digest, Sha256};
        let entry = |i: usize| -> [u8; 64] { core::array::from_fn(|j| (i * 7 + j * 13) as u8) };
        for entries in [0usize, 1, 63, 64, 65, 67, 130, 257] {
            let t: Vec<u8> = (0..entries).flat_map(entry).collect();
            let got = transcript_digest(&t);
            let want: [u8; 32] = if entries < TRANSCRIPT_SPLIT_MIN {
                Sha256::digest(&t).into()
            } else {
                // Four runs of ceil(entries / 4) entries, their SHA-256s, hashed in order.
                let per = entries.div_ceil(4) * 64;
                let mut h = Sha256::new();
                for k in 0..4 {
                    let a = (k * per).min(t.len());
                    h.update(Sha256::digest(&t[a..(a + per).min(t.len())]));
                }
                h.finalize().into()
            };
            assert_eq!(got, want, "{entries} entries");
            // Any one byte changed, or the entries swapped, changes the digest.
            if entries >= 2 {
                for at in [0, t.len() / 2, t.len() - 1] {
                    let mut u = t.clone();
                    u[at] ^= 1;
                    assert_ne!(transcript_digest(&u), got, "{entries} entries, byte {at}");
                }
                let mut u = t.clone();
                u[..64].copy_from_slice(&entry(1));
                u[64..128].copy_from_slice(&entry(0));
                assert_ne!(transcript_digest(&u), got, "{entries} entries, swapped");
            }
        }
    }

    #[test]
    fn grouping_with_colliding_prefixes_matches_whole_compares() {
        // A second key sharing the first one's 8-byte prefix (a different x that lifts), the
        // first key's signatures repeated under it (same key and r prefixes, different key:
        // not duplicates, and invalid), exact duplicates, and distinct keys.
        let secp = secp256k1::Secp256k1::new();
        let kp = |i: u8| secp256k1::Keypair::from_seckey_slice(&secp, &[i; 32]).expect("key");
        let main = kp(1);
        let pk = main.x_only_public_key().0.serialize();
        let twin = (0..=255u8)
            .map(|t| {
                let mut b = pk;
                b[31] ^= t.wrapping_add(1);
                b
            })
            .find(|b| XOnlyPublicKey::from_byte_array(b).is_ok())
            .expect("a lifting x");
        let mut owned: Vec<([u8; 32], [u8; 32], [u8; 64])> = Vec::new();
        for i in 0..24u8 {
            let msg = [i; 32];
            let sig = secp.sign_schnorr_no_aux_rand(&msg, &main).to_byte_array();
            // Exact duplicates next to each other, and (i % 7 == 0) one after the twin's copy.
            let copies = 1 + usize::from(i % 5 == 0);
            owned.extend(std::iter::repeat_n((pk, msg, sig), copies));
            owned.extend(std::iter::repeat_n((twin, msg, sig), copies));
            if i % 7 == 0 {
                owned.push((pk, msg, sig));
            }
            let other = kp(2 + i % 3);
            let other_sig = secp.sign_schnorr_no_aux_rand(&msg, &other).to_byte_array();
            owned.push((other.x_only_public_key().0.serialize(), msg, other_sig));
        }
        let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
        let mut v = Verifier::with_secret([5; 32]);
        v.prepare(&refs, Threads::One);
        // The twin: whole-array compares along the same order.
        let mut dup_of = vec![u32::MAX; refs.len()];
        let mut keys: Vec<[u8; 32]> = Vec::new();
        let mut groups: Vec<(u32, usize)> = Vec::new();
        let mut prev: Option<usize> = None;
        for &(_, i) in &v.work.order {
            let (i, s) = (i as usize, &refs[i as usize]);
            if let Some(p) = prev {
                let q = &refs[p];
                if q.sig == s.sig && q.msg == s.msg && q.pubkey == s.pubkey {
                    dup_of[i] = groups.last().map_or(0, |g| g.0);
                    continue;
                }
            }
            if prev.is_none_or(|p| refs[p].pubkey != s.pubkey) {
                keys.push(*s.pubkey);
            }
            prev = Some(i);
            groups.push((i as u32, keys.len() - 1));
        }
        assert_eq!(v.work.dup_of, dup_of);
        assert!(dup_of.iter().any(|&d| d != u32::MAX));
        let got_keys: Vec<[u8; 32]> = v.work.keys.iter().map(|k| k.pk).collect();
        assert_eq!(got_keys, keys);
        assert!(keys.contains(&twin));
        let got: Vec<(u32, usize)> = v
            .work
            .prep
            .iter()
            .map(|p| (p.idx, p.key as usize))
            .collect();
        // Every entry parses and lifts (the twin's signatures fail only the equation).
        assert_eq!(got, groups);
        // And the verdicts.
        let want: Vec<bool> = refs.iter().map(crate::verify_one).collect();
        let mut ok = Vec::new();
        assert!(!v.verify_batch(&refs, &mut ok));
        assert_eq!(ok, want);
        assert!(want.iter().filter(|&&b| b).count() > refs.len() / 2);
    }
}
