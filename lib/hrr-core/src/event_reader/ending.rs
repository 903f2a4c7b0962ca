//! [`ending`]: how an events file ends, which is what says whether its
//! writer finished.
//!
//! A writer that finishes appends an `eof` trailer counting the events
//! before it (FORMAT.md, *Writing*); a manifest's `complete:true` claims
//! that it did. [`Archive::incomplete_reason`](crate::archive::Archive::incomplete_reason)
//! checks the claim with this: one pass over the file that counts its event
//! lines (blank lines are not events, as the readers skip them) and parses
//! only the last one. Memory is bounded as the readers bound it: a line
//! longer than [`MAX_LINE`] ends the pass ([`Ending::TooLong`]), so a file
//! of one endless line costs at most that much reading.

use std::io::{self, BufRead};

use super::{MAX_LINE, parse_line};
use crate::event::Op;
use crate::wire::EventError;

/// How an events file ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// No event line at all (empty, or blank lines only).
    Empty,
    /// The last line has no newline and does not parse: the writer stopped
    /// in the middle of it.
    Torn {
        /// Its 1-based line number.
        line: u64,
        /// Its bytes.
        bytes: u64,
    },
    /// The last event line is not an `eof` trailer.
    NoEof {
        /// Its 1-based line number.
        line: u64,
    },
    /// The last event line is an `eof` trailer.
    Eof {
        /// Its 1-based line number.
        line: u64,
        /// The events it counts (its `events` field).
        counts: u64,
        /// The event lines before it.
        lines: u64,
    },
    /// A line is longer than [`MAX_LINE`]: the readers stop there with an
    /// error, and so did this pass.
    TooLong {
        /// Its 1-based line number.
        line: u64,
    },
}

/// Whether a line holds anything but ASCII whitespace (what the readers
/// skip as blank); an event line's first byte settles it.
fn non_blank(bytes: &[u8]) -> bool {
    bytes.iter().any(|b| !b.is_ascii_whitespace())
}

/// Reads `reader` to its end and says how it ends (see [`Ending`]).
pub fn ending(mut reader: impl BufRead) -> io::Result<Ending> {
    // Event lines completed so far, and lines of any kind.
    let mut events = 0u64;
    let mut line_no = 0u64;
    // The last completed event line: its number and its bytes.
    let mut last: Option<(u64, Vec<u8>)> = None;
    // The line being read, when it straddles a buffer's end.
    let mut cur: Vec<u8> = Vec::new();
    let mut cur_non_blank = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let len = buf.len();
        // The last event line completed in this buffer, copied out once the
        // buffer is done with (one copy a buffer, not one a line).
        let mut last_here: Option<(u64, usize, usize)> = None;
        let mut start = 0;
        while let Some(pos) = memchr::memchr(b'\n', &buf[start..]) {
            let seg = &buf[start..start + pos];
            line_no += 1;
            if cur.len() + seg.len() > MAX_LINE as usize {
                return Ok(Ending::TooLong { line: line_no });
            }
            if cur_non_blank || non_blank(seg) {
                events += 1;
                if cur.is_empty() {
                    last_here = Some((line_no, start, start + pos));
                } else {
                    // Straddled a buffer's end (the first line of this
                    // buffer): its start is in `cur`.
                    let mut whole = std::mem::take(&mut cur);
                    whole.extend_from_slice(seg);
                    last = Some((line_no, whole));
                }
            }
            cur.clear();
            cur_non_blank = false;
            start += pos + 1;
        }
        if let Some((n, a, b)) = last_here {
            last = Some((n, buf[a..b].to_vec()));
        }
        let rest = &buf[start..];
        if cur.len() + rest.len() > MAX_LINE as usize {
            return Ok(Ending::TooLong { line: line_no + 1 });
        }
        cur_non_blank |= non_blank(rest);
        cur.extend_from_slice(rest);
        reader.consume(len);
    }
    let (line, text, terminated) = if cur_non_blank {
        // The last line, with no newline.
        (line_no + 1, cur, false)
    } else {
        match last {
            Some((line, text)) => {
                events -= 1;
                (line, text, true)
            }
            None => return Ok(Ending::Empty),
        }
    };
    Ok(match parse_line(&text) {
        Some(Ok((event, _))) => match event.op {
            Op::Eof { events: counts } => Ending::Eof {
                line,
                counts,
                lines: events,
            },
            _ => Ending::NoEof { line },
        },
        Some(Err(EventError::Json(_))) if !terminated => Ending::Torn {
            line,
            bytes: text.len() as u64,
        },
        _ => Ending::NoEof { line },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    const EV: &str =
        r#"{"seq":0,"t":1,"tid":1,"api":"hipDeviceSynchronize","op":"device_sync","ret":0}"#;
    const EOF: &str = r#"{"seq":2,"t":2,"tid":0,"api":"eof","op":"eof","ret":0,"events":2}"#;

    /// Through buffers of every size from 1 byte up: lines straddling the
    /// buffer's end are counted and kept as those within it.
    fn all(text: &str) -> Ending {
        let whole = ending(text.as_bytes()).unwrap();
        for cap in 1..=text.len().max(1) {
            let r = BufReader::with_capacity(cap, text.as_bytes());
            assert_eq!(
                ending(r).unwrap(),
                whole,
                "buffer of {cap} bytes over {text:?}"
            );
        }
        whole
    }

    #[test]
    fn a_finished_file_ends_with_its_trailer() {
        let text = format!("{EV}\n{EV}\n{EOF}\n");
        assert_eq!(
            all(&text),
            Ending::Eof {
                line: 3,
                counts: 2,
                lines: 2
            }
        );
        // Blank lines are not events; a trailer without its newline reads.
        let text = format!("\n{EV}\n  \n{EV}\n{EOF}\n\n \t\n");
        assert_eq!(
            all(&text),
            Ending::Eof {
                line: 5,
                counts: 2,
                lines: 2
            }
        );
        assert_eq!(
            all(&format!("{EV}\n{EOF}")),
            Ending::Eof {
                line: 2,
                counts: 2,
                lines: 1
            }
        );
    }

    #[test]
    fn empty_torn_and_trailerless_files_say_so() {
        assert_eq!(all(""), Ending::Empty);
        assert_eq!(all("\n \n\r\n"), Ending::Empty);
        assert_eq!(all(&format!("{EV}\n{EV}\n")), Ending::NoEof { line: 2 });
        let torn = &EOF[..EOF.len() - 5];
        assert_eq!(
            all(&format!("{EV}\n{torn}")),
            Ending::Torn {
                line: 2,
                bytes: torn.len() as u64
            }
        );
        // Unparseable with its newline: not torn (the readers' error).
        assert_eq!(all(&format!("{EV}\n{torn}\n")), Ending::NoEof { line: 2 });
    }

    #[test]
    fn an_endless_line_ends_the_pass_at_the_limit() {
        let endless = BufReader::new(std::io::repeat(b'x'));
        assert_eq!(ending(endless).unwrap(), Ending::TooLong { line: 1 });
        let endless = BufReader::new(std::io::Read::chain(&b"\n\n"[..], std::io::repeat(b' ')));
        assert_eq!(ending(endless).unwrap(), Ending::TooLong { line: 3 });
    }
}
