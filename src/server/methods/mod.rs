//! The method families that run a handler, one file each: `tools/call` ([`tools`]),
//! `resources/read` ([`resources`]), `prompts/get` ([`prompts`]) and
//! `completion/complete` ([`completion`]); and the Tasks extension's `tasks/get`,
//! `tasks/update` and `tasks/cancel` ([`tasks`]). Each reads and checks its params, finds its
//! handler in the registry and hands it to the runner. (The lists, `server/discover` and
//! `subscriptions/listen` are answered by the ladder from `lists` and `listen`.)

pub(super) mod completion;
pub(super) mod prompts;
pub(super) mod resources;
mod tasks;
pub(super) mod tools;
