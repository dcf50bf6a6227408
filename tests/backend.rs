//! The backend entry points, on every arm this machine can run: each arm against the
//! group-layer reference (`AffinePoint::lift_x_vartime`, `JacobianPoint::add_affine_vartime`),
//! against `num-bigint`, and the arms against each other (limb for limb: outputs are
//! normalized). Every arm is called directly, so each is tested whatever
//! `NOSTR_VERIFY_BACKEND` says: the IFMA arm, the portable arm (its BMI2/ADX build on an x86-64
//! CPU that has them) and the portable arm's baseline build.

mod common;

use common::bigint::{fe_from as fe, fe_value as big, p, random_fe};

use nostr_verify::arithmetic::field::FieldElement;
use nostr_verify::arithmetic::group::{AffinePoint, JacobianPoint};
#[cfg(not(nostr_verify_field32))]
use nostr_verify::arithmetic::words::WordPoint;
use nostr_verify::backend::{self, Backend};
use nostr_verify::msm::straus;
use num_bigint::BigUint;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Which arms run here. Both on an IFMA machine; says so when IFMA is missing.
fn arms() -> Vec<Backend> {
    let v = Backend::available();
    if !v.contains(&Backend::Ifma) {
        eprintln!("\n*** NOTE: no IFMA on this CPU/build: only the portable arm's builds are tested ***\n");
    }
    if !backend::portable_uses_bmi2() {
        eprintln!(
            "\n*** NOTE: no BMI2/ADX on this CPU: `portable` is the baseline build here ***\n"
        );
    }
    v
}

/// Edge x values: 0, 1, 2, 7, p − 1, p − 2, G.x, the largest limb patterns below p.
fn edge_xs() -> Vec<FieldElement> {
    let p = p();
    let mut v: Vec<FieldElement> = [0u64, 1, 2, 3, 7]
        .iter()
        .map(|&k| FieldElement::from_u64(k))
        .collect();
    v.push(fe(&(&p - 1u8)));
    v.push(fe(&(&p - 2u8)));
    v.push(fe(&(&p - 8u8)));
    v.push(AffinePoint::GENERATOR.x);
    // A lone top bit, and the largest value with limb 4 = 0 (limbs 0..3 all 2^52 − 1).
    v.push(fe(&(BigUint::from(1u8) << 255)));
    v.push(fe(&((BigUint::from(1u8) << 208) - 1u8)));
    v
}

fn check_lift(xs: &[FieldElement]) {
    let p = p();
    let euler = (&p - 1u8) / 2u8;
    let mut results = Vec::new();
    for arm in arms() {
        let mut ys = vec![FieldElement::ONE; xs.len()];
        let mut ok = vec![true; xs.len()];
        arm.lift_x_many_vartime(xs, &mut ys, &mut ok);
        for (i, x) in xs.iter().enumerate() {
            let reference = AffinePoint::lift_x_vartime(x);
            assert_eq!(ok[i], reference.is_some(), "{arm:?}: ok for x = {x:?}");
            let c = (big(x).pow(3) + 7u8) % &p;
            let square = c == BigUint::default() || c.modpow(&euler, &p) == BigUint::from(1u8);
            assert_eq!(ok[i], square, "{arm:?}: residuosity for x = {x:?}");
            if let Some(r) = reference {
                assert_eq!(ys[i], r.y, "{arm:?}: y for x = {x:?}");
                let y = big(&ys[i]);
                assert!(!y.bit(0), "{arm:?}: y must be even");
                assert_eq!(&y * &y % &p, c, "{arm:?}: y² = x³ + 7");
                // Normalized output: the limbs are the canonical ones.
                assert_eq!(
                    ys[i].raw_limbs(),
                    ys[i].to_limbs_normalized(),
                    "{arm:?}: normalized"
                );
            } else {
                assert_eq!(
                    ys[i],
                    FieldElement::ZERO,
                    "{arm:?}: y = 0 where no point exists"
                );
            }
        }
        results.push((arm, ys, ok));
    }
    // Arms agree limb for limb.
    for w in results.windows(2) {
        for i in 0..xs.len() {
            assert_eq!(
                w[0].2[i], w[1].2[i],
                "{:?} vs {:?}: ok[{i}]",
                w[0].0, w[1].0
            );
            assert_eq!(
                w[0].1[i].raw_limbs(),
                w[1].1[i].raw_limbs(),
                "{:?} vs {:?}: y[{i}]",
                w[0].0,
                w[1].0
            );
        }
    }
}

#[test]
fn lift_x_many_all_arms_sizes_and_edges() {
    let mut rng = StdRng::seed_from_u64(0xB1);
    // Sizes around the portable arm's groups of 4, the 8-lane vector and 16-element block,
    // and a large one.
    for n in [
        0usize,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        15,
        16,
        17,
        31,
        33,
        64,
        100 * common::scale(),
    ] {
        let xs: Vec<FieldElement> = (0..n).map(|_| random_fe(&mut rng)).collect();
        check_lift(&xs);
    }
    check_lift(&edge_xs());
    // Edges at every lane position of a block.
    let mut xs = edge_xs();
    xs.extend((0..5).map(|_| random_fe(&mut rng)));
    xs.rotate_left(3);
    check_lift(&xs);
}

#[test]
fn lift_x_many_non_residues_only_and_residues_only() {
    let mut rng = StdRng::seed_from_u64(0xB2);
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    while good.len() < 21 || bad.len() < 21 {
        let x = random_fe(&mut rng);
        if AffinePoint::lift_x_vartime(&x).is_some() {
            good.push(x);
        } else {
            bad.push(x);
        }
    }
    check_lift(&good);
    check_lift(&bad);
}

/// Random points with both y parities (lifted random x).
fn random_points(rng: &mut StdRng, n: usize) -> Vec<AffinePoint> {
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        if let Some(pt) = AffinePoint::lift_x_vartime(&random_fe(rng)) {
            v.push(if rng.gen() { pt } else { neg(&pt) });
        }
    }
    v
}

/// −P with a normalized y (the backend's precondition).
fn neg(pt: &AffinePoint) -> AffinePoint {
    AffinePoint {
        x: pt.x,
        y: pt.y.negate(1).normalize(),
        infinity: false,
    }
}

fn check_adds(a: &[AffinePoint], b: &[AffinePoint]) {
    let p = p();
    let mut results = Vec::new();
    for arm in arms() {
        let mut out = vec![AffinePoint::IDENTITY; a.len()];
        arm.add_affine_pairs_vartime(a, b, &mut out);
        // The same through a reused scratch: after a call on other pairs of the same size,
        // and on a prefix after the whole (stale contents must not matter).
        // Each call reports exactly its own pairs with equal x, in ascending order.
        let equal: Vec<u32> = (0..a.len() as u32)
            .filter(|&i| a[i as usize].x == b[i as usize].x)
            .collect();
        let mut scratch = backend::PairScratch::default();
        assert!(scratch.equal_x().is_empty());
        let mut reused = vec![AffinePoint::IDENTITY; a.len()];
        arm.add_affine_pairs_in_vartime(b, a, &mut reused, &mut scratch);
        assert_eq!(scratch.equal_x(), equal, "{arm:?}: equal x, swapped");
        arm.add_affine_pairs_in_vartime(a, b, &mut reused, &mut scratch);
        assert_eq!(reused, out, "{arm:?}: reused scratch");
        assert_eq!(scratch.equal_x(), equal, "{arm:?}: equal x");
        let half = a.len() / 2;
        arm.add_affine_pairs_in_vartime(&a[..half], &b[..half], &mut reused[..half], &mut scratch);
        assert_eq!(
            reused[..half],
            out[..half],
            "{arm:?}: reused scratch, prefix"
        );
        let equal_half: Vec<u32> = equal
            .iter()
            .copied()
            .filter(|&i| (i as usize) < half)
            .collect();
        assert_eq!(scratch.equal_x(), equal_half, "{arm:?}: equal x, prefix");
        // The same pairs picked by index from one array (b first, then a), in reverse order,
        // through the reused scratch.
        let n = a.len();
        let src: Vec<AffinePoint> = b.iter().chain(a).copied().collect();
        let pairs: Vec<[u32; 2]> = (0..n).rev().map(|i| [(n + i) as u32, i as u32]).collect();
        let mut gathered = vec![AffinePoint::IDENTITY; n];
        arm.add_affine_pairs_gather_vartime(&src, &pairs, &mut gathered, &mut scratch);
        gathered.reverse();
        assert_eq!(gathered, out, "{arm:?}: gathered by index");
        let mut equal_rev: Vec<u32> = equal.iter().map(|&i| (n - 1) as u32 - i).collect();
        equal_rev.reverse();
        assert_eq!(scratch.equal_x(), equal_rev, "{arm:?}: equal x, gathered");
        // No pairs: nothing reported, whatever the last call left.
        arm.add_affine_pairs_gather_vartime(&src, &[], &mut [], &mut scratch);
        assert!(scratch.equal_x().is_empty(), "{arm:?}: equal x, no pairs");
        // The same gathered pairs in 4×64-bit words (the portable arms' Pippenger pool; not
        // under field32, which has no word pool).
        #[cfg(not(nostr_verify_field32))]
        words_match(arm, &src, &pairs, &out, &equal_rev, &mut scratch);
        for i in 0..a.len() {
            let o = &out[i];
            assert!(!o.infinity, "{arm:?}: infinity flag");
            assert_eq!(
                o.x.raw_limbs(),
                o.x.to_limbs_normalized(),
                "{arm:?}: x normalized"
            );
            assert_eq!(
                o.y.raw_limbs(),
                o.y.to_limbs_normalized(),
                "{arm:?}: y normalized"
            );
            let (x1, y1, x2, y2) = (big(&a[i].x), big(&a[i].y), big(&b[i].x), big(&b[i].y));
            if x1 == x2 {
                // Precondition violated: λ = 0 on every arm, the rest unaffected.
                let ex = (&p * 2u8 - &x1 - &x2) % &p;
                let ey = (&p - &y1) % &p;
                assert_eq!((big(&o.x), big(&o.y)), (ex, ey), "{arm:?}: Δx = 0 pair {i}");
                continue;
            }
            let reference = JacobianPoint::from_affine(&a[i])
                .add_affine_vartime(&b[i])
                .to_affine_vartime();
            assert_eq!(*o, reference, "{arm:?}: pair {i} vs the group layer");
            let dx = (&x2 + &p - &x1) % &p;
            let dy = (&y2 + &p - &y1) % &p;
            let l = dy * dx.modpow(&(&p - 2u8), &p) % &p;
            let x3 = (&l * &l + &p * 2u8 - &x1 - &x2) % &p;
            let y3 = (&l * ((&x1 + &p - &x3) % &p) + &p - &y1) % &p;
            assert_eq!(
                (big(&o.x), big(&o.y)),
                (x3, y3),
                "{arm:?}: pair {i} vs num-bigint"
            );
        }
        results.push((arm, out));
    }
    for w in results.windows(2) {
        for i in 0..a.len() {
            let (u, v) = (&w[0].1[i], &w[1].1[i]);
            assert_eq!(
                (u.x.raw_limbs(), u.y.raw_limbs()),
                (v.x.raw_limbs(), v.y.raw_limbs()),
                "{:?} vs {:?}: pair {i}",
                w[0].0,
                w[1].0
            );
        }
    }
}

/// The same gathered pairs in 4×64-bit words: the same sums as `out`, canonical, and the same
/// equal-x report.
#[cfg(not(nostr_verify_field32))]
fn words_match(
    arm: Backend,
    src: &[AffinePoint],
    pairs: &[[u32; 2]],
    out: &[AffinePoint],
    equal_rev: &[u32],
    scratch: &mut backend::PairScratch,
) {
    let n = pairs.len();
    let words: Vec<WordPoint> = src.iter().map(WordPoint::from_affine).collect();
    let mut gathered_words = vec![WordPoint::IDENTITY; n];
    arm.add_word_pairs_gather_vartime(&words, pairs, &mut gathered_words, scratch);
    assert_eq!(scratch.equal_x(), equal_rev, "{arm:?}: equal x, words");
    gathered_words.reverse();
    for (i, w) in gathered_words.iter().enumerate() {
        assert!(!w.is_identity(), "{arm:?}: words, pair {i} is the identity");
        assert_eq!(w.to_affine(), out[i], "{arm:?}: words, pair {i}");
        assert_eq!(
            WordPoint::from_affine(&out[i]),
            *w,
            "{arm:?}: words canonical, pair {i}"
        );
    }
    arm.add_word_pairs_gather_vartime(&words, &[], &mut [], scratch);
    assert!(
        scratch.equal_x().is_empty(),
        "{arm:?}: equal x, words, no pairs"
    );
}

#[test]
fn add_affine_pairs_all_arms_sizes() {
    let mut rng = StdRng::seed_from_u64(0xB3);
    for n in [
        0usize,
        1,
        2,
        7,
        8,
        9,
        15,
        16,
        17,
        63,
        65,
        200 * common::scale(),
    ] {
        let a = random_points(&mut rng, n);
        let b = random_points(&mut rng, n);
        check_adds(&a, &b);
    }
}

#[test]
fn add_affine_pairs_edge_inputs() {
    let mut rng = StdRng::seed_from_u64(0xB4);
    let g = AffinePoint::GENERATOR;
    let g2 = JacobianPoint::from_affine(&g)
        .double_vartime()
        .to_affine_vartime();
    let mut a = vec![g, g2, g, neg(&g2)];
    let mut b = vec![g2, g, neg(&g2), g];
    // P + (−P) and P + P violate the precondition: they must not poison the other lanes.
    let q = random_points(&mut rng, 2);
    a.extend([q[0], q[1]]);
    b.extend([neg(&q[0]), q[1]]);
    // Points whose x is p − 1 or small, if on the curve, next to random ones.
    for x in [
        FieldElement::from_u64(1),
        FieldElement::from_u64(2),
        fe(&(p() - 1u8)),
    ] {
        if let Some(pt) = AffinePoint::lift_x_vartime(&x) {
            a.push(pt);
            b.push(random_points(&mut rng, 1)[0]);
        }
    }
    let extra = 19 - a.len() % 8;
    a.extend(random_points(&mut rng, extra));
    b.extend(random_points(&mut rng, extra));
    check_adds(&a, &b);
    // The same pairs rotated, so each edge case visits other lanes.
    for r in 1..8 {
        let (mut ar, mut br) = (a.clone(), b.clone());
        ar.rotate_left(r);
        br.rotate_left(r);
        check_adds(&ar, &br);
    }
}

#[test]
fn selection_follows_the_environment() {
    let var = std::env::var("NOSTR_VERIFY_BACKEND").unwrap_or_default();
    let expect = if var.eq_ignore_ascii_case("portable") {
        Backend::Portable
    } else if var.eq_ignore_ascii_case("portable-baseline") {
        Backend::PortableBaseline
    } else if Backend::Ifma.is_available() {
        Backend::Ifma
    } else {
        Backend::Portable
    };
    assert_eq!(backend::selected(), expect);
    assert!(Backend::Portable.is_available());
    assert!(Backend::PortableBaseline.is_available());
    assert_eq!(
        Backend::available()[Backend::available().len() - 2..],
        [Backend::Portable, Backend::PortableBaseline]
    );
    assert_eq!(Backend::Ifma.name(), "ifma");
    assert_eq!(Backend::Portable.name(), "portable");
    assert_eq!(Backend::PortableBaseline.name(), "portable-baseline");
    // The free functions run the selected arm: same results as calling it directly.
    let mut rng = StdRng::seed_from_u64(0xB5);
    let xs: Vec<FieldElement> = (0..19).map(|_| random_fe(&mut rng)).collect();
    let (mut y1, mut y2) = (vec![FieldElement::ZERO; 19], vec![FieldElement::ZERO; 19]);
    let (mut o1, mut o2) = (vec![false; 19], vec![false; 19]);
    backend::lift_x_many_vartime(&xs, &mut y1, &mut o1);
    expect.lift_x_many_vartime(&xs, &mut y2, &mut o2);
    assert_eq!((&y1, &o1), (&y2, &o2));
    let a = random_points(&mut rng, 11);
    let b = random_points(&mut rng, 11);
    let (mut r1, mut r2) = (
        vec![AffinePoint::IDENTITY; 11],
        vec![AffinePoint::IDENTITY; 11],
    );
    backend::add_affine_pairs_vartime(&a, &b, &mut r1);
    expect.add_affine_pairs_vartime(&a, &b, &mut r2);
    assert_eq!(r1, r2);
    // The runtime override (for benchmarks), then back to the detected choice. Only this test
    // in this binary uses the free functions, so the switch cannot disturb another test.
    for b in Backend::ALL {
        let got = backend::set_selected(b);
        assert_eq!(
            got,
            if b.is_available() {
                b
            } else {
                Backend::Portable
            }
        );
        assert_eq!(backend::selected(), got);
        backend::lift_x_many_vartime(&xs, &mut y1, &mut o1);
        assert_eq!((&y1, &o1), (&y2, &o2));
    }
    assert_eq!(backend::set_selected(expect), expect);
}

#[test]
#[should_panic(expected = "lift_x_many_vartime")]
fn lift_length_mismatch_panics() {
    let xs = [FieldElement::ONE; 3];
    let mut ys = [FieldElement::ZERO; 2];
    let mut ok = [false; 3];
    backend::lift_x_many_vartime(&xs, &mut ys, &mut ok);
}

#[test]
#[should_panic(expected = "add_affine_pairs_vartime")]
fn add_length_mismatch_panics() {
    let a = [AffinePoint::GENERATOR; 2];
    let mut out = [AffinePoint::IDENTITY; 2];
    backend::add_affine_pairs_vartime(&a, &a[..1], &mut out);
}

#[test]
fn add_affine_pairs_gather_rejects_an_index_out_of_range() {
    // On every arm, an index one past the end in the first pair, in a later vector, and in the
    // last pair of a short tail.
    let mut rng = StdRng::seed_from_u64(0xB7);
    let src = random_points(&mut rng, 21);
    for arm in arms() {
        for bad in [0usize, 13, 19] {
            let mut pairs: Vec<[u32; 2]> = (0..20).map(|i| [i as u32, (i + 1) as u32]).collect();
            pairs[bad][bad % 2] = src.len() as u32;
            let mut out = vec![AffinePoint::IDENTITY; pairs.len()];
            let mut scratch = backend::PairScratch::default();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                arm.add_affine_pairs_gather_vartime(&src, &pairs, &mut out, &mut scratch)
            }));
            assert!(
                r.is_err(),
                "{arm:?}: index out of range in pair {bad} accepted"
            );
            #[cfg(not(nostr_verify_field32))]
            words_reject(arm, &src, &pairs, bad, &mut scratch);
        }
    }
}

/// The word-point gather rejects the same out-of-range index.
#[cfg(not(nostr_verify_field32))]
fn words_reject(
    arm: Backend,
    src: &[AffinePoint],
    pairs: &[[u32; 2]],
    bad: usize,
    scratch: &mut backend::PairScratch,
) {
    let words: Vec<WordPoint> = src.iter().map(WordPoint::from_affine).collect();
    let mut out = vec![WordPoint::IDENTITY; pairs.len()];
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        arm.add_word_pairs_gather_vartime(&words, pairs, &mut out, scratch)
    }));
    assert!(
        r.is_err(),
        "{arm:?}: words, index out of range in pair {bad} accepted"
    );
}

#[test]
#[cfg(not(nostr_verify_field32))]
fn word_points_convert_negate_and_compare() {
    let mut rng = StdRng::seed_from_u64(0xB8);
    let mut pts = random_points(&mut rng, 50);
    // Points whose x is small or p − 1, if on the curve.
    for x in [
        FieldElement::from_u64(1),
        FieldElement::from_u64(2),
        fe(&(p() - 1u8)),
    ] {
        if let Some(pt) = AffinePoint::lift_x_vartime(&x) {
            pts.extend([pt, neg(&pt)]);
        }
    }
    for pt in &pts {
        let w = WordPoint::from_affine(pt);
        assert!(!w.is_identity());
        assert_eq!(w.to_affine(), *pt, "round trip");
        let n = w.neg();
        assert_eq!(n.to_affine(), neg(pt), "negation");
        assert_eq!(n.neg(), w, "double negation");
        assert!(w.same_x(&n) && !w.same_y(&n));
        assert!(w.same_y(&w) && w.same_x(&w));
        // A coordinate with a limb out of the normal range (magnitude 2) converts to the same
        // canonical words.
        let odd = AffinePoint {
            x: pt.x.add(&FieldElement::ZERO),
            y: pt.y.negate(1).negate(2),
            infinity: false,
        };
        assert_eq!(WordPoint::from_affine(&odd), w, "any magnitude");
    }
    for (a, b) in pts.iter().zip(pts.iter().skip(1)) {
        let (wa, wb) = (WordPoint::from_affine(a), WordPoint::from_affine(b));
        assert_eq!(wa.same_x(&wb), a.x == b.x);
        assert_eq!(wa.same_y(&wb), a.y == b.y);
    }
    let id = WordPoint::from_affine(&AffinePoint::IDENTITY);
    assert!(id.is_identity() && id == WordPoint::IDENTITY);
    assert!(id.to_affine().infinity);
    assert!(id.neg().is_identity());
}

/// What a build for another architecture (aarch64 in CI, under qemu) runs: the portable arm's
/// baseline build, with no x86 arm compiled in or detected.
#[cfg(not(target_arch = "x86_64"))]
#[test]
fn other_architectures_run_the_portable_baseline() {
    assert_eq!(
        Backend::available(),
        [Backend::Portable, Backend::PortableBaseline]
    );
    assert!(!Backend::Ifma.is_available());
    assert!(!backend::portable_uses_bmi2());
}

/// On aarch64 `sha2` (built with its `asm` feature there) uses the ARMv8 SHA-256 instructions
/// when the CPU reports them. CI sets `NOSTR_VERIFY_EXPECT_ARM_SHA=1` under qemu, whose
/// default CPU has them, so that the SHA-256 results the other suites check come from that path.
#[cfg(target_arch = "aarch64")]
#[test]
fn aarch64_sha_instructions_are_detected_when_expected() {
    let sha2 = std::arch::is_aarch64_feature_detected!("sha2");
    eprintln!("aarch64: CPU reports the SHA-256 instructions: {sha2}");
    if std::env::var("NOSTR_VERIFY_EXPECT_ARM_SHA").is_ok_and(|v| v == "1") {
        assert!(
            sha2,
            "NOSTR_VERIFY_EXPECT_ARM_SHA=1 but the CPU does not report `sha2`"
        );
    }
}

/// `Σ kᵢ·Pᵢ` by libsecp256k1 (`mul_tweak` and `combine_keys`), compressed; `None` for the
/// identity: the reference for Strauss's kernel.
fn libsecp_sum(points: &[AffinePoint], ks: &[u128]) -> Option<[u8; 33]> {
    use secp256k1::{PublicKey, Scalar, Secp256k1};
    let secp = Secp256k1::verification_only();
    let terms: Vec<PublicKey> = points
        .iter()
        .zip(ks)
        .map(|(p, &k)| {
            let mut be = [0u8; 32];
            be[16..].copy_from_slice(&k.to_be_bytes());
            let pk = PublicKey::from_slice(&p.to_compressed()).expect("a curve point");
            pk.mul_tweak(&secp, &Scalar::from_be_bytes(be).expect("k < n"))
                .expect("k ≠ 0")
        })
        .collect();
    let refs: Vec<&PublicKey> = terms.iter().collect();
    // combine_keys fails exactly when the sum is the identity.
    PublicKey::combine_keys(&refs).ok().map(|s| s.serialize())
}

/// A digit too large for the table (it would read the next point's), an even digit, a column
/// at or above `bits`, or a point index past the end, and the same for G's digits: each
/// panics on every arm, before any arithmetic. The largest digits allowed pass.
#[test]
fn straus_kernel_rejects_digits_out_of_range() {
    use nostr_verify::arithmetic::group::g128;
    use nostr_verify::msm::straus::StrausDigit;
    let pts = random_points(&mut StdRng::seed_from_u64(0x5742_a056), 2);
    // (a G digit?, point, bit, digit): the points' digits (2 points, width 4: |d| < 8) and
    // G's (points 0 and 1 only, width 8: |d| < 128), with `bits` 5.
    let bad = [
        (false, 0u32, 0u8, 9i8),
        (false, 0, 0, -9),
        (false, 0, 0, 2),
        (false, 0, 5, 1),
        (false, 2, 0, 1),
        (true, 2, 0, 1),
        (true, 0, 0, 2),
        (true, 1, 5, 1),
        (true, 0, 0, -128),
    ];
    for arm in arms() {
        for (g, point, bit, digit) in bad {
            let d = [StrausDigit { point, bit, digit }];
            let (digits, g_digits): (&[StrausDigit], &[StrausDigit]) =
                if g { (&[], &d) } else { (&d, &[]) };
            let r = std::panic::catch_unwind(|| {
                let mut s = straus::StrausScratch::default();
                straus::digits_vartime(arm, &pts, digits, g_digits, 5, 4, &mut s)
            });
            assert!(r.is_err(), "{arm:?}: {d:?} accepted (a G digit: {g})");
        }
        // The largest digits allowed pass.
        let mut s = straus::StrausScratch::default();
        let ok = [
            StrausDigit {
                point: 1,
                bit: 4,
                digit: 7,
            },
            StrausDigit {
                point: 0,
                bit: 0,
                digit: -7,
            },
        ];
        let got = straus::digits_vartime(arm, &pts, &ok, &[], 5, 4, &mut s).to_affine_vartime();
        assert_eq!(
            (!got.is_infinity()).then(|| got.to_compressed()),
            // −7·P₀ + 7·2⁴·P₁ (libsecp256k1's scalars are non-negative: −P₀ instead).
            libsecp_sum(&[neg(&pts[0]), pts[1]], &[7, 112]),
            "{arm:?}"
        );
        // And G's largest digits: −127·G + 127·2⁴·(2^128·G).
        let g_ok = [
            StrausDigit {
                point: 1,
                bit: 4,
                digit: 127,
            },
            StrausDigit {
                point: 0,
                bit: 0,
                digit: -127,
            },
        ];
        let got = straus::digits_vartime(arm, &pts, &[], &g_ok, 5, 4, &mut s).to_affine_vartime();
        assert_eq!(
            (!got.is_infinity()).then(|| got.to_compressed()),
            libsecp_sum(&[neg(&AffinePoint::GENERATOR), *g128()], &[127, 127 << 4]),
            "{arm:?}"
        );
    }
}

/// The non-zero width-`w` NAF digits of every scalar (point i for `ks[i]`), in point order, and
/// the number of columns they use: the input of `msm::straus::digits_vartime`.
fn digit_list(ks: &[u128], w: usize) -> (Vec<nostr_verify::msm::straus::StrausDigit>, usize) {
    use nostr_verify::msm::recode::wnaf_u128_digits;
    use nostr_verify::msm::straus::StrausDigit;
    let mut digits = Vec::new();
    let mut bits = 0;
    for (point, &k) in ks.iter().enumerate() {
        bits = bits.max(wnaf_u128_digits(k, w, |bit, digit| {
            digits.push(StrausDigit {
                point: point as u32,
                bit: bit as u8,
                digit,
            })
        }));
    }
    (digits, bits)
}

/// Strauss's kernel (batch-affine tables and column sums, the doubling chain in the kernels'
/// words) on every arm, against libsecp256k1: every window width the MSM could ask for, point
/// counts around the portable Strauss bounds, repeated points, a point
/// beside its negation (sums that cancel: the identity), pairs with equal x in the first and
/// in a later round of the column sums, λ-images beside their source (tables by β), G and
/// 2^128·G through the fixed tables, and small and zero-free scalars.
#[test]
fn straus_kernel_all_arms_match_libsecp256k1() {
    use nostr_verify::arithmetic::group::g128;
    use nostr_verify::msm::straus::STRAUSS_G_WIDTH;
    let mut rng = StdRng::seed_from_u64(0x5742_a055);
    let mut cases: Vec<(Vec<AffinePoint>, Vec<u128>)> = Vec::new();
    for n in [1usize, 2, 7, 24, 55, 56, 57, 64, 65] {
        let pts = random_points(&mut rng, n);
        let ks = (0..n)
            .map(|i| match i % 5 {
                3 => rng.gen_range(1..40u128),
                _ => rng.gen::<u128>() | 1,
            })
            .collect();
        cases.push((pts, ks));
    }
    // P and −P with equal scalars (the sum is the identity), and P twice.
    let q = random_points(&mut rng, 2);
    let k: u128 = rng.gen();
    cases.push((vec![q[0], neg(&q[0])], vec![k, k]));
    cases.push((vec![q[0], q[1], q[0]], vec![k, 3, k ^ 1]));
    // Equal x in a later round of the column sums: the first round adds (q0, q1) twice, the
    // second meets their sum twice (a doubling), or beside its negation (the identity).
    cases.push((vec![q[0], q[1], q[0], q[1]], vec![k; 4]));
    cases.push((vec![q[0], q[1], neg(&q[0]), neg(&q[1])], vec![k; 4]));
    // λ-images beside their source (the kernel takes their tables from the point before by
    // β): ±λP after P, λ²P after λP (a chain), and a λ-image that does not follow its source.
    let l1 = q[0].endomorphism();
    let l2 = l1.endomorphism();
    let k2: u128 = rng.gen();
    cases.push((
        vec![q[0], l1, l2, neg(&l2.endomorphism())],
        vec![k, k2, 5, k ^ k2],
    ));
    cases.push((
        vec![q[1], q[0], neg(&l1), q[1].endomorphism()],
        vec![k2, k, 3, k],
    ));
    cases.push((vec![l1, q[1], q[0]], vec![k, k2, k]));
    for (pts, ks) in &cases {
        let want = libsecp_sum(pts, ks);
        // The same terms plus G and 2^128·G (the kernel's fixed tables, width-8 digits).
        let kg: [u128; 2] = [rng.gen(), rng.gen::<u128>() >> rng.gen_range(0..128)];
        let (g_digits, g_bits) = digit_list(&kg, STRAUSS_G_WIDTH);
        let want_g = {
            let mut p = pts.clone();
            p.extend([AffinePoint::GENERATOR, *g128()]);
            let mut k = ks.clone();
            k.extend(kg);
            libsecp_sum(&p, &k)
        };
        for w in 2..=7usize {
            let (digits, bits) = digit_list(ks, w);
            // The digits in another order (column by column, the points of a column
            // reversed): the kernel sorts them by column and the sum does not change.
            let mut shuffled = digits.clone();
            shuffled.sort_by_key(|d| (d.bit, core::cmp::Reverse(d.point)));
            for arm in arms() {
                let mut s = straus::StrausScratch::default();
                // Twice with one scratch (the buffers are reused, not appended to), the
                // second time with the digits reordered.
                for d in [&digits, &shuffled] {
                    let got = straus::digits_vartime(arm, pts, d, &[], bits, 1 << (w - 2), &mut s)
                        .to_affine_vartime();
                    let got = (!got.is_infinity()).then(|| got.to_compressed());
                    assert_eq!(got, want, "{arm:?} n {} w {w}", pts.len());
                }
                let got = straus::digits_vartime(
                    arm,
                    pts,
                    &digits,
                    &g_digits,
                    bits.max(g_bits),
                    1 << (w - 2),
                    &mut s,
                )
                .to_affine_vartime();
                let got = (!got.is_infinity()).then(|| got.to_compressed());
                assert_eq!(got, want_g, "{arm:?} n {} w {w}, with G", pts.len());
            }
        }
    }
}
