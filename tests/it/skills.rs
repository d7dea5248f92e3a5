//! The Skills extension (`io.modelcontextprotocol/skills`): skills registered from values and
//! from a directory, advertised in `server/discover` and `initialize`, listed page by page
//! and fetched (`skills/list`, `skills/get`) in both eras, their files read as resources
//! whose digests and sizes match the entries, and changed at runtime: served at once and
//! heard as `notifications/resources/list_changed`. Every skills result is checked against
//! the extension's shapes by the schema support (`assert_skills_result`).

use std::path::PathBuf;

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use stateless_mcp::skills::{self, SkillDef};
use stateless_mcp::{ErrorKind, Server};

use crate::support::legacy::LegacyClient;
use crate::support::listen::Listener;
use crate::support::{Client, fixtures_server, start};

const TOUR: &str = "skill://demo-tour/SKILL.md";

fn skill(name: &str) -> SkillDef {
    SkillDef::new(format!(
        "---\nname: {name}\ndescription: The {name} skill\n---\nDo the {name} thing.\n"
    ))
}

/// The bytes of a `resources/read` content: its text, or its decoded blob.
fn bytes_of(content: &Value) -> Vec<u8> {
    match content["text"].as_str() {
        Some(text) => text.as_bytes().to_vec(),
        None => base64::engine::general_purpose::STANDARD
            .decode(content["blob"].as_str().expect("text or blob"))
            .unwrap(),
    }
}

/// Reads every file of `entry` over `c` and checks its size and digest.
async fn verify_files(c: &Client, entry: &Value) {
    for file in entry["resources"].as_array().unwrap() {
        let uri = file["uri"].as_str().unwrap();
        let x = c
            .request("resources/read", json!("r"), json!({"uri": uri}))
            .await;
        let bytes = bytes_of(&x.result()["contents"][0]);
        assert_eq!(bytes.len() as u64, file["size"].as_u64().unwrap(), "{uri}");
        let digest = format!("sha256:{:x}", Sha256::digest(&bytes));
        assert_eq!(file["digest"], digest, "{uri}");
    }
}

/// Every entry of `skills/list`, walking the pages; and how many pages there were.
async fn list_all(c: &Client) -> (Vec<Value>, usize) {
    let (mut entries, mut pages, mut cursor) = (Vec::new(), 0, None::<String>);
    loop {
        let params = match &cursor {
            Some(at) => json!({"cursor": at}),
            None => json!({}),
        };
        let x = c.request("skills/list", json!(pages), params).await;
        let r = x.result();
        entries.extend(r["skills"].as_array().unwrap().iter().cloned());
        pages += 1;
        match r["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (entries, pages),
        }
    }
}

#[tokio::test]
async fn the_demo_skill_is_advertised_listed_fetched_and_read() {
    let srv = start(fixtures_server()).await;
    let c = Client::new(&srv.url);
    let d = c.request("server/discover", json!(0), json!({})).await;
    let caps = &d.result()["capabilities"];
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({})
    );
    assert!(caps["resources"].is_object(), "{caps}");

    let (entries, _) = list_all(&c).await;
    let tour = entries.iter().find(|e| e["uri"] == TOUR).expect("the tour");
    assert_eq!(tour["frontmatter"]["name"], "demo-tour");
    assert_eq!(tour["frontmatter"]["metadata"]["author"], "stateless-mcp");
    let files: Vec<&str> = tour["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["uri"].as_str().unwrap())
        .collect();
    assert_eq!(files, [TOUR, "skill://demo-tour/references/TOOLS.md"]);

    let got = c
        .request("skills/get", json!(1), json!({"uri": TOUR}))
        .await;
    assert_eq!(&got.result()["skill"], tour);
    verify_files(&c, tour).await;

    // The files are resources like any other: listed, SKILL.md named after the skill.
    let list = c.request("resources/list", json!(2), json!({})).await;
    let manifest = list.result()["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == TOUR)
        .cloned()
        .expect("SKILL.md in resources/list");
    assert_eq!(manifest["name"], "demo-tour");
    assert_eq!(manifest["mimeType"], "text/markdown");
    assert_eq!(manifest["description"], tour["frontmatter"]["description"]);

    for (uri, why) in [
        ("skill://no-such/SKILL.md", "an unknown skill"),
        (
            "skill://demo-tour/references/TOOLS.md",
            "a file that is no SKILL.md",
        ),
    ] {
        let x = c.request("skills/get", json!(3), json!({"uri": uri})).await;
        assert_eq!(x.error_code(), -32602, "{why}: {}", x.body);
        assert_eq!(x.response()["error"]["data"]["uri"], uri);
    }
    let x = c.request("skills/get", json!(4), json!({})).await;
    assert_eq!(x.error_code(), -32602, "no uri: {}", x.body);
}

#[tokio::test]
async fn skills_are_listed_page_by_page() {
    let mut b = Server::builder().page_size(2);
    for name in ["a-one", "b-two", "c-three", "d-four", "e-five"] {
        b = b.skill(skill(name).file("notes/N.txt", format!("notes of {name}")));
    }
    let b = b.skill(skill("nested").prefix("acme/billing"));
    let srv = start(b.build().unwrap()).await;
    let c = Client::new(&srv.url);
    let (entries, pages) = list_all(&c).await;
    assert_eq!(pages, 3);
    let uris: Vec<&str> = entries.iter().map(|e| e["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "skill://a-one/SKILL.md",
            "skill://b-two/SKILL.md",
            "skill://c-three/SKILL.md",
            "skill://d-four/SKILL.md",
            "skill://e-five/SKILL.md",
            "skill://acme/billing/nested/SKILL.md"
        ]
    );
    for e in &entries {
        verify_files(&c, e).await;
    }
    let x = c
        .request("skills/list", json!(9), json!({"cursor": "not-a-cursor"}))
        .await;
    assert_eq!(x.error_code(), -32602, "{}", x.body);
}

#[tokio::test]
async fn a_server_without_skills_does_not_offer_the_extension() {
    let srv = start(Server::builder().advertise_tools().build().unwrap()).await;
    let c = Client::new(&srv.url);
    let d = c.request("server/discover", json!(0), json!({})).await;
    assert!(d.result()["capabilities"].get("extensions").is_none());
    for method in ["skills/list", "skills/get"] {
        let x = c.request(method, json!(1), json!({"uri": TOUR})).await;
        assert_eq!((x.status, x.error_code()), (404, -32601), "{method}");
    }
}

#[tokio::test]
async fn legacy_sessions_see_skills_in_their_own_words() {
    let srv = start(fixtures_server()).await;
    let mut c = LegacyClient::new(&srv.url);
    let init = c.initialize(json!({})).await;
    assert_eq!(
        init.result()["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/skills": {}}),
        "only the Skills extension, not Tasks: {}",
        init.body
    );
    // The schema support checks each result strictly: no resultType, ttlMs, cacheScope.
    let list = c.request(json!(1), "skills/list", json!({})).await;
    let tour = list.result()["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uri"] == TOUR)
        .cloned()
        .expect("the tour");
    let got = c
        .request(json!(2), "skills/get", json!({"uri": TOUR}))
        .await;
    assert_eq!(got.result()["skill"], tour);
    let unknown = c
        .request(json!(3), "skills/get", json!({"uri": "skill://x/SKILL.md"}))
        .await;
    assert_eq!(unknown.error_code(), -32602);
    let read = c
        .request(json!(4), "resources/read", json!({"uri": TOUR}))
        .await;
    let text = read.result()["contents"][0]["text"].as_str().unwrap();
    assert_eq!(text.len() as u64, tour["resources"][0]["size"]);
}

#[tokio::test]
async fn a_runtime_change_of_skills_is_served_at_once_and_heard() {
    let server = Server::builder().advertise_skills().build().unwrap();
    let catalog = server.catalog();
    let srv = start(server).await;
    let c = Client::new(&srv.url);
    let d = c.request("server/discover", json!(0), json!({})).await;
    assert_eq!(
        d.result()["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({})
    );
    assert!(list_all(&c).await.0.is_empty());
    let mut l = Listener::open(&c, json!("l"), json!({"resourcesListChanged": true})).await;
    assert_eq!(
        l.next_kind().await,
        "notifications/subscriptions/acknowledged"
    );
    let legacy = LegacyClient::connect(&srv.url, json!({})).await;
    let mut legacy_stream = legacy.open_stream().await;

    let applied = catalog
        .change()
        .add_skill(skill("fresh").file("a.md", "A"))
        .apply()
        .unwrap();
    assert_eq!(l.next_kind().await, "notifications/resources/list_changed");
    let heard = legacy_stream.next().await.expect("a legacy list change");
    assert_eq!(heard["method"], "notifications/resources/list_changed");
    assert_eq!(catalog.skill_uris(), ["skill://fresh/SKILL.md"]);
    let (entries, _) = list_all(&c).await;
    assert_eq!(entries.len(), 1);
    verify_files(&c, &entries[0]).await;
    assert_eq!(applied.version(), 2);

    // Replaced: the old files go with it.
    catalog
        .change()
        .replace_skill(skill("fresh").file("b.md", "B"))
        .apply()
        .unwrap();
    assert_eq!(l.next_kind().await, "notifications/resources/list_changed");
    let gone = c
        .request(
            "resources/read",
            json!(1),
            json!({"uri": "skill://fresh/a.md"}),
        )
        .await;
    assert_eq!(gone.error_code(), -32602, "{}", gone.body);
    verify_files(&c, &list_all(&c).await.0[0]).await;

    // Refused changes change nothing.
    for refused in [
        catalog.change().add_skill(skill("fresh")),
        catalog.change().remove_skill("skill://nope/SKILL.md"),
        catalog.change().add_skill(SkillDef::new("no front matter")),
    ] {
        let e = refused.apply().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidDefinition, "{e}");
    }
    catalog
        .change()
        .remove_skill("skill://fresh/SKILL.md")
        .apply()
        .unwrap();
    assert_eq!(l.next_kind().await, "notifications/resources/list_changed");
    assert!(list_all(&c).await.0.is_empty());
    let gone = c
        .request(
            "skills/get",
            json!(2),
            json!({"uri": "skill://fresh/SKILL.md"}),
        )
        .await;
    assert_eq!(gone.error_code(), -32602);

    // A server built without the extension refuses to add a skill at runtime.
    let plain = Server::builder().advertise_tools().build().unwrap();
    let e = plain
        .catalog()
        .change()
        .add_skill(skill("x"))
        .apply()
        .unwrap_err();
    assert!(e.to_string().contains("advertise_skills"), "{e}");
}

/// A fresh directory under the system's temporary one, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn skills_are_read_from_a_directory() {
    let root = Scratch(std::env::temp_dir().join(format!("it-skills-{}", std::process::id())));
    let dir = root.0.join("pdf-forms");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: pdf-forms\ndescription: Fill PDF forms\nlicense: MIT\n---\nRun scripts/fill.py.\n",
    )
    .unwrap();
    std::fs::write(dir.join("scripts/fill.py"), "print('filled')\n").unwrap();
    std::fs::write(dir.join("scripts/blank.bin"), [0u8, 0xff, 0x10]).unwrap();
    let srv = start(Server::builder().skills_dir(&root.0).build().unwrap()).await;
    let c = Client::new(&srv.url);
    let (entries, _) = list_all(&c).await;
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["frontmatter"]["license"], "MIT");
    let files: Vec<&str> = entries[0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "skill://pdf-forms/SKILL.md",
            "skill://pdf-forms/scripts/blank.bin",
            "skill://pdf-forms/scripts/fill.py"
        ]
    );
    verify_files(&c, &entries[0]).await;

    // A directory that is not there fails the build, saying which.
    let e = Server::builder()
        .skills_dir(root.0.join("missing"))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
    assert_eq!(skills::from_dir(&root.0).unwrap().len(), 1);
}
