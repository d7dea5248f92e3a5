//! `resources/read`: the URI (it needs a scheme), the resource or template that serves it,
//! and the caching fields (the resource's own policy, else the server's).

use std::sync::Arc;

use serde_json::{Value, json};

use super::Call;
use crate::handler::ResourceHandler;
use crate::handler::registry::Registry;
use crate::protocol::ErrorObject;
use crate::protocol::methods::RESOURCES_READ;
use crate::server::ask::Invoke;
use crate::server::envelope::{ParamsView, string_field};
use crate::server::outcome::Outcome;
use crate::server::seal::PendingArguments;

pub(in crate::server) fn read_resource(
    call: Call<'_>,
    reg: &Registry,
    view: &ParamsView<'_>,
) -> Result<Outcome, ErrorObject> {
    let uri = string_field(view.uri, "uri")?.into_owned();
    if !crate::handler::registry::has_scheme(&uri) {
        return Err(ErrorObject::invalid_params_with(
            "Invalid resource URI: it has no scheme",
            json!({ "uri": uri }),
        ));
    }
    let (handler, cache, vars) = reg
        .resource_reader(&uri)
        .ok_or_else(|| ErrorObject::resource_not_found(&uri))?;
    let policy = cache.unwrap_or(call.server.read_cache());
    let retry = call.server.sealer().retry_input(
        RESOURCES_READ,
        bytes::Bytes::copy_from_slice(uri.as_bytes()),
        PendingArguments::Value(Value::Null),
        view,
        &call.extensions,
    )?;
    let invoke = Invoke {
        args: (handler, uri, vars, policy),
        run: |ctx, (handler, uri, vars, policy): (Arc<dyn ResourceHandler>, _, _, _)| {
            let fut = handler.read(ctx, uri, vars);
            async move {
                let mut result = fut.await.map_err(crate::handler::HandlerError::into_stop)?;
                result.cache.get_or_insert(policy);
                Ok(result)
            }
        },
    };
    Ok(call.run(retry, invoke))
}
