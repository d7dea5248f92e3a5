//! `prompts/get`: the prompt by name, its arguments (names to strings) and the required ones.

use std::collections::BTreeMap;

use http::Extensions;
use serde_json::json;

use crate::handler::{HandlerError, PromptDef};
use crate::protocol::methods::PROMPTS_GET;
use crate::protocol::{ErrorObject, RequestId, RequestMeta};
use crate::server::Server;
use crate::server::envelope::{ParamsView, string_field};
use crate::server::outcome::Outcome;
use crate::server::seal::PendingArguments;

impl Server {
    pub(in crate::server) fn get_prompt(
        &self,
        id: &RequestId,
        meta: RequestMeta,
        view: &ParamsView<'_>,
        extensions: Extensions,
    ) -> Result<Outcome, ErrorObject> {
        let name = string_field(view.name, "name")?;
        let prompt = self.inner.registry.prompt(&name).ok_or_else(|| {
            ErrorObject::invalid_params_with(
                format!("Unknown prompt: {name}"),
                json!({ "name": name }),
            )
        })?;
        let arguments = match view.arguments {
            Some(raw) => serde_json::from_str::<Option<BTreeMap<String, String>>>(raw.get())
                .map_err(|_| {
                    ErrorObject::invalid_params("params.arguments must map names to strings")
                })?
                .unwrap_or_default(),
            None => BTreeMap::new(),
        };
        let missing: Vec<&str> = PromptDef::required_arguments(&prompt.prompt)
            .filter(|a| !arguments.contains_key(*a))
            .collect();
        if !missing.is_empty() {
            return Err(ErrorObject::invalid_params_with(
                format!(
                    "Missing required argument(s) for prompt {name}: {}",
                    missing.join(", ")
                ),
                json!({ "missing": missing }),
            ));
        }
        let salient = serde_json::to_value(&arguments).unwrap_or_default();
        let retry = self.retry_input(
            PROMPTS_GET,
            &name,
            PendingArguments::Value(salient),
            view,
            &extensions,
        )?;
        let handler = prompt.handler.clone();
        Ok(self.run(
            id.clone(),
            meta,
            extensions,
            Some(retry),
            move |ctx| async move {
                handler
                    .get(ctx, arguments)
                    .await
                    .map_err(HandlerError::into_stop)
            },
        ))
    }
}
