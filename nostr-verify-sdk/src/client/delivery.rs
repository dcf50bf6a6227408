//! What every event the tap delivers goes through after verification.

use std::sync::Arc;

use nostr_gossip::NostrGossip;
use nostr_sdk::pool::policy::{AdmitPolicy, AdmitStatus};
use nostr_sdk::prelude::{
    DatabaseEventStatus, Event, NostrDatabase, RejectedReason, RelayMessage, RelayPoolNotification,
    RelayUrl, SaveEventStatus, SubscriptionId,
};
use tokio::sync::broadcast;

/// What every delivered event goes through after verification: the SDK's steps after
/// `verify_and_cache` (`relay/inner.rs` 1201-1253 in nostr-relay-pool 0.44.3).
pub(super) struct Core {
    pub(super) database: Arc<dyn NostrDatabase>,
    pub(super) gossip: Option<Arc<dyn NostrGossip>>,
    pub(super) admit_policy: Option<Arc<dyn AdmitPolicy>>,
    pub(super) notifications: broadcast::Sender<RelayPoolNotification>,
}

impl Core {
    /// Gossip, admission policy, database status and save, `Event` (first seen) and `Message`
    /// (every copy) notifications. Returns whether the SDK would hand the event to its
    /// subscription (`false`: rejected, deleted, replaced, ...).
    pub(super) async fn admit(
        &self,
        relay_url: &RelayUrl,
        sub: &SubscriptionId,
        event: &Event,
    ) -> bool {
        if let Some(gossip) = &self.gossip {
            if gossip.process(event, Some(relay_url)).await.is_err() {
                return false;
            }
        }
        if let Some(policy) = &self.admit_policy {
            match policy.admit_event(relay_url, sub, event).await {
                Ok(AdmitStatus::Success) => {}
                Ok(AdmitStatus::Rejected { .. }) | Err(_) => return false,
            }
        }
        match self.database.check_id(&event.id).await {
            Ok(DatabaseEventStatus::Saved) => {}
            Ok(DatabaseEventStatus::Deleted) | Err(_) => return false,
            Ok(DatabaseEventStatus::NotExistent) => {
                let notify = match self.database.save_event(event).await {
                    Ok(SaveEventStatus::Success) => true,
                    Ok(SaveEventStatus::Rejected(reason)) => match reason {
                        RejectedReason::Ephemeral
                        | RejectedReason::Duplicate
                        | RejectedReason::Other => true,
                        RejectedReason::Deleted
                        | RejectedReason::Expired
                        | RejectedReason::Replaced
                        | RejectedReason::InvalidDelete => false,
                    },
                    Err(_) => return false,
                };
                if !notify {
                    return false;
                }
                if self.notifications.receiver_count() > 0 {
                    let _ = self.notifications.send(RelayPoolNotification::Event {
                        relay_url: relay_url.clone(),
                        subscription_id: sub.clone(),
                        event: Box::new(event.clone()),
                    });
                }
            }
        }
        if self.notifications.receiver_count() > 0 {
            let _ = self.notifications.send(RelayPoolNotification::Message {
                relay_url: relay_url.clone(),
                message: RelayMessage::event(sub.clone(), event.clone()),
            });
        }
        true
    }
}
