//! Layer 2: multi-scalar multiplication (issue 3).
