//! The NDJSON wire form of events, in one place: what a line holds
//! ([`Wire`], with the reference encoding and parse of an
//! [`Event`](crate::Event)), the fast encoder a recorder writes lines with
//! ([`encode`]), and the fast scanner the reader parses the common lines
//! with ([`scan`]).
//!
//! None of them lists the ops or the keys by hand. The op table
//! (`op_table!`, in [`crate::event`]) declares every op with its name and
//! fields; the key table (`wire_keys!`, in `form`) declares every key of a
//! line, in its order, with its value's type and codec. From them come
//! [`Wire`], the moves between an [`Op`](crate::Op) and a `Wire`, the fast
//! encoder's `encode_op` and the scanner's keys. A codec is how a value is
//! read and written (`read_value!` in [`scan`], `write_value!` in
//! [`encode`]); the values with a form of their own (kernel arguments,
//! launch attributes, graph nodes) have theirs written by hand there.
//!
//! The three must agree byte for byte; their tests check the fast paths
//! against the serde form on every op of the table, on generated events
//! and on golden lines.

pub mod encode;
mod form;
mod line_head;
pub mod scan;
#[cfg(test)]
mod tests;

pub use form::{EventError, Wire};
pub use line_head::LineHead;
