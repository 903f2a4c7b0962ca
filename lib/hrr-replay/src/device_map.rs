//! `DeviceMap`: which local device replays each recorded one
//! (`hrr-play --device-map R=L,…`; identity where it says nothing).
//!
//! Two recorded devices may map onto one local device: their work then
//! shares that device, and a peer copy between them is a device-to-device
//! copy. A replay refuses to start when a device the archive used maps to
//! none the machine has ([`DeviceMap::check`]).

use std::collections::BTreeMap;
use std::fmt;

/// Recorded device → local device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceMap {
    pairs: BTreeMap<u32, u32>,
}

impl DeviceMap {
    /// Parses `R=L,…` (ordinals; spaces around items allowed). An error
    /// names the item that is wrong: not `R=L`, not numbers, or a recorded
    /// device given twice.
    pub fn parse(spec: &str) -> Result<DeviceMap, String> {
        let mut pairs = BTreeMap::new();
        for item in spec.split(',') {
            let item = item.trim();
            let Some((r, l)) = item.split_once('=') else {
                return Err(format!(
                    "device map item `{item}`: expected RECORDED=LOCAL (e.g. 1=0)"
                ));
            };
            let ordinal = |s: &str, what: &str| {
                s.trim().parse::<u32>().map_err(|_| {
                    format!(
                        "device map item `{item}`: {what} device `{}` is not a device ordinal",
                        s.trim()
                    )
                })
            };
            let (r, l) = (ordinal(r, "recorded")?, ordinal(l, "local")?);
            if pairs.insert(r, l).is_some() {
                return Err(format!(
                    "device map item `{item}`: recorded device {r} is mapped twice"
                ));
            }
        }
        Ok(DeviceMap { pairs })
    }

    /// The local device that replays recorded device `recorded`.
    #[inline]
    pub fn local(&self, recorded: u32) -> u32 {
        if self.pairs.is_empty() {
            return recorded;
        }
        self.pairs.get(&recorded).copied().unwrap_or(recorded)
    }

    /// Whether every device maps to itself.
    pub fn is_identity(&self) -> bool {
        self.pairs.iter().all(|(r, l)| r == l)
    }

    /// Refuses a replay of an archive that used `recorded` devices on a
    /// machine with `local_count`: the message names the first recorded
    /// device without a local one, how many the machine has, and the flag.
    pub fn check(&self, recorded: &[u32], local_count: u32) -> Result<(), String> {
        for &r in recorded {
            let l = self.local(r);
            if l >= local_count {
                return Err(self.no_local_device(r, l, local_count));
            }
        }
        Ok(())
    }

    /// The refusal for recorded device `r`, mapped to `l`, on a machine
    /// with `local_count` devices.
    pub fn no_local_device(&self, r: u32, l: u32, local_count: u32) -> String {
        let has = match local_count {
            1 => "1 device (device 0)".to_string(),
            n => format!("{n} devices (0 to {})", n - 1),
        };
        let mapped = if l == r {
            String::new()
        } else {
            format!(" (mapped to local device {l})")
        };
        format!(
            "the archive uses device {r}{mapped}, and this machine has {has}: \
             map it to one it has with --device-map {r}=0 (or another device)"
        )
    }
}

impl fmt::Display for DeviceMap {
    /// `R=L,…`, or `identity`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pairs.is_empty() {
            return f.write_str("identity");
        }
        let items: Vec<String> = self.pairs.iter().map(|(r, l)| format!("{r}={l}")).collect();
        f.write_str(&items.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_what_it_names_and_leaves_the_rest() {
        let m = DeviceMap::parse("1=0, 0=1").unwrap();
        assert_eq!((m.local(0), m.local(1), m.local(2)), (1, 0, 2));
        assert_eq!(m.to_string(), "0=1,1=0");
        assert!(!m.is_identity());
        assert_eq!(DeviceMap::default().local(5), 5);
        assert!(DeviceMap::parse("0=0,1=1").unwrap().is_identity());
    }

    #[test]
    fn a_bad_item_is_named() {
        for (spec, bad) in [
            ("0=0,1", "`1`"),
            ("0=0,x=1", "`x=1`"),
            ("1=-1", "`1=-1`"),
            ("1=0,1=1", "mapped twice"),
            ("", "``"),
        ] {
            let e = DeviceMap::parse(spec).unwrap_err();
            assert!(e.contains(bad), "{spec}: {e}");
        }
    }

    #[test]
    fn too_few_devices_is_refused_naming_the_device() {
        let id = DeviceMap::default();
        assert_eq!(id.check(&[0], 1), Ok(()));
        let e = id.check(&[0, 1], 1).unwrap_err();
        assert!(
            e.contains("device 1") && e.contains("1 device") && e.contains("--device-map"),
            "{e}"
        );
        let folded = DeviceMap::parse("1=0").unwrap();
        assert_eq!(folded.check(&[0, 1], 1), Ok(()));
        let e = DeviceMap::parse("0=3").unwrap().check(&[0], 2).unwrap_err();
        assert!(
            e.contains("mapped to local device 3") && e.contains("2 devices"),
            "{e}"
        );
    }
}
