//! An ordered list of registered items with an index by name (a tool's name, a resource's
//! URI, a template's text): what the registry keeps each kind of definition in.

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::Arc;

use crate::Error;

/// A registered item that knows its name in its list, and how errors speak of it.
pub(crate) trait Keyed {
    /// What a second item of the same name is called: "tool name", "resource URI", …
    const KEY: &'static str;
    /// What a missing one is called: "tool", "resource", …
    const NOUN: &'static str;
    /// The item's name in its list.
    fn key(&self) -> &str;
}

/// Items in registration order, each found by its name in one lookup. Cloning copies the
/// list and the index (the items are `Arc`s), which is what a runtime change starts from.
#[derive(Clone)]
pub(crate) struct Named<T> {
    items: Vec<T>,
    index: HashMap<String, usize, foldhash::fast::RandomState>,
}

impl<T> Default for Named<T> {
    fn default() -> Self {
        Named {
            items: Vec::new(),
            index: HashMap::default(),
        }
    }
}

impl<T> Deref for Named<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.items
    }
}

impl<T> Named<T> {
    /// The item called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&T> {
        self.index.get(name).map(|&i| &self.items[i])
    }

    /// Whether an item is called `name`.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// Appends `item` as `name`; gives it back when the name is taken.
    pub(crate) fn insert(&mut self, name: String, item: T) -> Result<(), T> {
        if self.index.contains_key(&name) {
            return Err(item);
        }
        self.index.insert(name, self.items.len());
        self.items.push(item);
        Ok(())
    }

    /// Replaces the item called `name` where it stands, or appends it.
    pub(crate) fn put(&mut self, name: String, item: T) {
        match self.index.get(&name) {
            Some(&i) => self.items[i] = item,
            None => {
                self.index.insert(name, self.items.len());
                self.items.push(item);
            }
        }
    }

    /// Takes the item called `name` out; the items after it move up.
    pub(crate) fn remove(&mut self, name: &str) -> Option<T> {
        let at = self.index.remove(name)?;
        let item = self.items.remove(at);
        for i in self.index.values_mut() {
            if *i > at {
                *i -= 1;
            }
        }
        Some(item)
    }
}

impl<T: Keyed> Named<Arc<T>> {
    /// Appends `item`, refusing a second one of the same name (the builder's and an
    /// `add` edit's rule).
    pub(crate) fn add(&mut self, item: T) -> Result<(), Error> {
        let name = item.key().to_owned();
        self.insert(name, Arc::new(item)).map_err(|taken| {
            Error::invalid_definition(format!("duplicate {} {:?}", T::KEY, taken.key()))
        })
    }

    /// Replaces the item of `item`'s name where it stands, or appends it.
    pub(crate) fn replace(&mut self, item: T) {
        let name = item.key().to_owned();
        self.put(name, Arc::new(item));
    }

    /// Takes the item called `name` out, refusing a name that is not there.
    pub(crate) fn take(&mut self, name: &str) -> Result<(), Error> {
        self.remove(name).map(drop).ok_or_else(|| {
            Error::invalid_definition(format!(
                "cannot remove {noun} {name:?}: no such {noun}",
                noun = T::NOUN
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_index_stay_in_step() {
        let mut n = Named::default();
        for name in ["a", "b", "c", "d"] {
            n.insert(name.to_owned(), name.to_uppercase()).unwrap();
        }
        assert_eq!(
            n.insert("b".into(), "again".into()),
            Err("again".to_owned())
        );
        assert_eq!(n.remove("b").as_deref(), Some("B"));
        assert!(n.remove("b").is_none());
        n.put("c".into(), "C2".into());
        n.put("e".into(), "E".into());
        assert_eq!(&*n, ["A", "C2", "D", "E"]);
        for (name, want) in [("a", "A"), ("c", "C2"), ("d", "D"), ("e", "E")] {
            assert_eq!(n.get(name).map(String::as_str), Some(want));
        }
        assert!(!n.contains("b"));
    }
}
