//! `#[derive(DeviceCopy)]` rejects fields that are not DeviceCopy, enums and non-Copy structs.
use cuda_core::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
struct HasReference {
    ok: f32,
    bad: &'static str,
}

#[derive(Clone, DeviceCopy)]
struct NotCopy {
    x: u32,
}

#[derive(Clone, Copy, DeviceCopy)]
enum Shape {
    Dot,
}

fn main() {}
