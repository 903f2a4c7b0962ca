//! `HandleMap`: recorded runtime handles (streams, events, modules, functions)
//! to the handles the replay backend returned for them.

use std::collections::HashMap;

use crate::device::Handle;

/// Maps recorded handles to live ones. The null handle (`0x0`, the default
/// stream) always maps to itself and is never stored.
#[derive(Debug, Default, Clone)]
pub struct HandleMap {
    map: HashMap<u64, Handle>,
}

impl HandleMap {
    /// An empty map.
    pub fn new() -> HandleMap {
        HandleMap::default()
    }

    /// Records that `recorded` now stands for `live`; returns the handle it replaced.
    pub fn insert(&mut self, recorded: u64, live: Handle) -> Option<Handle> {
        self.map.insert(recorded, live)
    }

    /// The live handle for a recorded one.
    pub fn get(&self, recorded: u64) -> Option<Handle> {
        if recorded == 0 {
            Some(0)
        } else {
            self.map.get(&recorded).copied()
        }
    }

    /// Forgets a recorded handle, returning its live one.
    pub fn remove(&mut self, recorded: u64) -> Option<Handle> {
        self.map.remove(&recorded)
    }

    /// Handles mapped.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether none is mapped.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every live handle, for teardown.
    pub fn drain(&mut self) -> impl Iterator<Item = (u64, Handle)> + '_ {
        self.map.drain()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_is_the_default_stream() {
        let mut m = HandleMap::new();
        assert_eq!(m.get(0), Some(0));
        assert_eq!(m.get(0x55), None);
        m.insert(0x55, 7);
        assert_eq!(m.get(0x55), Some(7));
        assert_eq!(m.remove(0x55), Some(7));
        assert_eq!(m.get(0x55), None);
    }
}
