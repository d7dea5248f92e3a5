//! `completion/complete`: the whole request read (the only method that reads its params
//! whole), its reference checked against the registry, the completion handler run and its
//! result held to the value limit.

use std::sync::Arc;

use http::Extensions;
use serde_json::value::RawValue;

use crate::handler::CompletionHandler;
use crate::handler::HandlerError;
use crate::handler::context_meta::ContextMeta;
use crate::handler::registry::Registry;
use crate::protocol::{CompleteRequest, CompletionReference, ErrorObject, RequestId};
use crate::server::Server;
use crate::server::envelope;
use crate::server::outcome::Outcome;
use crate::server::runner::run;

pub(in crate::server) fn complete(
    server: &Server,
    reg: &Registry,
    id: &RequestId,
    meta: ContextMeta,
    body: &[u8],
    handler: Arc<dyn CompletionHandler>,
    extensions: Extensions,
) -> Result<Outcome, ErrorObject> {
    // The only method that reads its params whole: read them again from the body.
    let params = envelope::parse_message(body)?.params;
    let raw = params.map(RawValue::get).unwrap_or("{}");
    let request: CompleteRequest = serde_json::from_str(raw)
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid completion request: {e}")))?;
    let known = match &request.reference {
        CompletionReference::Prompt { name } => reg.prompt(name).is_some(),
        CompletionReference::Resource { uri } => reg.knows_resource_reference(uri),
    };
    if !known {
        return Err(ErrorObject::invalid_params(
            "Invalid completion reference: nothing by that name",
        ));
    }
    Ok(run(
        server,
        id.clone(),
        meta,
        extensions,
        None,
        move |ctx| async move {
            let mut result = handler
                .complete(ctx, request)
                .await
                .map_err(HandlerError::into_stop)?;
            result.enforce_limit();
            Ok(result)
        },
    ))
}
