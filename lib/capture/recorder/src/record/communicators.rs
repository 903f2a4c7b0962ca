//! The communicators a window's state preamble rebuilds: the creating
//! events (`nccl_comm_init`, `nccl_comm_init_all`, `nccl_comm_split`) of
//! every communicator live outside a window, kept with what they were made
//! from.
//!
//! A communicator is made by all its ranks together, and a split by every
//! rank of its parent, so the ranks' preambles must replay the same
//! creations or they wait for each other for ever. Communicators are kept
//! by *family* (one made from a unique id or by `ncclCommInitAll`, and
//! every one split from it, transitively): a family's events all stay
//! until every communicator of it is destroyed, a split that gave this
//! rank none (`NCCL_SPLIT_NOCOLOR`) included. The preamble replays them in
//! their order and destroys again, right after their last split, those the
//! program had destroyed. A split whose parent the capture never saw made
//! cannot be replayed: named as not restored.

use std::collections::{BTreeMap, HashMap};

use hrr_core::{Addr, Op};

/// One creating event.
#[derive(Clone, Debug)]
struct Made {
    api: String,
    op: Op,
    dev: u32,
    /// The place of its family's first event.
    family: u64,
    /// The parent's creating event and handle, for a split.
    parent: Option<(u64, u64)>,
    /// The communicators it made, each with whether it was destroyed.
    handles: Vec<(u64, bool)>,
    /// A split of a communicator whose creation was never seen.
    orphan: bool,
}

/// What the preamble writes for the communicators, in its order.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// A creating event, replayed as recorded on device `dev`.
    Create {
        /// Its entry point.
        api: String,
        /// The event's op (boxed: an op is large beside the other steps).
        op: Box<Op>,
        /// The device it ran on.
        dev: u32,
    },
    /// A communicator the program had destroyed by the window's start.
    Destroy {
        /// Its handle.
        comm: Addr,
        /// The device its creation ran on.
        dev: u32,
    },
    /// A communicator that cannot be rebuilt, and why.
    NotRestored(String),
}

/// The kept creating events, and which one made each live handle.
#[derive(Clone, Debug, Default)]
pub struct Communicators {
    next: u64,
    made: BTreeMap<u64, Made>,
    live: HashMap<u64, u64>,
}

impl Communicators {
    /// Notes a successful call's effect (any op; those not about
    /// communicators are ignored). `dev`: the device it ran on.
    pub fn note(&mut self, api: &str, op: &Op, dev: u32) {
        let n = self.next;
        let made = |family, parent, handles: Vec<u64>, orphan| Made {
            api: api.to_string(),
            op: op.clone(),
            dev,
            family,
            parent,
            handles: handles.into_iter().map(|h| (h, false)).collect(),
            orphan,
        };
        let m = match op {
            Op::NcclCommInit { comm, .. } => made(n, None, vec![comm.0], false),
            Op::NcclCommInitAll { comms, .. } => {
                made(n, None, comms.iter().map(|c| c.0).collect(), false)
            }
            Op::NcclCommSplit { parent, comm, .. } => {
                let handles = comm.iter().map(|c| c.0).collect();
                match self.live.get(&parent.0) {
                    Some(&p) => {
                        let family = self.made[&p].family;
                        made(family, Some((p, parent.0)), handles, false)
                    }
                    None => made(n, None, handles, true),
                }
            }
            Op::NcclCommDestroy { comm } => {
                self.destroyed(comm.0);
                return;
            }
            _ => return,
        };
        for (h, _) in &m.handles {
            self.live.insert(*h, n);
        }
        self.made.insert(n, m);
        self.next += 1;
    }

    fn destroyed(&mut self, comm: u64) {
        let Some(n) = self.live.remove(&comm) else {
            return;
        };
        let Some(m) = self.made.get_mut(&n) else {
            return;
        };
        for h in m.handles.iter_mut().filter(|(h, _)| *h == comm) {
            h.1 = true;
        }
        let family = m.family;
        let done = self
            .made
            .values()
            .filter(|m| m.family == family)
            .all(|m| m.handles.iter().all(|(_, gone)| *gone));
        if done {
            self.made.retain(|_, m| m.family != family);
        }
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.made.is_empty()
    }

    /// What the preamble writes (module docs).
    pub fn preamble(&self) -> Vec<Step> {
        // Each destroyed communicator goes after its last split, or its
        // own creation.
        let mut last_use: HashMap<(u64, u64), u64> = HashMap::new();
        for (&n, m) in &self.made {
            for &(h, gone) in &m.handles {
                if gone {
                    last_use.insert((n, h), n);
                }
            }
            if let Some(p) = m.parent
                && let Some(at) = last_use.get_mut(&p)
            {
                *at = n;
            }
        }
        let mut steps = Vec::new();
        for (&n, m) in &self.made {
            if m.orphan {
                if m.handles.iter().any(|(_, gone)| !gone) {
                    let what = match &m.op {
                        Op::NcclCommSplit {
                            parent,
                            comm: Some(c),
                            ..
                        } => format!("communicator {c} split from {parent}"),
                        _ => "a communicator".to_string(),
                    };
                    steps.push(Step::NotRestored(format!(
                        "{}: {what}, whose creation the capture did not see",
                        m.api
                    )));
                }
                continue;
            }
            steps.push(Step::Create {
                api: m.api.clone(),
                op: Box::new(m.op.clone()),
                dev: m.dev,
            });
            let mut due: Vec<(u64, u64)> = last_use
                .iter()
                .filter(|(_, last)| **last == n)
                .map(|(k, _)| *k)
                .collect();
            due.sort_unstable();
            for (at, h) in due {
                let dev = self.made.get(&at).map_or(0, |m| m.dev);
                steps.push(Step::Destroy { comm: Addr(h), dev });
            }
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init(c: u64) -> Op {
        Op::NcclCommInit {
            comm: Addr(c),
            uid: "u".into(),
            nranks: 2,
            rank: 0,
        }
    }

    fn split(p: u64, c: Option<u64>) -> Op {
        Op::NcclCommSplit {
            parent: Addr(p),
            color: 0,
            key: 0,
            comm: c.map(Addr),
        }
    }

    fn destroy(c: u64) -> Op {
        Op::NcclCommDestroy { comm: Addr(c) }
    }

    fn created(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match s {
                Step::Create { op, .. } => op.name().to_string(),
                Step::Destroy { comm, .. } => format!("destroy {comm}"),
                Step::NotRestored(w) => format!("not {w}"),
            })
            .collect()
    }

    #[test]
    fn a_family_stays_until_all_of_it_is_destroyed() {
        let mut c = Communicators::default();
        c.note("i", &init(1), 0);
        c.note("s", &split(1, Some(2)), 0);
        c.note("s", &split(1, None), 0);
        c.note("d", &destroy(1), 0);
        // The parent is gone, its splits are not: made, split, destroyed.
        assert_eq!(
            created(&c.preamble()),
            [
                "nccl_comm_init",
                "nccl_comm_split",
                "nccl_comm_split",
                "destroy 0x1"
            ]
        );
        // A handle reused after its destroy is a communicator of its own.
        c.note("i", &init(1), 0);
        c.note("d", &destroy(2), 0);
        assert_eq!(created(&c.preamble()), ["nccl_comm_init"]);
        c.note("d", &destroy(1), 0);
        assert!(c.is_empty());
    }

    #[test]
    fn a_split_of_an_unseen_communicator_is_named() {
        let mut c = Communicators::default();
        c.note("ncclCommSplit", &split(7, Some(8)), 0);
        let steps = c.preamble();
        assert_eq!(steps.len(), 1);
        assert!(
            matches!(&steps[0], Step::NotRestored(w) if w.contains("0x8") && w.contains("0x7")),
            "{steps:?}"
        );
    }

    #[test]
    fn init_all_makes_one_family() {
        let mut c = Communicators::default();
        let all = Op::NcclCommInitAll {
            comms: vec![Addr(1), Addr(2)],
            devices: vec![0, 1],
        };
        c.note("a", &all, 0);
        c.note("d", &destroy(1), 0);
        assert_eq!(
            created(&c.preamble()),
            ["nccl_comm_init_all", "destroy 0x1"]
        );
        c.note("d", &destroy(2), 0);
        assert!(c.is_empty());
    }
}
