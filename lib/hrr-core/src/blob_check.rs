//! [`Archive::check_blobs`]: every blob of an archive checked against its
//! name, and every blob an event names checked to be there.
//!
//! A blob is read and verified as replay reads it ([`BlobStore::get`]:
//! large ones memory-mapped, hashed with BLAKE3 on several cores), so a
//! check passes exactly when replay would find every blob it needs intact.
//! The events are read on several threads ([`ParallelReader`]) for the
//! blobs they name ([`referenced_blobs`], as repair copies them); the blob
//! files are checked several at a time. `hrr-cap` runs this on the archive
//! the application leaves, before it reports success.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::archive::{Archive, ArchiveError, referenced_blobs};
use crate::blob_store::BlobError;
use crate::event::Op;
use crate::event_reader::{ParallelError, ParallelReader, ReadOptions};
use crate::hex::BlobId;

/// Events named for each bad blob (the rest are counted).
pub const USES_KEPT: usize = 3;

/// Bad blobs named in [`BlobCheck::reason`] (the rest are counted).
const REASON_BLOBS: usize = 3;

/// What [`Archive::check_blobs`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlobCheck {
    /// Distinct blobs checked: the files present and the blobs events name.
    pub blobs: u64,
    /// Bytes read and hashed.
    pub bytes: u64,
    /// Blobs missing or not what their names say, those events use first
    /// first (by the `seq` of their first use), then those no event uses.
    pub bad: Vec<BadBlob>,
    /// Why the events could not all be read (a malformed line): the blobs
    /// named after it are not known, and not checked for being there.
    pub events_unread: Option<String>,
}

/// A blob that is missing or not what its name says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadBlob {
    /// Its name.
    pub id: BlobId,
    /// What is wrong.
    pub problem: BlobProblem,
    /// Events naming it.
    pub uses: u64,
    /// The first [`USES_KEPT`] of them.
    pub first_uses: Vec<BlobUse>,
}

/// An event naming a blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobUse {
    /// Its `seq`.
    pub seq: u64,
    /// Its entry point.
    pub api: String,
}

/// What is wrong with a blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlobProblem {
    /// An event names it and no file holds it.
    Missing,
    /// Its file's bytes hash to `actual`, not to its name.
    Corrupt {
        /// What they hash to.
        actual: BlobId,
    },
    /// Its file could not be read (the message says why: a symlink, not a
    /// regular file, an I/O error).
    Unreadable(String),
}

impl fmt::Display for BlobProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlobProblem::Missing => f.write_str("is missing"),
            BlobProblem::Corrupt { actual } => {
                write!(f, "does not match its name (its bytes hash to {actual})")
            }
            BlobProblem::Unreadable(why) => write!(f, "cannot be read: {why}"),
        }
    }
}

impl BadBlob {
    /// `event 12 (hipLaunchKernel), event 40 (hipLaunchKernel) and 3 more
    /// events`, or `no event`.
    pub fn used_by(&self) -> String {
        if self.first_uses.is_empty() {
            return "no event".into();
        }
        let named: Vec<String> = self
            .first_uses
            .iter()
            .map(|u| format!("event {} ({})", u.seq, u.api))
            .collect();
        let more = self.uses - self.first_uses.len() as u64;
        match more {
            0 => named.join(", "),
            n => format!("{} and {n} more event{}", named.join(", "), plural(n)),
        }
    }
}

impl fmt::Display for BadBlob {
    /// `blob ID is missing; used by event 12 (hipLaunchKernel)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "blob {} {}; used by {}",
            self.id,
            self.problem,
            self.used_by()
        )
    }
}

impl BlobCheck {
    /// Whether every blob is there and is what its name says.
    pub fn ok(&self) -> bool {
        self.bad.is_empty()
    }

    /// One line for the manifest's `incomplete` (`None` when
    /// [`BlobCheck::ok`]): `blob check: 2 of 57 blobs missing or not what
    /// their names say: blob … is missing (event 12, hipLaunchKernel); …`.
    pub fn reason(&self) -> Option<String> {
        if self.ok() {
            return None;
        }
        let named: Vec<String> = self
            .bad
            .iter()
            .take(REASON_BLOBS)
            .map(|b| match b.first_uses.first() {
                Some(u) => format!("blob {} {} (event {}, {})", b.id, b.problem, u.seq, u.api),
                None => format!("blob {} {} (no event uses it)", b.id, b.problem),
            })
            .collect();
        let more = self.bad.len().saturating_sub(REASON_BLOBS);
        let mut why = format!(
            "blob check: {} of {} blob{} missing or not what their names say: {}",
            self.bad.len(),
            self.blobs,
            plural(self.blobs),
            named.join("; ")
        );
        if more > 0 {
            why.push_str(&format!("; and {more} more"));
        }
        Some(why)
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Events naming one blob, while they are read.
#[derive(Default)]
struct Uses {
    count: u64,
    first: Vec<BlobUse>,
}

impl Archive {
    /// Checks every blob file of the archive against its name and every
    /// blob its events name for being there (see the module docs).
    /// `progress(bytes checked, bytes to check)` is called on the calling
    /// thread now and then while blobs are read. An error only when the
    /// archive cannot be looked at (its events file or `blobs/` unreadable,
    /// a thread not started); what is wrong with blobs is in the result.
    pub fn check_blobs(
        &self,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<BlobCheck, ArchiveError> {
        let (uses, events_unread) = self.blob_uses()?;
        let store = self.blobs();
        let listed = store.list().map_err(|source| ArchiveError::Io {
            path: store.root().to_path_buf(),
            source,
        })?;
        let mut ids: Vec<BlobId> = listed;
        ids.extend(uses.keys().copied());
        ids.sort_unstable();
        ids.dedup();
        // Largest first: the last blobs a thread takes are then short ones.
        let mut sized: Vec<(BlobId, u64)> = ids
            .into_iter()
            .map(|id| (id, store.size(&id).unwrap_or(0)))
            .collect();
        sized.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let total: u64 = sized.iter().map(|s| s.1).sum();

        let next = AtomicUsize::new(0);
        let done = AtomicU64::new(0);
        let finished = AtomicUsize::new(0);
        let problems: Mutex<Vec<(BlobId, BlobProblem)>> = Mutex::new(Vec::new());
        let check = || {
            while let Some(&(id, size)) = sized.get(next.fetch_add(1, Ordering::Relaxed)) {
                let problem = match store.get(&id) {
                    Ok(_) => None,
                    Err(BlobError::Missing { .. }) => Some(BlobProblem::Missing),
                    Err(BlobError::Corrupt { actual, .. }) => Some(BlobProblem::Corrupt { actual }),
                    Err(e) => Some(BlobProblem::Unreadable(
                        crate::error_chain::chain(&e).to_string(),
                    )),
                };
                if let Some(p) = problem {
                    problems
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((id, p));
                }
                done.fetch_add(size, Ordering::Relaxed);
            }
            finished.fetch_add(1, Ordering::Release);
        };
        std::thread::scope(|scope| -> Result<(), ArchiveError> {
            let mut started = 0;
            for _ in 0..crate::cores().min(sized.len()).max(1) {
                let spawned = std::thread::Builder::new()
                    .name("hrr-blob-check".into())
                    .spawn_scoped(scope, check);
                match spawned {
                    Ok(_) => started += 1,
                    Err(source) if started == 0 => {
                        return Err(ArchiveError::Io {
                            path: store.root().to_path_buf(),
                            source,
                        });
                    }
                    // The threads started take every blob.
                    Err(_) => break,
                }
            }
            // Polled, from a millisecond up: a small archive is done at once.
            let mut wait = Duration::from_millis(1);
            while finished.load(Ordering::Acquire) < started {
                progress(done.load(Ordering::Relaxed), total);
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_millis(50));
            }
            Ok(())
        })?;
        progress(done.load(Ordering::Relaxed), total);

        let problems = problems
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let mut bad: Vec<BadBlob> = problems
            .into_iter()
            .map(|(id, problem)| {
                let u = uses.get(&id);
                BadBlob {
                    id,
                    problem,
                    uses: u.map_or(0, |u| u.count),
                    first_uses: u.map_or_else(Vec::new, |u| u.first.clone()),
                }
            })
            .collect();
        bad.sort_by_key(|b| (b.first_uses.first().map_or(u64::MAX, |u| u.seq), b.id));
        Ok(BlobCheck {
            blobs: sized.len() as u64,
            bytes: total,
            bad,
            events_unread,
        })
    }

    /// The blobs the events name, with who names them, and why the events
    /// could not all be read (a malformed line; what came before counts).
    fn blob_uses(&self) -> Result<(HashMap<BlobId, Uses>, Option<String>), ArchiveError> {
        let mut uses: HashMap<BlobId, Uses> = HashMap::new();
        let mut note = |seq: u64, api: &str, ids: &[BlobId]| {
            for id in ids {
                let u = uses.entry(*id).or_default();
                u.count += 1;
                if u.first.len() < USES_KEPT {
                    u.first.push(BlobUse {
                        seq,
                        api: api.to_string(),
                    });
                }
            }
        };
        let named = |op: &Op| referenced_blobs(op).collect::<Vec<_>>();
        let mut unread = None;
        let on_disk = self.memory().is_none();
        let empty = on_disk && std::fs::metadata(self.events_path()).is_ok_and(|m| m.len() == 0);
        if on_disk && !empty {
            let reader = ParallelReader::open(self.events_path(), ReadOptions::default())?
                .threads(crate::cores().min(8));
            let run = reader.run(
                |e, _| {
                    let ids = named(&e.op);
                    (!ids.is_empty()).then_some((e.seq, e.api, ids))
                },
                |chunk: &[Option<(u64, String, Vec<BlobId>)>], _| {
                    for (seq, api, ids) in chunk.iter().flatten() {
                        note(*seq, api, ids);
                    }
                    Ok::<(), std::convert::Infallible>(())
                },
            );
            match run {
                Ok(_) => {}
                Err(ParallelError::Read(e)) => unread = Some(e.to_string()),
                Err(ParallelError::Spawn(source)) => {
                    return Err(ArchiveError::Io {
                        path: self.events_path(),
                        source,
                    });
                }
                Err(ParallelError::Panicked) => panic!("an event reader thread panicked"),
                Err(ParallelError::Sink(never)) => match never {},
            }
        } else if !empty {
            for e in self.events(ReadOptions::default())? {
                match e {
                    Ok(e) => note(e.seq, &e.api, &named(&e.op)),
                    Err(e) => {
                        unread = Some(e.to_string());
                        break;
                    }
                }
            }
        }
        Ok((uses, unread))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive_writer::{ArchiveWriter, ManifestExtra};
    use crate::blob_store::BlobStore;
    use crate::event::{Dir, Event};
    use crate::hex::Addr;
    use crate::manifest::{ArchiveKind, Platform};

    fn event(seq: u64, api: &str, op: Op) -> Event {
        Event {
            seq,
            t: seq,
            tid: 1,
            api: api.into(),
            ret: 0,
            dev: 0,
            op,
        }
    }

    fn h2d(blob: BlobId) -> Op {
        Op::Memcpy {
            dir: Dir::H2d,
            dst: Addr(0x10),
            src: Addr(0x20),
            size: 3,
            stream: None,
            blob: Some(blob),
        }
    }

    fn launch(code: BlobId) -> Op {
        Op::Launch {
            name: "k".into(),
            code,
            func: None,
            grid: [1; 3],
            block: [1; 3],
            shmem: 0,
            stream: Addr(0),
            args: vec![],
            attrs: vec![],
        }
    }

    /// A finished archive: a good copy, a code object used by three
    /// launches, another by one, and a blob file no event names.
    fn archive(dir: &std::path::Path) -> (BlobId, BlobId, BlobId, BlobId) {
        let mut w = ArchiveWriter::create(
            dir,
            ArchiveKind::Capture,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap()
        .compress(false);
        let good = w.put_blob(b"good").unwrap();
        let code = w.put_blob(&[7u8; 300_000]).unwrap();
        let other = w.put_blob(b"other code").unwrap();
        let loose = w.put_blob(b"loose").unwrap();
        w.append(&event(0, "hipMemcpy", h2d(good))).unwrap();
        for seq in 1..=4 {
            w.append(&event(seq, "hipLaunchKernel", launch(code)))
                .unwrap();
        }
        w.append(&event(5, "hipModuleLaunchKernel", launch(other)))
            .unwrap();
        w.finish().unwrap();
        (good, code, other, loose)
    }

    #[test]
    fn a_clean_archive_checks_clean() {
        let t = tempfile::tempdir().unwrap();
        archive(t.path());
        let mut calls = vec![];
        let c = Archive::open(t.path())
            .unwrap()
            .check_blobs(&mut |done, total| calls.push((done, total)))
            .unwrap();
        assert!(c.ok(), "{c:?}");
        assert_eq!(c.reason(), None);
        assert_eq!((c.blobs, c.bytes), (4, 4 + 300_000 + 10 + 5));
        assert_eq!(calls.last(), Some(&(c.bytes, c.bytes)));
    }

    #[test]
    fn a_corrupt_and_a_missing_blob_are_found_with_the_events_using_them() {
        let t = tempfile::tempdir().unwrap();
        let (_, code, other, loose) = archive(t.path());
        let store = BlobStore::of_archive(t.path());
        // Rewritten in place (one byte of a mapped blob), removed, and a
        // file no event names damaged too.
        let mut bytes = std::fs::read(store.path(&code)).unwrap();
        bytes[123_456] ^= 1;
        std::fs::write(store.path(&code), &bytes).unwrap();
        std::fs::remove_file(store.path(&other)).unwrap();
        std::fs::write(store.path(&loose), b"LOOSE").unwrap();
        let c = Archive::open(t.path())
            .unwrap()
            .check_blobs(&mut |_, _| {})
            .unwrap();
        assert!(!c.ok());
        assert_eq!(c.blobs, 4);
        let uses = |seqs: &[u64], api: &str| -> Vec<BlobUse> {
            seqs.iter()
                .map(|&seq| BlobUse {
                    seq,
                    api: api.into(),
                })
                .collect()
        };
        assert_eq!(
            c.bad,
            [
                BadBlob {
                    id: code,
                    problem: BlobProblem::Corrupt {
                        actual: BlobId::of(&bytes)
                    },
                    uses: 4,
                    first_uses: uses(&[1, 2, 3], "hipLaunchKernel"),
                },
                BadBlob {
                    id: other,
                    problem: BlobProblem::Missing,
                    uses: 1,
                    first_uses: uses(&[5], "hipModuleLaunchKernel"),
                },
                BadBlob {
                    id: loose,
                    problem: BlobProblem::Corrupt {
                        actual: BlobId::of(b"LOOSE")
                    },
                    uses: 0,
                    first_uses: vec![],
                },
            ]
        );
        assert_eq!(
            c.bad[0].to_string(),
            format!(
                "blob {code} does not match its name (its bytes hash to {}); used by event 1 \
                 (hipLaunchKernel), event 2 (hipLaunchKernel), event 3 (hipLaunchKernel) and \
                 1 more event",
                BlobId::of(&bytes)
            )
        );
        assert_eq!(
            c.bad[1].to_string(),
            format!("blob {other} is missing; used by event 5 (hipModuleLaunchKernel)")
        );
        assert!(c.bad[2].to_string().ends_with("; used by no event"));
        let why = c.reason().unwrap();
        assert!(
            why.starts_with("blob check: 3 of 4 blobs missing or not what their names say: blob "),
            "{why}"
        );
        assert!(why.contains(&format!(
            "blob {other} is missing (event 5, hipModuleLaunchKernel)"
        )));
    }

    #[test]
    fn blobs_named_by_graphs_are_checked_and_a_malformed_line_noted() {
        use crate::graph::{GraphNode, NodeBlob, NodeOp};
        let t = tempfile::tempdir().unwrap();
        let mut w = ArchiveWriter::create(
            t.path(),
            ArchiveKind::Capture,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap();
        let (code, copy) = (BlobId::of(b"graph code"), BlobId::of(b"node copy"));
        let kernel = NodeOp::Kernel {
            name: "k".into(),
            code,
            func: None,
            grid: [1; 3],
            block: [1; 3],
            shmem: 0,
            args: vec![],
        };
        let exec = Op::GraphExec {
            exec: Addr(1),
            graph: Addr(2),
            nodes: vec![GraphNode {
                op: kernel,
                deps: vec![],
            }],
        };
        let run = Op::GraphLaunch {
            exec: Addr(1),
            stream: Addr(0),
            blobs: vec![NodeBlob {
                node: 1,
                blob: copy,
            }],
        };
        w.append(&event(0, "hipGraphInstantiate", exec)).unwrap();
        w.append(&event(1, "hipGraphLaunch", run)).unwrap();
        drop(w);
        let events = t.path().join(crate::archive_writer::EVENTS_FILE);
        let mut text = std::fs::read(&events).unwrap();
        text.extend_from_slice(b"{\"seq\":2,\"op\":\"nonsense\"}\n{\"seq\":3}\n");
        std::fs::write(&events, text).unwrap();
        let c = Archive::open(t.path())
            .unwrap()
            .check_blobs(&mut |_, _| {})
            .unwrap();
        let missing: Vec<_> = c.bad.iter().map(|b| (b.id, b.problem.clone())).collect();
        assert_eq!(
            missing,
            [(code, BlobProblem::Missing), (copy, BlobProblem::Missing)]
        );
        assert!(c.events_unread.is_some(), "{c:?}");
    }
}
