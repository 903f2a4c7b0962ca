//! Element-wise reduction of every rank's contribution, for each data type
//! and built-in operator of the API. Half and bfloat16 are reduced in
//! `f32` and rounded once per step, as a GPU kernel adding pairs does.

use nccl_api::types::*;

/// Why a reduction cannot be made.
#[derive(Debug, PartialEq, Eq)]
pub enum ReduceError {
    /// A data type this library does not reduce.
    Type(ncclDataType_t),
    /// An operator that is not built in.
    Op(ncclRedOp_t),
    /// Contributions of different lengths, or not whole elements.
    Length,
}

trait Elem: Copy {
    const SIZE: usize;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
    fn combine(self, other: Self, op: ncclRedOp_t) -> Self;
    fn div(self, n: usize) -> Self;
}

macro_rules! int_elem {
    ($($t:ty)*) => {$(
        impl Elem for $t {
            const SIZE: usize = size_of::<$t>();
            fn load(b: &[u8]) -> Self { <$t>::from_le_bytes(b.try_into().expect("element")) }
            fn store(self, b: &mut [u8]) { b.copy_from_slice(&self.to_le_bytes()) }
            fn combine(self, o: Self, op: ncclRedOp_t) -> Self {
                match op {
                    NCCL_PROD => self.wrapping_mul(o),
                    NCCL_MAX => self.max(o),
                    NCCL_MIN => self.min(o),
                    _ => self.wrapping_add(o),
                }
            }
            fn div(self, n: usize) -> Self { self / (n as $t) }
        }
    )*};
}
int_elem!(i8 u8 i32 u32 i64 u64);

macro_rules! float_elem {
    ($($t:ty)*) => {$(
        impl Elem for $t {
            const SIZE: usize = size_of::<$t>();
            fn load(b: &[u8]) -> Self { <$t>::from_le_bytes(b.try_into().expect("element")) }
            fn store(self, b: &mut [u8]) { b.copy_from_slice(&self.to_le_bytes()) }
            fn combine(self, o: Self, op: ncclRedOp_t) -> Self {
                match op {
                    NCCL_PROD => self * o,
                    NCCL_MAX => self.max(o),
                    NCCL_MIN => self.min(o),
                    _ => self + o,
                }
            }
            fn div(self, n: usize) -> Self { self / (n as $t) }
        }
    )*};
}
float_elem!(f32 f64);

macro_rules! half_elem {
    ($($t:ty)*) => {$(
        impl Elem for $t {
            const SIZE: usize = 2;
            fn load(b: &[u8]) -> Self { <$t>::from_le_bytes(b.try_into().expect("element")) }
            fn store(self, b: &mut [u8]) { b.copy_from_slice(&self.to_le_bytes()) }
            fn combine(self, o: Self, op: ncclRedOp_t) -> Self {
                <$t>::from_f32(self.to_f32().combine(o.to_f32(), op))
            }
            fn div(self, n: usize) -> Self { <$t>::from_f32(self.to_f32() / n as f32) }
        }
    )*};
}
half_elem!(half::f16 half::bf16);

fn fold<T: Elem>(inputs: &[&[u8]], op: ncclRedOp_t) -> Vec<u8> {
    let mut out = inputs[0].to_vec();
    for other in &inputs[1..] {
        for (o, i) in out
            .chunks_exact_mut(T::SIZE)
            .zip(other.chunks_exact(T::SIZE))
        {
            T::load(o).combine(T::load(i), op).store(o);
        }
    }
    if op == NCCL_AVG {
        for o in out.chunks_exact_mut(T::SIZE) {
            T::load(o).div(inputs.len()).store(o);
        }
    }
    out
}

/// The element-wise reduction of `inputs` (one per rank, in rank order)
/// by `op`, as elements of `dtype`.
pub fn reduce(
    dtype: ncclDataType_t,
    op: ncclRedOp_t,
    inputs: &[&[u8]],
) -> Result<Vec<u8>, ReduceError> {
    if op >= NCCL_NUM_OPS {
        return Err(ReduceError::Op(op));
    }
    let size = dtype_size(dtype).ok_or(ReduceError::Type(dtype))?;
    let Some(first) = inputs.first() else {
        return Ok(Vec::new());
    };
    if inputs.iter().any(|i| i.len() != first.len()) || first.len() % size != 0 {
        return Err(ReduceError::Length);
    }
    Ok(match dtype {
        NCCL_INT8 => fold::<i8>(inputs, op),
        NCCL_UINT8 => fold::<u8>(inputs, op),
        NCCL_INT32 => fold::<i32>(inputs, op),
        NCCL_UINT32 => fold::<u32>(inputs, op),
        NCCL_INT64 => fold::<i64>(inputs, op),
        NCCL_UINT64 => fold::<u64>(inputs, op),
        NCCL_FLOAT16 => fold::<half::f16>(inputs, op),
        NCCL_BFLOAT16 => fold::<half::bf16>(inputs, op),
        NCCL_FLOAT32 => fold::<f32>(inputs, op),
        NCCL_FLOAT64 => fold::<f64>(inputs, op),
        other => return Err(ReduceError::Type(other)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    fn i32s(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn every_rank_counts() {
        let a = f32s(&[1.0, -2.0, 3.0]);
        let b = f32s(&[10.0, 20.0, -30.0]);
        let c = f32s(&[100.0, 0.5, 2.0]);
        let ins = [a.as_slice(), b.as_slice(), c.as_slice()];
        assert_eq!(
            reduce(NCCL_FLOAT32, NCCL_SUM, &ins),
            Ok(f32s(&[111.0, 18.5, -25.0]))
        );
        assert_eq!(
            reduce(NCCL_FLOAT32, NCCL_PROD, &ins),
            Ok(f32s(&[1000.0, -20.0, -180.0]))
        );
        assert_eq!(
            reduce(NCCL_FLOAT32, NCCL_MAX, &ins),
            Ok(f32s(&[100.0, 20.0, 3.0]))
        );
        assert_eq!(
            reduce(NCCL_FLOAT32, NCCL_MIN, &ins),
            Ok(f32s(&[1.0, -2.0, -30.0]))
        );
        assert_eq!(
            reduce(NCCL_FLOAT32, NCCL_AVG, &ins),
            Ok(f32s(&[37.0, 18.5 / 3.0, -25.0 / 3.0]))
        );
        let x = i32s(&[7, -1]);
        let y = i32s(&[5, 4]);
        assert_eq!(reduce(NCCL_INT32, NCCL_SUM, &[&x, &y]), Ok(i32s(&[12, 3])));
        assert_eq!(reduce(NCCL_INT32, NCCL_AVG, &[&x, &y]), Ok(i32s(&[6, 1])));
    }

    #[test]
    fn halves_reduce_in_f32() {
        let h = |v: f32| half::f16::from_f32(v).to_le_bytes().to_vec();
        assert_eq!(
            reduce(NCCL_FLOAT16, NCCL_SUM, &[&h(1.5), &h(2.25)]),
            Ok(h(3.75))
        );
        let b = |v: f32| half::bf16::from_f32(v).to_le_bytes().to_vec();
        assert_eq!(
            reduce(NCCL_BFLOAT16, NCCL_MAX, &[&b(1.5), &b(-2.0)]),
            Ok(b(1.5))
        );
    }

    #[test]
    fn refusals() {
        let a = [0u8; 4];
        assert_eq!(
            reduce(NCCL_FLOAT8E4M3, NCCL_SUM, &[&a]),
            Err(ReduceError::Type(NCCL_FLOAT8E4M3))
        );
        assert_eq!(reduce(NCCL_FLOAT32, 7, &[&a]), Err(ReduceError::Op(7)));
        assert_eq!(
            reduce(NCCL_FLOAT32, NCCL_SUM, &[&a, &a[..2]]),
            Err(ReduceError::Length)
        );
    }
}
