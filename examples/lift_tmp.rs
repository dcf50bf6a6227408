//! TEMP: lift timing.
use nostr_verify::arithmetic::field::FieldElement;
use nostr_verify::backend::Backend;
use std::hint::black_box;
#[path = "../benches/support/cpu_time.rs"]
mod support;
use support::{median, thread_cpu_ns as cpu_ns};
fn main() {
    let n = 1024;
    let mut x = 7u64;
    let xs: Vec<FieldElement> = (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            FieldElement::from_u64(x >> 1)
        })
        .collect();
    let mut ys = vec![FieldElement::ZERO; n];
    let mut ok = vec![false; n];
    let mut r = vec![];
    for _ in 0..21 {
        let t = cpu_ns();
        Backend::Portable.lift_x_many_vartime(black_box(&xs), &mut ys, &mut ok);
        r.push((cpu_ns() - t) as f64 / n as f64);
    }
    println!("lift {:.1} ns per x", median(&r));
}
