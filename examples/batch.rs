//! Benchmark placeholder (issue 3 replaces it).
fn main() {
    let mut v = nostr_verify::Verifier::new();
    let mut ok = Vec::new();
    println!("empty batch: {}", v.verify_batch(&[], &mut ok));
}
