//! `Uniform<T>`: a value that is the same in every thread of a launch (a kernel parameter, a
//! launch dimension), marked so in its type. It has `T`'s layout.
//!
//! ```ignore
//! let stride = uniform::block_dim_x().wrapping_mul(uniform::grid_dim_x());
//! let n = stride.get();
//! ```

/// A `T` that every thread of the launch holds alike.
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct Uniform<T> {
    value: T,
}

impl<T> Uniform<T> {
    /// Wraps `value`.
    ///
    /// ```ignore
    /// let k = unsafe { Uniform::new_unchecked(param) };
    /// ```
    ///
    /// # Safety
    /// `value` is the same in every thread of the launch (code that relies on uniformity, such as
    /// a barrier or a warp collective behind a branch on it, may hang otherwise).
    #[inline(always)]
    pub const unsafe fn new_unchecked(value: T) -> Self {
        Uniform { value }
    }

    /// The value.
    #[inline(always)]
    pub const fn get(&self) -> T
    where
        T: Copy,
    {
        self.value
    }
}

macro_rules! uniform_u32_ops {
    ($($op:ident),*) => {
        impl Uniform<u32> {
            $(
                #[doc = concat!("`u32::", stringify!($op), "` of two uniform values, which is uniform.")]
                #[inline(always)]
                pub fn $op(self, other: Self) -> Self {
                    Uniform { value: self.value.$op(other.value) }
                }
            )*

            /// `wrapping_mul` by a constant.
            #[inline(always)]
            pub const fn wrapping_mul_const<const C: u32>(self) -> Self {
                Uniform { value: self.value.wrapping_mul(C) }
            }

            /// `wrapping_add` of a constant.
            #[inline(always)]
            pub const fn wrapping_add_const<const C: u32>(self) -> Self {
                Uniform { value: self.value.wrapping_add(C) }
            }
        }
    };
}

uniform_u32_ops!(wrapping_add, wrapping_sub, wrapping_mul, saturating_add, saturating_sub, min, max);

macro_rules! uniform_registers {
    ($($name:ident => $reg:ident),*) => {$(
        #[doc = concat!("`", stringify!($reg), "()`, which is the same in every thread, as a [`Uniform`].")]
        #[inline(always)]
        pub fn $name() -> Uniform<u32> {
            Uniform { value: crate::thread::$reg() }
        }
    )*};
}

uniform_registers!(
    block_dim_x => blockDim_x, block_dim_y => blockDim_y, block_dim_z => blockDim_z,
    grid_dim_x => gridDim_x, grid_dim_y => gridDim_y, grid_dim_z => gridDim_z
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_arithmetic() {
        assert_eq!(core::mem::size_of::<Uniform<u64>>(), 8);
        let (a, b) = unsafe { (Uniform::new_unchecked(6u32), Uniform::new_unchecked(7u32)) };
        assert_eq!(a.wrapping_mul(b).get(), 42);
        assert_eq!(b.wrapping_sub(a).max(a).get(), 6);
        assert_eq!(a.wrapping_mul_const::<4>().wrapping_add_const::<1>().get(), 25);
        assert_eq!(unsafe { Uniform::new_unchecked(u32::MAX) }.saturating_add(a).get(), u32::MAX);
    }
}
