//! Host arguments of kernel parameters whose index space carries a row width
//! (`DisjointSlice<T, Runtime2DIndex>`, `DisjointSlice<T, RuntimeRowMajorTiles<R, C>>`): the
//! buffer and the width every thread of the launch reads.

use cuda_core::DeviceBuffer;

/// A device buffer viewed as a row-major matrix `width` elements wide, for a kernel parameter
/// `DisjointSlice<T, Runtime2DIndex>`:
/// `module.transpose(&stream, config, RowWidth::new(&mut out, n))`.
pub struct RowWidth<'a, T> {
    buffer: &'a mut DeviceBuffer<T>,
    width: u32,
}

impl<'a, T> RowWidth<'a, T> {
    /// `buffer`, `width` elements per row.
    pub fn new(buffer: &'a mut DeviceBuffer<T>, width: u32) -> Self {
        RowWidth { buffer, width }
    }

    /// The row width.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The buffer's length in elements (what `requires = (c.len() >= m * n)` reads).
    pub fn len(&self) -> usize {
        self.buffer.len()
    }

    /// `true` for an empty buffer.
    pub fn is_empty(&self) -> bool {
        self.buffer.len() == 0
    }

    /// The buffer and the width, for the launch packet.
    #[doc(hidden)]
    pub fn __parts(&mut self) -> (&mut DeviceBuffer<T>, &u32) {
        (&mut *self.buffer, &self.width)
    }
}

/// [`RowWidth`] owning its buffer, for the `_async_owned` launch methods, which give it back.
pub struct RowWidthOwned<B> {
    buffer: B,
    width: u32,
}

impl<B> RowWidthOwned<B> {
    /// `buffer`, `width` elements per row.
    pub fn new(buffer: B, width: u32) -> Self {
        RowWidthOwned { buffer, width }
    }

    /// The row width.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The buffer back.
    pub fn into_buffer(self) -> B {
        self.buffer
    }
}

impl<T> RowWidthOwned<DeviceBuffer<T>> {
    /// The buffer and the width, for the launch packet.
    #[doc(hidden)]
    pub fn __parts(&mut self) -> (&mut DeviceBuffer<T>, &u32) {
        (&mut self.buffer, &self.width)
    }
}
