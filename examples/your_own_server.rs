//! Your own server: application state (a small in-memory notes "database" standing for a
//! connection pool), typed tools (one read-only), a resource template with typed
//! variables, a prompt with typed arguments, a tool that asks the user to confirm
//! (form elicitation), served by the [`Runner`] — and unit tests with the in-process
//! test client ([`stateless_mcp::testing`]) at the bottom.
//!
//! Run with `cargo run --example your_own_server --features testing`, then POST MCP
//! requests to `http://127.0.0.1:8080/mcp`. Test with
//! `cargo test --example your_own_server --features testing`.
//!
//! Needs the `testing` feature (its unit tests use the in-process client); the server itself
//! needs none.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use stateless_mcp::protocol::{GetPromptResult, PromptMessage, ResourceContents};
use stateless_mcp::{
    Error, HandlerError, InputRequired, PromptDef, RequestContext, ResourceTemplateDef, Runner,
    Server, State, ToolDef,
};

/// The application's database: here a map behind a lock; in a real server a pool
/// (`sqlx::PgPool`, a Redis client, …). Cheap to clone, registered once with `.state(…)`.
#[derive(Clone, Default)]
pub struct Notes(Arc<RwLock<BTreeMap<u64, Note>>>);

/// One stored note.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Note {
    /// The note's id.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// Its text.
    pub body: String,
}

impl Notes {
    fn insert(&self, title: String, body: String) -> Note {
        let mut notes = self.0.write().expect("the lock is never poisoned");
        let id = notes.keys().next_back().map_or(1, |last| last + 1);
        let note = Note { id, title, body };
        notes.insert(id, note.clone());
        note
    }

    fn get(&self, id: u64) -> Option<Note> {
        self.0
            .read()
            .expect("the lock is never poisoned")
            .get(&id)
            .cloned()
    }

    fn search(&self, word: &str) -> Vec<Note> {
        let notes = self.0.read().expect("the lock is never poisoned");
        let word = word.to_lowercase();
        notes
            .values()
            .filter(|n| {
                n.title.to_lowercase().contains(&word) || n.body.to_lowercase().contains(&word)
            })
            .cloned()
            .collect()
    }

    fn remove(&self, id: u64) -> Option<Note> {
        self.0
            .write()
            .expect("the lock is never poisoned")
            .remove(&id)
    }
}

/// `add_note` arguments.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct NewNote {
    /// A short title.
    pub title: String,
    /// The note's text.
    pub body: String,
}

/// `search_notes` arguments.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Search {
    /// A word to look for in titles and texts (case-insensitive).
    pub word: String,
}

/// What `search_notes` returns (its `outputSchema`).
#[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq)]
pub struct Found {
    /// The matching notes.
    pub notes: Vec<Note>,
}

/// `delete_note` arguments.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Delete {
    /// The id of the note to delete.
    pub id: u64,
}

/// The form the user fills in before a note is deleted.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Confirm {
    /// Really delete it?
    pub sure: bool,
}

/// The variables of `notes://{id}`.
#[derive(Deserialize)]
pub struct NoteUri {
    /// The note's id.
    pub id: u64,
}

/// The arguments of the `summarize` prompt.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Summarize {
    /// The id of the note to summarize.
    pub id: u64,
    /// How many sentences at most.
    pub sentences: Option<u32>,
}

/// The server: every handler reads the same `Notes`, registered once.
pub fn server(notes: Notes) -> Result<Server, Error> {
    Server::builder()
        .state(notes)
        .tool(
            ToolDef::new("add_note")
                .description("Stores a note and returns it with its id")
                .structured_handler(
                    |_ctx: RequestContext, State(db): State<Notes>, n: NewNote| async move {
                        Ok::<_, HandlerError>(db.insert(n.title, n.body))
                    },
                ),
        )
        .tool(
            ToolDef::new("search_notes")
                .description("Finds notes containing a word")
                .read_only(true)
                .idempotent(true)
                .open_world(false)
                .structured_handler(
                    |_ctx: RequestContext, State(db): State<Notes>, s: Search| async move {
                        Ok::<_, HandlerError>(Found { notes: db.search(&s.word) })
                    },
                ),
        )
        .tool(
            ToolDef::new("delete_note")
                .description("Deletes a note after the user confirms")
                .destructive(true)
                .handler(
                    |ctx: RequestContext, State(db): State<Notes>, d: Delete| async move {
                        let Some(note) = db.get(d.id) else {
                            // Meant for the model: it can correct the id.
                            return Err(HandlerError::new(format!("there is no note {}", d.id)));
                        };
                        match ctx.input().accepted::<Confirm>("confirm") {
                            Some(Confirm { sure: true }) => {
                                db.remove(d.id);
                                Ok(format!("deleted {:?}", note.title))
                            }
                            Some(Confirm { sure: false }) => Ok("kept it".to_owned()),
                            None => Err(InputRequired::new()
                                .elicit::<Confirm>("confirm", format!("Delete {:?}?", note.title))?
                                .into()),
                        }
                    },
                ),
        )
        .resource_template(
            ResourceTemplateDef::new("notes://{id}", "note")
                .description("One note as text")
                .mime_type("text/plain")
                .handler(
                    |_ctx: RequestContext, State(db): State<Notes>, uri: String, v: NoteUri| async move {
                        let note = db.get(v.id).ok_or_else(|| Error::resource_not_found(&uri))?;
                        Ok(ResourceContents::text(uri, format!("# {}\n\n{}", note.title, note.body)))
                    },
                ),
        )
        .prompt(
            PromptDef::new("summarize")
                .description("Asks the model to summarize a note")
                .handler(
                    |_ctx: RequestContext, State(db): State<Notes>, s: Summarize| async move {
                        let note = db
                            .get(s.id)
                            .ok_or_else(|| HandlerError::new(format!("there is no note {}", s.id)))?;
                        let n = s.sentences.unwrap_or(2);
                        Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                            "Summarize in at most {n} sentences:\n\n{}",
                            note.body
                        ))]))
                    },
                ),
        )
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = server(Notes::default())?;
    eprintln!("listening on http://127.0.0.1:8080/mcp");
    // TCP_NODELAY, HTTP/1.1 and h2c, /healthz and /readyz, a graceful drain on SIGTERM.
    Runner::new(server)
        .listen(([127, 0, 0, 1], 8080))
        .serve()
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use stateless_mcp::testing::{Answer, TestClient, TestError};

    fn client() -> TestClient {
        TestClient::new(server(Notes::default()).unwrap())
    }

    async fn add(c: &TestClient, title: &str, body: &str) -> Note {
        let new = NewNote {
            title: title.into(),
            body: body.into(),
        };
        c.call_tool("add_note")
            .arguments(&new)
            .send()
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn tools_share_the_database() {
        let c = client();
        let tools = c.list_tools().await.unwrap();
        let search = tools.iter().find(|t| t.name == "search_notes").unwrap();
        let hints = search.annotations.as_ref().unwrap();
        assert_eq!(hints.read_only_hint, Some(true));

        assert_eq!(add(&c, "Groceries", "milk, eggs").await.id, 1);
        assert_eq!(add(&c, "Ideas", "a notes server").await.id, 2);
        let found: Found = c
            .call_tool("search_notes")
            .arguments(&Search {
                word: "MILK".into(),
            })
            .send()
            .await
            .unwrap();
        assert_eq!(found.notes.len(), 1);
        assert_eq!(found.notes[0].title, "Groceries");
    }

    #[tokio::test]
    async fn deleting_asks_first() {
        let c = client();
        add(&c, "Old", "remove me").await;
        // Without elicitation the server must not ask: -32021.
        let err = c
            .call_tool("delete_note")
            .arguments(&Delete { id: 1 })
            .result()
            .await;
        assert_eq!(err.unwrap_err().code(), Some(-32021));
        // With it, the user says yes (the callback answers each round).
        let c = c
            .capabilities(serde_json::json!({"elicitation": {"form": {}}}))
            .on_input(|_key, _request| Some(Answer::accept(&Confirm { sure: true })));
        let done: String = c
            .call_tool("delete_note")
            .arguments(&Delete { id: 1 })
            .send()
            .await
            .unwrap();
        assert_eq!(done, "deleted \"Old\"");
        // Gone: the tool says so to the model (a result with isError).
        let again = c
            .call_tool("delete_note")
            .arguments(&Delete { id: 1 })
            .send::<String>()
            .await;
        assert!(matches!(again, Err(TestError::Tool(_))));
        assert_eq!(again.unwrap_err().tool_text(), Some("there is no note 1"));
    }

    #[tokio::test]
    async fn the_template_and_the_prompt_read_typed_values() {
        let c = client();
        add(&c, "Plan", "Write the tests first.").await;
        assert_eq!(
            c.read_resource("notes://1").text().await.unwrap(),
            "# Plan\n\nWrite the tests first."
        );
        let missing = c.read_resource("notes://9").send().await.unwrap_err();
        assert_eq!(missing.code(), Some(-32602));
        let prompt = c
            .get_prompt("summarize")
            .arguments(&Summarize {
                id: 1,
                sentences: Some(1),
            })
            .send()
            .await
            .unwrap();
        let text = prompt.messages[0].content.as_text().unwrap();
        assert!(
            text.starts_with("Summarize in at most 1 sentences"),
            "{text}"
        );
    }
}
