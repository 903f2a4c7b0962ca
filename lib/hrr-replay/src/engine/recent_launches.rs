//! `RecentLaunches`: which events the launches still on the launch thread
//! came from, so that one failing after its event has passed is reported as
//! that event's error, as if it had failed in place.

use hrr_core::event::Event;

use crate::device::DeviceError;
use crate::engine::error::{EventFailure, ReplayError};
use crate::launch_thread::CAPACITY;

/// A launch fails at most [`CAPACITY`] launches behind the replay thread,
/// and a few more are pushed before the failure shows: twice that covers it.
const KEPT: usize = 2 * CAPACITY;

/// The last [`KEPT`] launch events, `seq` and entry point, in a ring.
#[derive(Debug, Default)]
pub(super) struct RecentLaunches {
    ring: Vec<(u64, String)>,
    next: usize,
}

impl RecentLaunches {
    /// Notes launch event `e` (the entry point's text is copied into a
    /// slot's string, which allocates only until the ring has gone round).
    pub(super) fn note(&mut self, e: &Event) {
        if self.ring.len() < KEPT {
            self.ring.push((e.seq, e.api.clone()));
        } else {
            let slot = &mut self.ring[self.next];
            slot.0 = e.seq;
            slot.1.clone_from(&e.api);
        }
        self.next = (self.next + 1) % KEPT;
    }

    /// A failed queued launch, reported by a later event's call (or at the
    /// end), becomes the fatal error of the launch's own event, worded as
    /// if it had failed in place.
    pub(super) fn relabel(&self, err: ReplayError) -> ReplayError {
        let (seq, source) = match err {
            ReplayError::Fatal { seq, api, what } => match *what {
                EventFailure::Device(DeviceError::Deferred { event, source }) => (event, source),
                what => {
                    let what = Box::new(what);
                    return ReplayError::Fatal { seq, api, what };
                }
            },
            ReplayError::FinalSync(DeviceError::Deferred { event, source }) => (event, source),
            other => return other,
        };
        let api = match self.ring.iter().find(|(s, _)| *s == seq) {
            Some((_, api)) => api.clone(),
            // Not a launch event of its own (a graph's node run by itself).
            None => String::from("launch"),
        };
        ReplayError::Fatal {
            seq,
            api,
            what: Box::new(EventFailure::Device(*source)),
        }
    }
}
