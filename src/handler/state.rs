//! Application state: values registered once on the builder
//! ([`ServerBuilder::state`](crate::ServerBuilder::state)) and handed, typed, to any handler
//! that takes a [`State<T>`] parameter.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// A handler parameter that receives the application state of type `T` registered with
/// [`ServerBuilder::state`](crate::ServerBuilder::state) (a clone of it per request; share
/// expensive things through an `Arc` or a pool handle that is itself cheap to clone).
///
/// It goes right after the [`RequestContext`](crate::RequestContext), in every kind of
/// handler: tools, resources, resource templates, prompts and completion. A handler that
/// takes a `State<T>` of a type never registered makes
/// [`ServerBuilder::build`](crate::ServerBuilder::build) fail, naming the type; it is never
/// a `None` at request time.
///
/// ```
/// use std::sync::Arc;
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use stateless_mcp::{HandlerError, RequestContext, Server, State, ToolDef};
///
/// /// A connection pool (any `Clone` handle: sqlx's `PgPool`, deadpool's `Pool`, …).
/// #[derive(Clone)]
/// struct Db(Arc<std::sync::Mutex<Vec<String>>>);
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Add {
///     /// The note to store.
///     note: String,
/// }
///
/// #[derive(Deserialize, JsonSchema)]
/// struct NoArgs {}
///
/// let server = Server::builder()
///     .state(Db(Arc::default()))
///     .tool(ToolDef::new("add_note").handler(
///         |_ctx: RequestContext, State(db): State<Db>, args: Add| async move {
///             let mut notes = db.0.lock().unwrap();
///             notes.push(args.note);
///             Ok::<_, HandlerError>(format!("{} notes", notes.len()))
///         },
///     ))
///     .build()
///     .unwrap();
///
/// // Forgetting `.state(…)` is an error when building, not at request time.
/// let missing = Server::builder()
///     .tool(ToolDef::new("count").handler(
///         |_ctx: RequestContext, State(db): State<Db>, _: NoArgs| async move {
///             Ok::<_, HandlerError>(db.0.lock().unwrap().len().to_string())
///         },
///     ))
///     .build();
/// assert!(missing.unwrap_err().to_string().contains("Db"));
/// ```
#[derive(Clone, Copy, Default)]
pub struct State<T>(pub T);

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for State<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "State<{}>", std::any::type_name::<T>())
    }
}

/// The state type a handler reads: its id (to look it up) and name (for the build error).
#[derive(Debug, Clone, Copy)]
pub struct StateType {
    id: TypeId,
    name: &'static str,
}

impl StateType {
    /// The state type `T`.
    pub fn of<T: 'static>() -> Self {
        StateType {
            id: TypeId::of::<T>(),
            name: std::any::type_name::<T>(),
        }
    }

    /// The type's name, as `std::any::type_name` gives it.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// The registered states, by type.
#[derive(Default)]
pub(crate) struct States {
    map: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl fmt::Debug for States {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("States")
            .field("types", &self.map.len())
            .finish()
    }
}

impl States {
    /// Registers `value` (replacing an earlier value of the same type).
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.map.insert(TypeId::of::<T>(), Box::new(value));
    }

    /// The value of type `T`, if registered.
    pub(crate) fn get<T: 'static>(&self) -> Option<&T> {
        self.map.get(&TypeId::of::<T>())?.downcast_ref()
    }

    /// Whether a value of `ty` is registered.
    pub(crate) fn has(&self, ty: &StateType) -> bool {
        self.map.contains_key(&ty.id)
    }
}
