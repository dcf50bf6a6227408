//! Narrowing: finding the verdicts when a batch equation fails.
//!
//! This module doc is the one statement of the narrowing rules and their cost model; the code
//! below ([`Narrowing::probe_first`], [`Narrowing::narrow_failed`], [`Narrowing::narrow`]) implements it, and `docs/batch.md` and
//! the README point here. Every equation while narrowing reuses the batch's lifted points,
//! challenges and weights. Every `false` verdict is libsecp256k1's own.
//!
//! 1. **Probe first, when wary.** A batch of [`PROBE_FIRST`] (128) or more has one signature,
//!    picked by the weights, checked with libsecp256k1 before any equation, if the verifier
//!    is wary: one of its last [`WARY_BATCHES`] (8) batches had dense failures (at least two
//!    invalid signatures and at least one in 16), or this batch has signatures that failed
//!    their pre-checks (unparsable, or a nonce off the curve). If it is invalid, a second
//!    one elsewhere is checked: both invalid means dense failures (a flood), and every
//!    signature is checked one at a time with no equation at all; the second valid means the
//!    first may have been the only bad one, and it is set aside while the equation runs over
//!    the rest. A valid probe costs one single check per batch, which a verifier of clean
//!    traffic no longer pays (3 % of a 256-signature batch on the portable arm). The first
//!    batch of a flood after a quiet spell pays one failed equation before its sample calls
//!    the failures dense (step 2); the batches after it are probed.
//! 2. **Sample.** When the equation fails, signatures drawn with the weights are checked one
//!    at a time: about one per four single checks' worth of the failed equation, twice that
//!    if the first draw found exactly one invalid, at most [`SAMPLES_MAX`] in all. Two or more
//!    invalid mean dense failures (about one in 16 or more): the rest goes one at a time,
//!    where narrowing would pay for equations on top.
//! 3. **Secret order.** Otherwise the rest is reordered by the weights, which the submitter
//!    cannot predict: key groups by their first member's weight, and by weight within a group
//!    (one key term per node). The arrival order (the submitter's choice) then no longer
//!    decides which signatures share a node, so invalid signatures cannot be placed one per
//!    node to make every node fail. With one invalid sample, one equation over the rest first
//!    tells whether it was the only one.
//! 4. **Halving.** At a node known to fail, one signature picked by the weights is checked
//!    with libsecp256k1. Invalid: one equation over the rest of the node decides between "it
//!    was the only one" and one at a time for the node. Valid: the left half is tested; if it
//!    holds, the right half is known to fail and is split untested; if not, the right half
//!    is tested first (it usually holds, paying the budget back early), then the left half is
//!    searched. Nodes of at most [`LEAF`] (4) signatures go one at a time.
//! 5. **Budget.** Narrowing keeps an account in units of one libsecp256k1 check with a cached
//!    key ([`SINGLE`]): each equation adds its estimated cost ([`equation_cost`]), each one
//!    that holds takes off the single checks it saved. When the next equation would take the
//!    account past [`BUDGET_PER_SIG`] (a quarter of a single check) per signature of the
//!    batch, every open signature goes one at a time ([`Stats::budget_exhausted`](crate::Stats::budget_exhausted)).
//!    Sprinkled invalid signatures (one in 5 to one in 16, which make every node fail) thus
//!    cost the failed equation plus at most 25 % over one-at-a-time checking, while one or two
//!    invalid signatures, whose sibling halves hold, keep the account negative and never
//!    reach the limit.
//! 6. **Cost model.** [`equation_cost`] is the MSM sweep's µs per point for the algorithm the
//!    MSM picks at that point count, divided by one cached-key libsecp256k1 verification,
//!    measured on the IFMA backend, and the same on every backend (not scaled for portable,
//!    whose MSM takes about twice as long): scaled, the budget no longer covered the two half
//!    equations that find a lone invalid signature among distinct keys, and such batches went
//!    one at a time (`docs/experiments.md`). On portable, narrowing with a few invalid
//!    signatures the sample misses may therefore spend up to twice the nominal budget.
//!

use super::equation::{self, Threads};
use super::stats::Stats;
use super::work::Work;
use crate::bip340::{parse_xonly, verify_parsed, SigRef};
use std::ops::Range;

/// Narrowing checks nodes of at most this many signatures one at a time.
pub(crate) const LEAF: usize = 4;

/// From this many signatures on, one signature is checked with libsecp256k1 before the
/// equation (module doc, "Narrowing", step 1: [`Narrowing::probe_first`]).
pub(crate) const PROBE_FIRST: usize = 128;

/// After a batch with dense failures (at least two invalid signatures, at least one in 16),
/// this many batches are probed before their equation (module doc, "Narrowing", step 1).
pub(crate) const WARY_BATCHES: u32 = 8;

/// Whether `invalid` invalid signatures among `total` are dense failures, the kind that makes
/// a verifier wary for [`WARY_BATCHES`] batches (module doc, "Narrowing", step 1): a lone
/// invalid signature is not (narrowing finds it with a few equations), a flood is.
pub(crate) fn dense_failures(invalid: usize, total: usize) -> bool {
    invalid >= 2 && invalid * 16 >= total
}

/// The unit of narrowing's work budget: one libsecp256k1 check with a cached key.
pub(crate) const SINGLE: u64 = 1000;

/// Narrowing's budget: its equations may cost at most this much more than the signatures
/// they accept would have cost one at a time, per signature of the batch, in thousandths of
/// a single check (a quarter of a single check per signature). Module doc, "Narrowing", step 5.
pub(crate) const BUDGET_PER_SIG: u64 = SINGLE / 4;

/// At most this many signatures are sampled one at a time when a batch equation fails
/// (module doc, "Narrowing", step 2).
pub(crate) const SAMPLES_MAX: usize = 96;

/// Narrowing's account, in [`SINGLE`]s: the work of its equations (by [`equation_cost`]) less
/// the single checks saved by the ones that held. One-at-a-time checking of the whole batch
/// plus `loss` is what narrowing has cost so far.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Budget {
    pub(super) loss: i64,
    pub(super) limit: i64,
    /// The limit was reached: every signature still open is checked one at a time.
    pub(super) exhausted: bool,
}

/// Narrowing's estimate of one equation over `points` MSM points, in thousandths of a single
/// check: the cost model of the narrowing rules (module doc, step 6).
pub(super) fn equation_cost(points: usize) -> u64 {
    // (largest point count, cost per point in thousandths of a single check)
    const PER_POINT: [(usize, u64); 7] = [
        (20, 300),
        (32, 220),
        (80, 160),
        (160, 115),
        (320, 90),
        (640, 72),
        (1800, 68),
    ];
    let per_point = PER_POINT
        .iter()
        .find(|&&(max, _)| points <= max)
        .map_or(62, |&(_, c)| c);
    points as u64 * per_point
}

/// The state of one batch's search for its verdicts: the prepared batch (`work.prep`), the
/// verifier's counters, the caller's signatures and verdicts, and the budget. Its methods take
/// a range of `prep`.
pub(super) struct Narrowing<'v, 's, 'a> {
    work: &'v mut Work,
    stats: &'v mut Stats,
    sigs: &'s [SigRef<'a>],
    ok: &'s mut [bool],
    pub(super) budget: Budget,
}

impl<'v, 's, 'a> Narrowing<'v, 's, 'a> {
    /// The search over the batch prepared in `work` from `sigs`; verdicts go to `ok` (by input
    /// index), counts to `stats`.
    pub(super) fn new(
        work: &'v mut Work,
        stats: &'v mut Stats,
        sigs: &'s [SigRef<'a>],
        ok: &'s mut [bool],
    ) -> Self {
        Narrowing {
            work,
            stats,
            sigs,
            ok,
            budget: Budget::default(),
        }
    }

    /// Step 1 of the rules (module doc): a large batch is probed before its equation when
    /// `wary`. `None` when the batch is settled already (empty, or a flood checked one at a
    /// time); else where its equation starts (1 when the probe was invalid and set aside at
    /// the front, else 0).
    pub(super) fn probe_first(&mut self, wary: bool) -> Option<usize> {
        let m = self.work.prep.len();
        if m == 0 {
            return None;
        }
        if !wary || m < PROBE_FIRST {
            return Some(0);
        }
        let probe = (self.work.prep[m / 2].a as usize) % m;
        if self.single(probe) {
            return Some(0);
        }
        let second = (probe + 1 + (self.work.prep[m / 4].a as usize) % (m - 1)) % m;
        if !self.single(second) {
            for j in (0..m).filter(|&j| j != probe && j != second) {
                self.single(j);
            }
            return None;
        }
        self.work.prep.swap(0, probe);
        Some(1)
    }

    /// The batch equation over `prep[range]` (on `threads`), outside the budget: `Ok` when it
    /// held (every signature of the range accepted), else `Err` with its estimated cost.
    pub(super) fn equation(&mut self, range: Range<usize>, threads: Threads) -> Result<(), u64> {
        self.stats.batches += 1;
        let complete = equation::terms(self.work, range.clone());
        let cost = equation_cost(self.work.points.len());
        if complete && equation::msm_is_infinity(self.work, threads) {
            self.accept(range);
            Ok(())
        } else {
            Err(cost)
        }
    }

    /// Finds the verdicts of `prep[range]` after its equation, of estimated cost
    /// `failed_cost`, failed: steps 2 to 5 of the rules (module doc). Returns the final
    /// account.
    pub(super) fn narrow_failed(mut self, range: Range<usize>, failed_cost: u64) -> Budget {
        let Range { start: lo, end: m } = range;
        // The whole batch's size sets the budget (a probe set aside included).
        let total = self.work.prep.len();
        self.budget = Budget {
            loss: 0,
            limit: (total as u64 * BUDGET_PER_SIG) as i64,
            exhausted: false,
        };
        // Sample (step 2): about one per four single checks the failed equation cost; exactly
        // one invalid: draw as many again before deciding.
        let stage = ((failed_cost / SINGLE) as usize / 4).min(SAMPLES_MAX / 2);
        let mut samples = 0;
        let mut invalid = 0;
        for round in 0..2 {
            if round == 1 && invalid != 1 {
                break;
            }
            let end = (samples + stage).min(m - lo);
            for i in samples..end {
                let prep = &mut self.work.prep;
                let pick = lo + i + ((prep[lo + i].a >> 64) as usize) % (m - lo - i);
                prep.swap(lo + i, pick);
                invalid += usize::from(!self.single(lo + i));
            }
            samples = end;
        }
        let lo = lo + samples;
        if invalid >= 2 {
            self.singles(lo..m);
            return self.budget;
        }
        self.shuffle(lo..m);
        // Perhaps the batch's only invalid signature: one equation over the rest tells.
        if invalid == 1 && self.settled_by_equation(lo..m) {
            return self.budget;
        }
        self.narrow(lo..m, true);
        self.budget
    }

    /// Finds the verdicts of `prep[range]`; `failed` says the equation is known to fail there.
    /// Steps 4 and 5 of the rules (module doc).
    fn narrow(&mut self, range: Range<usize>, failed: bool) {
        let Range { start: lo, end: hi } = range;
        let m = hi - lo;
        if m == 0 {
            return;
        }
        if m <= LEAF || self.budget.exhausted {
            self.singles(lo..hi);
            return;
        }
        if !failed && self.settled_by_equation(lo..hi) {
            return;
        }
        // The equation fails on [lo, hi). Probe one signature picked by its weight.
        let prep = &self.work.prep;
        let probe = lo + (prep[lo].a as usize ^ prep[hi - 1].a as usize) % m;
        let v = self.single(probe);
        self.work.prep.swap(lo, probe);
        let lo = lo + 1;
        if lo == hi {
            return;
        }
        if !v {
            // The probe is invalid: either it was the node's only bad signature, or failures
            // are dense here. One equation over the rest tells which, so a lucky probe never
            // turns a single bad signature into a node's worth of single checks.
            if hi - lo > LEAF && self.equation_budgeted(lo..hi) == Some(true) {
                return;
            }
            // Dense failures here (or no budget left): one at a time.
            self.singles(lo..hi);
            return;
        }
        let mid = lo + (hi - lo) / 2;
        if mid == lo {
            // One signature left and the rest valid: it is the invalid one (libsecp256k1 says).
            self.narrow(lo..hi, true);
            return;
        }
        match self.equation_budgeted(lo..mid) {
            Some(true) => self.narrow(mid..hi, true),
            Some(false) => {
                self.narrow(mid..hi, false);
                self.narrow(lo..mid, true);
            }
            None => self.singles(lo..hi),
        }
    }

    /// [`Self::equation_budgeted`] over `prep[range]`, with the budget's fallback: `true` when
    /// the node is settled (the equation held, or the budget ran out and the node was checked
    /// one at a time), `false` when the equation failed and the node still needs narrowing.
    fn settled_by_equation(&mut self, range: Range<usize>) -> bool {
        match self.equation_budgeted(range.clone()) {
            Some(held) => held,
            None => {
                self.singles(range);
                true
            }
        }
    }

    /// The batch equation over `prep[range]` within the budget: `None` (and the budget marked
    /// exhausted) when its estimated cost would take the account past the limit, else whether
    /// it holds. Signatures it accepts get `true`.
    pub(super) fn equation_budgeted(&mut self, range: Range<usize>) -> Option<bool> {
        if self.budget.exhausted {
            return None;
        }
        if !equation::terms(self.work, range.clone()) {
            return Some(false);
        }
        let cost = equation_cost(self.work.points.len()) as i64;
        let b = &mut self.budget;
        if b.loss.saturating_add(cost) > b.limit {
            b.exhausted = true;
            self.stats.budget_exhausted += 1;
            return None;
        }
        b.loss += cost;
        self.stats.batches += 1;
        if !equation::msm_is_infinity(self.work, Threads::One) {
            return Some(false);
        }
        self.budget.loss -= range.len() as i64 * SINGLE as i64;
        self.accept(range);
        Some(true)
    }

    /// Records that the equation over `prep[range]` held: all of them valid.
    fn accept(&mut self, range: Range<usize>) {
        self.stats.batches_passed += 1;
        self.stats.batched += range.len() as u64;
        for p in &self.work.prep[range] {
            self.ok[p.idx as usize] = true;
        }
    }

    /// Reorders `prep[lo..hi]` by the weights, which the submitter cannot predict: key groups
    /// in the order of their first member's weight, and within a group by weight. The order
    /// the batch arrived in (grouped by key prefix and `r`, both the submitter's choice) no
    /// longer decides which signatures share a narrowing node, so invalid signatures cannot
    /// be placed one per node to make every node fail. Signatures of one key stay adjacent
    /// (one key term per node).
    fn shuffle(&mut self, range: Range<usize>) {
        let w = &mut *self.work;
        w.key_rank.clear();
        w.key_rank.resize(w.keys.len(), 0);
        for p in &w.prep[range.clone()] {
            let r = &mut w.key_rank[p.key as usize];
            if *r == 0 {
                *r = p.a;
            }
        }
        let rank = &w.key_rank;
        w.prep[range].sort_unstable_by_key(|p| (rank[p.key as usize], p.a));
    }

    /// libsecp256k1's verdicts on `prep[range]`, one at a time.
    fn singles(&mut self, range: Range<usize>) {
        for j in range {
            self.single(j);
        }
    }

    /// libsecp256k1's verdict on prepared signature `j`, recorded and returned.
    fn single(&mut self, j: usize) -> bool {
        self.stats.one_at_a_time += 1;
        let p = self.work.prep[j];
        let sig = &self.sigs[p.idx as usize];
        let key = &mut self.work.keys[p.key as usize];
        let x = key.point.as_mut().and_then(|c| c.xonly());
        let valid = match x.or_else(|| parse_xonly(sig.pubkey)) {
            Some(x) => verify_parsed(&x, sig.msg, sig.sig),
            None => false,
        };
        self.ok[p.idx as usize] = valid;
        valid
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{keyless_sigs, refs_under, signed};
    use super::*;
    use crate::batch::Verifier;

    /// What `Verifier::run` does after `prepare` (not wary): the equation, then narrowing if
    /// it fails. Returns the final account.
    fn settle(v: &mut Verifier, refs: &[SigRef<'_>], ok: &mut [bool]) -> Budget {
        let mut n = Narrowing::new(&mut v.work, &mut v.stats, refs, ok);
        let m = n.work.prep.len();
        match n.probe_first(false) {
            Some(lo) => match n.equation(lo..m, Threads::One) {
                Ok(()) => n.budget,
                Err(cost) => n.narrow_failed(lo..m, cost),
            },
            None => n.budget,
        }
    }

    /// A batch's only invalid signature, picked by the first probe (a secret is searched for
    /// that makes it so): two single checks and one equation over the rest, never a batch's
    /// worth of single checks.
    #[test]
    fn first_probe_on_the_only_bad_signature() {
        let secp = secp256k1::Secp256k1::new();
        let n = PROBE_FIRST;
        let kps: Vec<secp256k1::Keypair> = (1..=8u8)
            .map(|i| secp256k1::Keypair::from_seckey_slice(&secp, &[i; 32]).expect("key"))
            .collect();
        let mut owned: Vec<([u8; 32], [u8; 32], [u8; 64])> = (0..n)
            .map(|i| {
                let kp = &kps[i % 8];
                let msg = [i as u8; 32];
                let sig = secp.sign_schnorr_no_aux_rand(&msg, kp).to_byte_array();
                (kp.x_only_public_key().0.serialize(), msg, sig)
            })
            .collect();
        let bad = 37;
        owned[bad].1[0] ^= 1;
        let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
        let secret = (0u32..20_000)
            .map(|k| {
                let mut s = [0u8; 32];
                s[..4].copy_from_slice(&k.to_le_bytes());
                s
            })
            .find(|s| {
                let mut v = Verifier::with_secret(*s);
                v.prepare(&refs, Threads::One);
                let m = v.work.prep.len();
                let probe = (v.work.prep[m / 2].a as usize) % m;
                v.work.prep[probe].idx as usize == bad
            })
            .expect("a secret whose first probe is the bad signature");
        let mut v = Verifier::with_secret(secret);
        // Wary, as after a flood (a verifier of clean traffic does not probe).
        v.wary = WARY_BATCHES;
        let mut ok = Vec::new();
        assert!(!v.verify_batch(&refs, &mut ok));
        let want: Vec<bool> = (0..n).map(|i| i != bad).collect();
        assert_eq!(ok, want);
        let st = v.stats();
        assert_eq!(st.one_at_a_time, 2, "{st:?}");
        assert_eq!((st.batches, st.batches_passed), (1, 1), "{st:?}");
        assert_eq!(st.batched, n as u64 - 1, "{st:?}");
    }

    /// The probe of step 1 is paid only when wary: a verifier of clean traffic never probes,
    /// a lone invalid signature does not make it wary, a flood does (its first batch pays one
    /// failed equation, the next goes one at a time with no equation), and [`WARY_BATCHES`]
    /// clean batches later it stops probing again.
    #[test]
    fn probes_only_when_wary() {
        let n = PROBE_FIRST;
        // `signed` spoils index 0 always: its first entry makes the lone invalid batch.
        let owned = signed(n + 2, usize::MAX);
        let flood_owned = signed(n, 1);
        let clean: Vec<SigRef<'_>> = owned[1..=n].iter().map(SigRef::from).collect();
        let lone: Vec<SigRef<'_>> = owned[..n].iter().map(SigRef::from).collect();
        let flood: Vec<SigRef<'_>> = flood_owned.iter().map(SigRef::from).collect();
        let mut v = Verifier::with_secret([9; 32]);
        // One batch: its verdicts against libsecp256k1's, and (single checks, equations).
        let run = |v: &mut Verifier, refs: &[SigRef<'_>]| {
            let before = v.stats();
            let mut ok = Vec::new();
            v.verify_batch(refs, &mut ok);
            let want: Vec<bool> = refs.iter().map(crate::verify_one).collect();
            assert_eq!(ok, want);
            let after = v.stats();
            (
                after.one_at_a_time - before.one_at_a_time,
                after.batches - before.batches,
            )
        };
        assert_eq!(run(&mut v, &clean), (0, 1), "clean traffic: no probe");
        let (singles, _) = run(&mut v, &lone);
        assert!(
            singles < n as u64 / 4,
            "a lone invalid signature: {singles} single checks"
        );
        assert_eq!(v.wary, 0, "a lone invalid signature is not a flood");
        assert_eq!(run(&mut v, &clean), (0, 1), "still no probe");
        assert_eq!(run(&mut v, &flood), (n as u64, 1), "a flood's first batch");
        assert_eq!(v.wary, WARY_BATCHES);
        assert_eq!(run(&mut v, &flood), (n as u64, 0), "probed: no equation");
        for k in 0..WARY_BATCHES {
            assert_eq!(
                run(&mut v, &clean),
                (1, 1),
                "clean batch {k} after the flood: probed"
            );
        }
        assert_eq!(v.wary, 0);
        assert_eq!(run(&mut v, &clean), (0, 1), "wary no more");
        // A pre-check failure (r ≥ p) makes a batch probe on its own (n + 1 signatures: n
        // left for the equation).
        let mut spoiled = owned[1..].to_vec();
        spoiled[5].2[..32].fill(0xff);
        let spoiled: Vec<SigRef<'_>> = spoiled.iter().map(SigRef::from).collect();
        assert_eq!(run(&mut v, &spoiled), (1, 1), "the probe, and the equation");
        assert_eq!(v.wary, 0, "one bad signature is not a flood");
    }

    #[test]
    fn dense_failures_threshold() {
        assert!(!dense_failures(0, 128));
        assert!(!dense_failures(1, 4));
        assert!(dense_failures(2, 32));
        assert!(!dense_failures(2, 33));
        assert!(dense_failures(8, 128));
        assert!(!dense_failures(7, 128));
    }

    #[test]
    fn equation_fails_closed_on_a_key_without_its_point() {
        let (sigs, pk) = keyless_sigs(6);
        let msg = [5u8; 32];
        let refs = refs_under(&pk, &msg, &sigs);
        let mut v = Verifier::with_secret([3; 32]);
        v.prepare(&refs, Threads::One);
        assert_eq!(v.work.prep.len(), 6);
        // As prepared, the key term is there and the equation fails (the signatures are invalid).
        assert!(!equation::holds(&mut v.work, 0..6, Threads::One));
        // A key without its point (a state `prepare` never leaves): the key term cannot be
        // formed, and the equation must fail rather than hold without it.
        for k in v.work.keys.iter_mut() {
            k.point = None;
        }
        assert!(!equation::holds(&mut v.work, 0..6, Threads::One));
        let mut ok = vec![false; 6];
        let mut n = Narrowing::new(&mut v.work, &mut v.stats, &refs, &mut ok);
        n.budget.limit = i64::MAX;
        assert_eq!(n.equation_budgeted(0..6), Some(false));
        assert_eq!(ok, [false; 6]);
    }

    #[test]
    fn budget_stops_narrowing_under_sprinkled_failures() {
        // One signature in 23 invalid, 8 keys: the sample after the failed equation rarely
        // calls that dense, every narrowing node fails, and the budget ends the equations.
        // The inputs and secrets are fixed, so is the outcome; unbounded narrowing takes
        // about 200 equations here.
        let owned = signed(1024, 23);
        let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
        let want: Vec<bool> = refs.iter().map(crate::verify_one).collect();
        let mut exhausted = 0;
        for k in 0..4u8 {
            let mut v = Verifier::with_secret([k; 32]);
            let mut ok = vec![false; refs.len()];
            v.prepare(&refs, Threads::One);
            let b = settle(&mut v, &refs, &mut ok);
            assert_eq!(ok, want, "secret {k}");
            let st = v.stats();
            assert!(st.budget_exhausted <= 1, "{st:?}");
            assert!(st.batches <= 100, "{st:?}");
            assert!(st.one_at_a_time <= 1024 + 2, "{st:?}");
            // The account never went past the limit.
            assert!(b.loss <= b.limit, "{b:?}");
            exhausted += st.budget_exhausted;
        }
        assert!(exhausted >= 2, "the budget path was not taken");
    }

    #[test]
    fn equation_cost_model() {
        // Per signature of a batch, the equation is cheaper than a single check from four
        // signatures on (MIN_BATCH), and far cheaper at scale.
        let per_sig = |n: usize, keys: usize| equation_cost(n + 2 * keys + 2) / n as u64;
        assert!(per_sig(4, 1) < SINGLE);
        assert!(per_sig(1024, 1024) < SINGLE / 4);
        assert!(per_sig(1024, 8) < SINGLE / 10);
        // The cost per point falls with N (larger windows amortise better), as in the sweep.
        let mut last = u64::MAX;
        for points in 1..10_000 {
            let c = equation_cost(points) / points as u64;
            assert!(c <= last, "cost per point rises at {points}");
            last = c;
        }
    }

    #[test]
    fn shuffle_keeps_key_groups_and_follows_the_weights() {
        let owned = signed(64, usize::MAX);
        let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
        let mut v = Verifier::with_secret([6; 32]);
        v.prepare(&refs, Threads::One);
        let before: Vec<u32> = v.work.prep.iter().map(|p| p.idx).collect();
        let mut ok = vec![false; 64];
        Narrowing::new(&mut v.work, &mut v.stats, &refs, &mut ok).shuffle(0..64);
        let after: Vec<u32> = v.work.prep.iter().map(|p| p.idx).collect();
        assert_ne!(before, after);
        let mut sorted = after.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..64).collect::<Vec<u32>>());
        // Each key's signatures are adjacent, in increasing weight.
        let keys: Vec<u32> = v.work.prep.iter().map(|p| p.key).collect();
        let runs = 1 + keys.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(runs, 8);
        assert!(v
            .work
            .prep
            .windows(2)
            .all(|w| w[0].key != w[1].key || w[0].a < w[1].a));
        // Another secret, another order.
        let mut u = Verifier::with_secret([7; 32]);
        u.prepare(&refs, Threads::One);
        Narrowing::new(&mut u.work, &mut u.stats, &refs, &mut ok).shuffle(0..64);
        let other: Vec<u32> = u.work.prep.iter().map(|p| p.idx).collect();
        assert_ne!(after, other);
    }
}
