//! `--info` and `--events`: what an archive holds, without any runtime.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use anyhow::Result;
use hrr_core::archive::Archive;
use hrr_core::error_chain::chain;
use hrr_core::event_reader::ReadOptions;
use hrr_core::{BlobId, Op};
use serde_json::json;

pub fn print_events(archive: &Archive, read: ReadOptions, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let mut reader = archive.events(read)?;
    let mut line = Vec::new();
    for e in reader.by_ref() {
        let e = e?;
        if json {
            line.clear();
            e.write_line(&mut line);
            out.write_all(&line)?;
        } else {
            writeln!(out, "{e}")?;
        }
    }
    for w in reader.warnings() {
        eprintln!("hrr-play: warning: {w}");
    }
    Ok(())
}

/// What the events and blobs take on disk, and uncompressed (a compressed
/// file counted at the size its frame header declares).
struct Sizes {
    disk: u64,
    plain: u64,
}

impl Sizes {
    fn of(archive: &Archive) -> Sizes {
        let (disk, plain) = archive.events_sizes();
        let mut s = Sizes {
            disk,
            plain: plain.unwrap_or(disk),
        };
        let store = archive.blobs();
        for id in store.list().unwrap_or_default() {
            let file = if store.path(&id).exists() {
                store.path(&id)
            } else {
                store.zst_path(&id)
            };
            s.disk += std::fs::symlink_metadata(file).map_or(0, |m| m.len());
            s.plain += store.size(&id).unwrap_or(0);
        }
        s
    }
}

/// `devices : 0 (12 events), 1 (7 events)`: the devices the manifest lists
/// (device 0 when it lists none) and the events each holds.
fn devices_line(listed: &[u32], events: &BTreeMap<u32, u64>) -> String {
    let mut all: BTreeSet<u32> = listed.iter().copied().collect();
    all.extend(events.keys());
    let items: Vec<String> = all
        .iter()
        .map(|d| format!("{d} ({} events)", events.get(d).copied().unwrap_or(0)))
        .collect();
    format!("devices : {}", items.join(", "))
}

pub fn print_info(archive: &Archive, read: ReadOptions, json: bool) -> Result<()> {
    let m = archive.manifest();
    let mut ops: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut codes: BTreeSet<BlobId> = BTreeSet::new();
    let mut launched: BTreeMap<String, u64> = BTreeMap::new();
    let mut d2h_bytes = 0u64;
    // Events per device (the events' `dev`).
    let mut devices: BTreeMap<u32, u64> = BTreeMap::new();
    let mut reader = archive.events(read)?;
    for e in reader.by_ref() {
        let e = e?;
        *ops.entry(e.op.name()).or_default() += 1;
        *devices.entry(e.dev).or_default() += 1;
        match &e.op {
            Op::ModuleLoad { code, .. } => {
                codes.insert(*code);
            }
            Op::Launch { code, name, .. } => {
                codes.insert(*code);
                *launched.entry(name.clone()).or_default() += 1;
            }
            Op::Memcpy {
                dir: hrr_core::Dir::D2h,
                size,
                ..
            } => d2h_bytes += size,
            _ => {}
        }
    }
    let warnings: Vec<String> = reader.warnings().iter().map(|w| w.to_string()).collect();
    let code_objects: Vec<serde_json::Value> =
        codes.iter().map(|id| describe_code(archive, id)).collect();
    let regions: Vec<String> = archive
        .region_files()
        .iter()
        .map(|p| p.display().to_string())
        .collect();

    let sizes = Sizes::of(archive);
    if json {
        let v = json!({
            "archive": archive.path().display().to_string(),
            "disk_bytes": sizes.disk,
            "uncompressed_bytes": sizes.plain,
            "events_compressed": archive.is_compressed(),
            "manifest": serde_json::to_value(m)?,
            "ops": ops,
            "launches": launched,
            "d2h_bytes": d2h_bytes,
            "devices": devices,
            "code_objects": code_objects,
            "regions": regions,
            "warnings": warnings,
        });
        println!("{v}");
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "archive : {}", archive.path().display())?;
    writeln!(
        out,
        "format : hrr v{} {:?} platform {:?} complete {}",
        m.version, m.kind, m.platform, m.complete
    )?;
    writeln!(
        out,
        "events : {}  blobs : {}  d2h bytes : {d2h_bytes}  disk bytes : {}  uncompressed : {}",
        m.events, m.blobs, sizes.disk, sizes.plain
    )?;
    writeln!(out, "{}", devices_line(&m.devices_used(), &devices))?;
    if let Some(p) = m.process() {
        writeln!(out, "{}", process_line(&p))?;
    }
    if let Some(w) = hrr_core::window::WindowInfo::of(m) {
        writeln!(out, "{}", window_line(&w))?;
        for what in &w.not_restored {
            writeln!(out, "  not restored : {what}")?;
        }
    }
    writeln!(
        out,
        "{}",
        hrr_core::manifest::UnrecordedCalls(&m.unrecorded)
    )?;
    for (op, n) in &ops {
        writeln!(out, "  {op:<18} {n}")?;
    }
    for (name, n) in &launched {
        writeln!(out, "launch : {name} x{n}")?;
    }
    for c in &code_objects {
        writeln!(out, "code : {}", c["blob"].as_str().unwrap_or("?"))?;
        if let Some(err) = c.get("error") {
            writeln!(out, "  (not parsed: {})", err.as_str().unwrap_or("?"))?;
        }
        for entry in c["entries"].as_array().into_iter().flatten() {
            writeln!(out, "  target {}", entry["target"].as_str().unwrap_or("?"))?;
            for k in entry["kernels"].as_array().into_iter().flatten() {
                writeln!(
                    out,
                    "    kernel {} kernarg {} bytes",
                    k["name"].as_str().unwrap_or("?"),
                    k["kernarg_segment_size"]
                )?;
                for a in k["args"].as_array().into_iter().flatten() {
                    writeln!(
                        out,
                        "      +{:<4} {:>3} bytes  {}",
                        a["offset"],
                        a["size"],
                        a["kind"].as_str().unwrap_or("?")
                    )?;
                }
            }
        }
    }
    for r in &regions {
        writeln!(out, "regions : {r}")?;
    }
    for w in &warnings {
        eprintln!("hrr-play: warning: {w}");
    }
    Ok(())
}

/// `window : 2 (trigger profiler, profiler) restores 4096 bytes of state
/// in 3 allocations`, with how it ended.
fn window_line(w: &hrr_core::window::WindowInfo) -> String {
    if !w.opened {
        return format!(
            "window : {} (trigger {}, {}) never opened",
            w.index, w.trigger, w.spec
        );
    }
    let mut line = format!(
        "window : {} (trigger {}, {}) restores {} bytes of state in {} allocations",
        w.index, w.trigger, w.spec, w.state_bytes, w.state_allocs
    );
    if w.closed_at_exit {
        line.push_str("; the run ended inside it");
    }
    line
}

/// A code object's targets and kernel argument layouts, as JSON.
fn describe_code(archive: &Archive, id: &BlobId) -> serde_json::Value {
    let bytes = match archive.blobs().get(id) {
        Ok(b) => b.to_vec(),
        Err(e) => return json!({ "blob": id.to_hex(), "error": chain(&e).to_string() }),
    };
    match hrr_codeobj::describe(&bytes) {
        Ok(entries) => {
            let entries: Vec<_> = entries
                .iter()
                .map(|(target, kernels)| {
                    let kernels: Vec<_> = kernels
                        .iter()
                        .map(|k| {
                            let args: Vec<_> = k
                                .args
                                .iter()
                                .map(|a| json!({"offset": a.offset, "size": a.size, "kind": a.kind.to_string()}))
                                .collect();
                            json!({"name": k.name, "kernarg_segment_size": k.kernarg_segment_size, "args": args})
                        })
                        .collect();
                    json!({ "target": target, "kernels": kernels })
                })
                .collect();
            json!({ "blob": id.to_hex(), "size": bytes.len(), "entries": entries })
        }
        Err(e) => json!({ "blob": id.to_hex(), "size": bytes.len(), "error": e.to_string() }),
    }
}

/// `process : pid P parent Q rank R of W (local L): ARGV…`.
fn process_line(p: &hrr_core::process_info::ProcessInfo) -> String {
    format!("process : {}{}", process_fields(p), argv_tail(p))
}

/// `pid P parent Q rank R of W (local L)`.
fn process_fields(p: &hrr_core::process_info::ProcessInfo) -> String {
    let mut s = format!("pid {} parent {} {}", p.pid, p.ppid, p.rank_text());
    if let Some(l) = p.local_rank {
        s.push_str(&format!(" (local {l})"));
    }
    s
}

/// `: ARGV…`, or nothing without a command line.
fn argv_tail(p: &hrr_core::process_info::ProcessInfo) -> String {
    if p.argv.is_empty() {
        String::new()
    } else {
        format!(": {}", p.argv.join(" "))
    }
}

/// `--info` of a job: the job file, then one line per process archive
/// (`process : ARCHIVE pid P parent Q rank R of W (local L) complete true:
/// ARGV…`; `missing` for an archive that is not there).
pub fn print_job_info(
    file: &std::path::Path,
    job: &hrr_core::job::JobManifest,
    json: bool,
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let mut v = serde_json::to_value(job)?;
        v["job_file"] = json!(file.display().to_string());
        writeln!(out, "{v}")?;
        return Ok(());
    }
    writeln!(
        out,
        "job : {} ({}, {} processes, complete {})",
        file.display(),
        job.kind.as_str(),
        job.processes.len(),
        job.complete
    )?;
    if !job.argv.is_empty() {
        writeln!(out, "command : {}", job.argv.join(" "))?;
    }
    for p in &job.processes {
        let path = hrr_core::job::JobManifest::archive_path(file, p);
        let state = if path.exists() {
            format!("complete {}", p.complete)
        } else {
            "missing".to_string()
        };
        writeln!(
            out,
            "process : {} {} {state}{}",
            p.archive,
            process_fields(&p.process),
            argv_tail(&p.process)
        )?;
    }
    Ok(())
}
