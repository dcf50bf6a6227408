//! The benchmark programs of `nostr-verify`: criterion micro-benchmarks in `benches/` and
//! whole-batch, real-event, ingest, gift-wrap and CLI benchmarks in `examples/`.
//! `bench/README.md` lists each with the command that runs it. This library is empty: Cargo
//! needs a target for the package, and the programs share their helpers by `#[path]`.
