//! The method families that run a handler, one file each: `tools/call` ([`tools`]),
//! `resources/read` ([`resources`]), `prompts/get` ([`prompts`]) and
//! `completion/complete` ([`completion`]). Each reads and checks its params, finds its
//! handler in the registry and hands it to the runner. (The lists, `server/discover` and
//! `subscriptions/listen` are answered by the ladder from `lists` and `listen`; the Tasks
//! extension's `tasks/*` by the task family, through `family`.)

pub(super) mod completion;
pub(super) mod prompts;
pub(super) mod resources;
pub(super) mod tools;
