//! nostr-sdk 0.44 relay-pool tap (issue 5).
