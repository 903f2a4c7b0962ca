//! Printing an error with its causes: the one convention of hrr's errors.
//!
//! An hrr error's `Display` says what its own layer knows and never repeats
//! its cause; the cause is reached through [`Error::source`]. For a person,
//! an error is therefore printed as its whole chain joined by `": "`, which
//! is what anyhow's `{:#}` prints in the binaries and what [`Chain`] prints
//! where there is no anyhow (the replay engine's warnings, the capture
//! library's diagnostics). An error that both showed its cause and returned
//! it from `source()` would print it twice.

use std::error::Error;
use std::fmt;

/// An error and its causes, displayed as `error: cause: cause…`.
#[derive(Clone, Copy)]
pub struct Chain<'a>(pub &'a (dyn Error + 'a));

/// [`Chain`] of `e`, for `format!("{}", chain(&e))`.
pub fn chain<'a>(e: &'a (dyn Error + 'a)) -> Chain<'a> {
    Chain(e)
}

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

impl fmt::Debug for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer {0}")]
    struct Outer(u8, #[source] std::io::Error);

    #[test]
    fn causes_follow_once_each() {
        let e = Outer(1, std::io::Error::other("disk on fire"));
        assert_eq!(chain(&e).to_string(), "outer 1: disk on fire");
        let io = std::io::Error::other("alone");
        assert_eq!(chain(&io).to_string(), "alone");
    }
}
