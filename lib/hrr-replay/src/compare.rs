//! `compare`: D2H output comparison, exact first, then within a tolerance.
//!
//! The exact path compares 64 KiB chunks with slice equality (memcmp speed);
//! only a chunk that differs is walked byte by byte and element by element,
//! so identical buffers cost one pass and mismatch statistics cost extra
//! only where bytes actually differ.
//!
//! Tolerance follows numpy's `allclose`: an element passes when
//! `|actual - expected| <= atol + rtol * |expected|`. NaN equals NaN (a
//! different NaN payload is not a numeric difference); NaN against a number
//! fails with an infinite error; `+0` and `-0` are equal.
//!
//! ## `--dtype auto`
//! The archive does not record element types, so `auto` guesses from the
//! buffer size: a multiple of 4 is read as f32 (by far the most common GPU
//! output), else a multiple of 2 as f16, else there is no element type and
//! only an exact match passes. Guessing f32 for integer data is made safe by
//! one guard: in auto mode a differing element where either side is a
//! non-zero subnormal fails. Small integers reinterpret as subnormal floats,
//! and without the guard `1` vs `2` would be "within tolerance" of any
//! `atol` above 1e-45; real float results are rarely subnormal (GPUs often
//! flush them to zero). Name the type explicitly to lift the guard.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Element type used to judge numeric closeness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// Guess from the size (see the module docs).
    #[default]
    Auto,
    /// IEEE binary32.
    F32,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE binary64.
    F64,
}

impl DType {
    /// The name `--dtype` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            DType::Auto => "auto",
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::F64 => "f64",
        }
    }

    /// Bytes per element (`Auto` has none).
    pub fn width(self) -> Option<usize> {
        match self {
            DType::Auto => None,
            DType::F16 | DType::Bf16 => Some(2),
            DType::F32 => Some(4),
            DType::F64 => Some(8),
        }
    }

    /// The concrete type `Auto` stands for at `size` bytes, or `None` when
    /// no element type fits (odd size).
    pub fn resolve(self, size: u64) -> Option<DType> {
        match self {
            DType::Auto if size.is_multiple_of(4) => Some(DType::F32),
            DType::Auto if size.is_multiple_of(2) => Some(DType::F16),
            DType::Auto => None,
            other => Some(other),
        }
    }

    fn decode(self, b: &[u8]) -> f64 {
        match self {
            DType::F32 => f64::from(f32::from_le_bytes(b.try_into().expect("4 bytes"))),
            DType::F16 => half::f16::from_le_bytes([b[0], b[1]]).to_f64(),
            DType::Bf16 => half::bf16::from_le_bytes([b[0], b[1]]).to_f64(),
            DType::F64 => f64::from_le_bytes(b.try_into().expect("8 bytes")),
            DType::Auto => unreachable!("resolved before decoding"),
        }
    }

    /// Whether the element is a non-zero subnormal in its own type.
    fn is_subnormal(self, b: &[u8]) -> bool {
        match self {
            DType::F32 => f32::from_le_bytes(b.try_into().expect("4 bytes")).is_subnormal(),
            DType::F16 => {
                let x = half::f16::from_le_bytes([b[0], b[1]]);
                x.is_finite() && !x.is_normal() && x.to_bits() & 0x7fff != 0
            }
            DType::Bf16 => {
                let x = half::bf16::from_le_bytes([b[0], b[1]]);
                x.is_finite() && !x.is_normal() && x.to_bits() & 0x7fff != 0
            }
            DType::F64 => f64::from_le_bytes(b.try_into().expect("8 bytes")).is_subnormal(),
            DType::Auto => false,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DType {
    type Err = String;
    fn from_str(s: &str) -> Result<DType, String> {
        match s {
            "auto" => Ok(DType::Auto),
            "f32" => Ok(DType::F32),
            "f16" => Ok(DType::F16),
            "bf16" => Ok(DType::Bf16),
            "f64" => Ok(DType::F64),
            other => Err(format!(
                "unknown dtype `{other}` (expected auto, f32, f16, bf16 or f64)"
            )),
        }
    }
}

/// How close is close enough.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance, scaled by the expected value.
    pub rtol: f64,
    /// Element type the tolerance applies to.
    pub dtype: DType,
    /// Only byte-identical buffers pass.
    pub exact: bool,
}

impl Default for Tolerance {
    /// No tolerance: outputs must match byte for byte unless the user asks
    /// for `--atol`/`--rtol` (a flipped bit in a float is a real difference).
    fn default() -> Tolerance {
        Tolerance {
            atol: 0.0,
            rtol: 0.0,
            dtype: DType::Auto,
            exact: false,
        }
    }
}

impl Tolerance {
    /// numpy's `allclose` defaults: `atol = 1e-8`, `rtol = 1e-5`.
    pub fn allclose() -> Tolerance {
        Tolerance {
            atol: 1e-8,
            rtol: 1e-5,
            ..Tolerance::default()
        }
    }

    /// Byte-identical only.
    pub fn exact() -> Tolerance {
        Tolerance {
            exact: true,
            ..Tolerance::default()
        }
    }
}

/// The outcome of one comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Byte-identical.
    Exact,
    /// Different bytes, every element within tolerance.
    WithinTolerance,
    /// Outside tolerance, or sizes differ.
    Mismatch,
}

/// Result and statistics of comparing two buffers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The outcome.
    pub verdict: Verdict,
    /// Byte offset of the first difference (the shorter length when one
    /// buffer is a prefix of the other).
    pub first_diff: Option<u64>,
    /// Bytes that differ, plus the length difference when sizes differ.
    pub bytes_differing: u64,
    /// Largest absolute error over differing elements (0 without an element type).
    pub max_abs: f64,
    /// Largest relative error `|a-e|/|e|` over differing elements.
    pub max_rel: f64,
    /// Element type the statistics were computed in; `None` for bytes only.
    pub dtype_used: Option<DType>,
    /// Length of the expected buffer.
    pub expected_size: u64,
    /// Length of the actual buffer.
    pub actual_size: u64,
}

impl Comparison {
    /// Whether the verdict is a pass.
    pub fn passed(&self) -> bool {
        self.verdict != Verdict::Mismatch
    }
}

/// Chunk compared with one slice equality; a multiple of every element width.
const CHUNK: usize = 64 * 1024;

/// Compares `actual` against `expected` (see the module docs for the rules).
pub fn compare(expected: &[u8], actual: &[u8], tol: &Tolerance) -> Comparison {
    let n = expected.len().min(actual.len());
    let dtype = tol.dtype.resolve(expected.len() as u64);
    let auto = tol.dtype == DType::Auto;
    let mut c = Comparison {
        verdict: Verdict::Exact,
        first_diff: None,
        bytes_differing: 0,
        max_abs: 0.0,
        max_rel: 0.0,
        dtype_used: dtype,
        expected_size: expected.len() as u64,
        actual_size: actual.len() as u64,
    };
    let mut all_within = true;
    let mut off = 0;
    while off < n {
        let end = (off + CHUNK).min(n);
        let (e, a) = (&expected[off..end], &actual[off..end]);
        if e != a {
            let first = e
                .iter()
                .zip(a)
                .position(|(x, y)| x != y)
                .expect("chunks differ");
            c.first_diff.get_or_insert((off + first) as u64);
            c.bytes_differing += e.iter().zip(a).filter(|(x, y)| x != y).count() as u64;
            match dtype {
                Some(dt) => {
                    if !elementwise(dt, e, a, tol, auto, &mut c) {
                        all_within = false;
                    }
                }
                None => all_within = false,
            }
        }
        off = end;
    }
    if expected.len() != actual.len() {
        c.first_diff.get_or_insert(n as u64);
        c.bytes_differing += expected.len().abs_diff(actual.len()) as u64;
        all_within = false;
    }
    c.verdict = if c.bytes_differing == 0 {
        Verdict::Exact
    } else if all_within && !tol.exact {
        Verdict::WithinTolerance
    } else {
        Verdict::Mismatch
    };
    c
}

/// Walks the elements of a differing chunk (which starts on an element
/// boundary); returns whether every differing element is within tolerance.
fn elementwise(
    dt: DType,
    e: &[u8],
    a: &[u8],
    tol: &Tolerance,
    auto: bool,
    c: &mut Comparison,
) -> bool {
    let w = dt.width().expect("resolved dtype has a width");
    let whole = e.len() / w * w;
    let mut ok = true;
    for (eb, ab) in e[..whole].chunks_exact(w).zip(a[..whole].chunks_exact(w)) {
        if eb == ab {
            continue;
        }
        let (ev, av) = (dt.decode(eb), dt.decode(ab));
        let (abs, rel, within) = if ev.is_nan() && av.is_nan() {
            (0.0, 0.0, true)
        } else if ev == av {
            // +0 / -0, or the same infinity: no numeric difference.
            (0.0, 0.0, true)
        } else if ev.is_nan() || av.is_nan() || ev.is_infinite() || av.is_infinite() {
            (f64::INFINITY, f64::INFINITY, false)
        } else {
            let abs = (av - ev).abs();
            let rel = if ev == 0.0 {
                f64::INFINITY
            } else {
                abs / ev.abs()
            };
            (abs, rel, abs <= tol.atol + tol.rtol * ev.abs())
        };
        c.max_abs = c.max_abs.max(abs);
        c.max_rel = c.max_rel.max(rel);
        let guarded = auto && (dt.is_subnormal(eb) || dt.is_subnormal(ab));
        if guarded || !within {
            ok = false;
        }
    }
    // Trailing bytes that do not form an element can only match exactly.
    if e[whole..] != a[whole..] {
        ok = false;
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn identical_is_exact() {
        let a = f32s(&[1.0, 2.0, 3.0]);
        let c = compare(&a, &a, &Tolerance::default());
        assert_eq!(c.verdict, Verdict::Exact);
        assert_eq!((c.first_diff, c.bytes_differing), (None, 0));
        assert_eq!(c.dtype_used, Some(DType::F32));
    }

    #[test]
    fn small_float_error_is_within_tolerance_unless_exact() {
        let e = f32s(&[1.0, 2.0, 3.0]);
        let a = f32s(&[1.0, 2.000001, 3.0]);
        let c = compare(&e, &a, &Tolerance::allclose());
        assert_eq!(c.verdict, Verdict::WithinTolerance);
        assert_eq!(c.first_diff, Some(4));
        assert!(c.bytes_differing >= 1 && c.bytes_differing <= 4);
        assert!(c.max_abs > 0.0 && c.max_abs < 1e-5, "{}", c.max_abs);
        let c = compare(&e, &a, &Tolerance::exact());
        assert_eq!(c.verdict, Verdict::Mismatch);
        assert!(c.max_abs > 0.0, "statistics are still computed");
    }

    #[test]
    fn large_error_fails_with_stats() {
        let e = f32s(&[1.0, 2.0, 4.0]);
        let a = f32s(&[1.0, 2.5, 4.0]);
        let c = compare(
            &e,
            &a,
            &Tolerance {
                atol: 0.1,
                rtol: 0.0,
                ..Tolerance::default()
            },
        );
        assert_eq!(c.verdict, Verdict::Mismatch);
        assert_eq!(c.max_abs, 0.5);
        assert_eq!(c.max_rel, 0.25);
        let c = compare(
            &e,
            &a,
            &Tolerance {
                atol: 0.5,
                rtol: 0.0,
                ..Tolerance::default()
            },
        );
        assert_eq!(c.verdict, Verdict::WithinTolerance);
    }

    #[test]
    fn different_sizes_mismatch() {
        let c = compare(b"abcd", b"abcdef", &Tolerance::default());
        assert_eq!(c.verdict, Verdict::Mismatch);
        assert_eq!((c.first_diff, c.bytes_differing), (Some(4), 2));
    }

    #[test]
    fn auto_guard_catches_integers_read_as_floats() {
        let e: Vec<u8> = [1u32, 2, 3].iter().flat_map(|x| x.to_le_bytes()).collect();
        let a: Vec<u8> = [1u32, 7, 3].iter().flat_map(|x| x.to_le_bytes()).collect();
        let loose = Tolerance {
            atol: 1e-3,
            ..Tolerance::default()
        };
        assert_eq!(compare(&e, &a, &loose).verdict, Verdict::Mismatch);
        let explicit = Tolerance {
            dtype: DType::F32,
            ..loose
        };
        assert_eq!(compare(&e, &a, &explicit).verdict, Verdict::WithinTolerance);
    }

    #[test]
    fn nan_and_signed_zero() {
        let e = f32s(&[f32::NAN, 0.0]);
        let a: Vec<u8> = [f32::from_bits(0x7fc0_0001), -0.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let c = compare(
            &e,
            &a,
            &Tolerance {
                atol: 0.0,
                rtol: 0.0,
                ..Tolerance::default()
            },
        );
        assert_eq!(c.verdict, Verdict::WithinTolerance);
        let c = compare(&e, &f32s(&[1.0, 0.0]), &Tolerance::default());
        assert_eq!(c.verdict, Verdict::Mismatch);
        assert!(c.max_abs.is_infinite());
        let loose = Tolerance {
            atol: f64::MAX,
            rtol: 1.0,
            ..Tolerance::default()
        };
        let c = compare(&f32s(&[f32::INFINITY]), &f32s(&[f32::NEG_INFINITY]), &loose);
        assert_eq!(
            c.verdict,
            Verdict::Mismatch,
            "opposite infinities never pass"
        );
    }

    #[test]
    fn half_types_and_f64() {
        let e: Vec<u8> = [half::bf16::from_f32(1.0)]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let a: Vec<u8> = [half::bf16::from_f32(1.0078125)]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let t = Tolerance {
            atol: 0.01,
            rtol: 0.0,
            dtype: DType::Bf16,
            exact: false,
        };
        assert_eq!(compare(&e, &a, &t).verdict, Verdict::WithinTolerance);
        let t = Tolerance { atol: 0.001, ..t };
        assert_eq!(compare(&e, &a, &t).verdict, Verdict::Mismatch);

        let e = 1.0f64.to_le_bytes();
        let a = (1.0f64 + 1e-12).to_le_bytes();
        let t = Tolerance {
            dtype: DType::F64,
            ..Tolerance::allclose()
        };
        assert_eq!(compare(&e, &a, &t).verdict, Verdict::WithinTolerance);
        // Auto on 6 bytes reads f16; on 3 bytes nothing fits.
        assert_eq!(DType::Auto.resolve(6), Some(DType::F16));
        assert_eq!(
            compare(b"abc", b"abd", &Tolerance::default()).dtype_used,
            None
        );
        assert_eq!(
            compare(b"abc", b"abd", &Tolerance::default()).verdict,
            Verdict::Mismatch
        );
    }

    #[test]
    fn differences_across_chunks_are_all_counted() {
        let e = vec![0u8; CHUNK * 3 + 10];
        let mut a = e.clone();
        a[5] = 1;
        a[CHUNK * 2 + 1] = 1;
        a[CHUNK * 3 + 9] = 1;
        let c = compare(&e, &a, &Tolerance::exact());
        assert_eq!((c.first_diff, c.bytes_differing), (Some(5), 3));
    }

    #[test]
    fn dtype_parses() {
        for d in [DType::Auto, DType::F32, DType::F16, DType::Bf16, DType::F64] {
            assert_eq!(d.as_str().parse::<DType>().unwrap(), d);
        }
        assert!("f8".parse::<DType>().unwrap_err().contains("unknown dtype"));
    }
}
