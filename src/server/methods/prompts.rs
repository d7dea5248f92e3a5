//! `prompts/get`: the prompt by name, its arguments (names to strings) and the required ones.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use super::Call;
use crate::handler::registry::Registry;
use crate::handler::{HandlerError, PromptDef, PromptHandler};
use crate::protocol::ErrorObject;
use crate::protocol::methods::PROMPTS_GET;
use crate::server::ask::Invoke;
use crate::server::envelope::{ParamsView, string_field};
use crate::server::outcome::Outcome;
use crate::server::seal::PendingArguments;

pub(in crate::server) fn get_prompt(
    call: Call<'_>,
    reg: &Registry,
    view: &ParamsView<'_>,
) -> Result<Outcome, ErrorObject> {
    let name = string_field(view.name, "name")?;
    let prompt = reg.prompt(&name).ok_or_else(|| {
        ErrorObject::invalid_params_with(format!("Unknown prompt: {name}"), json!({ "name": name }))
    })?;
    let arguments = match view.arguments {
        Some(raw) => serde_json::from_str::<Option<BTreeMap<String, String>>>(raw.get())
            .map_err(|_| ErrorObject::invalid_params("params.arguments must map names to strings"))?
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
    let retry = call.server.sealer().retry_input(
        PROMPTS_GET,
        bytes::Bytes::copy_from_slice(name.as_bytes()),
        PendingArguments::Value(salient),
        view,
        &call.extensions,
    )?;
    let invoke = Invoke {
        args: (prompt.handler.clone(), arguments),
        run: |ctx, (handler, arguments): (Arc<dyn PromptHandler>, _)| {
            let fut = handler.get(ctx, arguments);
            async move { fut.await.map_err(HandlerError::into_stop) }
        },
    };
    Ok(call.run(retry, invoke))
}
