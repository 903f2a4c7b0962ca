//! A communicator: its rank, size and device on the caller's side, and a
//! proxy thread that owns its exchange and makes every collective's copies
//! through the HIP API (as NCCL's proxy threads make their calls). The
//! caller hands it one operation at a time and waits for it: the
//! operation is complete, on the stream's order, when the call returns.
//! A group's operations on several communicators of one process (ranks of
//! one `ncclCommInitAll`) are handed out first and waited for together
//! ([`Comm::submit`]), since each waits for the others' data.
//!
//! A split ([`Comm::split`]) gathers every rank's color and key through
//! the parent's exchange; the ranks of one color then make a communicator
//! of their own, ordered by key, then by parent rank, whose unique id is
//! the fresh one its first rank contributed to that gather.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::thread::JoinHandle;

use nccl_api::Coll;
use nccl_api::types::*;

use crate::exchange::Exchange;
use crate::hip;
use crate::reduce::{ReduceError, reduce};

/// One operation, as the application issued it.
#[derive(Clone, Copy, Debug)]
pub struct Op {
    /// Which.
    pub coll: Coll,
    /// Send buffer (device).
    pub send: u64,
    /// Receive buffer (device).
    pub recv: u64,
    /// Elements (per rank for all-gather and reduce-scatter).
    pub count: usize,
    /// Data type.
    pub dtype: ncclDataType_t,
    /// Reduction operator.
    pub op: ncclRedOp_t,
    /// Root or peer.
    pub root: i32,
    /// The stream it is ordered on.
    pub stream: u64,
}

/// Why an operation failed (said on stderr, answered with the result).
#[derive(Debug)]
pub struct Failure {
    /// The API's result.
    pub code: ncclResult_t,
    /// What happened.
    pub why: String,
}

impl Failure {
    fn usage(why: impl Into<String>) -> Failure {
        Failure {
            code: NCCL_INVALID_ARGUMENT,
            why: why.into(),
        }
    }
}

impl From<hip::HipFailed> for Failure {
    fn from(e: hip::HipFailed) -> Failure {
        Failure {
            code: NCCL_UNHANDLED_CUDA_ERROR,
            why: format!("{} returned {}", e.call, e.code),
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure {
            code: NCCL_SYSTEM_ERROR,
            why: format!("exchange: {e}"),
        }
    }
}

impl From<ReduceError> for Failure {
    fn from(e: ReduceError) -> Failure {
        Failure::usage(format!("cannot reduce: {e:?}"))
    }
}

/// What the proxy thread owns.
struct State {
    rank: usize,
    nranks: usize,
    ex: Option<Exchange>,
    /// Collectives so far (names their exchange files).
    seq: u64,
    /// Sends to and receives from each peer so far.
    sent: Vec<u64>,
    received: Vec<u64>,
    /// Sends of this rank to itself, not yet received.
    own: VecDeque<Vec<u8>>,
    /// Scratch memory the proxy allocates, as NCCL's proxies do.
    scratch: u64,
}

/// What the proxy is asked to do.
enum Job {
    /// One operation.
    Op(Op),
    /// Every rank's bytes, for the next step of the communicator (a split).
    Gather(Vec<u8>),
}

/// The proxy's answer: every rank's bytes for a gather, nothing for an
/// operation.
type Reply = Result<Vec<Vec<u8>>, Failure>;

/// An operation handed to the proxy, not yet waited for.
pub struct Pending(mpsc::Receiver<Reply>);

impl Pending {
    /// Waits for the operation.
    pub fn wait(self) -> Result<(), Failure> {
        self.0.recv().map_err(|_| lost())?.map(drop)
    }
}

fn lost() -> Failure {
    Failure {
        code: NCCL_INTERNAL_ERROR,
        why: "the proxy thread ended".into(),
    }
}

/// The new communicator a split gives one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// Its unique id.
    pub id: [u8; 128],
    /// Ranks of its color.
    pub nranks: usize,
    /// This rank among them.
    pub rank: usize,
}

/// Bytes of one rank's contribution to a split: color, key, fresh id.
const SPLIT_BYTES: usize = 8 + 128;

/// Bytes of device memory each proxy allocates and clears when it starts.
pub const SCRATCH: usize = 65536;

/// A communicator.
pub struct Comm {
    /// This rank.
    pub rank: usize,
    /// Ranks in all.
    pub nranks: usize,
    /// The device it was created on.
    pub device: i32,
    jobs: Option<mpsc::Sender<(Job, mpsc::Sender<Reply>)>>,
    proxy: Option<JoinHandle<()>>,
}

impl Comm {
    /// Creates rank `rank` of `nranks` of the communicator `id`, on the
    /// current device, and meets the other ranks.
    pub fn new(id: &[u8; 128], nranks: usize, rank: usize) -> Result<Comm, Failure> {
        Comm::on(hip::get_device()?, id, nranks, rank)
    }

    /// As [`Comm::new`], on `device`.
    pub fn on(device: i32, id: &[u8; 128], nranks: usize, rank: usize) -> Result<Comm, Failure> {
        if nranks == 0 || rank >= nranks {
            return Err(Failure::usage(format!("rank {rank} of {nranks}")));
        }
        let ex = if nranks > 1 {
            let ex = Exchange::open(id, rank, nranks)?;
            ex.all("init", &[])?;
            Some(ex)
        } else {
            None
        };
        let (tx, rx) = mpsc::channel::<(Job, mpsc::Sender<Reply>)>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), Failure>>();
        let proxy = std::thread::Builder::new()
            .name(format!("nccl-proxy-{rank}"))
            .spawn(move || {
                let mut st = State {
                    rank,
                    nranks,
                    ex,
                    seq: 0,
                    sent: vec![0; nranks],
                    received: vec![0; nranks],
                    own: VecDeque::new(),
                    scratch: 0,
                };
                let start = (|| -> Result<(), Failure> {
                    hip::set_device(device)?;
                    st.scratch = hip::malloc(SCRATCH)?;
                    hip::memset(st.scratch, 0, SCRATCH)?;
                    Ok(())
                })();
                let ok = start.is_ok();
                let _ = ready_tx.send(start);
                if ok {
                    for (job, reply) in rx {
                        let r = match job {
                            Job::Op(op) => st.run(&op).map(|()| Vec::new()),
                            Job::Gather(mine) => st.all(&mine),
                        };
                        let _ = reply.send(r);
                    }
                }
                if st.scratch != 0 {
                    let _ = hip::free(st.scratch);
                }
            })
            .map_err(|e| Failure {
                code: NCCL_SYSTEM_ERROR,
                why: format!("proxy thread: {e}"),
            })?;
        let mut comm = Comm {
            rank,
            nranks,
            device,
            jobs: Some(tx),
            proxy: Some(proxy),
        };
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(comm),
            Ok(Err(e)) => {
                comm.close();
                Err(e)
            }
            Err(_) => {
                comm.close();
                Err(Failure {
                    code: NCCL_INTERNAL_ERROR,
                    why: "the proxy thread ended".into(),
                })
            }
        }
    }

    fn hand(&self, job: Job) -> Result<mpsc::Receiver<Reply>, Failure> {
        let (tx, rx) = mpsc::channel();
        self.jobs
            .as_ref()
            .ok_or_else(lost)?
            .send((job, tx))
            .map_err(|_| lost())?;
        Ok(rx)
    }

    /// Runs `op` on the proxy and waits for it.
    pub fn run(&self, op: Op) -> Result<(), Failure> {
        self.submit(op)?.wait()
    }

    /// Hands `op` to the proxy; [`Pending::wait`] waits for it.
    pub fn submit(&self, op: Op) -> Result<Pending, Failure> {
        self.hand(Job::Op(op)).map(Pending)
    }

    /// This rank's part of a split by `color` (negative: none) and `key`;
    /// `fresh` is a unique id this rank offers its color. Every rank of
    /// the communicator calls it.
    pub fn split(&self, color: i32, key: i32, fresh: &[u8; 128]) -> Result<Option<Part>, Failure> {
        let mut mine = Vec::with_capacity(SPLIT_BYTES);
        mine.extend_from_slice(&color.to_le_bytes());
        mine.extend_from_slice(&key.to_le_bytes());
        mine.extend_from_slice(fresh);
        let all = self.hand(Job::Gather(mine))?.recv().map_err(|_| lost())??;
        let mut ranks = Vec::with_capacity(all.len());
        for (r, b) in all.iter().enumerate() {
            if b.len() != SPLIT_BYTES {
                return Err(Failure::usage(format!(
                    "rank {r}'s part of a split holds {} bytes",
                    b.len()
                )));
            }
            let word = |i: usize| i32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
            ranks.push((word(0), word(4), r));
        }
        Ok(
            split_part(&ranks, self.rank, color).map(|(nranks, rank, first)| Part {
                id: all[first][8..].try_into().expect("128 bytes"),
                nranks,
                rank,
            }),
        )
    }

    /// Stops the proxy (it frees its memory) and waits for it.
    pub fn close(&mut self) {
        drop(self.jobs.take());
        if let Some(t) = self.proxy.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        self.close();
    }
}

impl State {
    fn run(&mut self, op: &Op) -> Result<(), Failure> {
        let size = dtype_size(op.dtype)
            .ok_or_else(|| Failure::usage(format!("data type {}", op.dtype)))?;
        let n = op.count * size;
        let root = op.root;
        if matches!(
            op.coll,
            Coll::Broadcast | Coll::Reduce | Coll::Send | Coll::Recv
        ) && (root < 0 || root as usize >= self.nranks)
        {
            return Err(Failure::usage(format!(
                "root or peer {root} of {} ranks",
                self.nranks
            )));
        }
        let root = root as usize;
        // What the application ordered before it on the stream comes first.
        hip::stream_sync(op.stream)?;
        match op.coll {
            Coll::AllReduce => {
                let all = self.all(&hip::read(op.send, n)?)?;
                let out = reduce(op.dtype, op.op, &refs(&all))?;
                hip::write(op.recv, &out)?;
            }
            Coll::Reduce => {
                let all = self.all(&hip::read(op.send, n)?)?;
                let out = reduce(op.dtype, op.op, &refs(&all))?;
                if self.rank == root {
                    hip::write(op.recv, &out)?;
                }
            }
            Coll::Broadcast => {
                let mine = if self.rank == root {
                    hip::read(op.send, n)?
                } else {
                    Vec::new()
                };
                let all = self.all(&mine)?;
                hip::write(op.recv, &all[root])?;
            }
            Coll::AllGather => {
                let all = self.all(&hip::read(op.send, n)?)?;
                hip::write(op.recv, &all.concat())?;
            }
            Coll::ReduceScatter => {
                let all = self.all(&hip::read(op.send, n * self.nranks)?)?;
                let out = reduce(op.dtype, op.op, &refs(&all))?;
                hip::write(op.recv, &out[self.rank * n..(self.rank + 1) * n])?;
            }
            Coll::Send => {
                let data = hip::read(op.send, n)?;
                if root == self.rank {
                    self.own.push_back(data);
                } else {
                    let k = self.sent[root];
                    self.sent[root] += 1;
                    self.ex()
                        .publish(&format!("p2p-{}-{root}-{k}", self.rank), &data)?;
                }
            }
            Coll::Recv => {
                let data = if root == self.rank {
                    self.own
                        .pop_front()
                        .ok_or_else(|| Failure::usage("a receive from this rank with no send"))?
                } else {
                    let k = self.received[root];
                    self.received[root] += 1;
                    let name = format!("p2p-{root}-{}-{k}", self.rank);
                    let d = self.ex().wait(&name)?;
                    self.ex().remove(&name);
                    d
                };
                if data.len() != n {
                    return Err(Failure::usage(format!(
                        "received {} bytes, expected {n}",
                        data.len()
                    )));
                }
                hip::write(op.recv, &data)?;
            }
        }
        Ok(())
    }

    fn ex(&self) -> &Exchange {
        self.ex.as_ref().expect("several ranks have an exchange")
    }

    /// Every rank's `mine` for the next step.
    fn all(&mut self, mine: &[u8]) -> Result<Vec<Vec<u8>>, Failure> {
        let Some(ex) = &self.ex else {
            return Ok(vec![mine.to_vec()]);
        };
        let seq = self.seq;
        self.seq += 1;
        let all = ex.all(&format!("c{seq}"), mine)?;
        if seq >= 2 {
            ex.remove(&format!("c{}-r{}", seq - 2, self.rank));
        }
        Ok(all)
    }
}

/// Of `ranks` (color, key, parent rank), the new communicator of parent
/// rank `me` with `color`: its ranks in all, `me`'s rank in it, and the
/// parent rank of its first (whose id it takes). `None` for a negative
/// color (`NCCL_SPLIT_NOCOLOR`).
fn split_part(ranks: &[(i32, i32, usize)], me: usize, color: i32) -> Option<(usize, usize, usize)> {
    if color < 0 {
        return None;
    }
    let mut same: Vec<(i32, usize)> = ranks
        .iter()
        .filter(|(c, _, _)| *c == color)
        .map(|(_, k, r)| (*k, *r))
        .collect();
    same.sort_unstable();
    let rank = same.iter().position(|(_, r)| *r == me)?;
    Some((same.len(), rank, same[0].1))
}

fn refs(v: &[Vec<u8>]) -> Vec<&[u8]> {
    v.iter().map(Vec::as_slice).collect()
}

#[cfg(test)]
mod tests {
    use super::split_part;

    #[test]
    fn a_split_groups_by_color_and_orders_by_key_then_rank() {
        // Parent ranks 0..4: colors 0,1,0,1; keys 5,0,1,0.
        let ranks = [(0, 5, 0), (1, 0, 1), (0, 1, 2), (1, 0, 3)];
        assert_eq!(split_part(&ranks, 0, 0), Some((2, 1, 2)));
        assert_eq!(split_part(&ranks, 2, 0), Some((2, 0, 2)));
        assert_eq!(split_part(&ranks, 1, 1), Some((2, 0, 1)));
        assert_eq!(split_part(&ranks, 3, 1), Some((2, 1, 1)));
        assert_eq!(split_part(&ranks, 3, -1), None);
    }
}
