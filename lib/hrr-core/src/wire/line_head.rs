//! `LineHead`: the head of each line, `{"seq":N,"t":T`, written from the
//! previous line's.
//!
//! A capture's sink writes a head for every event, under its lock, and
//! formatting two decimals from scratch ([`push_head`]) was the largest
//! single part of a repeated launch's recording (about a fifth of its
//! instructions). Consecutive heads barely differ: `seq` grows by one, so
//! its text changes in its last digit but for a carry, and `t` (nanoseconds
//! since boot, 14 digits) keeps all but its last six digits for a
//! millisecond. This keeps the previous head's text and rewrites only what
//! changed; anything else (the first head, a `seq` that is not the next
//! one, a new millisecond, a change in the number of digits) is formatted
//! in full. The bytes are [`push_head`]'s, always.
//!
//! [`push_head`]: super::encode::push_head

use super::encode::{DIGIT_PAIRS, push_head};

/// `{"seq":` + 20 digits + `,"t":` + 20 digits.
const MAX: usize = 7 + 20 + 5 + 20;
/// The digits of `t` rewritten while the rest stay.
const LOW_DIGITS: usize = 6;
const LOW_MOD: u64 = 1_000_000;

/// See the module docs.
#[derive(Clone, Debug)]
pub struct LineHead {
    text: [u8; MAX],
    len: usize,
    /// Where the digits of `seq` end (`,"t":` follows).
    seq_end: usize,
    /// The `seq` and `t / LOW_MOD` in `text`; `None` before the first head.
    last: Option<(u64, u64)>,
}

impl Default for LineHead {
    fn default() -> LineHead {
        LineHead::new()
    }
}

impl LineHead {
    /// No head written yet.
    pub const fn new() -> LineHead {
        LineHead {
            text: [0; MAX],
            len: 0,
            seq_end: 0,
            last: None,
        }
    }

    /// Appends `{"seq":seq,"t":t` to `buf`.
    #[inline]
    pub fn push(&mut self, buf: &mut Vec<u8>, seq: u64, t: u64) {
        let high = t / LOW_MOD;
        let follows =
            matches!(self.last, Some((s, h)) if s.checked_add(1) == Some(seq) && h == high);
        self.last = Some((seq, high));
        if !(follows && t >= LOW_MOD && self.next_seq()) {
            return self.format(buf, seq, t);
        }
        let low = (t % LOW_MOD) as usize;
        let end = self.len;
        let d = &mut self.text[end - LOW_DIGITS..end];
        for (i, pair) in [low / 10_000 % 100, low / 100 % 100, low % 100]
            .into_iter()
            .enumerate()
        {
            d[2 * i..2 * i + 2].copy_from_slice(&DIGIT_PAIRS[2 * pair..2 * pair + 2]);
        }
        buf.extend_from_slice(&self.text[..self.len]);
    }

    /// Adds one to the `seq` digits in place; `false` when they are all
    /// nines (the number grows a digit).
    #[inline]
    fn next_seq(&mut self) -> bool {
        for d in self.text[..self.seq_end].iter_mut().rev() {
            match *d {
                b'9' => *d = b'0',
                b'0'..=b'8' => {
                    *d += 1;
                    return true;
                }
                // `:` before the first digit: all were nines. The digits
                // already turned to zeros are rewritten in full.
                _ => return false,
            }
        }
        false
    }

    /// Formats the head in full into `buf` (no allocation: events further
    /// apart than a millisecond take this path every time), and keeps it.
    #[cold]
    fn format(&mut self, buf: &mut Vec<u8>, seq: u64, t: u64) {
        let start = buf.len();
        push_head(buf, seq, t);
        let head = &buf[start..];
        self.text[..head.len()].copy_from_slice(head);
        self.len = head.len();
        self.seq_end = head.iter().position(|&b| b == b',').unwrap_or(head.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(seq: u64, t: u64) -> Vec<u8> {
        let mut v = Vec::new();
        push_head(&mut v, seq, t);
        v
    }

    #[test]
    fn carries_and_new_digits_read_like_formatted_heads() {
        let mut h = LineHead::new();
        let mut buf = Vec::new();
        let mut t = 999_999_999_990u64;
        // The last one wraps: `seq` 0 after `u64::MAX` is no increment.
        for seq in (0..12)
            .chain(95..1005)
            .chain(u64::MAX - 3..=u64::MAX)
            .chain([0])
        {
            t += 3;
            buf.clear();
            h.push(&mut buf, seq, t);
            assert_eq!(buf, reference(seq, t), "seq {seq}, t {t}");
        }
    }

    proptest! {
        /// Any sequence of heads, mostly consecutive `seq` and close `t`
        /// (the common case) with jumps of both, reads like `push_head`.
        #[test]
        fn every_head_reads_like_push_head(
            start in prop_oneof![0u64..2_000, 9_990u64..10_010, any::<u64>()],
            t0 in prop_oneof![0u64..3_000_000, 999_000u64..1_001_000, any::<u64>()],
            steps in proptest::collection::vec((0u64..3, prop_oneof![0u64..2_000, 0u64..3_000_000, any::<u64>()]), 1..200),
        ) {
            let mut h = LineHead::new();
            let (mut seq, mut t) = (start, t0);
            for (ds, dt) in steps {
                seq = if ds == 2 { seq.wrapping_mul(7).wrapping_add(dt) } else { seq.wrapping_add(ds) };
                t = t.wrapping_add(dt);
                let mut buf = b"x".to_vec();
                h.push(&mut buf, seq, t);
                prop_assert_eq!(&buf[1..], &reference(seq, t)[..], "seq {} t {}", seq, t);
            }
        }
    }
}
