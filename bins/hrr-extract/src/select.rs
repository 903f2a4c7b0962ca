//! Which launch to extract: by `seq`, or by kernel name and index. Names
//! match exactly (a mangled C++ name is what the archive records); when a
//! name matches nothing, the error lists the kernels whose names come close.

use std::collections::HashMap;

/// Why a `--kernel` value names no launch.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// What follows the last `#` is not a number.
    #[error("--kernel {0}: the index after `#` must be a number (0 is the first launch)")]
    BadIndex(String),
    /// Nothing before the `#`.
    #[error("--kernel {0}: the kernel name is empty")]
    EmptyName(String),
}

/// Why `NAME#N` matched no launch of the archive.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KernelMiss {
    /// The kernel is launched, but fewer than `index + 1` times.
    #[error(
        "kernel `{name}` is launched {launches} time(s) (#0 to #{}); there is no #{index}",
        launches.saturating_sub(1)
    )]
    NoSuchIndex {
        /// The kernel asked for.
        name: String,
        /// How many times it is launched.
        launches: u64,
        /// The index asked for.
        index: u64,
    },
    /// The archive launches no kernel at all.
    #[error("no launch of kernel `{name}`: the archive launches no kernels")]
    NoLaunches {
        /// The kernel asked for.
        name: String,
    },
    /// No kernel of that name: the names that come close, or else the most
    /// launched, with their launch counts.
    #[error("no launch of kernel `{name}`; {}: {}", heading(.close), list(.names))]
    UnknownName {
        /// The kernel asked for.
        name: String,
        /// `names` are close to `name` (else: the archive's most launched).
        close: bool,
        /// Names with their launch counts.
        names: Vec<(String, u64)>,
    },
}

fn heading(close: &bool) -> &'static str {
    if *close {
        "close names"
    } else {
        "the archive launches"
    }
}

fn list(names: &[(String, u64)]) -> String {
    let list: Vec<String> = names
        .iter()
        .map(|(n, c)| format!("`{n}` ({c} launches)"))
        .collect();
    list.join(", ")
}

/// The launch asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// The event with this `seq`.
    Seq(u64),
    /// The `index`-th (0-based) launch of kernel `name` that succeeded at capture.
    Kernel {
        /// The kernel's name, exactly as recorded.
        name: String,
        /// Which of its launches (0-based).
        index: u64,
    },
}

impl Selector {
    /// `NAME` or `NAME#N`.
    pub fn parse_kernel(s: &str) -> Result<Selector, SelectorError> {
        let (name, index) = match s.rsplit_once('#') {
            Some((name, n)) => {
                let index = n.parse().map_err(|_| SelectorError::BadIndex(s.into()))?;
                (name, index)
            }
            None => (s, 0),
        };
        if name.is_empty() {
            return Err(SelectorError::EmptyName(s.into()));
        }
        Ok(Selector::Kernel {
            name: name.to_string(),
            index,
        })
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Selector::Seq(seq) => write!(f, "launch {seq}"),
            Selector::Kernel { name, index } => write!(f, "{name}#{index}"),
        }
    }
}

/// Launches counted by kernel name, on the replay's path: a launch usually
/// repeats the previous one's kernel, which is checked before hashing.
#[derive(Debug, Default)]
pub struct LaunchCounts {
    counts: HashMap<String, u64>,
    last: Option<(String, u64)>,
}

impl LaunchCounts {
    /// Counts one launch of `name`; returns how many came before it.
    pub fn count(&mut self, name: &str) -> u64 {
        if let Some((n, c)) = &mut self.last
            && n == name
        {
            *c += 1;
            return *c - 1;
        }
        if let Some((n, c)) = self.last.take() {
            self.counts.insert(n, c);
        }
        let before = self.counts.remove(name).unwrap_or(0);
        self.last = Some((name.to_string(), before + 1));
        before
    }

    /// Launches so far of `name`.
    pub fn get(&self, name: &str) -> u64 {
        match &self.last {
            Some((n, c)) if n == name => *c,
            _ => self.counts.get(name).copied().unwrap_or(0),
        }
    }

    /// Every name with its count.
    pub fn all(&self) -> HashMap<String, u64> {
        let mut all = self.counts.clone();
        if let Some((n, c)) = &self.last {
            all.insert(n.clone(), *c);
        }
        all
    }
}

/// Why `name#index` found nothing, given the launches of the archive by name.
pub fn kernel_not_found(name: &str, index: u64, launches: &HashMap<String, u64>) -> KernelMiss {
    let name = name.to_string();
    if let Some(&n) = launches.get(&name) {
        return KernelMiss::NoSuchIndex {
            name,
            launches: n,
            index,
        };
    }
    if launches.is_empty() {
        return KernelMiss::NoLaunches { name };
    }
    let close = close_names(&name, launches);
    let (close, names) = if close.is_empty() {
        let mut all: Vec<(&String, &u64)> = launches.iter().collect();
        all.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        (false, all.into_iter().take(10).collect())
    } else {
        (true, close)
    };
    let names = names.into_iter().map(|(n, c)| (n.clone(), *c)).collect();
    KernelMiss::UnknownName { name, close, names }
}

/// Names containing `name` or contained in it (ignoring case), or a few
/// edits away; nearest first, at most 5.
fn close_names<'a>(name: &str, launches: &'a HashMap<String, u64>) -> Vec<(&'a String, &'a u64)> {
    let lower = name.to_lowercase();
    let limit = (name.chars().count() / 4).max(2);
    let mut close: Vec<(usize, &String, &u64)> = launches
        .iter()
        .filter_map(|(n, c)| {
            let l = n.to_lowercase();
            let d = edit_distance(&lower, &l);
            (l.contains(&lower) || lower.contains(&l) || d <= limit).then_some((d, n, c))
        })
        .collect();
    close.sort();
    close.into_iter().take(5).map(|(_, n, c)| (n, c)).collect()
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_selector_syntax() {
        assert_eq!(
            Selector::parse_kernel("vadd"),
            Ok(Selector::Kernel {
                name: "vadd".into(),
                index: 0
            })
        );
        assert_eq!(
            Selector::parse_kernel("ns::k#12"),
            Ok(Selector::Kernel {
                name: "ns::k".into(),
                index: 12
            })
        );
        assert!(
            Selector::parse_kernel("vadd#x")
                .unwrap_err()
                .to_string()
                .contains("must be a number")
        );
        assert!(
            Selector::parse_kernel("#3")
                .unwrap_err()
                .to_string()
                .contains("name is empty")
        );
    }

    #[test]
    fn launch_counts_by_name() {
        let mut c = LaunchCounts::default();
        let seen: Vec<u64> = ["a", "a", "b", "a", "b", "b"]
            .iter()
            .map(|n| c.count(n))
            .collect();
        assert_eq!(seen, [0, 1, 0, 2, 1, 2]);
        assert_eq!((c.get("a"), c.get("b"), c.get("z")), (3, 3, 0));
        assert_eq!(c.all(), [("a".to_string(), 3), ("b".to_string(), 3)].into());
    }

    #[test]
    fn not_found_lists_close_names_or_the_range() {
        let launches: HashMap<String, u64> = [
            ("vadd".to_string(), 3),
            ("_Z4vaddPKfS0_Pfi".to_string(), 1),
            ("scale".to_string(), 2),
        ]
        .into();
        let m = kernel_not_found("vad", 0, &launches).to_string();
        assert!(
            m.starts_with("no launch of kernel `vad`; close names: `vadd` (3 launches)"),
            "{m}"
        );
        assert!(m.contains("_Z4vadd") && !m.contains("scale"), "{m}");
        let m = kernel_not_found("vadd", 5, &launches).to_string();
        assert_eq!(
            m,
            "kernel `vadd` is launched 3 time(s) (#0 to #2); there is no #5"
        );
        let m = kernel_not_found("zzzzzzzz", 0, &launches).to_string();
        assert!(
            m.contains("the archive launches: `vadd` (3 launches), `scale` (2 launches)"),
            "{m}"
        );
        let m = kernel_not_found("k", 0, &HashMap::new()).to_string();
        assert!(m.contains("launches no kernels"), "{m}");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
