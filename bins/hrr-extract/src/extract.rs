//! `run`: replays the archive up to the chosen launch, snapshots what the
//! launch can reach, runs it, and writes the launch alone as an archive:
//!
//! ```text
//! module_load, function      the original's, code object copied
//! stream_create              when the launch ran on a created stream
//! va_reserve                 each reservation the launch reaches (address space only)
//! mem_create, mem_map,       the physical allocations behind each reachable run of
//!   mem_access               adjacent mappings, mapped at the recorded offsets
//! alloc ×k                   each reachable allocation, recorded base and size
//! global ×g                  the source's event of each reachable module global (those
//!                            of the launched kernel's module always: read by name)
//! memcpy h2d ×k              contents just before the launch (all-zero allocations
//!                            omitted: replay zero-fills them)
//! relocate ×r                pointer words an earlier kernel stored (see reach.rs)
//! launch                     the original event, same arguments
//! device_sync
//! memcpy d2h ×m              each reachable piece of memory after the launch, as expected bytes;
//!                            pointer words are left out of the checks (addresses of one
//!                            replay, not results)
//! ```
//!
//! The archive is written in a temporary directory beside the output and
//! renamed into place once finished, so a failed extraction leaves nothing.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use hrr_cli::progress::{Progress, Unit};
use hrr_core::archive::Archive;
use hrr_core::archive_writer::{ArchiveWriter, ManifestExtra};
use hrr_core::event::{Dir, Event, MemKind, Op, encode_relocations};
use hrr_core::event_reader::ReadOptions;
use hrr_core::hex::{Addr, BlobId};
use hrr_core::manifest::ArchiveKind;
use hrr_replay::device::Device;
use hrr_replay::engine::{
    self, AddressSpace, Mapped, PauseHook, Paused, PinnedHost, Placement, ReplayOptions, Replayer,
    VirtualMemory,
};
use serde::Serialize;

use crate::args::Args;
use crate::error::ExtractError;
use crate::reach::{Index, Region, ranges_between};
use crate::select::{LaunchCounts, Selector, kernel_not_found};

/// The `api` of events hrr-extract makes up (the launch and the code object
/// events keep the application's).
const API: &str = "hrr-extract";
/// Pinned host memory for large uploads while replaying up to the launch.
const PINNED_BUDGET: usize = 1 << 30;
/// An allocation whose pointer words would split its check into more pieces
/// than this is not checked (a table of pointers holds no results).
const MAX_CHECK_RANGES: usize = 256;

/// One reachable allocation, as written.
#[derive(Debug, Serialize)]
pub struct Reached {
    #[serde(serialize_with = "hex")]
    pub base: u64,
    pub size: u64,
    pub mem: MemKind,
    /// `alloc`, `mapped` (adjacent mappings of a virtual-memory
    /// reservation) or `global` (a module's global variable).
    pub kind: &'static str,
    /// Hops of stored pointers from the launch's arguments (0: an argument).
    pub depth: u32,
    /// Materialised from a declared region segment rather than allocated.
    pub materialised: bool,
    /// Pointer words relocated at replay.
    pub relocated: u64,
    /// Bytes its D2H checks cover (pointer words left out).
    pub checked: u64,
}

fn hex<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{v:#x}"))
}

/// What an extraction did, as printed.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub archive: PathBuf,
    pub output: PathBuf,
    pub seq: u64,
    pub kernel: String,
    /// Which launch of that kernel it is (0-based): `--kernel NAME#N`.
    pub index: u64,
    pub device: String,
    /// Events replayed before the launch.
    pub events_before: u64,
    pub replay_ms: f64,
    pub extract_ms: f64,
    pub allocations: Vec<Reached>,
    pub events: u64,
    pub blobs: u64,
    pub warnings: Vec<String>,
}

pub fn run(args: &Args) -> Result<(), ExtractError> {
    let selector = args.selector()?;
    let archive = Archive::open(&args.archive)?;
    // What precedes the launch is whole in a prefix too: said, not refused.
    if let Some(why) = archive.incomplete_reason() {
        eprintln!(
            "hrr-extract: warning: {} is incomplete ({why}); extracting from what it holds",
            args.archive.display()
        );
    }
    let out = &args.output;
    if std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_some()) || out.is_file() {
        return Err(ExtractError::OutputExists(out.clone()));
    }
    let platform = archive.manifest().platform;
    // Replayed at the recorded addresses, as hrr-play does, so that pointers
    // stored in device memory are right up to the launch.
    let plan = if args.no_placement {
        Vec::new()
    } else {
        let regions = engine::load_regions(&archive, false, &mut Vec::new()).unwrap_or_default();
        engine::placement_plan(&archive, ReadOptions::default(), &regions)
    };
    let mut dev = args.device.open(platform, &plan)?;
    let device_name = dev.name();
    eprintln!(
        "hrr-extract: replaying {} on {device_name} up to {selector}",
        args.archive.display()
    );

    let tmp = temp_beside(out);
    let result = extract(
        args,
        &archive,
        &selector,
        dev.as_mut(),
        &plan,
        &tmp,
        &device_name,
    );
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    if let Err(source) = std::fs::rename(&tmp, out) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(ExtractError::Rename {
            path: out.clone(),
            source,
        });
    }
    for w in &summary.warnings {
        eprintln!("hrr-extract: warning: {w}");
    }
    report(args, &summary);
    Ok(())
}

/// `DIR/.NAME.partial-PID` for output `DIR/NAME`.
fn temp_beside(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "extract.hrr".into());
    out.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

fn extract(
    args: &Args,
    archive: &Archive,
    selector: &Selector,
    dev: &mut dyn Device,
    plan: &[(u64, u64)],
    tmp: &Path,
    device_name: &str,
) -> Result<Summary, ExtractError> {
    let opts = ReplayOptions {
        regions: true,
        launch_thread: true,
        ..ReplayOptions::default()
    };
    let mut warnings = Vec::new();
    let regions = engine::load_regions(archive, false, &mut warnings).map_err(|source| {
        ExtractError::Regions {
            archive: args.archive.clone(),
            source,
        }
    })?;
    let placement = if args.no_placement {
        Placement::off()
    } else {
        Placement::reserve(dev, plan)
    };
    if let Some(note) = placement.note() {
        eprintln!("hrr-extract: note: placement: {note}");
    }
    let space = AddressSpace {
        regions,
        regions_enabled: true,
        placement,
        ..AddressSpace::default()
    };
    let mut hook = Extraction {
        selector: selector.clone(),
        archive,
        path: args.archive.clone(),
        max_depth: args.ptr_depth,
        tmp: tmp.to_path_buf(),
        device: device_name.to_string(),
        compress: !hrr_cli::plain_asked(args.plain),
        writer: None,
        last_seq: None,
        launches: LaunchCounts::default(),
        modules: HashMap::new(),
        functions: HashMap::new(),
        globals: HashMap::new(),
        started: None,
        outcome: None,
    };
    let mut progress = Progress::new(args.json);
    let total = match selector {
        Selector::Seq(seq) => seq.saturating_add(1),
        Selector::Kernel { .. } => archive.manifest().events,
    };
    progress.stage("replay", total, Unit::Events);
    let mut pinned = PinnedHost::new(PINNED_BUDGET);
    let start = Instant::now();
    let (summary, error) = Replayer::new(dev, archive, &opts, space, None, &mut pinned)
        .pause_with(&mut hook)
        .run(|n| progress.set(n));
    progress.finish();
    let replay_ms = hook
        .started
        .map_or(start.elapsed(), |t| t.duration_since(start))
        .as_secs_f64()
        * 1e3;
    let extract_ms = hook
        .started
        .map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3);
    let outcome = hook.outcome.take();
    // An outcome means the replay reached the pause; its own errors come first.
    let mut extracted = match (outcome, error) {
        (Some(r), _) => r?,
        (None, Some(e)) => return Err(ExtractError::replay(args.archive.clone(), e)),
        (None, None) => {
            return Err(match selector {
                Selector::Seq(seq) => ExtractError::NoSuchSeq {
                    archive: args.archive.clone(),
                    seq: *seq,
                    last: hook.last_seq,
                },
                Selector::Kernel { name, index } => ExtractError::KernelNotFound {
                    archive: args.archive.clone(),
                    miss: kernel_not_found(name, *index, &hook.launches.all()),
                },
            });
        }
    };
    warnings.extend(summary.warnings);
    if summary.d2h_fail > 0 {
        warnings.push(format!(
            "{} D2H result(s) before the launch differed from the capture's: the snapshot \
             is this replay's state, not necessarily the application's",
            summary.d2h_fail
        ));
    }
    warnings.append(&mut extracted.warnings);
    let writer = hook
        .writer
        .take()
        .expect("an extraction created its archive");
    let m = writer.finish().map_err(|source| ExtractError::Write {
        path: tmp.to_path_buf(),
        source,
    })?;
    Ok(Summary {
        archive: args.archive.clone(),
        output: args.output.clone(),
        seq: extracted.seq,
        kernel: extracted.kernel,
        index: extracted.index,
        device: device_name.to_string(),
        // Every event read was dispatched, but the paused one counts too.
        events_before: summary.events.saturating_sub(1),
        replay_ms,
        extract_ms,
        allocations: extracted.allocations,
        events: m.events,
        blobs: m.blobs,
        warnings,
    })
}

/// What the pause produced.
struct Extracted {
    seq: u64,
    kernel: String,
    index: u64,
    allocations: Vec<Reached>,
    warnings: Vec<String>,
}

/// The pause hook: follows the replay to the launch, then extracts it.
struct Extraction<'a> {
    selector: Selector,
    archive: &'a Archive,
    path: PathBuf,
    max_depth: u32,
    /// Where the archive is written, and the device named in its manifest.
    tmp: PathBuf,
    device: String,
    /// `false` with `--plain` (or `HRR_EVENTS=plain`).
    compress: bool,
    /// Created at the pause, once the launch is known.
    writer: Option<ArchiveWriter>,
    last_seq: Option<u64>,
    /// Successful launches by kernel name before the pause (the index of a
    /// launch among its kernel's; the list of names when a name is not found).
    launches: LaunchCounts,
    /// The latest `module_load` of each code object, and `function` events
    /// by (module, name): the extracted archive repeats them.
    modules: HashMap<BlobId, Event>,
    functions: HashMap<(u64, String), Event>,
    /// The `global` events of modules still loaded, by recorded address:
    /// the extracted archive repeats those the launch reaches.
    globals: HashMap<u64, Event>,
    /// When the pause came.
    started: Option<Instant>,
    outcome: Option<Result<Extracted, ExtractError>>,
}

impl PauseHook for Extraction<'_> {
    fn pause_before(&mut self, e: &Event) -> bool {
        self.last_seq = Some(e.seq);
        match &e.op {
            Op::ModuleLoad { code, .. } => {
                self.modules.insert(*code, e.clone());
            }
            Op::Function { module, name, .. } => {
                self.functions.insert((module.0, name.clone()), e.clone());
            }
            Op::Global { ptr, .. } if e.ret == 0 && ptr.0 != 0 => {
                self.globals.insert(ptr.0, e.clone());
            }
            Op::ModuleUnload { module } => {
                self.globals
                    .retain(|_, g| !matches!(g.op, Op::Global { module: m, .. } if m == *module));
            }
            _ => {}
        }
        let launch_of = match &e.op {
            Op::Launch { name, .. } if e.ret == 0 => Some(name.as_str()),
            _ => None,
        };
        match &self.selector {
            Selector::Seq(seq) => {
                let pause = e.seq >= *seq;
                if let Some(name) = launch_of
                    && !pause
                {
                    self.launches.count(name);
                }
                pause
            }
            Selector::Kernel { name, index } => match launch_of {
                Some(n) if n == name && self.launches.get(n) == *index => true,
                Some(n) => {
                    self.launches.count(n);
                    false
                }
                None => false,
            },
        }
    }

    fn paused(&mut self, p: &mut Paused<'_, '_>) {
        self.started = Some(Instant::now());
        self.outcome = Some(self.extract(p));
    }
}

/// What one region of the [`Index`] is, and how the extracted archive
/// recreates it.
#[derive(Clone, Debug)]
enum Memory {
    /// An allocation (or a materialised region segment): an `alloc`.
    Alloc { mem: MemKind, materialised: bool },
    /// Adjacent mappings of one virtual-memory reservation: a buffer may
    /// span pieces mapped next to each other, so they are reached together.
    /// Recreated by `va_reserve` of the reservation, `mem_create` of the
    /// physical allocations, `mem_map` at the same offsets, `mem_access`.
    Mapped {
        reservation: (u64, u64),
        maps: Vec<Mapped>,
    },
    /// A module's global variable: its `global` event, which the replay
    /// resolves by name in its own load of the module.
    Global(Box<Event>),
}

impl Memory {
    fn kind(&self) -> &'static str {
        match self {
            Memory::Alloc { .. } => "alloc",
            Memory::Mapped { .. } => "mapped",
            Memory::Global(_) => "global",
        }
    }
    fn mem(&self) -> MemKind {
        match self {
            Memory::Alloc { mem, .. } => *mem,
            Memory::Mapped { maps, .. } => maps[0].mem,
            Memory::Global(_) => MemKind::Device,
        }
    }
}

/// The mapped runs of the reservation at recorded `[base, base + size)`:
/// maximal sequences of mappings each starting where the previous ends.
fn mapped_runs(base: u64, size: u64, vmm: &VirtualMemory) -> Vec<(Region, Memory)> {
    let mut maps: Vec<Mapped> = vmm
        .mappings()
        .filter(|m| m.va >= base && m.va - base < size)
        .copied()
        .collect();
    maps.sort_by_key(|m| m.va);
    let mut runs: Vec<(Region, Memory)> = Vec::new();
    for m in maps {
        if let Some((r, Memory::Mapped { maps, .. })) = runs.last_mut()
            && r.base + r.size == m.va
            && r.live + r.size == m.live
        {
            r.size += m.size;
            maps.push(m);
            continue;
        }
        runs.push((
            Region {
                base: m.va,
                size: m.size,
                live: m.live,
            },
            Memory::Mapped {
                reservation: (base, size),
                maps: vec![m],
            },
        ));
    }
    runs
}

/// A reachable allocation while it is being written.
struct Snap {
    /// Index in the `Index`.
    at: usize,
    depth: u32,
    /// Contents before the launch (pointer words as recorded addresses);
    /// `None` for an allocation that is all zero.
    before: Option<BlobId>,
    /// Offsets of live pointer words, relocated at replay.
    relocs: Vec<u64>,
}

impl Extraction<'_> {
    /// Stores a blob in the extracted archive.
    fn put(&mut self, bytes: &[u8]) -> Result<BlobId, ExtractError> {
        let w = self.writer.as_mut().expect("created at the pause");
        w.put_blob(bytes).map_err(|source| ExtractError::Write {
            path: self.tmp.clone(),
            source,
        })
    }

    fn extract(&mut self, p: &mut Paused<'_, '_>) -> Result<Extracted, ExtractError> {
        let launch = p.event().clone();
        if let Selector::Seq(seq) = self.selector
            && launch.seq != seq
        {
            return Err(ExtractError::NoSuchSeq {
                archive: self.path.clone(),
                seq,
                last: self.last_seq,
            });
        }
        let Op::Launch {
            name, code, stream, ..
        } = &launch.op
        else {
            return Err(ExtractError::NotALaunch {
                archive: self.path.clone(),
                seq: launch.seq,
                api: launch.api.clone(),
                op: launch.op.name(),
            });
        };
        if launch.ret != 0 {
            return Err(ExtractError::FailedAtCapture {
                archive: self.path.clone(),
                seq: launch.seq,
                name: name.clone(),
                ret: launch.ret,
            });
        }
        let manifest = ManifestExtra {
            fields: [
                (
                    "extracted_from".to_string(),
                    serde_json::json!({
                        "archive": self.path.display().to_string(),
                        "seq": launch.seq,
                        "kernel": name,
                        "device": self.device,
                    }),
                ),
                // The extracted events keep the launch's device (`dev`); the
                // manifest says which it is, as a capture's does.
                ("devices".to_string(), serde_json::json!([launch.dev])),
            ]
            .into_iter()
            .collect(),
            ..ManifestExtra::default()
        };
        let platform = self.archive.manifest().platform;
        self.writer = Some(
            ArchiveWriter::create(&self.tmp, ArchiveKind::Capture, platform, manifest)
                .map_err(|source| ExtractError::Write {
                    path: self.tmp.clone(),
                    source,
                })?
                .compress(self.compress),
        );
        let path = self.path.clone();
        let replay_err = |e| ExtractError::replay(path.clone(), e);
        let pointers = p.launch_pointers().map_err(replay_err)?;
        sync(p.device())?;

        // Every piece of memory live now, by recorded and live address:
        // allocations; the mapped parts of virtual-memory reservations, in
        // runs of adjacent mappings (a reservation itself is address space,
        // mostly unmapped: never read whole); module globals.
        let mut regions: Vec<(Region, Memory)> = Vec::new();
        let mut reservations = Vec::new();
        for a in p.space().allocs.iter() {
            let r = Region {
                base: a.base,
                size: a.size,
                live: a.live,
            };
            if p.is_reservation(a.base) {
                reservations.push((a.base, a.size));
                regions.extend(mapped_runs(a.base, a.size, p.vmm()));
            } else if p.is_global(a.base) {
                let Some(e) = self.globals.get(&a.base) else {
                    return Err(ExtractError::Unsupported {
                        archive: self.path.clone(),
                        seq: launch.seq,
                        what: format!("a module global at {:#x}+{}", a.base, a.size),
                        why: "no global event of a loaded module names it, so it cannot be resolved by name",
                    });
                };
                regions.push((r, Memory::Global(Box::new(e.clone()))));
            } else {
                let m = Memory::Alloc {
                    mem: a.mem,
                    materialised: a.materialised,
                };
                regions.push((r, m));
            }
        }
        regions.sort_by_key(|(r, _)| r.base);
        let (regions, memory): (Vec<Region>, Vec<Memory>) = regions.into_iter().unzip();
        let index = Index::new(regions);

        // Breadth-first from the argument allocations, and the globals of
        // the kernel's module (read by name, not through an argument),
        // through stored pointers.
        let mut depth: Vec<Option<u32>> = vec![None; index.len()];
        let mut queue = VecDeque::new();
        let mut seed = |i: usize| {
            if depth[i].is_none() {
                depth[i] = Some(0);
                queue.push_back(i);
            }
        };
        // Reservations an argument points into, mapped there or not: the
        // extracted archive reserves them so that the argument translates.
        let mut reserved: BTreeSet<(u64, u64)> = BTreeSet::new();
        for lp in &pointers {
            if let Some(i) = index.for_argument(lp.value) {
                seed(i);
            }
            if let Some(&r) = reservations
                .iter()
                .find(|(b, s)| lp.value >= *b && lp.value <= b + s)
            {
                reserved.insert(r);
            }
        }
        for (i, m) in memory.iter().enumerate() {
            if let Memory::Global(g) = m
                && matches!(&g.op, Op::Global { code: c, .. } if c == code)
            {
                seed(i);
            }
        }
        let mut snaps = Vec::new();
        while let Some(i) = queue.pop_front() {
            let d = depth[i].expect("queued with a depth");
            let r = *index.get(i);
            let mut bytes = read(p.device(), &r, "a snapshot before the launch")?;
            let mut relocs = Vec::new();
            if d < self.max_depth {
                let words = index.pointer_words(&bytes);
                for w in &words {
                    if depth[w.target].is_none() {
                        depth[w.target] = Some(d + 1);
                        queue.push_back(w.target);
                    }
                    if w.live {
                        relocs.push(w.offset);
                    }
                }
                index.to_recorded(&mut bytes, &words);
            }
            // Replay zero-fills allocations; a global starts at its initial
            // value and a physical allocation's contents are undefined.
            let zero_filled = matches!(memory[i], Memory::Alloc { .. });
            let before = if zero_filled && bytes.iter().all(|&b| b == 0) {
                None
            } else {
                Some(self.put(&bytes)?)
            };
            snaps.push(Snap {
                at: i,
                depth: d,
                before,
                relocs,
            });
        }
        snaps.sort_by_key(|s| index.get(s.at).base);

        p.execute().map_err(replay_err)?;
        sync(p.device())?;

        // Expected bytes: every reachable allocation after the launch.
        let mut checks = Vec::new();
        let mut reached = Vec::new();
        let mut warnings = Vec::new();
        for s in &snaps {
            let r = *index.get(s.at);
            let after = read(p.device(), &r, "the results of the launch")?;
            let mut skip: BTreeSet<u64> = s.relocs.iter().copied().collect();
            skip.extend(
                index
                    .pointer_words(&after)
                    .iter()
                    .filter(|w| w.live)
                    .map(|w| w.offset),
            );
            let skip: Vec<u64> = skip.into_iter().collect();
            let ranges = ranges_between(r.size, &skip);
            let mut checked = 0;
            if ranges.len() > MAX_CHECK_RANGES {
                warnings.push(format!(
                    "allocation {:#x}+{} holds {} pointer words among its data: not checked",
                    r.base,
                    r.size,
                    skip.len()
                ));
            } else {
                for (start, len) in ranges {
                    let (a, b) = (start as usize, (start + len) as usize);
                    let id = self.put(&after[a..b])?;
                    checks.push((r.base + start, len, id));
                    checked += len;
                }
            }
            let m = &memory[s.at];
            reached.push(Reached {
                base: r.base,
                size: r.size,
                mem: m.mem(),
                kind: m.kind(),
                depth: s.depth,
                materialised: matches!(
                    m,
                    Memory::Alloc {
                        materialised: true,
                        ..
                    }
                ),
                relocated: s.relocs.len() as u64,
                checked,
            });
        }

        // The events, in replay order.
        let mut events = Vec::new();
        let mut push = |api: &str, op: Op| {
            events.push(Event {
                seq: events.len() as u64,
                t: launch.t,
                tid: launch.tid,
                api: api.to_string(),
                ret: 0,
                dev: launch.dev,
                op,
            });
        };
        let bytes = self
            .archive
            .blobs()
            .get(code)
            .map_err(|source| ExtractError::Code {
                seq: launch.seq,
                source,
            })?;
        self.put(&bytes)?;
        drop(bytes);
        if let Some(m) = self.modules.get(code) {
            push(&m.api, m.op.clone());
            if let Op::ModuleLoad { module, .. } = m.op
                && let Some(f) = self.functions.get(&(module.0, name.clone()))
            {
                push(&f.api, f.op.clone());
            }
        }
        if stream.0 != 0 {
            push(API, Op::StreamCreate { stream: *stream });
        }
        // Virtual memory: each reservation once, then the reached runs'
        // physical allocations (one `mem_create` per recorded handle, made
        // again where the handle was reused) mapped at their offsets.
        for s in &snaps {
            if let Memory::Mapped { reservation, .. } = &memory[s.at] {
                reserved.insert(*reservation);
            }
        }
        for &(base, size) in &reserved {
            push(
                API,
                Op::VaReserve {
                    ptr: Addr(base),
                    size,
                },
            );
        }
        let mut created: HashMap<u64, (u64, MemKind)> = HashMap::new();
        for s in &snaps {
            let Memory::Mapped { maps, .. } = &memory[s.at] else {
                continue;
            };
            for m in maps {
                let physical = (m.physical_size, m.mem);
                if created.get(&m.handle) != Some(&physical) {
                    created.insert(m.handle, physical);
                    push(
                        API,
                        Op::MemCreate {
                            handle: Addr(m.handle),
                            size: m.physical_size,
                            mem: m.mem,
                        },
                    );
                }
                push(
                    API,
                    Op::MemMap {
                        ptr: Addr(m.va),
                        size: m.size,
                        offset: m.offset,
                        handle: Addr(m.handle),
                    },
                );
                push(
                    API,
                    Op::MemAccess {
                        ptr: Addr(m.va),
                        size: m.size,
                    },
                );
            }
        }
        for s in &snaps {
            let r = index.get(s.at);
            match &memory[s.at] {
                Memory::Alloc { mem, .. } => push(
                    API,
                    Op::Alloc {
                        ptr: Addr(r.base),
                        size: r.size,
                        mem: *mem,
                    },
                ),
                // The variable of the replay's own load of the module.
                Memory::Global(g) => {
                    if let Op::Global { code: c, .. } = &g.op
                        && c != code
                    {
                        let bytes = self
                            .archive
                            .blobs()
                            .get(c)
                            .map_err(|source| ExtractError::Code { seq: g.seq, source })?;
                        self.put(&bytes)?;
                    }
                    push(&g.api, g.op.clone());
                }
                Memory::Mapped { .. } => {}
            }
        }
        for s in &snaps {
            let r = index.get(s.at);
            if let Some(blob) = s.before {
                push(API, memcpy(Dir::H2d, r.base, r.size, blob));
            }
        }
        for s in snaps.iter().filter(|s| !s.relocs.is_empty()) {
            // Only the span of the pointer words is read and written back.
            let (first, last) = (s.relocs[0], s.relocs[s.relocs.len() - 1]);
            let offsets: Vec<u64> = s.relocs.iter().map(|o| o - first).collect();
            let id = self.put(&encode_relocations(&offsets))?;
            push(
                API,
                Op::Relocate {
                    dst: Addr(index.get(s.at).base + first),
                    size: last - first + 8,
                    blob: id,
                },
            );
        }
        let mut op = launch.op.clone();
        if let Op::Launch { args, .. } = &mut op {
            // Words the replay recognised through a region sidecar: the
            // extracted archive has no sidecar, so they are listed.
            for lp in pointers.iter().filter(|lp| lp.unmarked) {
                let ptrs = &mut args[lp.arg].ptrs;
                if !ptrs.contains(&lp.offset) {
                    ptrs.push(lp.offset);
                    ptrs.sort_unstable();
                }
            }
        }
        push(&launch.api, op);
        push(API, Op::DeviceSync);
        for (addr, len, id) in checks {
            push(API, memcpy(Dir::D2h, addr, len, id));
        }
        let w = self.writer.as_mut().expect("created at the pause");
        for e in &events {
            w.append(e).map_err(|source| ExtractError::Write {
                path: self.tmp.clone(),
                source,
            })?;
        }
        let index_of_kernel = self.launches.get(name);
        Ok(Extracted {
            seq: launch.seq,
            kernel: name.clone(),
            index: index_of_kernel,
            allocations: reached,
            warnings,
        })
    }
}

/// A synchronous copy between an allocation and fake host memory (the
/// replay never reads the host side of a copy).
fn memcpy(dir: Dir, device: u64, size: u64, blob: BlobId) -> Op {
    let (dst, src) = match dir {
        Dir::D2h => (Addr(0), Addr(device)),
        _ => (Addr(device), Addr(0)),
    };
    Op::Memcpy {
        dir,
        dst,
        src,
        size,
        stream: None,
        blob: Some(blob),
    }
}

fn sync(dev: &mut dyn Device) -> Result<(), ExtractError> {
    dev.device_sync().map_err(|source| ExtractError::Device {
        what: "the device's state (synchronising)".into(),
        source,
    })
}

fn read(dev: &mut dyn Device, r: &Region, what: &str) -> Result<Vec<u8>, ExtractError> {
    let mut buf = vec![0u8; r.size as usize];
    dev.copy_d2h(&mut buf, r.live, None)
        .map_err(|source| ExtractError::Device {
            what: format!("{what} of {:#x}+{}", r.base, r.size),
            source,
        })?;
    Ok(buf)
}

fn report(args: &Args, s: &Summary) {
    let mut out = std::io::stdout().lock();
    if args.json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(s).expect("summary serialises")
        );
        return;
    }
    let relocated: u64 = s.allocations.iter().map(|a| a.relocated).sum();
    let bytes: u64 = s.allocations.iter().map(|a| a.size).sum();
    let checked: u64 = s.allocations.iter().map(|a| a.checked).sum();
    let through = s.allocations.iter().filter(|a| a.depth > 0).count();
    let _ = writeln!(
        out,
        "extracted : launch {} {}#{} from {}",
        s.seq,
        s.kernel,
        s.index,
        s.archive.display()
    );
    let _ = writeln!(
        out,
        "replayed : {} events before it in {:.1} ms; extraction {:.1} ms",
        s.events_before, s.replay_ms, s.extract_ms
    );
    let _ = writeln!(
        out,
        "memory : {} allocations, {bytes} bytes ({through} reached through stored pointers, {relocated} pointer words relocated)",
        s.allocations.len()
    );
    let _ = writeln!(out, "checks : {checked} bytes after the launch");
    let _ = writeln!(
        out,
        "wrote : {} ({} events, {} blobs)",
        s.output.display(),
        s.events,
        s.blobs
    );
}

#[cfg(test)]
mod tests {
    //! The extraction on `MemDevice` (memory of this process, CUDA's virtual
    //! memory included), for what the CPU runtime cannot show: driver-layer
    //! launches and memory. Extractions of real kernels: tests/e2e/extract.rs.

    use super::*;
    use clap::Parser;
    use hrr_core::error_chain::chain;
    use hrr_core::event::LaunchAttr;
    use hrr_core::event_reader::ReadOptions;
    use hrr_core::hex::HexBytes;
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::{ArchiveBuilder, ptr_arg};
    use hrr_replay::engine::mem_device::MemDevice;

    const BUF: u64 = 0x7f00_0000_1000;
    const VA: u64 = 0x7f10_0000_0000;
    const CHUNK: u64 = 4096;

    /// Extracts `--kernel k` of `b` on a `MemDevice` that runs launches.
    fn extract_k(b: ArchiveBuilder) -> (tempfile::TempDir, Result<Summary, ExtractError>) {
        let t = tempfile::tempdir().unwrap();
        let cap = b.write(t.path().join("cap.hrr")).unwrap();
        let out = t.path().join("x.hrr");
        let args = Args::parse_from([
            "hrr-extract".as_ref(),
            cap.as_os_str(),
            "--kernel".as_ref(),
            "k".as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        let archive = Archive::open(&cap).unwrap();
        let mut dev = MemDevice::new(false);
        dev.accept_code = true;
        let selector = args.selector().unwrap();
        let r = extract(&args, &archive, &selector, &mut dev, &[], &out, "mem");
        (t, r)
    }

    fn launch(args: Vec<hrr_core::event::KernelArg>, attrs: Vec<LaunchAttr>) -> Op {
        Op::Launch {
            name: "k".into(),
            code: BlobId::of(b"code"),
            func: None,
            grid: [1; 3],
            block: [1; 3],
            shmem: 0,
            stream: Addr(0),
            args,
            attrs,
        }
    }

    #[test]
    fn launch_attributes_travel_with_the_launch() {
        let attrs = vec![LaunchAttr {
            id: 2,
            hex: HexBytes(vec![1, 0, 0, 0]),
        }];
        let b = ArchiveBuilder::new(Platform::Nvidia)
            .alloc(BUF, 64)
            .h2d(BUF, &[7; 64])
            .event(
                "cuLaunchKernelEx",
                launch(vec![ptr_arg(BUF)], attrs.clone()),
                vec![b"code".to_vec()],
            )
            .d2h(BUF, &[7; 64]);
        let (t, r) = extract_k(b);
        let s = r.unwrap_or_else(|e| panic!("{}", chain(&e)));
        assert_eq!(s.allocations.len(), 1);
        let out = Archive::open(t.path().join("x.hrr")).unwrap();
        let launches: Vec<Op> = out
            .events(ReadOptions::default())
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.api == "cuLaunchKernelEx")
            .map(|e| e.op)
            .collect();
        assert!(
            matches!(&launches[..], [Op::Launch { attrs: a, .. }] if *a == attrs),
            "{launches:?}"
        );
    }

    /// The events of an archive.
    fn events_of(path: &Path) -> Vec<Event> {
        Archive::open(path)
            .unwrap()
            .events(ReadOptions::default())
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| !matches!(e.op, Op::Eof { .. }))
            .collect()
    }

    /// Replays an archive on `dev`: (D2H exact, D2H failed).
    fn replay_on(path: &Path, dev: &mut MemDevice) -> (u64, u64) {
        let archive = Archive::open(path).unwrap();
        let opts = ReplayOptions::default();
        let mut pinned = PinnedHost::new(0);
        let (s, e) = Replayer::new(
            dev,
            &archive,
            &opts,
            AddressSpace::default(),
            None,
            &mut pinned,
        )
        .run(|_| {});
        assert!(e.is_none(), "{}", chain(&e.unwrap()));
        (s.d2h_exact, s.d2h_fail)
    }

    fn vmm_event(b: ArchiveBuilder, api: &str, op: Op) -> ArchiveBuilder {
        b.event(api, op, vec![])
    }

    /// A 2 GiB reservation with two adjacent pieces mapped at its start (a
    /// buffer spans them) and a third far away; the launch reaches the
    /// first two only.
    #[test]
    fn a_launch_on_mapped_virtual_memory_recreates_what_it_reaches() {
        let data: Vec<u8> = (0..2 * CHUNK).map(|i| (i % 251) as u8 + 1).collect();
        let mut b = ArchiveBuilder::new(Platform::Nvidia);
        b = vmm_event(
            b,
            "cuMemAddressReserve",
            Op::VaReserve {
                ptr: Addr(VA),
                size: 1 << 31,
            },
        );
        for (k, (h, at)) in [(0xa1, 0), (0xa2, CHUNK), (0xa3, 1 << 30)]
            .into_iter()
            .enumerate()
        {
            b = vmm_event(
                b,
                "cuMemCreate",
                Op::MemCreate {
                    handle: Addr(h),
                    size: CHUNK,
                    mem: MemKind::Device,
                },
            );
            b = vmm_event(
                b,
                "cuMemMap",
                Op::MemMap {
                    ptr: Addr(VA + at),
                    size: CHUNK,
                    offset: 0,
                    handle: Addr(h),
                },
            );
            if k == 0 {
                // Released while mapped: its memory lives on in the mapping.
                b = vmm_event(b, "cuMemRelease", Op::MemRelease { handle: Addr(h) });
            }
        }
        let b = b
            .h2d(VA, &data)
            .h2d(VA + (1 << 30), &[9; 64])
            .event(
                "cuLaunchKernel",
                launch(vec![ptr_arg(VA + 16)], vec![]),
                vec![b"code".to_vec()],
            )
            .d2h(VA, &data);
        let (t, r) = extract_k(b);
        let s = r.unwrap_or_else(|e| panic!("{}", chain(&e)));
        assert_eq!(s.allocations.len(), 1, "{:?}", s.allocations);
        let a = &s.allocations[0];
        assert_eq!((a.base, a.size, a.kind), (VA, 2 * CHUNK, "mapped"));
        assert_eq!(a.checked, 2 * CHUNK);
        let out = t.path().join("x.hrr");
        let ops: Vec<Op> = events_of(&out).into_iter().map(|e| e.op).collect();
        let names: Vec<&str> = ops.iter().map(Op::name).collect();
        assert_eq!(
            names,
            [
                "va_reserve",
                "mem_create",
                "mem_map",
                "mem_access",
                "mem_create",
                "mem_map",
                "mem_access",
                "memcpy",
                "launch",
                "device_sync",
                "memcpy"
            ]
        );
        assert!(matches!(ops[0], Op::VaReserve { ptr: Addr(VA), size } if size == 1 << 31));
        assert!(matches!(
            ops[5],
            Op::MemMap { ptr: Addr(p), size: CHUNK, offset: 0, handle: Addr(0xa2) } if p == VA + CHUNK
        ));
        assert!(matches!(
            ops[7],
            Op::Memcpy { dir: Dir::H2d, dst: Addr(VA), size, .. } if size == 2 * CHUNK
        ));
        // The reservation is address space: the archive holds what is mapped
        // and reached, not 2 GiB.
        let blob_bytes: u64 = walk(&out.join("blobs"));
        assert!(blob_bytes < 4 * 2 * CHUNK, "{blob_bytes} bytes of blobs");
        let mut dev = MemDevice::new(false);
        dev.accept_code = true;
        assert_eq!(replay_on(&out, &mut dev), (1, 0));
    }

    fn walk(dir: &Path) -> u64 {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p)
                } else {
                    p.metadata().unwrap().len()
                }
            })
            .sum()
    }

    /// A global of the launched kernel's module, which the kernel reads by
    /// name (no argument points to it), and a global an argument points to.
    #[test]
    fn module_globals_travel_with_their_values_at_the_launch() {
        const G: u64 = 0x7f55_0000_1000;
        const H: u64 = 0x7f55_0000_2000;
        let code = b"code".to_vec();
        let global = |name: &str, ptr: u64| Op::Global {
            module: Addr(0x99),
            name: name.into(),
            code: BlobId::of(&code),
            ptr: Addr(ptr),
            size: 64,
        };
        let b = ArchiveBuilder::new(Platform::Nvidia)
            .module_load(0x99, &code)
            .event(
                "cuModuleGetGlobal_v2",
                global("counter", G),
                vec![code.clone()],
            )
            .event(
                "cuModuleGetGlobal_v2",
                global("table", H),
                vec![code.clone()],
            )
            .alloc(BUF, 64)
            .h2d(G, &[5; 64])
            .h2d(H, &[6; 64])
            .event(
                "cuLaunchKernel",
                launch(vec![ptr_arg(BUF)], vec![]),
                vec![code.clone()],
            );
        let mut dev = MemDevice::new(false);
        dev.accept_code = true;
        for n in ["counter", "table"] {
            let live = dev.alloc(64, MemKind::Device).unwrap();
            dev.globals.insert(n.into(), (live, 64));
        }
        let t = tempfile::tempdir().unwrap();
        let cap = b.write(t.path().join("cap.hrr")).unwrap();
        let out = t.path().join("x.hrr");
        let args = Args::parse_from([
            "hrr-extract".as_ref(),
            cap.as_os_str(),
            "--kernel".as_ref(),
            "k".as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        let archive = Archive::open(&cap).unwrap();
        let selector = args.selector().unwrap();
        let s = extract(&args, &archive, &selector, &mut dev, &[], &out, "mem")
            .unwrap_or_else(|e| panic!("{}", chain(&e)));
        let kinds: Vec<(u64, &str)> = s.allocations.iter().map(|a| (a.base, a.kind)).collect();
        assert_eq!(kinds, [(BUF, "alloc"), (G, "global"), (H, "global")]);
        let ev = events_of(&out);
        let globals: Vec<&Event> = ev.iter().filter(|e| e.op.name() == "global").collect();
        assert_eq!(globals.len(), 2);
        assert!(globals.iter().all(|e| e.api == "cuModuleGetGlobal_v2"));
        for g in [G, H] {
            let fill = if g == G { 5 } else { 6 };
            let up = ev
                .iter()
                .find(|e| matches!(e.op, Op::Memcpy { dir: Dir::H2d, dst: Addr(d), .. } if d == g))
                .expect("the global's value at the launch is uploaded");
            let Op::Memcpy { blob: Some(id), .. } = up.op else {
                panic!()
            };
            assert_eq!(
                Archive::open(&out)
                    .unwrap()
                    .blobs()
                    .get(&id)
                    .unwrap()
                    .to_vec(),
                [fill; 64]
            );
            assert!(
                ev.iter().any(
                    |e| matches!(e.op, Op::Memcpy { dir: Dir::D2h, src: Addr(x), .. } if x == g)
                ),
                "global {g:#x} is checked after the launch"
            );
        }
        let mut dev = MemDevice::new(false);
        dev.accept_code = true;
        for n in ["counter", "table"] {
            let live = dev.alloc(64, MemKind::Device).unwrap();
            dev.globals.insert(n.into(), (live, 64));
        }
        assert_eq!(replay_on(&out, &mut dev), (3, 0));
    }
}
