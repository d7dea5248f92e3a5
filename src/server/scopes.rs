//! The scopes declared at registration, as [`ScopeRequirements`] for authorization layers,
//! and the digest of who the caller is ([`principal_digest`]), which listen streams and
//! tasks are bound to.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::Extensions;
use sha2::{Digest as _, Sha256};

use super::Server;
use super::catalog::Serving;
use crate::handler::{Principal, RequiredScopes, ScopeRequirements};

/// The digest listen streams and tasks are bound to: who the caller is (issuer, subject,
/// client id), not the token's claims. `None` for an anonymous caller.
pub(crate) fn principal_digest(extensions: &Extensions) -> Option<String> {
    let p = extensions.get::<Principal>()?;
    Some(URL_SAFE_NO_PAD.encode(&Sha256::digest(p.binding().as_bytes())[..16]))
}

impl Serving {
    /// The scopes declared on what a request for `method` names (see
    /// [`Server::required_scopes`]), as the serving registry keeps them: shared with it, not
    /// copied.
    pub(super) fn required_scopes(
        &self,
        method: &str,
        name: Option<&str>,
    ) -> RequiredScopes<'static> {
        match self.load().registry.item_scopes(method, name) {
            Some(scopes) if !scopes.is_empty() => RequiredScopes::Shared(scopes.clone()),
            _ => RequiredScopes::NONE,
        }
    }

    /// Every scope declared on any definition, sorted, without repeats.
    pub(super) fn declared_scopes(&self) -> Vec<String> {
        let now = self.load();
        let reg = &now.registry;
        let mut all: Vec<String> = reg
            .tools
            .iter()
            .flat_map(|t| t.scopes.iter().cloned())
            .chain(reg.prompts.iter().flat_map(|p| p.scopes.iter().cloned()))
            .chain(reg.resource_scopes().iter().flat_map(|s| s.to_vec()))
            .chain(reg.template_scopes().iter().flat_map(|s| s.to_vec()))
            .collect();
        all.sort();
        all.dedup();
        all
    }
}

impl ScopeRequirements for Server {
    fn required_scopes(&self, method: &str, name: Option<&str>) -> RequiredScopes<'_> {
        self.serving().required_scopes(method, name)
    }

    fn all_scopes(&self) -> Vec<String> {
        self.declared_scopes()
    }
}

#[cfg(test)]
mod tests {
    use crate::handler::{HandlerError, PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};
    use crate::handler::{RequiredScopes, ScopeRequirements};
    use crate::{RequestContext, Server};

    #[test]
    fn scopes_by_method_and_name() {
        let server = Server::builder()
            .tool(
                ToolDef::new("w")
                    .scopes(["files:write"])
                    .raw_handler(|_: RequestContext, _| async { Ok::<_, HandlerError>("x") }),
            )
            .prompt(PromptDef::new("p").scopes(["prompts"]).handler(
                |_, _: crate::handler::PromptArguments| async {
                    Ok(crate::protocol::GetPromptResult::new(Vec::new()))
                },
            ))
            .resource(
                ResourceDef::new("test://fixed", "fixed")
                    .scopes(["res:fixed"])
                    .handler(|_, uri| async move {
                        Ok(crate::protocol::ResourceContents::text(uri, "x"))
                    }),
            )
            .resource_template(
                ResourceTemplateDef::new("test://t/{id}", "t")
                    .scopes(["res:t"])
                    .handler(|_, uri, _: crate::handler::TemplateVars| async move {
                        Ok(crate::protocol::ResourceContents::text(uri, "x"))
                    }),
            )
            .build()
            .unwrap();
        assert_eq!(
            server.required_scopes("tools/call", Some("w")),
            ["files:write"]
        );
        assert!(
            server
                .required_scopes("tools/call", Some("nope"))
                .is_empty()
        );
        assert!(server.required_scopes("tools/call", None).is_empty());
        assert_eq!(
            server.required_scopes("prompts/get", Some("p")),
            ["prompts"]
        );
        assert_eq!(
            server.required_scopes("resources/read", Some("test://fixed")),
            ["res:fixed"]
        );
        assert_eq!(
            server.required_scopes("resources/read", Some("test://t/9")),
            ["res:t"]
        );
        assert!(server.required_scopes("tools/list", Some("w")).is_empty());
        // Handed to an authorization layer shared with the registry, not copied.
        let shared = |method, name| ScopeRequirements::required_scopes(&server, method, name);
        let (a, b) = (
            shared("tools/call", Some("w")),
            shared("tools/call", Some("w")),
        );
        match (&a, &b) {
            (RequiredScopes::Shared(a), RequiredScopes::Shared(b)) => {
                assert!(std::sync::Arc::ptr_eq(a, b));
            }
            _ => panic!("declared scopes are shared: {a:?}"),
        }
        assert_eq!(a, RequiredScopes::from(vec!["files:write".to_owned()]));
        assert!(matches!(
            shared("tools/call", Some("nope")),
            RequiredScopes::Borrowed([])
        ));
        assert_eq!(
            server.declared_scopes(),
            ["files:write", "prompts", "res:fixed", "res:t"]
        );
    }
}
