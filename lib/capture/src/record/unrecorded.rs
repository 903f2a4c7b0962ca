//! What the program did that the archive does not hold: calls of runtime or
//! driver functions with device effects that no event records, so that no
//! such call goes unnoticed.
//!
//! Three sources, all process-wide (a call may come before the recorder
//! exists, or from a thread that never records):
//! - [`call`]: a wrapper that forwards a function it cannot record
//!   (`cuMemcpy2D_v2`, `cuGraphLaunch`, …) counts each first-level call;
//! - counting stubs (`interpose::count_stubs`) handed out for functions the
//!   program looked up that this library has no wrapper for: their calls;
//! - [`lookup`]: such a lookup when no stub was left: the function was
//!   obtained and its calls are invisible.
//!
//! The recorder writes them into the manifest at finish ([`manifest_fields`]):
//! `unrecorded_calls` (`{name: calls}`, omitted when empty) and
//! `unrecorded_lookups` (`{name: lookups}`). `hrr-cap` and `hrr-play` print
//! the calls as `unrecorded : N calls (name ×k, …)`.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value};

static CALLS: Mutex<BTreeMap<&'static str, u64>> = Mutex::new(BTreeMap::new());
static LOOKUPS: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());
static EXPORT_TABLES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Manifest field: how many private driver interface tables
/// (`cuGetExportTable`, the CUDA runtime's undocumented channel to the
/// driver) were handed out. What goes through them is not recorded.
pub const EXPORT_TABLES_FIELD: &str = "driver_export_tables";

/// A `cuGetExportTable` call.
pub fn export_table() {
    EXPORT_TABLES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Manifest field of the calls.
pub use hrr_core::manifest::UNRECORDED_CALLS as CALLS_FIELD;
/// Manifest field of the lookups without a stub.
pub use hrr_core::manifest::UNRECORDED_LOOKUPS as LOOKUPS_FIELD;

/// A call of `name` that no event records.
pub fn call(name: &'static str) {
    *CALLS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(name)
        .or_default() += 1;
}

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

/// Unrecorded calls by name: the wrappers' counts and the stubs' together.
pub fn calls() -> BTreeMap<String, u64> {
    let mut all: BTreeMap<String, u64> = CALLS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    for (name, n) in crate::interpose::count_stubs::counts() {
        *all.entry(name).or_default() += n;
    }
    all.retain(|_, n| *n > 0);
    all
}

/// The manifest fields, for `Recorder::finish` (absent when empty).
pub fn manifest_fields() -> Map<String, Value> {
    let mut m = Map::new();
    let to_obj = |c: BTreeMap<String, u64>| -> Value {
        Value::Object(c.into_iter().map(|(k, v)| (k, Value::from(v))).collect())
    };
    let calls = calls();
    if !calls.is_empty() {
        m.insert(CALLS_FIELD.into(), to_obj(calls));
    }
    let lookups = LOOKUPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if !lookups.is_empty() {
        m.insert(LOOKUPS_FIELD.into(), to_obj(lookups));
    }
    let tables = EXPORT_TABLES.load(std::sync::atomic::Ordering::Relaxed);
    if tables > 0 {
        m.insert(EXPORT_TABLES_FIELD.into(), Value::from(tables));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_land_in_the_manifest_fields() {
        call("cuGraphLaunch");
        call("cuGraphLaunch");
        call("cuMemcpy2D_v2");
        lookup("cuSomethingNew");
        let m = manifest_fields();
        let c = m[CALLS_FIELD].as_object().unwrap();
        assert_eq!(c["cuGraphLaunch"], 2);
        assert_eq!(c["cuMemcpy2D_v2"], 1);
        assert_eq!(m[LOOKUPS_FIELD]["cuSomethingNew"], 1);
        export_table();
        assert!(m.get(EXPORT_TABLES_FIELD).is_none());
        assert_eq!(manifest_fields()[EXPORT_TABLES_FIELD], 1);
    }
}
