//! A map from text keys to entries, bounded in count and bytes: what the replica's session
//! caches ([`session_cache`](super::session_cache), [`settings_cache`](super::settings_cache))
//! keep their entries in.
//!
//! An entry counts the bytes its inserter says it holds; one larger than a quarter of the
//! byte bound is not kept. When an insert finds the map full, the entries the caller calls
//! stale go first, then arbitrary ones until at most half the room is taken.

use std::collections::HashMap;

/// Entries by key, at most `max_entries` of them and about `max_bytes` bytes.
pub(super) struct Bounded<E> {
    // Keys are ids and store keys this server made, so a quick hasher is safe; the std one
    // cost ~700 instructions per request on a ~150-byte id.
    map: HashMap<Box<str>, (E, usize), foldhash::fast::RandomState>,
    bytes: usize,
    max_entries: usize,
    max_bytes: usize,
}

impl<E> Bounded<E> {
    /// An empty map holding at most `max_entries` (at least 1) entries and about
    /// `max_bytes` bytes.
    pub(super) fn new(max_entries: usize, max_bytes: usize) -> Self {
        Bounded {
            map: HashMap::default(),
            bytes: 0,
            max_entries: max_entries.max(1),
            max_bytes,
        }
    }

    /// The entry of `key`.
    pub(super) fn get(&self, key: &str) -> Option<&E> {
        self.map.get(key).map(|(e, _)| e)
    }

    /// The entry of `key`, to change (its size stays as counted).
    pub(super) fn get_mut(&mut self, key: &str) -> Option<&mut E> {
        self.map.get_mut(key).map(|(e, _)| e)
    }

    /// How many entries it holds.
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// Keeps `entry` (about `size` bytes) under `key` in place of any there (which goes
    /// either way), unless it is larger than a quarter of the byte bound. When full, the
    /// entries `stale` names go first, then arbitrary ones until at most half the room is
    /// taken.
    pub(super) fn insert(&mut self, key: &str, entry: E, size: usize, stale: impl Fn(&E) -> bool) {
        self.remove(key);
        if size > self.max_bytes / 4 {
            return;
        }
        if self.map.len() >= self.max_entries || self.bytes + size > self.max_bytes {
            self.make_room(stale);
        }
        self.map.insert(key.into(), (entry, size));
        self.bytes += size;
    }

    /// Drops the entry of `key`.
    pub(super) fn remove(&mut self, key: &str) {
        if let Some((_, size)) = self.map.remove(key) {
            self.bytes -= size;
        }
    }

    /// Drops every entry.
    pub(super) fn clear(&mut self) {
        self.map.clear();
        self.bytes = 0;
    }

    /// The bytes it counts, and the sum of its entries' sizes (the same, when it counts
    /// right).
    #[cfg(test)]
    pub(super) fn bytes(&self) -> (usize, usize) {
        (self.bytes, self.map.values().map(|(_, size)| size).sum())
    }

    /// Drops the stale entries, then arbitrary ones until at most half the room is taken.
    fn make_room(&mut self, stale: impl Fn(&E) -> bool) {
        self.map.retain(|_, (e, _)| !stale(e));
        let (max_len, max_bytes) = (self.max_entries / 2, self.max_bytes / 2);
        let mut len = self.map.len();
        let mut bytes: usize = self.map.values().map(|(_, size)| size).sum();
        self.map.retain(|_, (_, size)| {
            if len <= max_len && bytes <= max_bytes {
                return true;
            }
            len -= 1;
            bytes -= *size;
            false
        });
        self.bytes = bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_entries_go_first_then_arbitrary_ones_down_to_half() {
        let mut m = Bounded::new(4, 1000);
        for (k, v) in [("a", 1), ("b", 2), ("c", 3), ("d", 4)] {
            m.insert(k, v, 10, |_| false);
        }
        assert_eq!(m.len(), 4);
        // Full: the stale one (odd values) go, and that is room enough.
        m.insert("e", 5, 10, |v| v % 2 == 1);
        assert_eq!(m.len(), 3);
        assert!(m.get("a").is_none() && m.get("c").is_none());
        assert_eq!(m.get("e"), Some(&5));
        // Too large for a quarter of the bytes: not kept.
        m.insert("big", 6, 251, |_| false);
        assert!(m.get("big").is_none());
        // Replacing counts the bytes once; full by bytes: down to half, then in.
        m.insert("e", 7, 10, |_| false);
        assert_eq!(m.bytes, 30);
        m.insert("f", 8, 250, |_| false);
        m.insert("g", 9, 250, |_| false);
        m.insert("h", 10, 250, |_| false);
        m.insert("i", 11, 250, |_| false);
        assert!(m.bytes <= 1000 && m.get("i") == Some(&11), "{}", m.bytes);
        m.remove("i");
        m.clear();
        assert_eq!((m.len(), m.bytes), (0, 0));
    }
}
