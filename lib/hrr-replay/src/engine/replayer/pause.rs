//! Pausing a replay before one event, for tools that need the device as it
//! stood at that moment (`hrr-extract` snapshots the memory a launch can
//! reach). The hook chooses the event, looks at the device and the address
//! space, may dispatch the event itself, and the replay then ends as usual
//! (summary, final sync, teardown). A replay without a hook is unchanged.

use super::Replayer;
use crate::device::Device;
use crate::engine::address_space::AddressSpace;
use crate::engine::error::ReplayError;
use crate::engine::launch_check;
use hrr_core::event::{Event, Op};

/// Chooses where a replay pauses and what happens there.
pub trait PauseHook {
    /// Called before each event is dispatched, once every earlier event has
    /// been; `true` pauses the replay before `event`.
    fn pause_before(&mut self, event: &Event) -> bool;
    /// The replay, paused. When this returns the replay ends; the event is
    /// dispatched only if the hook called [`Paused::execute`].
    fn paused(&mut self, paused: &mut Paused<'_, '_>);
}

/// A word of a launch's arguments that the engine translates as a device
/// pointer when it launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchPointer {
    /// Index of the argument.
    pub arg: usize,
    /// Byte offset of the word inside the argument.
    pub offset: u32,
    /// The recorded address the word holds.
    pub value: u64,
    /// Not listed in the argument's `ptrs`: found, as the launch finds
    /// it, because it points into recorded memory or memory a region
    /// sidecar declares.
    pub unmarked: bool,
}

/// A replay paused before [`Paused::event`]: earlier events have run, their
/// asynchronous work possibly still in flight (synchronise before reading).
pub struct Paused<'p, 'a> {
    r: &'p mut Replayer<'a>,
    event: &'p Event,
}

impl<'p, 'a> Paused<'p, 'a> {
    /// The event the replay paused before.
    pub fn event(&self) -> &Event {
        self.event
    }

    /// The replay's device.
    pub fn device(&mut self) -> &mut dyn Device {
        self.r.dev
    }

    /// The recorded address space: live allocations by recorded address.
    pub fn space(&self) -> &AddressSpace {
        &self.r.space
    }

    /// Whether the allocation at recorded `base` is a CUDA virtual-memory
    /// reservation (`va_reserve`): one entry of [`Paused::space`] for the
    /// whole range, of which only the mapped pieces hold memory.
    pub fn is_reservation(&self, base: u64) -> bool {
        self.r.vmm.is_reservation(base)
    }

    /// The replay's virtual memory: reservations, physical allocations and
    /// what is mapped where.
    pub fn vmm(&self) -> &crate::engine::VirtualMemory {
        &self.r.vmm
    }

    /// Whether the allocation at recorded `base` is a module's global
    /// variable (`global`): the module's memory, not an allocation.
    pub fn is_global(&self, base: u64) -> bool {
        self.r.globals.contains_key(&base)
    }

    /// Every word of the launch's arguments the engine will translate, each
    /// already translated once (materialising its declared segment if need
    /// be, as the launch itself would): afterwards each value lies in an
    /// allocation of [`Paused::space`]. Empty for any other event.
    pub fn launch_pointers(&mut self) -> Result<Vec<LaunchPointer>, ReplayError> {
        let e = self.event;
        let Op::Launch { args, .. } = &e.op else {
            return Ok(Vec::new());
        };
        // The launch's own checks: every marked offset inside its argument.
        launch_check::kernarg_layout(args).map_err(|why| Replayer::fatal(e, why))?;
        let mut found = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            let bytes = &arg.hex.0;
            let word = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
            for &off in &arg.ptrs {
                let value = word(off as usize);
                if value == 0 {
                    continue;
                }
                self.r.arg_pointer(e, i, off as usize, value)?;
                found.push(LaunchPointer {
                    arg: i,
                    offset: off,
                    value,
                    unmarked: false,
                });
            }
            let space = &self.r.space;
            let unmarked =
                launch_check::unmarked_pointers(bytes, &arg.ptrs, &space.allocs, &space.regions);
            for o in unmarked {
                let value = word(o);
                self.r.arg_pointer(e, i, o, value)?;
                found.push(LaunchPointer {
                    arg: i,
                    offset: o as u32,
                    value,
                    unmarked: true,
                });
            }
        }
        Ok(found)
    }

    /// Dispatches the event as the replay would have.
    pub fn execute(&mut self) -> Result<(), ReplayError> {
        self.r.step(self.event)
    }
}

impl Replayer<'_> {
    /// Hands the replay, paused before `e`, to the hook (taken: a replay
    /// pauses once).
    pub(super) fn pause(&mut self, e: &Event) {
        let Some(hook) = self.pause.take() else {
            return;
        };
        // The hook sees the region timeline as the event's handler would.
        self.advance_regions(e);
        hook.paused(&mut Paused { r: self, event: e });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mem_device::MemDevice;
    use crate::engine::{PinnedHost, ReplayOptions};
    use hrr_core::archive::Archive;
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::{ArchiveBuilder, ptr_arg, struct_arg, value_arg};

    const A: u64 = 0x7f00_0000_0000;
    const SEG: u64 = 0x7e00_1000_0000;

    /// Pauses before `seq`, reads allocation `A` (64 bytes), optionally
    /// executing the event first, and keeps the launch pointers it saw.
    struct Probe {
        seq: u64,
        execute: bool,
        read: Option<Vec<u8>>,
        pointers: Vec<LaunchPointer>,
        materialised_before_launch: bool,
    }

    impl PauseHook for Probe {
        fn pause_before(&mut self, e: &Event) -> bool {
            e.seq == self.seq
        }
        fn paused(&mut self, p: &mut Paused<'_, '_>) {
            self.pointers = p.launch_pointers().unwrap();
            self.materialised_before_launch = p.space().allocs.find(SEG + 8).is_some();
            if self.execute {
                p.execute().unwrap();
            }
            let live = p.space().allocs.find(A).unwrap().live;
            let mut buf = vec![0; 64];
            p.device().copy_d2h(&mut buf, live, None).unwrap();
            self.read = Some(buf);
        }
    }

    fn run(b: ArchiveBuilder, probe: &mut Probe) -> crate::engine::ReplaySummary {
        let t = tempfile::tempdir().unwrap();
        let archive = Archive::open(b.write(t.path().join("a.hrr")).unwrap()).unwrap();
        let opts = ReplayOptions {
            regions: true,
            ..ReplayOptions::default()
        };
        let mut warnings = Vec::new();
        let space = AddressSpace {
            regions: crate::engine::load_regions(&archive, true, &mut warnings).unwrap(),
            regions_enabled: true,
            ..AddressSpace::default()
        };
        let mut dev = MemDevice::new(false);
        let mut pinned = PinnedHost::new(0);
        let (s, e) = Replayer::new(&mut dev, &archive, &opts, space, None, &mut pinned)
            .pause_with(probe)
            .run(|_| {});
        assert!(e.is_none(), "{e:?}");
        s
    }

    fn probe(seq: u64, execute: bool) -> Probe {
        Probe {
            seq,
            execute,
            read: None,
            pointers: Vec::new(),
            materialised_before_launch: false,
        }
    }

    #[test]
    fn pauses_before_the_chosen_event_and_ends_there() {
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(A, 64)
            .h2d(A, &[1; 64])
            .h2d(A, &[2; 64])
            .d2h(A, &[2; 64]);
        let mut p = probe(2, false);
        let s = run(b.clone(), &mut p);
        assert_eq!(
            p.read.as_deref(),
            Some(&[1u8; 64][..]),
            "state before seq 2"
        );
        assert_eq!((s.events, s.replayed), (3, 2), "nothing after the pause");
        assert_eq!(s.d2h_exact + s.d2h_fail, 0);

        let mut p = probe(2, true);
        let s = run(b.clone(), &mut p);
        assert_eq!(
            p.read.as_deref(),
            Some(&[2u8; 64][..]),
            "executed by the hook"
        );
        assert_eq!((s.events, s.replayed), (3, 3));

        // A hook that never pauses leaves the replay as it was.
        let mut p = probe(99, false);
        let s = run(b, &mut p);
        assert!(p.read.is_none());
        assert_eq!((s.replayed, s.d2h_exact), (5, 1));
    }

    #[test]
    fn launch_pointers_are_every_word_the_launch_translates() {
        let mut by_value = vec![0u8; 16];
        by_value[8..].copy_from_slice(&(A + 32).to_le_bytes());
        let b = ArchiveBuilder::new(Platform::Cpu)
            .segment(SEG, 4096, 0)
            .alloc(A, 64)
            .launch(
                "k",
                b"code",
                [1; 3],
                [1; 3],
                vec![
                    ptr_arg(A + 16),
                    struct_arg(&by_value, &[8]),
                    value_arg(&(SEG + 8).to_le_bytes()),
                    ptr_arg(0),
                ],
            );
        let mut p = probe(1, false);
        run(b, &mut p);
        let seen: Vec<(usize, u32, u64, bool)> = p
            .pointers
            .iter()
            .map(|l| (l.arg, l.offset, l.value, l.unmarked))
            .collect();
        assert_eq!(
            seen,
            [
                (0, 0, A + 16, false),
                (1, 8, A + 32, false),
                (2, 0, SEG + 8, true)
            ],
            "null pointers are not translated"
        );
        assert!(
            p.materialised_before_launch,
            "the declared segment is backed before the launch runs"
        );
    }
}
