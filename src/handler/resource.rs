//! Resources and resource templates.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::context::RequestContext;
use super::input::HandlerError;
use super::uri_template::{TemplateVars, UriTemplate};
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

struct Templated<F>(F);

impl<F, Fut, R> ResourceHandler for Templated<F>
where
    F: Fn(RequestContext, String, TemplateVars) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
    R: Into<ReadResourceResult>,
{
    fn read(
        &self,
        ctx: RequestContext,
        uri: String,
        vars: TemplateVars,
    ) -> BoxFuture<'static, Result<ReadResourceResult, HandlerError>> {
        let fut = (self.0)(ctx, uri, vars);
        Box::pin(async move { fut.await.map(Into::into) })
    }
}

/// A fixed resource (one URI) with its reader.
#[must_use]
pub struct ResourceDef {
    pub(crate) resource: Resource,
    pub(crate) cache: Option<CachePolicy>,
    pub(crate) handler: Option<Arc<dyn ResourceHandler>>,
    pub(crate) scopes: Vec<String>,
}

impl ResourceDef {
    /// A resource at `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceDef {
            resource: Resource::new(uri, name),
            cache: None,
            handler: None,
            scopes: Vec::new(),
        }
    }

    /// Sets the size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.resource.size = Some(size);
        self
    }

    /// The reader: `f(ctx, uri)`.
    pub fn handler<F, Fut, R>(mut self, f: F) -> Self
    where
        F: Fn(RequestContext, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
        R: Into<ReadResourceResult>,
    {
        self.handler = Some(Arc::new(Templated(move |ctx, uri, _vars| f(ctx, uri))));
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
}

impl ResourceTemplateDef {
    /// A template such as `file:///{+path}` called `name`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplateDef {
            template: ResourceTemplate::new(uri_template, name),
            cache: None,
            handler: None,
            scopes: Vec::new(),
        }
    }

    /// The reader: `f(ctx, uri, vars)`. Return `Error::resource_not_found(uri)` for a URI
    /// that matches the template but names nothing.
    pub fn handler<F, Fut, R>(mut self, f: F) -> Self
    where
        F: Fn(RequestContext, String, TemplateVars) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
        R: Into<ReadResourceResult>,
    {
        self.handler = Some(Arc::new(Templated(f)));
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
    pub(crate) scopes: Vec<String>,
}
