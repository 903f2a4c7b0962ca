//! `DevClock`: device times of single operations, for a timed replay's archive.
//!
//! `hrr-play --timing -o OUT` writes every launch, copy and memset it replays
//! into OUT with `dev_t` (when it was issued, host CLOCK_MONOTONIC) and
//! `dev_ns` (its device time). The time comes from two device events recorded
//! on the operation's stream before and after it, not from the host clock:
//! on a GPU the host clock around a launch adds the launch latency and the
//! synchronisation, which for short kernels is most of what it would show.

use crate::device::{Device, DeviceError, Handle};
use hrr_core::archive_writer::monotonic_ns;
use hrr_core::event::DevTime;

/// Brackets one operation at a time between two device events, created at
/// the first use and destroyed by [`DevClock::release`].
#[derive(Debug, Default)]
pub struct DevClock {
    marks: Option<(Handle, Handle)>,
}

/// An operation whose opening event is recorded: the events, and when it
/// was issued.
#[derive(Debug, Clone, Copy)]
struct Started {
    open: Handle,
    close: Handle,
    issued: u64,
}

impl Started {
    /// Records the closing event on `stream`, waits for it and returns the
    /// device time between the two.
    fn stop(self, dev: &mut dyn Device, stream: u64) -> Result<DevTime, DeviceError> {
        dev.event_record(self.close, stream)?;
        dev.event_sync(self.close)?;
        let ms = dev.event_elapsed_ms(self.open, self.close)?;
        // A runtime may report a tiny negative time for an empty interval.
        let ns = (f64::from(ms) * 1e6).max(0.0).round() as u64;
        Ok(DevTime { t: self.issued, ns })
    }
}

impl DevClock {
    /// Records the opening event on `stream` (0: the default stream).
    fn start(&mut self, dev: &mut dyn Device, stream: u64) -> Result<Started, DeviceError> {
        let (open, close) = match self.marks {
            Some(m) => m,
            None => {
                let open = dev.event_create()?;
                let close = dev.event_create().inspect_err(|_| {
                    let _ = dev.event_destroy(open);
                })?;
                *self.marks.insert((open, close))
            }
        };
        let issued = monotonic_ns();
        dev.event_record(open, stream)?;
        Ok(Started {
            open,
            close,
            issued,
        })
    }

    /// Runs `op`, on `stream` (`None`: the default stream), between the two
    /// events when `on`, and returns its device time; just runs it otherwise.
    pub fn around(
        &mut self,
        on: bool,
        dev: &mut dyn Device,
        stream: Option<u64>,
        op: impl FnOnce(&mut dyn Device) -> Result<(), DeviceError>,
    ) -> Result<Option<DevTime>, DeviceError> {
        if !on {
            return op(dev).map(|()| None);
        }
        let stream = stream.unwrap_or(0);
        let started = self.start(dev, stream)?;
        op(dev)?;
        started.stop(dev, stream).map(Some)
    }

    /// Destroys the events (before the device goes).
    pub fn release(&mut self, dev: &mut dyn Device) {
        if let Some((open, close)) = self.marks.take() {
            let _ = dev.event_destroy(open);
            let _ = dev.event_destroy(close);
        }
    }
}
