//! `JobPairs`: which process of job A is compared with which of job B.
//!
//! By rank when every process on both sides has one, once per side (the
//! launcher's numbering is the run's own: rank 1 of one run does what
//! rank 1 of another does, whichever pid or archive name it got);
//! otherwise by the order the processes started (then pid), the order a
//! launcher spawns its workers in.

use hrr_core::job::JobProcess;

/// The pairing of two sides' processes, by index into each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobPairs {
    /// Whether processes were paired by rank (else by start order).
    pub by_rank: bool,
    /// `(a, b)`: a process of A and its partner in B; `None` where one
    /// side has no partner.
    pub pairs: Vec<(Option<usize>, Option<usize>)>,
}

impl JobPairs {
    /// Pairs the processes of `a` with those of `b`.
    pub fn of(a: &[JobProcess], b: &[JobProcess]) -> JobPairs {
        if let (Some(ra), Some(rb)) = (ranks(a), ranks(b)) {
            let mut all: Vec<u64> = ra.iter().chain(&rb).copied().collect();
            all.sort_unstable();
            all.dedup();
            let pairs = all
                .into_iter()
                .map(|r| {
                    (
                        ra.iter().position(|&x| x == r),
                        rb.iter().position(|&x| x == r),
                    )
                })
                .collect();
            return JobPairs {
                by_rank: true,
                pairs,
            };
        }
        let (oa, ob) = (order(a), order(b));
        let pairs = (0..oa.len().max(ob.len()))
            .map(|i| (oa.get(i).copied(), ob.get(i).copied()))
            .collect();
        JobPairs {
            by_rank: false,
            pairs,
        }
    }
}

/// Every process's rank, when each has one and no two share one.
fn ranks(ps: &[JobProcess]) -> Option<Vec<u64>> {
    let r: Vec<u64> = ps.iter().map(|p| p.process.rank).collect::<Option<_>>()?;
    let mut sorted = r.clone();
    sorted.sort_unstable();
    sorted.dedup();
    (sorted.len() == r.len()).then_some(r)
}

/// Indices of `ps` by start, then pid.
fn order(ps: &[JobProcess]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..ps.len()).collect();
    idx.sort_by_key(|&i| (ps[i].process.start_ns, ps[i].process.pid));
    idx
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::process_info::ProcessInfo;

    fn p(pid: u32, rank: Option<u64>, start: u64) -> JobProcess {
        JobProcess {
            archive: format!("a-{pid}.hrr"),
            complete: true,
            process: ProcessInfo {
                pid,
                rank,
                start_ns: Some(start),
                ..Default::default()
            },
        }
    }

    #[test]
    fn by_rank_whatever_the_order_and_a_missing_one() {
        let a = [p(10, Some(1), 0), p(11, Some(0), 0), p(12, Some(2), 0)];
        let b = [p(20, Some(0), 0), p(21, Some(1), 0)];
        let j = JobPairs::of(&a, &b);
        assert!(j.by_rank);
        assert_eq!(
            j.pairs,
            [(Some(1), Some(0)), (Some(0), Some(1)), (Some(2), None)]
        );
    }

    #[test]
    fn by_start_then_pid_without_ranks() {
        let a = [p(30, None, 5), p(10, None, 5), p(5, None, 9)];
        let b = [p(40, None, 1), p(41, Some(0), 1)];
        let j = JobPairs::of(&a, &b);
        assert!(!j.by_rank);
        assert_eq!(
            j.pairs,
            [(Some(1), Some(0)), (Some(0), Some(1)), (Some(2), None)]
        );
    }
}
