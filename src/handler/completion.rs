//! Argument completion for prompts and resource templates.

use std::marker::PhantomData;

use futures_util::future::BoxFuture;

use super::context::RequestContext;
use super::error::HandlerError;
use super::function::Handler;
use crate::protocol::{CompleteRequest, CompleteResult};

/// Completes an argument value. The reference has been checked to name a registered prompt
/// or resource template; at most 100 values are sent.
pub trait CompletionHandler: Send + Sync + 'static {
    /// Completes `request.argument`.
    fn complete(
        &self,
        ctx: RequestContext,
        request: CompleteRequest,
    ) -> BoxFuture<'static, Result<CompleteResult, HandlerError>>;
}

/// A completion [`Handler`].
pub(crate) struct CompletionFn<H, M>(pub(crate) H, pub(crate) PhantomData<fn() -> M>);

impl<H, M> CompletionHandler for CompletionFn<H, M>
where
    H: Handler<M, (CompleteRequest,), Output = Result<CompleteResult, HandlerError>>,
    M: 'static,
{
    fn complete(
        &self,
        ctx: RequestContext,
        request: CompleteRequest,
    ) -> BoxFuture<'static, Result<CompleteResult, HandlerError>> {
        Box::pin(self.0.call(ctx, (request,)))
    }
}
