//! The method families that run a handler, one file each: `tools/call` ([`tools`]),
//! `resources/read` ([`resources`]), `prompts/get` ([`prompts`]) and
//! `completion/complete` ([`completion`]); and the Tasks extension's `tasks/get`,
//! `tasks/update` and `tasks/cancel` ([`tasks`]). Each reads and checks its params, finds its
//! handler in the registry and hands it to the runner. (The lists, `server/discover` and
//! `subscriptions/listen` are answered by the ladder from `lists` and `listen`.)
//!
//! May import: `envelope` (params), `mirror` (`Mcp-Param-*`), `mrtr`, `runner` (through
//! `Server::run`), `outcome`/`reply`, `handler`, `protocol`. Never the ladder.

mod completion;
mod prompts;
mod resources;
mod tasks;
mod tools;
