//! Layer 1: field, scalar and group arithmetic for secp256k1 (issue 2).
