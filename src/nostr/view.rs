//! [`EventView`]: the byte-level view of an event that the batch code works on.
//!
//! nostr 0.45 and nostr 0.44 `Event`s are different types with the same fields. Everything
//! above this file (id hashing, batching, the ingest service) is written once against this
//! trait; a nostr version bump touches only the impls here.

/// Read-only access to the fields of a signed Nostr event, as bytes and plain values.
///
/// Implemented for `nostr::event::Event` (nostr 0.45, feature `nostr`), `nostr044::Event`
/// (nostr 0.44, feature `nostr-0-44`) and references to them. The trait is sealed: the
/// verdicts of this crate are only promised for those types.
pub trait EventView: sealed::Sealed {
    /// The claimed event id (32 bytes).
    fn id_bytes(&self) -> &[u8; 32];
    /// The author's x-only public key bytes (not checked to be a valid key).
    fn pubkey_bytes(&self) -> &[u8; 32];
    /// The signature `r || s` (64 bytes, not checked).
    fn sig_bytes(&self) -> &[u8; 64];
    /// `created_at`, seconds.
    fn created_at(&self) -> u64;
    /// The kind number.
    fn kind(&self) -> u16;
    /// The tags, each a list of strings, in order.
    fn tag_slices(&self) -> impl Iterator<Item = &[String]>;
    /// The content.
    fn content(&self) -> &str;
}

mod sealed {
    #[allow(unreachable_pub)] // sealed-trait pattern: public name in a private module
    pub trait Sealed {}
}

impl<E: EventView + ?Sized> sealed::Sealed for &E {}

impl<E: EventView + ?Sized> EventView for &E {
    fn id_bytes(&self) -> &[u8; 32] {
        (**self).id_bytes()
    }
    fn pubkey_bytes(&self) -> &[u8; 32] {
        (**self).pubkey_bytes()
    }
    fn sig_bytes(&self) -> &[u8; 64] {
        (**self).sig_bytes()
    }
    fn created_at(&self) -> u64 {
        (**self).created_at()
    }
    fn kind(&self) -> u16 {
        (**self).kind()
    }
    fn tag_slices(&self) -> impl Iterator<Item = &[String]> {
        (**self).tag_slices()
    }
    fn content(&self) -> &str {
        (**self).content()
    }
}

#[cfg(feature = "nostr")]
impl sealed::Sealed for ::nostr::event::Event {}

#[cfg(feature = "nostr")]
impl EventView for ::nostr::event::Event {
    fn id_bytes(&self) -> &[u8; 32] {
        self.id.as_bytes()
    }
    fn pubkey_bytes(&self) -> &[u8; 32] {
        self.pubkey.as_bytes()
    }
    fn sig_bytes(&self) -> &[u8; 64] {
        self.sig.as_bytes()
    }
    fn created_at(&self) -> u64 {
        self.created_at.as_secs()
    }
    fn kind(&self) -> u16 {
        self.kind.as_u16()
    }
    fn tag_slices(&self) -> impl Iterator<Item = &[String]> {
        self.tags.iter().map(|t| t.as_slice())
    }
    fn content(&self) -> &str {
        &self.content
    }
}

#[cfg(feature = "nostr-0-44")]
impl sealed::Sealed for nostr044::Event {}

#[cfg(feature = "nostr-0-44")]
impl EventView for nostr044::Event {
    fn id_bytes(&self) -> &[u8; 32] {
        self.id.as_bytes()
    }
    fn pubkey_bytes(&self) -> &[u8; 32] {
        self.pubkey.as_bytes()
    }
    fn sig_bytes(&self) -> &[u8; 64] {
        // secp256k1 0.29 `schnorr::Signature` derefs only through `AsRef<[u8; 64]>`.
        AsRef::<[u8; 64]>::as_ref(&self.sig)
    }
    fn created_at(&self) -> u64 {
        self.created_at.as_secs()
    }
    fn kind(&self) -> u16 {
        self.kind.as_u16()
    }
    fn tag_slices(&self) -> impl Iterator<Item = &[String]> {
        self.tags.iter().map(|t| t.as_slice())
    }
    fn content(&self) -> &str {
        &self.content
    }
}

/// A test seam for code that must survive a panic inside verification (the ingest service's
/// workers): an event that panics when its id is read if `panics` is set, as a verifier bug
/// would, and otherwise reads as `event`.
#[cfg(all(test, feature = "nostr"))]
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PanickingEvent {
    /// The event read through.
    pub(crate) event: ::nostr::event::Event,
    /// Whether reading the id panics.
    pub(crate) panics: bool,
}

#[cfg(all(test, feature = "nostr"))]
impl sealed::Sealed for PanickingEvent {}

#[cfg(all(test, feature = "nostr"))]
impl EventView for PanickingEvent {
    fn id_bytes(&self) -> &[u8; 32] {
        assert!(!self.panics, "test seam: a panic inside verification");
        self.event.id_bytes()
    }
    fn pubkey_bytes(&self) -> &[u8; 32] {
        self.event.pubkey_bytes()
    }
    fn sig_bytes(&self) -> &[u8; 64] {
        self.event.sig_bytes()
    }
    fn created_at(&self) -> u64 {
        self.event.created_at()
    }
    fn kind(&self) -> u16 {
        self.event.kind()
    }
    fn tag_slices(&self) -> impl Iterator<Item = &[String]> {
        self.event.tag_slices()
    }
    fn content(&self) -> &str {
        self.event.content()
    }
}
