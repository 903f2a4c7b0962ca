//! Counting calls that are forwarded but not recorded.
//!
//! An entry point classified *unrecorded* (it has device effects the archive
//! format does not capture yet: graphs, 2D/3D copies, pools, …) is forwarded
//! like any other, and each call is counted, per entry point, in a
//! [`Counter`] of its own. The non-zero counts ([`snapshot`]) go into the
//! manifest when the archive is finished (`"unrecorded": {"hipMemcpy2D": 2}`),
//! so tools can say what a replay cannot reproduce.
//!
//! Family-agnostic: any family declares `static C: Counter =
//! Counter::new("cuLaunchHostFunc")` and calls [`Counter::bump`].
//!
//! Two more sources for functions the library has no wrapper for (CUDA
//! driver functions a program looks up through `cuGetProcAddress` or
//! `dlsym`): the counting stubs handed out for them
//! ([`count_stubs`](crate::count_stubs)), whose calls join [`snapshot`]; and, when no
//! stub was left, the lookup itself ([`lookup`]), written as the manifest's
//! `unrecorded_lookups`. The CUDA runtime's private driver tables
//! (`cuGetExportTable`) are noted apart ([`export_table`]).
//!
//! Cost: one relaxed `fetch_add` per call on the entry point's own counter
//! (no shared cache line between entry points). A counter joins the registry
//! on its first increment, once, under a mutex.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// The calls of one entry point.
pub struct Counter {
    name: &'static str,
    calls: AtomicU64,
}

/// Counters that have counted at least once.
static REGISTRY: Mutex<Vec<&'static Counter>> = Mutex::new(Vec::new());

impl Counter {
    /// A counter of entry point `name`, at zero.
    pub const fn new(name: &'static str) -> Counter {
        Counter {
            name,
            calls: AtomicU64::new(0),
        }
    }

    /// Counts one call.
    #[inline]
    pub fn bump(&'static self) {
        if self.calls.fetch_add(1, Ordering::Relaxed) == 0 {
            // Only the call that saw 0 registers: each counter joins once.
            REGISTRY
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(self);
        }
    }

    /// The entry point counted.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Calls counted so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

/// Every entry point counted so far, by name (counters of the same name, if
/// two families share one, are added), the counting stubs' calls included.
pub fn snapshot() -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for c in REGISTRY
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        *m.entry(c.name.to_string()).or_insert(0) += c.calls();
    }
    for (name, n) in crate::count_stubs::counts() {
        *m.entry(name).or_insert(0) += n;
    }
    m.retain(|_, n| *n > 0);
    m
}

static LOOKUPS: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());
static EXPORT_TABLES: AtomicU64 = AtomicU64::new(0);

/// Manifest field: `{name: lookups}` of functions with device effects the
/// program obtained when no counting stub was left (their calls are
/// invisible).
pub const LOOKUPS_FIELD: &str = "unrecorded_lookups";
/// Manifest field: how many private driver interface tables
/// (`cuGetExportTable`, the CUDA runtime's undocumented channel to the
/// driver) were handed out. What goes through them is not recorded.
pub const EXPORT_TABLES_FIELD: &str = "driver_export_tables";

/// `name` was looked up and handed out without a way to count its calls.
pub fn lookup(name: &str) {
    let mut l = LOOKUPS.lock().unwrap_or_else(PoisonError::into_inner);
    match l.get_mut(name) {
        Some(n) => *n += 1,
        None => {
            l.insert(name.to_string(), 1);
        }
    }
}

/// A `cuGetExportTable` call.
pub fn export_table() {
    EXPORT_TABLES.fetch_add(1, Ordering::Relaxed);
}

/// The manifest fields besides `unrecorded`, for the finished archive
/// (absent when empty).
pub fn manifest_fields() -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    let lookups = LOOKUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if !lookups.is_empty() {
        let obj = lookups
            .into_iter()
            .map(|(k, v)| (k, serde_json::Value::from(v)))
            .collect();
        m.insert(LOOKUPS_FIELD.into(), serde_json::Value::Object(obj));
    }
    let tables = EXPORT_TABLES.load(Ordering::Relaxed);
    if tables > 0 {
        m.insert(EXPORT_TABLES_FIELD.into(), serde_json::Value::from(tables));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_register_once_and_add_up() {
        static A: Counter = Counter::new("testUnrecordedA");
        static B: Counter = Counter::new("testUnrecordedB");
        static NEVER: Counter = Counter::new("testUnrecordedNever");
        for _ in 0..3 {
            A.bump();
        }
        B.bump();
        let s = snapshot();
        assert_eq!(s.get("testUnrecordedA"), Some(&3));
        assert_eq!(s.get("testUnrecordedB"), Some(&1));
        assert!(
            !s.contains_key(NEVER.name()),
            "a counter that never counted is absent"
        );
        let registered = REGISTRY
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.name() == "testUnrecordedA")
            .count();
        assert_eq!(registered, 1);
    }

    #[test]
    fn lookups_and_export_tables_land_in_their_fields() {
        lookup("cuSomethingNew");
        lookup("cuSomethingNew");
        export_table();
        let m = manifest_fields();
        assert_eq!(m[LOOKUPS_FIELD]["cuSomethingNew"], 2);
        assert!(m[EXPORT_TABLES_FIELD].as_u64().unwrap() >= 1);
    }

    #[test]
    fn concurrent_bumps_are_all_counted() {
        static C: Counter = Counter::new("testUnrecordedThreads");
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..1000 {
                        C.bump();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(snapshot().get("testUnrecordedThreads"), Some(&4000));
    }
}
