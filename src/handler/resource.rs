//! Resources and resource templates.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;

use super::context::RequestContext;
use super::error::HandlerError;
use super::function::Handler;
use super::state::StateType;
use super::uri_template::{TemplateVars, UriTemplate};
use super::vars::typed_vars;
use crate::Error;
use crate::protocol::{CachePolicy, ReadResourceResult, Resource, ResourceTemplate};

/// Reads a resource. `vars` are the template variables the URI bound (empty for a fixed
/// resource).
pub trait ResourceHandler: Send + Sync + 'static {
    /// Reads `uri`.
    fn read(
        &self,
        ctx: RequestContext,
        uri: String,
        vars: TemplateVars,
    ) -> BoxFuture<'static, Result<ReadResourceResult, HandlerError>>;
}

/// A fixed resource's [`Handler`]: takes the URI.
struct Fixed<H, M>(H, PhantomData<fn() -> M>);

impl<H, M, R> ResourceHandler for Fixed<H, M>
where
    H: Handler<M, (String,), Output = Result<R, HandlerError>>,
    M: 'static,
    R: Into<ReadResourceResult>,
{
    fn read(
        &self,
        ctx: RequestContext,
        uri: String,
        _vars: TemplateVars,
    ) -> BoxFuture<'static, Result<ReadResourceResult, HandlerError>> {
        let fut = self.0.call(ctx, (uri,));
        Box::pin(async move { fut.await.map(Into::into) })
    }
}

/// A template's [`Handler`]: takes the URI and its variables read as `V`.
struct Templated<H, M, V>(H, PhantomData<fn() -> (M, V)>);

impl<H, M, V, R> ResourceHandler for Templated<H, M, V>
where
    H: Handler<M, (String, V), Output = Result<R, HandlerError>>,
    M: 'static,
    V: DeserializeOwned + 'static,
    R: Into<ReadResourceResult>,
{
    fn read(
        &self,
        ctx: RequestContext,
        uri: String,
        vars: TemplateVars,
    ) -> BoxFuture<'static, Result<ReadResourceResult, HandlerError>> {
        let fut = match typed_vars::<V>(&vars) {
            Ok(vars) => Ok(self.0.call(ctx, (uri, vars))),
            // The URI matches the template but names nothing this template can read.
            Err(_) => Err(HandlerError::from(Error::resource_not_found(uri))),
        };
        Box::pin(async move { fut?.await.map(Into::into) })
    }
}

/// A fixed resource (one URI) with its reader.
#[must_use]
pub struct ResourceDef {
    pub(crate) resource: Resource,
    pub(crate) cache: Option<CachePolicy>,
    pub(crate) handler: Option<Arc<dyn ResourceHandler>>,
    pub(crate) scopes: Vec<String>,
    pub(crate) state: Option<StateType>,
}

impl ResourceDef {
    /// A resource at `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceDef {
            resource: Resource::new(uri, name),
            cache: None,
            handler: None,
            scopes: Vec::new(),
            state: None,
        }
    }

    /// Sets the size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.resource.size = Some(size);
        self
    }

    /// The reader: an async `Fn(RequestContext, String)` given the URI, or
    /// `Fn(RequestContext, State<S>, String)` (see [`Handler`]).
    ///
    /// ```
    /// use stateless_mcp::ResourceDef;
    /// use stateless_mcp::protocol::ResourceContents;
    ///
    /// let motd = ResourceDef::new("app://motd", "motd")
    ///     .mime_type("text/plain")
    ///     .handler(|_ctx, uri: String| async move { Ok(ResourceContents::text(uri, "Hello!")) });
    /// ```
    pub fn handler<M, H, R>(mut self, f: H) -> Self
    where
        M: 'static,
        H: Handler<M, (String,), Output = Result<R, HandlerError>>,
        R: Into<ReadResourceResult>,
    {
        self.state = H::state_type();
        self.handler = Some(Arc::new(Fixed(f, PhantomData)));
        self
    }
}

/// A family of resources described by an RFC 6570 URI template, with its reader.
#[must_use]
pub struct ResourceTemplateDef {
    pub(crate) template: ResourceTemplate,
    pub(crate) cache: Option<CachePolicy>,
    pub(crate) handler: Option<Arc<dyn ResourceHandler>>,
    pub(crate) scopes: Vec<String>,
    pub(crate) state: Option<StateType>,
}

impl ResourceTemplateDef {
    /// A template such as `file:///{+path}` called `name`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplateDef {
            template: ResourceTemplate::new(uri_template, name),
            cache: None,
            handler: None,
            scopes: Vec::new(),
            state: None,
        }
    }

    /// The reader: an async `Fn(RequestContext, String, V)` given the URI and the
    /// template's variables read as `V` (a struct whose fields are the variables, parsed
    /// from their text: numbers, booleans, unit enums, `Option`s; or [`TemplateVars`] for
    /// them all as strings), or `Fn(RequestContext, State<S>, String, V)` (see [`Handler`]).
    ///
    /// A URI whose variables do not read as `V`, like one the handler finds nothing for
    /// (return `Error::resource_not_found(uri)`), is answered "resource not found".
    ///
    /// ```
    /// use serde::Deserialize;
    /// use stateless_mcp::{Error, RequestContext, ResourceTemplateDef};
    /// use stateless_mcp::protocol::ResourceContents;
    ///
    /// #[derive(Deserialize)]
    /// struct Page { book: String, page: u32 }
    ///
    /// let pages = ResourceTemplateDef::new("books://{book}/pages/{page}", "page").handler(
    ///     |_ctx: RequestContext, uri: String, p: Page| async move {
    ///         if p.page == 0 {
    ///             return Err(Error::resource_not_found(uri).into());
    ///         }
    ///         Ok(ResourceContents::text(uri, format!("{} p. {}", p.book, p.page)))
    ///     },
    /// );
    /// ```
    pub fn handler<M, V, H, R>(mut self, f: H) -> Self
    where
        M: 'static,
        V: DeserializeOwned + 'static,
        H: Handler<M, (String, V), Output = Result<R, HandlerError>>,
        R: Into<ReadResourceResult>,
    {
        self.state = H::state_type();
        self.handler = Some(Arc::new(Templated(f, PhantomData)));
        self
    }
}

/// The setters, direct-handler hook and `Debug` that resource and template definitions share.
macro_rules! common_setters {
    ($def:ty, $field:ident) => {
        impl $def {
            /// Sets the description.
            pub fn description(mut self, d: impl Into<String>) -> Self {
                self.$field.description = Some(d.into());
                self
            }

            /// Sets the display title.
            pub fn title(mut self, t: impl Into<String>) -> Self {
                self.$field.title = Some(t.into());
                self
            }

            /// Sets the MIME type (of matching resources, for a template).
            pub fn mime_type(mut self, m: impl Into<String>) -> Self {
                self.$field.mime_type = Some(m.into());
                self
            }

            /// Overrides the server's `ttlMs`/`cacheScope` for the reads it serves.
            pub fn cache(mut self, policy: CachePolicy) -> Self {
                self.cache = Some(policy);
                self
            }

            /// The OAuth scopes a caller needs to read these resources (all of them); the
            /// list methods show them only to callers that have them.
            pub fn scopes<I, S>(mut self, scopes: I) -> Self
            where
                I: IntoIterator<Item = S>,
                S: Into<String>,
            {
                self.scopes = super::scopes::collect(scopes);
                self
            }

            /// A reader implementing [`ResourceHandler`] directly.
            pub fn with_handler(mut self, h: impl ResourceHandler) -> Self {
                self.state = None;
                self.handler = Some(Arc::new(h));
                self
            }
        }

        impl fmt::Debug for $def {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($def))
                    .field(stringify!($field), &self.$field)
                    .finish_non_exhaustive()
            }
        }
    };
}

common_setters!(ResourceDef, resource);
common_setters!(ResourceTemplateDef, template);

/// A template compiled for matching, with its reader.
pub(crate) struct CompiledTemplate {
    pub(crate) matcher: UriTemplate,
    pub(crate) cache: Option<CachePolicy>,
    pub(crate) handler: Arc<dyn ResourceHandler>,
    pub(crate) scopes: Arc<[String]>,
}
