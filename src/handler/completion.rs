//! Argument completion for prompts and resource templates.

use std::future::Future;

use futures_util::future::BoxFuture;

use super::context::RequestContext;
use crate::Error;
use crate::protocol::{CompleteRequest, CompleteResult};

/// Completes an argument value. The reference has been checked to name a registered prompt
/// or resource template; at most 100 values are sent.
pub trait CompletionHandler: Send + Sync + 'static {
    /// Completes `request.argument`.
    fn complete(
        &self,
        ctx: RequestContext,
        request: CompleteRequest,
    ) -> BoxFuture<'static, Result<CompleteResult, Error>>;
}

impl<F, Fut> CompletionHandler for F
where
    F: Fn(RequestContext, CompleteRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CompleteResult, Error>> + Send + 'static,
{
    fn complete(
        &self,
        ctx: RequestContext,
        request: CompleteRequest,
    ) -> BoxFuture<'static, Result<CompleteResult, Error>> {
        Box::pin(self(ctx, request))
    }
}
