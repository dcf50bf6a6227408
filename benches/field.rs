//! Field microbenchmarks (issue 2).
fn main() {}
