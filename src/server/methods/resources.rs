//! `resources/read`: the URI (it needs a scheme), the resource or template that serves it,
//! and the caching fields (the resource's own policy, else the server's).

use http::Extensions;
use serde_json::{Value, json};

use crate::protocol::methods::RESOURCES_READ;
use crate::protocol::{ErrorObject, RequestId, RequestMeta};
use crate::server::Server;
use crate::server::envelope::{ParamsView, string_field};
use crate::server::outcome::Outcome;
use crate::server::seal::PendingArguments;

impl Server {
    pub(in crate::server) fn read_resource(
        &self,
        id: &RequestId,
        meta: RequestMeta,
        view: &ParamsView<'_>,
        extensions: Extensions,
    ) -> Result<Outcome, ErrorObject> {
        let uri = string_field(view.uri, "uri")?.into_owned();
        if !crate::handler::registry::has_scheme(&uri) {
            return Err(ErrorObject::invalid_params_with(
                "Invalid resource URI: it has no scheme",
                json!({ "uri": uri }),
            ));
        }
        let (handler, cache, vars) = self
            .inner
            .registry
            .resource_reader(&uri)
            .ok_or_else(|| ErrorObject::resource_not_found(&uri))?;
        let policy = cache.unwrap_or(self.inner.read_cache);
        let retry = self.retry_input(
            RESOURCES_READ,
            &uri,
            PendingArguments::Value(Value::Null),
            view,
            &extensions,
        )?;
        Ok(self.run(
            id.clone(),
            meta,
            extensions,
            Some(retry),
            move |ctx| async move {
                let mut result = handler
                    .read(ctx, uri, vars)
                    .await
                    .map_err(crate::handler::HandlerError::into_stop)?;
                result.cache.get_or_insert(policy);
                Ok(result)
            },
        ))
    }
}
