//! The single dispatch point for SIMD backends.
