//! A checker of the Chrome trace event format's rules, independent of
//! hrr-trace's code: what a trace must satisfy for Perfetto and
//! chrome://tracing to show it as written.
//!
//! [`validate`] collects every violation rather than stopping at the first,
//! and returns counts the tests compare with the archive.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

/// Phases the format defines.
const PHASES: &[&str] = &[
    "B", "E", "X", "i", "I", "C", "b", "n", "e", "s", "t", "f", "P", "N", "O", "D", "M", "V", "v",
    "R", "c",
];

/// What a valid trace holds.
#[derive(Debug, Default)]
pub struct Summary {
    /// `X` events by `cat`.
    pub slices_by_cat: BTreeMap<String, u64>,
    /// Complete flows (an `s` and an `f` with the same id).
    pub flows: u64,
    /// `thread_name` of every track, by (pid, tid).
    pub track_names: BTreeMap<(u64, u64), String>,
    /// `process_name` by pid.
    pub process_names: BTreeMap<u64, String>,
}

impl Summary {
    pub fn slices(&self, cat: &str) -> u64 {
        self.slices_by_cat.get(cat).copied().unwrap_or(0)
    }

    /// Names of the tracks of the process called `process`.
    pub fn tracks_of(&self, process: &str) -> Vec<&str> {
        let pid = self
            .process_names
            .iter()
            .find(|(_, n)| *n == process)
            .map(|(p, _)| *p);
        self.track_names
            .iter()
            .filter(|((p, _), _)| Some(*p) == pid)
            .map(|(_, n)| n.as_str())
            .collect()
    }
}

/// A flow as Perfetto pairs its ends: (cat, name, id).
type FlowKey = (String, String, String);
/// A flow's starts and ends: (event index, ts, track).
type FlowEnds = (Vec<(usize, f64, (u64, u64))>, Vec<(usize, f64, (u64, u64))>);

/// One timed event of a track, in emission order.
struct Timed {
    index: usize,
    ph: String,
    name: String,
    ts: f64,
    dur: f64,
}

/// Checks `trace` (the whole document) against the format's rules.
pub fn validate(trace: &Value) -> Result<Summary, Vec<String>> {
    let mut errors = Vec::new();
    let Some(doc) = trace.as_object() else {
        return Err(vec!["top level is not a JSON object".into()]);
    };
    let Some(events) = doc.get("traceEvents").and_then(Value::as_array) else {
        return Err(vec!["no traceEvents array".into()]);
    };
    let mut summary = Summary::default();
    let mut tracks: HashMap<(u64, u64), Vec<Timed>> = HashMap::new();
    // Flow ends by (cat, name, id), as Perfetto pairs them.
    let mut flows: HashMap<FlowKey, FlowEnds> = HashMap::new();
    let mut used_tracks: HashSet<(u64, u64)> = HashSet::new();

    for (i, e) in events.iter().enumerate() {
        let Some(obj) = e.as_object() else {
            errors.push(format!("event {i} is not an object"));
            continue;
        };
        let mut missing = |key: &str| {
            if !obj.contains_key(key) {
                errors.push(format!("event {i} lacks `{key}`: {e}"));
                true
            } else {
                false
            }
        };
        let bad = ["name", "ph", "pid", "tid"]
            .map(&mut missing)
            .contains(&true);
        let ph = obj.get("ph").and_then(Value::as_str).unwrap_or("");
        if ph != "M" && missing("ts") {
            continue;
        }
        if bad {
            continue;
        }
        if !PHASES.contains(&ph) {
            errors.push(format!("event {i} has unknown ph {ph:?}"));
            continue;
        }
        let (Some(pid), Some(tid)) = (obj["pid"].as_u64(), obj["tid"].as_u64()) else {
            errors.push(format!(
                "event {i}: pid and tid must be non-negative integers"
            ));
            continue;
        };
        let Some(name) = obj["name"].as_str() else {
            errors.push(format!("event {i}: name is not a string"));
            continue;
        };
        let track = (pid, tid);
        if ph == "M" {
            let arg = obj
                .get("args")
                .and_then(|a| a.get("name"))
                .and_then(Value::as_str);
            match (name, arg) {
                ("process_name", Some(n)) => {
                    summary.process_names.insert(pid, n.to_string());
                }
                ("thread_name", Some(n)) => {
                    summary.track_names.insert(track, n.to_string());
                }
                ("process_name" | "thread_name", None) => {
                    errors.push(format!("event {i}: {name} without args.name"))
                }
                _ => {}
            }
            continue;
        }
        let Some(ts) = obj["ts"].as_f64() else {
            errors.push(format!("event {i}: ts is not a number"));
            continue;
        };
        let mut dur = 0.0;
        if ph == "X" {
            match obj.get("dur").and_then(Value::as_f64) {
                Some(d) if d >= 0.0 => dur = d,
                Some(d) => errors.push(format!("event {i}: X with negative dur {d}")),
                None => errors.push(format!("event {i}: X without a numeric dur")),
            }
            let cat = obj.get("cat").and_then(Value::as_str).unwrap_or("");
            *summary.slices_by_cat.entry(cat.to_string()).or_default() += 1;
        }
        if matches!(ph, "s" | "t" | "f") {
            let Some(id) = obj.get("id").filter(|v| v.is_u64() || v.is_string()) else {
                errors.push(format!("event {i}: flow event without an id"));
                continue;
            };
            let cat = obj.get("cat").and_then(Value::as_str).unwrap_or("");
            let key = (cat.to_string(), name.to_string(), id.to_string());
            let ends = flows.entry(key).or_default();
            match ph {
                "s" => ends.0.push((i, ts, track)),
                "f" => ends.1.push((i, ts, track)),
                _ => {}
            }
        }
        used_tracks.insert(track);
        tracks.entry(track).or_default().push(Timed {
            index: i,
            ph: ph.to_string(),
            name: name.to_string(),
            ts,
            dur,
        });
    }

    // Metadata names for every process and track used.
    for &(pid, tid) in &used_tracks {
        if !summary.process_names.contains_key(&pid) {
            errors.push(format!("pid {pid} has no process_name"));
        }
        if !summary.track_names.contains_key(&(pid, tid)) {
            errors.push(format!("track ({pid}, {tid}) has no thread_name"));
        }
    }

    for (track, list) in &tracks {
        check_track(*track, list, &mut errors);
    }

    for ((cat, name, id), (starts, ends)) in &flows {
        match (&starts[..], &ends[..]) {
            ([(_, s_ts, s_track)], [(_, f_ts, f_track)]) => {
                if f_ts < s_ts {
                    errors.push(format!("flow {cat}/{name}/{id} ends before it starts"));
                }
                // Both ends must lie inside a slice of their track, or the
                // viewers bind the arrow to nothing (or to a neighbour).
                for (what, ts, track) in [("start", s_ts, s_track), ("end", f_ts, f_track)] {
                    let inside = tracks[track]
                        .iter()
                        .any(|t| t.ph == "X" && t.ts < *ts && *ts < t.ts + t.dur);
                    if !inside {
                        errors.push(format!(
                            "flow {cat}/{name}/{id}: {what} at {ts} is inside no slice of track {track:?}"
                        ));
                    }
                }
                summary.flows += 1;
            }
            _ => errors.push(format!(
                "flow {cat}/{name}/{id} has {} start(s) and {} end(s), not one of each",
                starts.len(),
                ends.len()
            )),
        }
    }

    if errors.is_empty() {
        Ok(summary)
    } else {
        errors.sort();
        Err(errors)
    }
}

/// One track: time order as written, B/E matched and nested, and slices
/// (X and B/E pairs) properly nested: two slices either do not overlap or
/// one contains the other (Perfetto drops the ones that do not nest).
fn check_track(track: (u64, u64), list: &[Timed], errors: &mut Vec<String>) {
    let mut last = f64::MIN;
    let mut open: Vec<&Timed> = Vec::new();
    let mut slices: Vec<(f64, f64, usize)> = Vec::new();
    for t in list {
        if t.ts < last {
            errors.push(format!(
                "track {track:?}: event {} at {} goes back in time (previous at {last})",
                t.index, t.ts
            ));
        }
        last = last.max(t.ts);
        match t.ph.as_str() {
            "B" => open.push(t),
            "E" => match open.pop() {
                Some(b) if b.name == t.name || t.name.is_empty() => {
                    slices.push((b.ts, t.ts - b.ts, b.index))
                }
                Some(b) => errors.push(format!(
                    "track {track:?}: E {:?} (event {}) closes B {:?} (event {})",
                    t.name, t.index, b.name, b.index
                )),
                None => errors.push(format!(
                    "track {track:?}: E (event {}) without a B",
                    t.index
                )),
            },
            "X" => slices.push((t.ts, t.dur, t.index)),
            _ => {}
        }
    }
    for b in open {
        errors.push(format!(
            "track {track:?}: B {:?} (event {}) is never closed",
            b.name, b.index
        ));
    }
    // Longest first among equal starts: a parent precedes its children.
    slices.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let mut stack: Vec<(f64, usize)> = Vec::new();
    for (start, dur, index) in slices {
        let end = start + dur;
        while stack.last().is_some_and(|&(e, _)| e <= start) {
            stack.pop();
        }
        if let Some(&(parent_end, parent)) = stack.last()
            && end > parent_end
        {
            errors.push(format!(
                "track {track:?}: slice (event {index}) overlaps slice (event {parent}) without nesting"
            ));
            continue;
        }
        stack.push((end, index));
    }
}
