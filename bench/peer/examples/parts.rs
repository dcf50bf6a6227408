//! The parts of a small batch, ours (portable arm) against the crates.io nostr-verify 0.1.0:
//! the x-only lifts and the MSM at the point counts small batches make (N = n + 2k + 2), thread
//! CPU time, median of `ROUNDS` (default 31) rounds. For the profile in docs/experiments.md.
//!
//!   cargo run --release --manifest-path bench/peer/Cargo.toml --example parts

use nostr_verify::arithmetic::field::FieldElement;
use nostr_verify::arithmetic::group::AffinePoint;
use nostr_verify::arithmetic::words::FieldElement4x64;
use nostr_verify::backend::{self, Backend};
use nostr_verify::msm;
use nostr_verify_peer as peer;
use rand::{Rng, RngCore};
use std::hint::black_box;

fn cpu_ns() -> u64 {
    cpu_time::ThreadTime::now().as_duration().as_nanos() as u64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median µs of `f` over `rounds` rounds of `iters` calls.
fn time(rounds: usize, iters: usize, mut f: impl FnMut()) -> f64 {
    f();
    median(
        (0..rounds)
            .map(|_| {
                let t = cpu_ns();
                for _ in 0..iters {
                    f();
                }
                (cpu_ns() - t) as f64 / 1e3 / iters as f64
            })
            .collect(),
    )
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(31);
    let arm = if backend::selected() == Backend::PortableBaseline {
        Backend::PortableBaseline
    } else {
        Backend::Portable
    };
    backend::set_selected(arm);
    let mut rng = rand::thread_rng();
    // Random x-only keys' bytes (valid x coordinates).
    let mut xs_bytes: Vec<[u8; 32]> = Vec::new();
    while xs_bytes.len() < 256 {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        if AffinePoint::lift_x_bytes_vartime(&b).is_some() {
            xs_bytes.push(b);
        }
    }
    println!("ours on `{}`; µs, median of {rounds} rounds", arm.name());
    println!("| part | n | peer | ours | peer / ours |");
    println!("|---|---|---|---|---|");
    for n in [17usize, 24, 64, 72, 128] {
        let xs: Vec<FieldElement> = xs_bytes[..n]
            .iter()
            .map(|b| FieldElement::from_bytes(b).unwrap())
            .collect();
        let mut ys = vec![FieldElement::ZERO; n];
        let mut ok = vec![false; n];
        let ours = time(rounds, 20, || {
            arm.lift_x_many_vartime(black_box(&xs), &mut ys, &mut ok)
        });
        let theirs = time(rounds, 20, || {
            for b in &xs_bytes[..n] {
                black_box(peer::group::Affine::lift_x(black_box(b)));
            }
        });
        println!(
            "| lift x | {n} | {theirs:.1} | {ours:.1} | {:.2}x |",
            theirs / ours
        );
    }
    {
        // One field inversion (every batch-affine round of Pippenger pays one).
        let fs: Vec<FieldElement4x64> = xs_bytes[..64]
            .iter()
            .map(|b| FieldElement4x64::from_fe(&FieldElement::from_bytes(b).unwrap()))
            .collect();
        let ours = time(rounds, 10, || {
            for f in &fs {
                black_box(black_box(f).invert_vartime());
            }
        }) / 64.0;
        let pfs: Vec<peer::field::Fe> = xs_bytes[..64]
            .iter()
            .map(|b| peer::field::Fe::from_bytes(b).unwrap())
            .collect();
        let theirs = time(rounds, 10, || {
            for f in &pfs {
                black_box(black_box(f).inv());
            }
        }) / 64.0;
        println!(
            "| field inversion | 1 | {theirs:.2} | {ours:.2} | {:.2}x |",
            theirs / ours
        );
    }
    for n in [20usize, 34, 50, 82, 130, 194] {
        let pts: Vec<AffinePoint> = (0..n)
            .map(|i| AffinePoint::lift_x_bytes_vartime(&xs_bytes[i % 256]).unwrap())
            .collect();
        let ks: Vec<u128> = (0..n).map(|_| rng.gen()).collect();
        let terms: Vec<peer::msm::Term> = (0..n)
            .map(|i| peer::msm::Term {
                point: peer::group::Affine::lift_x(&xs_bytes[i % 256]).unwrap(),
                k: ks[i],
            })
            .collect();
        let mut s = msm::Scratch::default();
        let mut ps = peer::msm::Scratch::default();
        let iters = (2000 / n).max(2);
        let ours = time(rounds, iters, || {
            black_box(msm::msm_vartime(black_box(&pts), &ks, &mut s));
        });
        let theirs = time(rounds, iters, || {
            black_box(peer::msm::msm(black_box(&terms), &mut ps));
        });
        let mut ss = msm::straus::Scratch::default();
        let straus = time(rounds, iters, || {
            black_box(msm::straus::msm_vartime(black_box(&pts), &ks, 4, &mut ss));
        });
        let peer_straus = time(rounds, iters, || {
            black_box(peer::msm::strauss(black_box(&terms), 4, &mut ps));
        });
        println!(
            "| MSM (each's choice) | {n} | {theirs:.1} | {ours:.1} | {:.2}x |",
            theirs / ours
        );
        println!(
            "| MSM Strauss w=4 | {n} | {peer_straus:.1} | {straus:.1} | {:.2}x |",
            peer_straus / straus
        );
    }
}
