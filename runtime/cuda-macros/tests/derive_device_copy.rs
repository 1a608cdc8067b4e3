//! `#[derive(DeviceCopy)]` through `cuda_core` and through `cuda_device`.

use cuda_core::DeviceCopy;

#[allow(clippy::extra_unused_type_parameters)] // the bound is the test
fn is_device_copy<T: DeviceCopy>() -> bool {
    true
}

#[derive(Clone, Copy, cuda_core::DeviceCopy)]
struct Particle {
    pos: [f32; 3],
    mass: f64,
    id: u32,
    alive: bool,
}

#[derive(Clone, Copy, cuda_device::DeviceCopy)]
struct Pair<T>(T, T)
where
    T: Copy;

#[derive(Clone, Copy, cuda_core::DeviceCopy)]
struct Nested {
    inner: Particle,
    pair: Pair<u8>,
    ptr: *const f32,
    unit: (),
}

#[test]
fn structs_with_device_copy_fields_are_device_copy() {
    assert!(is_device_copy::<Particle>());
    assert!(is_device_copy::<Pair<i128>>());
    assert!(is_device_copy::<Nested>());
    let p = Particle { pos: [0.0; 3], mass: 1.0, id: 2, alive: true };
    let n = Nested { inner: p, pair: Pair(1, 2), ptr: std::ptr::null(), unit: () };
    assert_eq!((n.inner.id, n.inner.alive, n.inner.mass, n.inner.pos[0], n.pair.1, n.unit), (2, true, 1.0, 0.0, 2, ()));
    assert!(n.ptr.is_null());
}
