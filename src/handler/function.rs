//! [`Handler`]: the async functions every handler kind accepts, with or without a
//! [`State`] parameter.

use std::future::Future;

use super::context::RequestContext;
use super::state::{State, StateType};

/// An async function (or closure) that serves one kind of request. Implemented for
///
/// - `Fn(RequestContext, In…) -> impl Future`, and
/// - `Fn(RequestContext, State<S>, In…) -> impl Future`, which receives the application
///   state of type `S` ([`ServerBuilder::state`](crate::ServerBuilder::state); checked when
///   the server is built),
///
/// where `In…` is what the handler kind passes: the typed arguments of a tool or prompt, the
/// URI of a resource, the URI and typed variables of a resource template, the completion
/// request. You never implement it; the `handler` methods of the definitions take it.
///
/// Closures need their parameter types written out when the body uses them (as for axum
/// handlers): `|ctx: RequestContext, args: Echo| async move { … }`.
pub trait Handler<M, In>: Send + Sync + 'static {
    /// What the handler's future resolves to.
    type Output;
    /// The handler's future.
    type Future: Future<Output = Self::Output> + Send + 'static;

    /// Runs the handler on `input`.
    fn call(&self, ctx: RequestContext, input: In) -> Self::Future;

    /// The state type the handler reads, if it takes a [`State`] parameter.
    fn state_type() -> Option<StateType>;
}

macro_rules! impl_handler {
    ($($input:ident),+) => {
        impl<F, Fut, $($input),+> Handler<(RequestContext, $($input),+), ($($input,)+)> for F
        where
            F: Fn(RequestContext, $($input),+) -> Fut + Send + Sync + 'static,
            Fut: Future + Send + 'static,
        {
            type Output = Fut::Output;
            type Future = Fut;

            #[allow(non_snake_case)]
            fn call(&self, ctx: RequestContext, ($($input,)+): ($($input,)+)) -> Fut {
                self(ctx, $($input),+)
            }

            fn state_type() -> Option<StateType> {
                None
            }
        }

        impl<F, Fut, S, $($input),+> Handler<(RequestContext, State<S>, $($input),+), ($($input,)+)>
            for F
        where
            F: Fn(RequestContext, State<S>, $($input),+) -> Fut + Send + Sync + 'static,
            Fut: Future + Send + 'static,
            S: Clone + Send + Sync + 'static,
        {
            type Output = Fut::Output;
            type Future = Fut;

            #[allow(non_snake_case)]
            fn call(&self, ctx: RequestContext, ($($input,)+): ($($input,)+)) -> Fut {
                let state = ctx.registered_state::<S>();
                self(ctx, State(state), $($input),+)
            }

            fn state_type() -> Option<StateType> {
                Some(StateType::of::<S>())
            }
        }
    };
}

impl_handler!(A);
impl_handler!(A, B);
