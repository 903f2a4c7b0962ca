//! One line for an error and its causes, as the tools print it.
//!
//! Errors here name their file and wrap the OS error they come from, and
//! many also print that cause in their own message (`"{path}: {source}"`),
//! so a plain walk of the chain says the OS cause, or the path, twice. This
//! joins the chain with `": "`, leaving out a cause whose text is already
//! part of the line, and drops Rust's `" (os error N)"` suffix.

use std::error::Error;

/// `err` and its causes in one line (see the module docs).
pub fn chain(err: &(dyn Error + 'static)) -> String {
    let mut line = String::new();
    let mut cur = Some(err);
    while let Some(e) = cur {
        let text = strip_os_error(&e.to_string());
        if !text.is_empty() && !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
        cur = e.source();
    }
    line
}

/// `"No such file or directory (os error 2)"` → `"No such file or directory"`.
fn strip_os_error(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(" (os error ") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + " (os error ".len()..];
        match tail.find(')') {
            Some(j) if tail[..j].bytes().all(|b| b.is_ascii_digit()) => rest = &tail[j + 1..],
            _ => {
                out.push_str(" (os error ");
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[derive(Debug, thiserror::Error)]
    #[error("{path}: {source}")]
    struct AtPath {
        path: String,
        source: io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("creating the archive")]
    struct Context {
        source: AtPath,
    }

    #[test]
    fn causes_already_said_are_left_out() {
        let e = Context {
            source: AtPath {
                path: "/proc/x.hrr".into(),
                source: io::Error::from_raw_os_error(2),
            },
        };
        assert_eq!(
            chain(&e),
            "creating the archive: /proc/x.hrr: No such file or directory"
        );
        assert_eq!(strip_os_error("a (os error x) b"), "a (os error x) b");
    }
}
