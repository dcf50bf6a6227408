//! Bounded cache of lifted public keys (issue 3).
