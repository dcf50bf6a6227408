//! Every lane kernel against its serial twin (limb for limb), and the twins against
//! `num-bigint`. Skipped, loudly, on CPUs without IFMA.

use super::field8::{self, Fe8, MASK48, MASK52};
use super::{affine, lift, twin, Detected};
use num_bigint::BigUint;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

type Limbs = [u64; 5];

fn cpu() -> Option<Detected> {
    let d = Detected::detect();
    if d.is_none() {
        eprintln!("\n*** SKIPPED: no avx512f+avx512ifma+avx512vl on this CPU ***\n");
    }
    d
}

fn scale() -> usize {
    std::env::var("SECP_DIFF_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1)
}

fn p() -> BigUint {
    (BigUint::from(1u8) << 256) - BigUint::from(0x1_0000_03D1u64)
}

fn big(l: &Limbs) -> BigUint {
    l.iter()
        .rev()
        .fold(BigUint::default(), |acc, &x| (acc << 52) + BigUint::from(x))
}

fn from_big(v: &BigUint) -> Limbs {
    let mut out = [0u64; 5];
    let m = BigUint::from(MASK52);
    for (i, o) in out.iter_mut().enumerate() {
        let d = (v >> (52 * i)) & &m;
        *o = d.iter_u64_digits().next().unwrap_or(0);
    }
    out
}

fn assert_carried(l: &Limbs) {
    assert!(l[..4].iter().all(|&x| x <= MASK52), "{l:x?}");
    assert!(l[4] < 1 << 49, "{l:x?}");
}

fn assert_normalized(l: &Limbs) {
    assert!(
        l[..4].iter().all(|&x| x <= MASK52) && l[4] <= MASK48,
        "{l:x?}"
    );
    assert!(big(l) < p(), "{l:x?}");
}

/// IFMA-ready edge values: zero, one, p − 1, p, p + 1, 2^256 − 1, all limbs 2^52 − 1, and
/// limb patterns that maximise single columns.
fn edge_ready() -> Vec<Limbs> {
    let p = p();
    let mut v = vec![
        [0; 5],
        [1, 0, 0, 0, 0],
        from_big(&(&p - 1u8)),
        from_big(&p),
        from_big(&(&p + 1u8)),
        [MASK52, MASK52, MASK52, MASK52, MASK48],
        [MASK52; 5],
        [0, 0, 0, 0, MASK52],
        [MASK52, 0, 0, 0, 0],
        [0, 0, MASK52, 0, MASK52],
        [MASK52, MASK52, 0, 0, 1 << 48],
    ];
    v.push(from_big(&((BigUint::from(1u8) << 256) - 1u8)));
    v
}

fn random_ready(rng: &mut StdRng) -> Limbs {
    match rng.gen_range(0..4) {
        // Any IFMA-ready limbs.
        0 => core::array::from_fn(|_| rng.gen::<u64>() & MASK52),
        // Carried: the shape mul/sqr/carry produce.
        1 => {
            let mut l: Limbs = core::array::from_fn(|_| rng.gen::<u64>() & MASK52);
            l[4] &= (1 << 49) - 1;
            l
        }
        // Mostly-maximal limbs.
        2 => core::array::from_fn(|_| MASK52 - (rng.gen::<u64>() & 0xF)),
        // Normalized.
        _ => random_normalized(rng),
    }
}

fn random_normalized(rng: &mut StdRng) -> Limbs {
    let bytes: [u8; 32] = rng.gen();
    from_big(&(BigUint::from_bytes_be(&bytes) % p()))
}

fn fe8(l: &[Limbs; 8]) -> Fe8 {
    // SAFETY: only called after `cpu()` returned `Some`, i.e. the features were detected.
    unsafe { Fe8::from_lanes(l) }
}

fn lanes(f: Fe8) -> [Limbs; 8] {
    // SAFETY: only called after `cpu()` returned `Some`, i.e. the features were detected.
    unsafe { f.to_lanes() }
}

/// Inputs for a binary-op test: every pair of edge values, then random ones, in groups of 8.
fn groups(rng: &mut StdRng, random: usize) -> Vec<([Limbs; 8], [Limbs; 8])> {
    let e = edge_ready();
    let mut flat: Vec<(Limbs, Limbs)> = Vec::new();
    for a in &e {
        for b in &e {
            flat.push((*a, *b));
        }
    }
    for _ in 0..random {
        flat.push((random_ready(rng), random_ready(rng)));
    }
    flat.chunks(8)
        .map(|c| {
            let mut a = [[0; 5]; 8];
            let mut b = [[0; 5]; 8];
            for (i, (x, y)) in c.iter().enumerate() {
                a[i] = *x;
                b[i] = *y;
            }
            (a, b)
        })
        .collect()
}

#[test]
fn mul_sqr_match_twin_and_bigint() {
    if cpu().is_none() {
        return;
    }
    let mut rng = StdRng::seed_from_u64(1);
    let p = p();
    for (a, b) in groups(&mut rng, 4000 * scale()) {
        let (va, vb) = (fe8(&a), fe8(&b));
        // SAFETY: features detected (checked at the top of the test).
        let (m, s) = unsafe { (field8::mul(&va, &vb), field8::sqr(&va)) };
        let (m, s) = (lanes(m), lanes(s));
        for i in 0..8 {
            let tm = twin::mul(&a[i], &b[i]);
            let ts = twin::sqr(&a[i]);
            assert_eq!(m[i], tm, "mul lanes vs twin, a={:x?} b={:x?}", a[i], b[i]);
            assert_eq!(s[i], ts, "sqr lanes vs twin, a={:x?}", a[i]);
            assert_carried(&tm);
            assert_carried(&ts);
            assert!(tm[4] <= 1 << 48 && ts[4] <= 1 << 48);
            assert_eq!(big(&tm) % &p, big(&a[i]) * big(&b[i]) % &p, "mul value");
            assert_eq!(big(&ts) % &p, big(&a[i]) * big(&a[i]) % &p, "sqr value");
        }
    }
}

#[test]
fn add_sub_carry_normalize_match_twin_and_bigint() {
    if cpu().is_none() {
        return;
    }
    let mut rng = StdRng::seed_from_u64(2);
    let p = p();
    let wide = |rng: &mut StdRng| -> Limbs { core::array::from_fn(|_| rng.gen::<u64>() >> 2) };
    for (a, b) in groups(&mut rng, 4000 * scale()) {
        // b carried (sub's precondition): mask limb 4 to < 2^49.
        let b = b.map(|mut l| {
            l[4] &= (1 << 49) - 2;
            l
        });
        let w: [Limbs; 8] = core::array::from_fn(|_| wide(&mut rng));
        let (va, vb, vw) = (fe8(&a), fe8(&b), fe8(&w));
        // SAFETY: features detected (checked at the top of the test).
        let (sum, diff, cw, nw, na) = unsafe {
            (
                field8::add(&va, &vb),
                field8::sub(&va, &vb),
                field8::carry(&vw),
                field8::normalize(&vw),
                field8::normalize(&va),
            )
        };
        // SAFETY: features detected (checked at the top of the test).
        let ncw = lanes(unsafe { field8::normalize_carried(&cw) });
        let (sum, diff, cw, nw, na) = (lanes(sum), lanes(diff), lanes(cw), lanes(nw), lanes(na));
        for i in 0..8 {
            assert_eq!(ncw[i], nw[i], "normalize_carried of carry");
            assert_eq!(sum[i], twin::add(&a[i], &b[i]));
            assert_eq!(diff[i], twin::sub(&a[i], &b[i]));
            assert_eq!(cw[i], twin::carry(&w[i]));
            assert_eq!(nw[i], twin::normalize(&w[i]));
            assert_eq!(na[i], twin::normalize(&a[i]));
            assert_eq!(
                big(&diff[i]) % &p,
                (big(&a[i]) + &p - big(&b[i]) % &p) % &p,
                "sub value"
            );
            assert_carried(&cw[i]);
            assert_eq!(big(&cw[i]) % &p, big(&w[i]) % &p, "carry value");
            assert_normalized(&nw[i]);
            assert_eq!(big(&nw[i]), big(&w[i]) % &p, "normalize value");
            assert_eq!(big(&na[i]), big(&a[i]) % &p);
        }
    }
}

/// `normalize_carried` on the extremes of its input range (limbs 0..3 up to 2^52 − 1, limb 4
/// up to 2^48 + 2^11 − 1) and on values around p: the twin's normalize, value mod p.
#[test]
fn normalize_carried_matches_twin_at_the_bounds() {
    if cpu().is_none() {
        return;
    }
    let p = p();
    let top = (1u64 << 48) + (1 << 11) - 1;
    let mut v = vec![
        [MASK52, MASK52, MASK52, MASK52, top],
        [0, 0, 0, 0, top],
        [MASK52, MASK52, MASK52, MASK52, 1 << 48],
        [MASK52, MASK52, MASK52, MASK52, MASK48],
        [0; 5],
    ];
    for k in [&p - 1u8, p.clone(), &p + 1u8] {
        v.push(from_big(&(&k % (BigUint::from(1u8) << 208u32))));
        let last = v.len() - 1;
        v[last][4] = (&k >> 208u32).iter_u64_digits().next().unwrap_or(0);
    }
    v.resize(16, [1, 2, 3, 4, 5]);
    for chunk in v.chunks(8) {
        let l: [Limbs; 8] = core::array::from_fn(|i| chunk[i]);
        // SAFETY: features detected (checked at the top of the test).
        let got = lanes(unsafe { field8::normalize_carried(&fe8(&l)) });
        for i in 0..8 {
            assert!(l[i][4] <= top, "input carried");
            assert_eq!(got[i], twin::normalize(&l[i]), "lane {i}: {:x?}", l[i]);
            assert_normalized(&got[i]);
            assert_eq!(big(&got[i]), big(&l[i]) % &p, "value, lane {i}");
        }
    }
}

#[test]
fn invert_lanes_matches_bigint() {
    if cpu().is_none() {
        return;
    }
    let p = p();
    let mut rng = StdRng::seed_from_u64(17);
    // Every IFMA-ready edge value that is nonzero mod p, in every lane position, among random
    // lanes; then random groups.
    let edges: Vec<Limbs> = edge_ready()
        .into_iter()
        .filter(|l| big(l) % &p != BigUint::default())
        .collect();
    let mut groups: Vec<[Limbs; 8]> = Vec::new();
    for (e, edge) in edges.iter().enumerate() {
        for pos in 0..8 {
            groups.push(core::array::from_fn(|i| {
                if i == pos || (e + i) % 3 == 0 {
                    edges[(e + i) % edges.len()]
                } else {
                    random_ready(&mut rng)
                }
            }));
            groups.last_mut().expect("just pushed")[pos] = *edge;
        }
    }
    for _ in 0..50 * scale() {
        groups.push(core::array::from_fn(|_| random_ready(&mut rng)));
    }
    for l in groups {
        if l.iter().any(|x| big(x) % &p == BigUint::default()) {
            continue;
        }
        // SAFETY: features detected (checked at the top of the test).
        let got = lanes(unsafe { affine::invert_lanes(&fe8(&l), |t| twin::invert(&t)) });
        for i in 0..8 {
            assert_carried(&got[i]);
            assert_eq!(
                big(&got[i]) * big(&l[i]) % &p,
                BigUint::from(1u8),
                "lane {i}: {:x?}",
                l
            );
        }
    }
}

/// x values for the lift tests: edge cases, then random ones (about half are non-residues).
fn lift_inputs(rng: &mut StdRng, random: usize) -> Vec<Limbs> {
    let p = p();
    let mut v = vec![
        [0; 5],
        [1, 0, 0, 0, 0],
        from_big(&(&p - 1u8)),
        from_big(&(&p - 2u8)),
        [MASK52, MASK52, MASK52, MASK52, MASK48 - 1],
        // x of the generator G.
        from_big(
            &BigUint::parse_bytes(
                b"79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798",
                16,
            )
            .unwrap_or_default(),
        ),
    ];
    for _ in 0..random {
        v.push(random_normalized(rng));
    }
    v
}

#[test]
fn lift_matches_twin_and_bigint() {
    if cpu().is_none() {
        return;
    }
    let mut rng = StdRng::seed_from_u64(3);
    let p = p();
    let exp = (&p + 1u8) / 4u8;
    let euler = (&p - 1u8) / 2u8;
    // Sizes that are not multiples of 8 or 16 exercise the lane padding.
    for n in [1usize, 7, 8, 9, 15, 16, 17, 33, 100 * scale()] {
        let xs = lift_inputs(&mut rng, n.saturating_sub(7));
        let xs = &xs[..n.min(xs.len())];
        let mut got: Vec<Option<Limbs>> = vec![None; xs.len()];
        // SAFETY: features detected (checked at the top of the test).
        unsafe { lift::lift_x_many(xs.len(), |i| xs[i], |i, y| got[i] = y) };
        for (x, y) in xs.iter().zip(&got) {
            let tw = twin::lift_x(x);
            assert_eq!(*y, tw, "lanes vs twin for x={x:x?}");
            // The twin against num-bigint.
            let c = (big(x).pow(3) + 7u8) % &p;
            let square = c == BigUint::default() || c.modpow(&euler, &p) == BigUint::from(1u8);
            assert_eq!(tw.is_some(), square, "residuosity for x={x:x?}");
            if let Some(y) = tw {
                assert_normalized(&y);
                assert_eq!(y[0] & 1, 0, "even y");
                let r = c.modpow(&exp, &p);
                let expect = if r.bit(0) { &p - r } else { r };
                assert_eq!(big(&y), expect);
            }
        }
    }
}

#[test]
fn sqrt_chain_matches_twin_on_raw_limbs() {
    if cpu().is_none() {
        return;
    }
    let mut rng = StdRng::seed_from_u64(4);
    let p = p();
    let exp = (&p + 1u8) / 4u8;
    let mut inputs = edge_ready();
    for _ in 0..(32 * scale()) {
        inputs.push(random_ready(&mut rng));
    }
    inputs.resize(inputs.len().div_ceil(16) * 16, [3, 0, 0, 0, 0]);
    for block in inputs.chunks(16) {
        let a: [Limbs; 8] = core::array::from_fn(|i| block[i]);
        let b: [Limbs; 8] = core::array::from_fn(|i| block[8 + i]);
        // SAFETY: features detected (checked at the top of the test).
        let r = unsafe { lift::sqrt_candidate(&[fe8(&a), fe8(&b)]) };
        let out = [lanes(r[0]), lanes(r[1])];
        for (k, src) in [a, b].iter().enumerate() {
            for i in 0..8 {
                let t = twin::sqrt_candidate(&src[i]);
                assert_eq!(out[k][i], t);
                assert_carried(&t);
                assert_eq!(big(&t) % &p, (big(&src[i]) % &p).modpow(&exp, &p));
            }
        }
    }
}

/// Random points on the curve (normalized affine limbs), via the twin lift.
fn random_points(rng: &mut StdRng, n: usize) -> Vec<(Limbs, Limbs)> {
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let x = random_normalized(rng);
        if let Some(y) = twin::lift_x(&x) {
            // Both y parities, so the sums cover odd y too.
            let y = if rng.gen() {
                y
            } else {
                twin::normalize(&twin::sub(&[0; 5], &y))
            };
            v.push((x, y));
        }
    }
    v
}

/// [`affine::add_pairs`] fed one pair at a time: `get(i)` = (x₁, y₁, x₂, y₂) of pair i,
/// `put(i, x₃, y₃)`. The lanes past `n` of the last vector hold garbage, which the kernel must
/// ignore.
fn add_pairs_by_pair(
    n: usize,
    get: impl Fn(usize) -> [Limbs; 4],
    mut put: impl FnMut(usize, Limbs, Limbs),
    saved: &mut Vec<affine::Saved>,
) {
    // x₁ = p (as limbs) and x₂ = 0: Δx ≡ 0 although the limbs differ, so unpadded such a
    // lane would zero its lane product; y₁, y₂ not IFMA-ready. (Order: x₁, y₁, x₂, y₂.)
    let garbage: [Limbs; 4] = [from_big(&p()), [u64::MAX; 5], [0; 5], [u64::MAX - 1; 5]];
    let load = |v: usize, mask: u8| {
        let pairs: [[Limbs; 4]; 8] = core::array::from_fn(|lane| {
            let i = 8 * v + lane;
            assert_eq!(mask >> lane & 1 == 1, i < n, "load mask, lane {lane}");
            if i < n {
                get(i)
            } else {
                garbage
            }
        });
        core::array::from_fn(|c| fe8(&pairs.map(|p| p[c])))
    };
    let store = |v: usize, mask: u8, x: &Fe8, y: &Fe8| {
        let (x, y) = (lanes(*x), lanes(*y));
        for lane in 0..8 {
            let i = 8 * v + lane;
            assert_eq!(mask >> lane & 1 == 1, i < n, "store mask, lane {lane}");
            if i < n {
                put(i, x[lane], y[lane]);
            }
        }
    };
    // SAFETY: only called after `cpu()` returned `Some`, i.e. the features were detected.
    unsafe { affine::add_pairs(n, load, invert1_twin, store, saved) }
}

fn invert1_twin(t: Limbs) -> Limbs {
    assert!(big(&t) != BigUint::default(), "the product must be nonzero");
    twin::invert(&t)
}

#[test]
fn affine_adds_match_twin_and_bigint() {
    if cpu().is_none() {
        return;
    }
    let mut rng = StdRng::seed_from_u64(5);
    let p = p();
    // One buffer for every call, small after large too: stale contents must not matter.
    let mut saved = Vec::new();
    for n in [0usize, 1, 7, 8, 9, 17, 64 * scale() + 3, 9, 1] {
        let a = random_points(&mut rng, n);
        let mut b = random_points(&mut rng, n);
        // Δx ≡ 0 at index 2 (precondition violated on purpose: it must not poison the rest),
        // and P + (−P) at index 5.
        if n > 2 {
            b[2] = a[2];
        }
        if n > 5 {
            b[5] = (a[5].0, twin::normalize(&twin::sub(&[0; 5], &a[5].1)));
        }
        let mut got = vec![([0u64; 5], [0u64; 5]); n];
        add_pairs_by_pair(
            n,
            |i| [a[i].0, a[i].1, b[i].0, b[i].1],
            |i, x, y| got[i] = (x, y),
            &mut saved,
        );
        for i in 0..n {
            let ((x1, y1), (x2, y2)) = (a[i], b[i]);
            if x1 == x2 {
                // λ = 0: (−x1 − x2, −y1).
                let ex = (&p * 2u8 - big(&x1) - big(&x2)) % &p;
                let ey = (&p - big(&y1)) % &p;
                assert_eq!(
                    (big(&got[i].0), big(&got[i].1)),
                    (ex, ey),
                    "Δx = 0 lane {i}"
                );
                continue;
            }
            assert_eq!(
                got[i],
                twin::add_affine((&x1, &y1), (&x2, &y2)),
                "pair {i} of {n}"
            );
            // Twin against num-bigint.
            let dx = (big(&x2) + &p - big(&x1)) % &p;
            let dy = (big(&y2) + &p - big(&y1)) % &p;
            let l = dy * dx.modpow(&(&p - 2u8), &p) % &p;
            let x3 = (&l * &l + &p * 2u8 - big(&x1) - big(&x2)) % &p;
            let y3 = (&l * ((big(&x1) + &p - &x3) % &p) + &p - big(&y1)) % &p;
            assert_normalized(&got[i].0);
            assert_normalized(&got[i].1);
            assert_eq!(
                (big(&got[i].0), big(&got[i].1)),
                (x3, y3),
                "bigint pair {i}"
            );
        }
    }
}

/// The lift accepts any limbs < 2^62 (every `FieldElement` magnitude) and normalizes in
/// lanes: x + k·p written with oversized limbs gives the same results as x. (The pair
/// additions read their inputs as they are: the backend's contract makes them normalized.)
#[test]
fn lift_normalizes_oversized_input_limbs() {
    if cpu().is_none() {
        return;
    }
    let mut rng = StdRng::seed_from_u64(6);
    let p = p();
    // v + k·p (k ≤ 31) split into limbs 0..3 of 52 bits and a top limb of up to 53 bits, then
    // up to 32·2^52 moved from limb 4 into limb 3 (limb 3 up to ~2^57).
    let widen = |l: &Limbs, k: u32| -> Limbs {
        let v = big(l) + &p * BigUint::from(k);
        let mut out = from_big(&(&v % (BigUint::from(1u8) << 208)));
        out[4] = (&v >> 208usize).iter_u64_digits().next().unwrap_or(0);
        let j = out[4].min(1 << 5);
        out[4] -= j;
        out[3] += j << 52;
        out
    };
    let pts = random_points(&mut rng, 19);
    let xs: Vec<Limbs> = pts.iter().map(|pt| pt.0).collect();
    let mut plain = vec![None; xs.len()];
    let mut wide = vec![None; xs.len()];
    // SAFETY: features detected (checked at the top of the test).
    unsafe {
        lift::lift_x_many(xs.len(), |i| xs[i], |i, y| plain[i] = y);
        lift::lift_x_many(xs.len(), |i| widen(&xs[i], 31), |i, y| wide[i] = y);
    }
    assert_eq!(plain, wide);
    assert!(
        widen(&xs[0], 31).iter().any(|&l| l >= 1 << 52),
        "the test input is oversized"
    );
}

/// The gathers read limbs at `offset_of!`-derived byte offsets: reading through them gives
/// `raw_limbs` of x and y, for points anywhere in a slice (first, middle, last of an odd
/// length), in this build's layout (debug builds wrap the limbs in a checker).
#[test]
fn gather_points_reads_the_limbs_of_each_point() {
    if cpu().is_none() {
        return;
    }
    use crate::arithmetic::field::FieldElement;
    use crate::arithmetic::group::AffinePoint;
    use core::arch::x86_64::_mm512_set_epi64;
    let mut rng = StdRng::seed_from_u64(9);
    let pts: Vec<AffinePoint> = random_points(&mut rng, 13)
        .into_iter()
        .map(|(x, y)| AffinePoint {
            x: FieldElement::from_limbs_unchecked(x),
            y: FieldElement::from_limbs_unchecked(y),
            infinity: false,
        })
        .collect();
    let idx = [12u64, 0, 7, 12, 1, 11, 3, 6];
    // Lanes 5 and 7 masked off, with indices out of range: never read, no panic.
    let mask = 0b0101_1111u8;
    let mut raw = idx;
    raw[5] = 1 << 40;
    raw[7] = 13;
    // SAFETY: features detected (checked at the top of the test).
    let (x, y) = unsafe {
        let v = _mm512_set_epi64(
            raw[7] as i64,
            raw[6] as i64,
            raw[5] as i64,
            raw[4] as i64,
            raw[3] as i64,
            raw[2] as i64,
            raw[1] as i64,
            raw[0] as i64,
        );
        affine::gather_points(&pts, v, mask)
    };
    let (x, y) = (lanes(x), lanes(y));
    for lane in 0..8 {
        if mask >> lane & 1 == 1 {
            let p = &pts[idx[lane] as usize];
            assert_eq!(x[lane], p.x.raw_limbs(), "x, lane {lane}");
            assert_eq!(y[lane], p.y.raw_limbs(), "y, lane {lane}");
        } else {
            assert_eq!((x[lane], y[lane]), ([0; 5], [0; 5]), "masked lane {lane}");
        }
    }
}

/// An active lane past the end of the slice panics before any read.
#[test]
#[should_panic(expected = "index out of range")]
fn gather_points_rejects_an_index_past_the_end() {
    if cpu().is_none() {
        panic!("index out of range (skipped: no IFMA)");
    }
    use crate::arithmetic::group::AffinePoint;
    let pts = vec![AffinePoint::GENERATOR; 5];
    // SAFETY: features detected (checked at the top of the test).
    unsafe {
        let v = core::arch::x86_64::_mm512_set1_epi64(5);
        affine::gather_points(&pts, v, 0b1);
    }
}

/// `pair_indices` splits each `[u32; 2]` into its two lanes, all 32 bits of each, and reads
/// no pair outside the mask (a short tail slice is fine).
#[test]
fn pair_indices_split_the_pairs() {
    if cpu().is_none() {
        return;
    }
    let pairs: Vec<[u32; 2]> = (0..3u32).map(|i| [u32::MAX - i, 0x8000_0000 | i]).collect();
    // SAFETY: features detected (checked at the top of the test).
    let (a, b) = unsafe { affine::pair_indices(&pairs, affine::lanes_below(3)) };
    let mut got = ([0u64; 8], [0u64; 8]);
    // SAFETY: features detected; 64-byte stores into `[u64; 8]` arrays.
    unsafe {
        use core::arch::x86_64::_mm512_storeu_si512;
        _mm512_storeu_si512(got.0.as_mut_ptr().cast(), a);
        _mm512_storeu_si512(got.1.as_mut_ptr().cast(), b);
    }
    for lane in 0..8 {
        let (ea, eb) = pairs
            .get(lane)
            .map_or((0, 0), |p| (u64::from(p[0]), u64::from(p[1])));
        assert_eq!((got.0[lane], got.1[lane]), (ea, eb), "lane {lane}");
    }
}
