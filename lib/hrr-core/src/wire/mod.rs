//! The NDJSON wire form of events, in one place: what a line holds
//! ([`Wire`], with the reference encoding and parse of an
//! [`Event`](crate::Event)), the fast encoder a recorder writes lines with
//! ([`encode`]), and the fast scanner the reader parses the common lines
//! with ([`scan`]).
//!
//! The three must agree byte for byte; their tests check the fast paths
//! against the serde form on every op and on generated events.

pub mod encode;
mod form;
mod line_head;
pub mod scan;

pub use form::{EventError, Wire};
pub use line_head::LineHead;
