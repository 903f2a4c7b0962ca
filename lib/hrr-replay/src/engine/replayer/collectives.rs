//! Collectives (`nccl_comm_init`, `nccl_comm_split`, `nccl_comm_init_all`,
//! `nccl_coll`, `nccl_group_*`, `nccl_comm_finalize`,
//! `nccl_comm_destroy`), replayed through the real
//! NCCL-API library: the backend's ([`Device::collectives_library`]: NCCL
//! on CUDA, RCCL on ROCm, hrr's stand-in on the CPU runtime) unless
//! [`ReplayOptions::collectives_library`] names another. It is loaded at
//! the first such event; an archive without collectives never loads it.
//!
//! Communicators are created afresh among the replaying processes. One
//! rank: a fresh unique id. Several: every rank's archive names the same
//! unique id (`uid`), and the process replaying rank 0 makes a fresh one
//! and publishes it in the job's rendezvous directory
//! ([`ReplayOptions::rendezvous`], which `hrr-play JOB` makes and hands to
//! its children), where the other ranks wait for it. Outside a job replay
//! several ranks cannot meet: refused, naming the event. A split is the
//! library's split of the replayed parent with the recorded color and key
//! (every rank of the parent replays its own); `ncclCommInitAll` is the
//! library's over the recorded devices as `--device-map` maps them.
//!
//! Collectives are issued with their buffers translated like any device
//! operand and on the translated stream, after the backend's launch
//! thread has made every launch before them.
//!
//! [`Device::collectives_library`]: crate::device::Device::collectives_library
//! [`ReplayOptions::collectives_library`]: crate::engine::options::ReplayOptions::collectives_library
//! [`ReplayOptions::rendezvous`]: crate::engine::options::ReplayOptions::rendezvous

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use nccl_api::Coll;
use nccl_api::loader::{Issue, Nccl};
use nccl_api::types::{NCCL_UNIQUE_ID_BYTES, dtype_size};

use super::Replayer;
use crate::engine::error::{EventFailure, Operand, ReplayError};
use hrr_core::event::Event;
use hrr_core::hex::Addr;

/// How long a rank waits for rank 0's unique id.
pub(super) const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(120);

/// The replay's communicators and the library they come from.
#[derive(Default)]
pub(super) struct Collectives {
    lib: Option<Nccl>,
    /// Recorded communicator → (live one, its ranks).
    comms: HashMap<u64, (u64, u32)>,
}

/// Unique ids made or read in this process, by recorded `uid`, with how
/// many communicators of that `uid` were created so far: the n-th creation
/// of a `uid` meets the other ranks' n-th (a `--runs` replay creates each
/// communicator once per run).
static CREATED: Mutex<Option<HashMap<String, u64>>> = Mutex::new(None);

fn nth_creation(uid: &str) -> u64 {
    let mut m = CREATED.lock().unwrap_or_else(PoisonError::into_inner);
    let n = m
        .get_or_insert_with(HashMap::new)
        .entry(uid.to_string())
        .or_insert(0);
    let this = *n;
    *n += 1;
    this
}

/// The file of a rendezvous directory holding the n-th unique id of `uid`.
pub(super) fn rendezvous_file(dir: &Path, uid: &str, n: u64) -> PathBuf {
    dir.join(format!("nccl-{uid}-{n}.id"))
}

/// Whether `e` is a collective event whose call answered `ncclInProgress`
/// (a non-blocking communicator's): it was issued, and is replayed.
pub(super) fn in_progress(e: &Event) -> bool {
    use hrr_core::event::Op;
    e.ret == i64::from(nccl_api::types::NCCL_IN_PROGRESS)
        && matches!(
            e.op,
            Op::NcclCommInit { .. }
                | Op::NcclCommSplit { .. }
                | Op::NcclCommInitAll { .. }
                | Op::NcclColl { .. }
                | Op::NcclGroupEnd
                | Op::NcclCommFinalize { .. }
        )
}

fn collective_err(what: impl Into<String>) -> EventFailure {
    EventFailure::Collectives(what.into())
}

impl Replayer<'_> {
    /// The library, loaded at the first collective event.
    fn nccl(&mut self, e: &Event) -> Result<&Nccl, ReplayError> {
        if self.collectives.lib.is_none() {
            let path = match (
                &self.opts.collectives_library,
                self.dev.collectives_library(),
            ) {
                (Some(p), _) => p.clone(),
                (None, Some(p)) => p,
                (None, None) => {
                    return Err(Self::fatal(
                        e,
                        collective_err(format!(
                            "the {} backend replays no collectives",
                            self.dev.name()
                        )),
                    ));
                }
            };
            let lib = Nccl::load(&path).map_err(|err| {
                Self::fatal(
                    e,
                    collective_err(format!(
                        "collectives are replayed through the NCCL-API library: {err} (name it with --nccl-lib or HRR_NCCL_LIBRARY)"
                    )),
                )
            })?;
            self.collectives.lib = Some(lib);
        }
        Ok(self.collectives.lib.as_ref().expect("loaded above"))
    }

    /// The unique id this process's rank of recorded `uid` uses.
    fn unique_id(
        &mut self,
        e: &Event,
        uid: &str,
        nranks: u32,
        rank: u32,
    ) -> Result<[u8; NCCL_UNIQUE_ID_BYTES], ReplayError> {
        let fresh = |me: &mut Self| {
            me.nccl(e)?
                .unique_id()
                .map_err(|err| Self::fatal(e, collective_err(err.to_string())))
        };
        if nranks == 1 {
            return fresh(self);
        }
        let Some(dir) = self.opts.rendezvous.clone() else {
            return Err(Self::fatal(
                e,
                collective_err(format!(
                    "communicator {uid} has {nranks} ranks, which meet only in a job replay: replay the job (hrr-play NAME.job.json), not one process's archive"
                )),
            ));
        };
        let file = rendezvous_file(&dir, uid, nth_creation(uid));
        if rank == 0 {
            let id = fresh(self)?;
            let tmp = file.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, id)
                .and_then(|()| std::fs::rename(&tmp, &file))
                .map_err(|err| {
                    Self::fatal(
                        e,
                        collective_err(format!(
                            "publishing the unique id in {}: {err}",
                            file.display()
                        )),
                    )
                })?;
            return Ok(id);
        }
        let start = Instant::now();
        loop {
            match std::fs::read(&file) {
                Ok(b) if b.len() == NCCL_UNIQUE_ID_BYTES => {
                    return Ok(b.try_into().expect("length checked"));
                }
                Ok(b) => {
                    return Err(Self::fatal(
                        e,
                        collective_err(format!(
                            "{} holds {} bytes, not a unique id",
                            file.display(),
                            b.len()
                        )),
                    ));
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => {
                    return Err(Self::fatal(
                        e,
                        collective_err(format!("{}: {err}", file.display())),
                    ));
                }
            }
            if start.elapsed() > RENDEZVOUS_TIMEOUT {
                return Err(Self::fatal(
                    e,
                    collective_err(format!(
                        "rank {rank} of communicator {uid} waited {} s for rank 0's unique id ({}): is rank 0's archive part of this job?",
                        RENDEZVOUS_TIMEOUT.as_secs(),
                        file.display()
                    )),
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// `nccl_comm_init`.
    pub(super) fn nccl_comm_init(
        &mut self,
        e: &Event,
        comm: Addr,
        uid: &str,
        nranks: u32,
        rank: u32,
    ) -> Result<(), ReplayError> {
        if nranks == 0 || rank >= nranks {
            return Err(Self::fatal(
                e,
                collective_err(format!("rank {rank} of {nranks}")),
            ));
        }
        let id = self.unique_id(e, uid, nranks, rank)?;
        self.dev.quiesce().map_err(Self::dev_err(e))?;
        let live = self
            .nccl(e)?
            .comm_init_rank(nranks as i32, id, rank as i32)
            .map_err(|err| Self::fatal(e, collective_err(err.to_string())))?;
        self.collectives.comms.insert(comm.0, (live, nranks));
        Ok(())
    }

    /// `nccl_comm_split`: the replayed parent split with the recorded
    /// color and key; the library must agree on whether this rank gets a
    /// communicator.
    pub(super) fn nccl_comm_split(
        &mut self,
        e: &Event,
        parent: Addr,
        color: i32,
        key: i32,
        comm: Option<Addr>,
    ) -> Result<(), ReplayError> {
        let (live_parent, _) = self.live_comm(e, parent)?;
        self.dev.quiesce().map_err(Self::dev_err(e))?;
        let lib = self.nccl(e)?;
        let made = lib
            .comm_split(live_parent, color, key)
            .map_err(|err| Self::fatal(e, collective_err(err.to_string())))?;
        let (recorded, live) = match (comm, made) {
            (Some(c), Some(live)) if c.0 != 0 => (c, live),
            (None, None) => return Ok(()),
            (c, live) => {
                return Err(Self::fatal(
                    e,
                    collective_err(format!(
                        "the split of {parent} by color {color} {} a communicator at capture, and {} now",
                        if c.is_some() { "made" } else { "made no" },
                        if live.is_some() {
                            "made one"
                        } else {
                            "made none"
                        },
                    )),
                ));
            }
        };
        let nranks = lib
            .comm_count(live)
            .map_err(|err| Self::fatal(e, collective_err(err.to_string())))?;
        self.collectives.comms.insert(recorded.0, (live, nranks));
        Ok(())
    }

    /// `nccl_comm_init_all`: one communicator per recorded device, on the
    /// local device each maps to.
    pub(super) fn nccl_comm_init_all(
        &mut self,
        e: &Event,
        comms: &[Addr],
        devices: &[i32],
    ) -> Result<(), ReplayError> {
        if comms.len() != devices.len() || comms.is_empty() {
            return Err(Self::fatal(
                e,
                collective_err(format!(
                    "{} communicators for {} devices",
                    comms.len(),
                    devices.len()
                )),
            ));
        }
        let mut local = Vec::with_capacity(devices.len());
        for &d in devices {
            let Ok(d) = u32::try_from(d) else {
                return Err(Self::fatal(e, collective_err(format!("device {d}"))));
            };
            let l = self.local_device(e, d)?;
            local.push(i32::try_from(l).unwrap_or(i32::MAX));
        }
        self.dev.quiesce().map_err(Self::dev_err(e))?;
        let live = self
            .nccl(e)?
            .comm_init_all(&local)
            .map_err(|err| Self::fatal(e, collective_err(err.to_string())))?;
        let n = comms.len() as u32;
        for (c, l) in comms.iter().zip(live) {
            self.collectives.comms.insert(c.0, (l, n));
        }
        Ok(())
    }

    fn live_comm(&self, e: &Event, comm: Addr) -> Result<(u64, u32), ReplayError> {
        self.collectives.comms.get(&comm.0).copied().ok_or_else(|| {
            Self::fatal(
                e,
                collective_err(format!("communicator {comm} was never created")),
            )
        })
    }

    /// `nccl_comm_finalize` (`destroy: false`) and `nccl_comm_destroy`.
    pub(super) fn nccl_comm_end(
        &mut self,
        e: &Event,
        comm: Addr,
        destroy: bool,
    ) -> Result<(), ReplayError> {
        let (live, _) = self.live_comm(e, comm)?;
        self.dev.quiesce().map_err(Self::dev_err(e))?;
        let lib = self.nccl(e)?;
        let r = if destroy {
            lib.comm_destroy(live)
        } else {
            lib.comm_finalize(live)
        };
        r.map_err(|err| Self::fatal(e, collective_err(err.to_string())))?;
        if destroy {
            self.collectives.comms.remove(&comm.0);
        }
        Ok(())
    }

    /// `nccl_group_start` (`start`) and `nccl_group_end`.
    pub(super) fn nccl_group(&mut self, e: &Event, start: bool) -> Result<(), ReplayError> {
        self.dev.quiesce().map_err(Self::dev_err(e))?;
        let lib = self.nccl(e)?;
        let r = if start {
            lib.group_start()
        } else {
            lib.group_end()
        };
        r.map_err(|err| Self::fatal(e, collective_err(err.to_string())))
    }

    /// `nccl_coll`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn nccl_coll(
        &mut self,
        e: &Event,
        coll: &str,
        src: Option<Addr>,
        dst: Option<Addr>,
        count: u64,
        dtype: u32,
        redop: Option<u32>,
        rank_arg: Option<i32>,
        comm: Addr,
        stream: Addr,
    ) -> Result<(), ReplayError> {
        let Some(c) = Coll::from_name(coll) else {
            return Err(Self::fatal(
                e,
                collective_err(format!("unknown collective `{coll}`")),
            ));
        };
        let size = dtype_size(dtype)
            .ok_or_else(|| Self::fatal(e, collective_err(format!("unknown data type {dtype}"))))?;
        let (live_comm, nranks) = self.live_comm(e, comm)?;
        let bytes = count.saturating_mul(size as u64);
        let all = bytes.saturating_mul(u64::from(nranks));
        let (send_len, recv_len) = match c {
            Coll::AllGather => (bytes, all),
            Coll::ReduceScatter => (all, bytes),
            _ => (bytes, bytes),
        };
        let send = match src {
            Some(a) if a.0 != 0 => self.device_operand(e, Operand::CollSend, a, send_len)?,
            _ => 0,
        };
        let recv = match dst {
            Some(a) if a.0 != 0 => self.device_operand(e, Operand::CollRecv, a, recv_len)?,
            _ => 0,
        };
        let stream = self.stream(e, Some(stream))?.unwrap_or(0);
        self.dev.quiesce().map_err(Self::dev_err(e))?;
        let issue = Issue {
            coll: c,
            send,
            recv,
            count,
            dtype,
            op: redop.unwrap_or(0),
            root: rank_arg.unwrap_or(0),
            comm: live_comm,
            stream,
        };
        let lib = self.nccl(e)?;
        // SAFETY: the buffers are live device memory of at least the
        // operation's length (translated above with that length), the
        // communicator came from this library, the stream from the backend.
        unsafe { lib.issue(&issue) }.map_err(|err| Self::fatal(e, collective_err(err.to_string())))
    }
}
