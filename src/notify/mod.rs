//! Change notifications: the [`Notifier`] handle application code announces changes through,
//! and the events ([`ChangeEvent`]) it carries to every replica holding a
//! `subscriptions/listen` stream, over a bus ([`NotifyBus`](crate::extend::NotifyBus); the
//! buses that ship and their contract are in [`crate::backends`]).

mod event;
mod notifier;

pub use event::{ChangeEvent, ListFingerprints, TaskChange};
pub use notifier::Notifier;
