//! A communicator: its rank, size and device on the caller's side, and a
//! proxy thread that owns its exchange and makes every collective's copies
//! through the HIP API (as NCCL's proxy threads make their calls). The
//! caller hands it one operation at a time and waits for it: the
//! operation is complete, on the stream's order, when the call returns.

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

type Reply = Result<(), Failure>;

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
    jobs: Option<mpsc::Sender<(Op, mpsc::Sender<Reply>)>>,
    proxy: Option<JoinHandle<()>>,
}

impl Comm {
    /// Creates rank `rank` of `nranks` of the communicator `id`, on the
    /// current device, and meets the other ranks.
    pub fn new(id: &[u8; 128], nranks: usize, rank: usize) -> Result<Comm, Failure> {
        if nranks == 0 || rank >= nranks {
            return Err(Failure::usage(format!("rank {rank} of {nranks}")));
        }
        let device = hip::get_device()?;
        let ex = if nranks > 1 {
            let ex = Exchange::open(id, rank, nranks)?;
            ex.all("init", &[])?;
            Some(ex)
        } else {
            None
        };
        let (tx, rx) = mpsc::channel::<(Op, mpsc::Sender<Reply>)>();
        let (ready_tx, ready_rx) = mpsc::channel::<Reply>();
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
                let start = (|| -> Reply {
                    hip::set_device(device)?;
                    st.scratch = hip::malloc(SCRATCH)?;
                    hip::memset(st.scratch, 0, SCRATCH)?;
                    Ok(())
                })();
                let ok = start.is_ok();
                let _ = ready_tx.send(start);
                if ok {
                    for (op, reply) in rx {
                        let _ = reply.send(st.run(&op));
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

    /// Runs `op` on the proxy and waits for it.
    pub fn run(&self, op: Op) -> Result<(), Failure> {
        let lost = || Failure {
            code: NCCL_INTERNAL_ERROR,
            why: "the proxy thread ended".into(),
        };
        let (tx, rx) = mpsc::channel();
        self.jobs
            .as_ref()
            .ok_or_else(lost)?
            .send((op, tx))
            .map_err(|_| lost())?;
        rx.recv().map_err(|_| lost())?
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
    fn run(&mut self, op: &Op) -> Reply {
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

    /// Every rank's `mine` for the next collective.
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

fn refs(v: &[Vec<u8>]) -> Vec<&[u8]> {
    v.iter().map(Vec::as_slice).collect()
}
