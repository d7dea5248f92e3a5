//! The streams under one index entry (a URI or a task id), in registration order: most
//! entries name one stream (a stream's own resource), a few name many (a resource everyone
//! watches), so one key is kept inline and a set is allocated only for the second.

use std::collections::BTreeSet;

/// The keys of the streams under one index entry, in ascending (registration) order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum StreamKeys {
    /// One stream, without an allocation.
    One(u64),
    /// Two or more.
    Many(BTreeSet<u64>),
}

impl StreamKeys {
    /// Adds `key`.
    pub(super) fn insert(&mut self, key: u64) {
        match self {
            StreamKeys::One(k) if *k == key => {}
            StreamKeys::One(k) => *self = StreamKeys::Many(BTreeSet::from([*k, key])),
            StreamKeys::Many(set) => {
                set.insert(key);
            }
        }
    }

    /// Removes `key`; whether none is left.
    pub(super) fn remove(&mut self, key: u64) -> bool {
        match self {
            StreamKeys::One(k) => *k == key,
            StreamKeys::Many(set) => {
                set.remove(&key);
                match set.len() {
                    0 => true,
                    1 => {
                        let last = set.first().copied().unwrap_or(key);
                        *self = StreamKeys::One(last);
                        false
                    }
                    _ => false,
                }
            }
        }
    }

    /// The keys, ascending.
    pub(super) fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let (one, many) = match self {
            StreamKeys::One(k) => (Some(*k), None),
            StreamKeys::Many(set) => (None, Some(set.iter().copied())),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_inline_more_in_order_and_back() {
        let mut keys = StreamKeys::One(7);
        keys.insert(7);
        assert_eq!(keys, StreamKeys::One(7));
        keys.insert(3);
        keys.insert(12);
        assert_eq!(keys.iter().collect::<Vec<_>>(), [3, 7, 12]);
        assert_eq!(keys.iter().count(), 3);
        assert!(!keys.remove(7));
        assert!(!keys.remove(99));
        assert!(!keys.remove(3));
        assert_eq!(keys, StreamKeys::One(12));
        assert!(!keys.remove(5));
        assert!(keys.remove(12));
    }
}
