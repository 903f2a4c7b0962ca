//! `copy_pieces`: a CUDA copy node's `CUDA_MEMCPY3D` geometry as the linear
//! copies the archive format has (GPU-free, unit-tested).

#![deny(unsafe_code)]

use cuda_api::rect::Rect;

/// Most linear copies one copy node may become (rows × slices); beyond
/// that the node is `unsupported`.
pub const MAX_PIECES: u64 = 1024;

/// One linear copy: destination, source, bytes.
pub type Piece = (u64, u64, u64);

/// Why a copy node is not linear copies of the format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PiecesError {
    /// Its extent overflows an address.
    #[error("a copy larger than the address space")]
    TooLarge,
    /// More rows than [`MAX_PIECES`].
    #[error("a {0}x{1}x{2} copy between pitched rows (more than {MAX_PIECES} rows)")]
    TooManyRows(u64, u64, u64),
    /// A row lies past the end of the address space.
    #[error("a copy past the address space")]
    PastEnd,
}

/// The linear copies a copy between linear memory is: one when its rows
/// (and slices) are contiguous on both sides, else one per row, at most
/// [`MAX_PIECES`]. `Err` says why not.
pub fn copy_pieces(c: &Rect) -> Result<Vec<Piece>, PiecesError> {
    let [w, h, d] = c.extent;
    let (h, d) = (h.max(1), d.max(1));
    if w == 0 {
        return Ok(Vec::new());
    }
    let rows_packed = h == 1 || (c.spitch[0] == w && c.dpitch[0] == w);
    let slices_packed = d == 1 || (c.spitch[1] == w * h && c.dpitch[1] == w * h);
    if rows_packed && slices_packed {
        let size = w
            .checked_mul(h)
            .and_then(|x| x.checked_mul(d))
            .ok_or(PiecesError::TooLarge)?;
        return Ok(vec![(c.dst, c.src, size)]);
    }
    if h.saturating_mul(d) > MAX_PIECES {
        return Err(PiecesError::TooManyRows(w, h, d));
    }
    let at = |base: u64, pitch: [u64; 2], y: u64, z: u64| {
        base.checked_add(y.checked_mul(pitch[0])?)?
            .checked_add(z.checked_mul(pitch[1])?)
    };
    let mut v = Vec::with_capacity((h * d) as usize);
    for z in 0..d {
        for y in 0..h {
            let dst = at(c.dst, c.dpitch, y, z).ok_or(PiecesError::PastEnd)?;
            let src = at(c.src, c.spitch, y, z).ok_or(PiecesError::PastEnd)?;
            v.push((dst, src, w));
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuda_api::rect::Side;

    fn rect(extent: [u64; 3], spitch: [u64; 2], dpitch: [u64; 2]) -> Rect {
        Rect {
            dst: 0x1000,
            dpitch,
            dst_side: Side::Device,
            src: 0x9000,
            spitch,
            src_side: Side::Host,
            extent,
        }
    }

    #[test]
    fn contiguous_copies_are_one_piece() {
        // 1D: the runtime's cudaMemcpyAsync in a capture.
        assert_eq!(
            copy_pieces(&rect([256, 1, 1], [256, 256], [256, 256])),
            Ok(vec![(0x1000, 0x9000, 256)])
        );
        // Pitches of 0 where one row makes them irrelevant.
        assert_eq!(
            copy_pieces(&rect([64, 1, 1], [0, 0], [0, 0])),
            Ok(vec![(0x1000, 0x9000, 64)])
        );
        // Packed rows and slices.
        assert_eq!(
            copy_pieces(&rect([16, 4, 2], [16, 64], [16, 64])),
            Ok(vec![(0x1000, 0x9000, 128)])
        );
        assert_eq!(
            copy_pieces(&rect([0, 4, 1], [16, 64], [16, 64])),
            Ok(vec![])
        );
    }

    #[test]
    fn pitched_rows_are_one_piece_each() {
        let p = copy_pieces(&rect([16, 3, 1], [16, 48], [256, 768])).unwrap();
        assert_eq!(
            p,
            [
                (0x1000, 0x9000, 16),
                (0x1000 + 256, 0x9000 + 16, 16),
                (0x1000 + 512, 0x9000 + 32, 16),
            ]
        );
        let p3 = copy_pieces(&rect([8, 2, 2], [8, 16], [32, 128])).unwrap();
        assert_eq!(p3.len(), 4);
        assert_eq!(p3[3], (0x1000 + 128 + 32, 0x9000 + 16 + 8, 8));
        let e = copy_pieces(&rect([8, 2000, 1], [8, 16000], [32, 64000])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a 8x2000x1 copy between pitched rows (more than 1024 rows)"
        );
    }
}
