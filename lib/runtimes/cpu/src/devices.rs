//! The runtime's devices: how many there are (`HRR_CPU_DEVICES`, default
//! 1), each thread's current one (`hipSetDevice`, per thread, 0 until set),
//! and peer access between them.
//!
//! Every device's memory is host memory of the one device reservation
//! (`memory`): a device is an owner, not an address range. An allocation
//! belongs to the device current when it was made (`hipPointerGetAttributes`
//! says which, `hipMemGetInfo` counts it against that device), a stream to
//! the device current at its creation. Kernels of any device can therefore
//! reach any device's memory, as with peer access enabled on a GPU.
//!
//! `HRR_CPU_PEER=none` describes a machine whose devices cannot access each
//! other (GPUs on separate PCIe roots without P2P): `hipDeviceCanAccessPeer`
//! answers 0 and `hipDeviceEnablePeerAccess` fails with
//! `hipErrorPeerAccessUnsupported`, as such a machine's runtime does.

use std::cell::Cell;
use std::collections::HashSet;
use std::ffi::c_int;
use std::sync::Mutex;

use crate::ffi::{HipError, err};
use crate::runtime::lock;

/// Most devices `HRR_CPU_DEVICES` may ask for.
pub const MAX_DEVICES: u32 = 16;

/// `hipErrorPeerAccessAlreadyEnabled`.
pub const PEER_ACCESS_ALREADY_ENABLED: HipError = 704;
/// `hipErrorPeerAccessNotEnabled`.
pub const PEER_ACCESS_NOT_ENABLED: HipError = 705;
/// `hipErrorPeerAccessUnsupported`.
pub const PEER_ACCESS_UNSUPPORTED: HipError = 217;

thread_local! {
    /// The calling thread's current device.
    static CURRENT: Cell<u32> = const { Cell::new(0) };
}

/// The calling thread's current device.
pub fn current() -> u32 {
    CURRENT.with(Cell::get)
}

/// Makes `device` (checked by [`Devices::check`]) current on this thread.
pub fn set_current(device: u32) {
    CURRENT.with(|c| c.set(device));
}

/// `HRR_CPU_DEVICES`'s value as a device count: 1 to [`MAX_DEVICES`];
/// absent is 1. The error says what was wrong, for the log.
pub fn parse_count(value: Option<&str>) -> Result<u32, String> {
    let Some(v) = value else {
        return Ok(1);
    };
    match v.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_DEVICES).contains(&n) => Ok(n),
        _ => Err(format!(
            "HRR_CPU_DEVICES={v}: expected a device count from 1 to {MAX_DEVICES}"
        )),
    }
}

/// `HRR_CPU_PEER`'s value: whether devices can access each other
/// (absent or `all`: yes; `none`: no). The error says what was wrong.
pub fn parse_peer(value: Option<&str>) -> Result<bool, String> {
    match value.map(str::trim) {
        None | Some("all") => Ok(true),
        Some("none") => Ok(false),
        Some(v) => Err(format!("HRR_CPU_PEER={v}: expected all or none")),
    }
}

/// The devices and the peer access enabled between them.
pub struct Devices {
    count: u32,
    /// Whether devices can access each other at all (`HRR_CPU_PEER`).
    peer_capable: bool,
    /// `(device, peer)`: `device` may access `peer`'s memory.
    peers: Mutex<HashSet<(u32, u32)>>,
}

impl Devices {
    /// As many devices as `HRR_CPU_DEVICES` says; a bad value is printed
    /// (the runtime's initialisation fails with `hipErrorInvalidValue`,
    /// which alone would not say why).
    pub fn from_env() -> Result<Devices, HipError> {
        let count = std::env::var("HRR_CPU_DEVICES").ok();
        let peer = std::env::var("HRR_CPU_PEER").ok();
        match (parse_count(count.as_deref()), parse_peer(peer.as_deref())) {
            (Ok(count), Ok(peer_capable)) => Ok(Devices {
                peer_capable,
                ..Devices::new(count)
            }),
            (Err(why), _) | (_, Err(why)) => {
                eprintln!("libhrr_hip_cpu: {why}");
                Err(err::INVALID_VALUE)
            }
        }
    }

    /// `count` devices (1 to [`MAX_DEVICES`]).
    pub fn new(count: u32) -> Devices {
        Devices {
            count: count.clamp(1, MAX_DEVICES),
            peer_capable: true,
            peers: Mutex::new(HashSet::new()),
        }
    }

    /// How many there are.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Device ordinal `id`, if there is one (`hipErrorInvalidDevice` if not).
    pub fn check(&self, id: c_int) -> Result<u32, HipError> {
        u32::try_from(id)
            .ok()
            .filter(|&d| d < self.count)
            .ok_or(err::INVALID_DEVICE)
    }

    /// `hipDeviceCanAccessPeer`: every other device (a device is not its
    /// own peer, as on ROCm and CUDA), none under `HRR_CPU_PEER=none`.
    pub fn can_access(&self, device: c_int, peer: c_int) -> Result<bool, HipError> {
        Ok(self.check(device)? != self.check(peer)? && self.peer_capable)
    }

    /// `hipDeviceEnablePeerAccess` from the current device to `peer`.
    pub fn enable_peer(&self, peer: c_int) -> Result<(), HipError> {
        let (device, peer) = (current(), self.check(peer)?);
        if device == peer {
            return Err(err::INVALID_DEVICE);
        }
        if !self.peer_capable {
            return Err(PEER_ACCESS_UNSUPPORTED);
        }
        if lock(&self.peers).insert((device, peer)) {
            Ok(())
        } else {
            Err(PEER_ACCESS_ALREADY_ENABLED)
        }
    }

    /// `hipDeviceDisablePeerAccess` from the current device to `peer`.
    pub fn disable_peer(&self, peer: c_int) -> Result<(), HipError> {
        let (device, peer) = (current(), self.check(peer)?);
        if lock(&self.peers).remove(&(device, peer)) {
            Ok(())
        } else {
            Err(PEER_ACCESS_NOT_ENABLED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_access_can_be_ruled_out() {
        assert_eq!(parse_peer(None), Ok(true));
        assert_eq!(parse_peer(Some("all")), Ok(true));
        assert_eq!(parse_peer(Some("none")), Ok(false));
        assert!(
            parse_peer(Some("some"))
                .unwrap_err()
                .contains("HRR_CPU_PEER")
        );
        let d = Devices {
            peer_capable: false,
            ..Devices::new(2)
        };
        assert_eq!(d.can_access(0, 1), Ok(false));
        assert_eq!(d.enable_peer(1), Err(PEER_ACCESS_UNSUPPORTED));
    }

    #[test]
    fn the_count_is_bounded_and_a_bad_one_says_why() {
        assert_eq!(parse_count(None), Ok(1));
        assert_eq!(parse_count(Some("2")), Ok(2));
        assert_eq!(parse_count(Some(" 16 ")), Ok(16));
        for bad in ["0", "17", "two", "-1", ""] {
            let e = parse_count(Some(bad)).unwrap_err();
            assert!(
                e.contains("HRR_CPU_DEVICES") && e.contains("1 to 16"),
                "{e}"
            );
        }
    }

    #[test]
    fn peers_are_other_devices_enabled_once() {
        let d = Devices::new(2);
        assert_eq!(d.check(1), Ok(1));
        assert_eq!(d.check(2), Err(err::INVALID_DEVICE));
        assert_eq!(d.check(-1), Err(err::INVALID_DEVICE));
        assert_eq!(d.can_access(0, 1), Ok(true));
        assert_eq!(d.can_access(1, 1), Ok(false));
        assert_eq!(d.enable_peer(0), Err(err::INVALID_DEVICE), "itself");
        assert_eq!(d.disable_peer(1), Err(PEER_ACCESS_NOT_ENABLED));
        assert_eq!(d.enable_peer(1), Ok(()));
        assert_eq!(d.enable_peer(1), Err(PEER_ACCESS_ALREADY_ENABLED));
        assert_eq!(d.disable_peer(1), Ok(()));
    }
}
