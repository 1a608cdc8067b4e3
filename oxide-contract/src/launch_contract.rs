//! Launch contracts (`#[launch_contract]`): what a kernel assumes about every launch of it (its
//! dimensionality, `u32` coordinates, an exact block shape, its dynamic shared memory), how the
//! macro hands that to the backend (the `oxide::launch_contract` tool attribute), and the check
//! of a launch against it that the runtime runs on every launch of the kernel.

use serde::{Deserialize, Serialize};

/// What a `#[launch_contract(..)]` kernel assumes about its launches (recorded in the manifest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LaunchContract {
    /// 1, 2 or 3: the launch uses only the x axis, only x and y, or all three.
    pub domain: u8,
    /// Every thread's coordinate on each axis fits in `u32` (`grid * block <= 2^32` per axis).
    pub u32_coordinates: bool,
    /// The exact block shape (`.reqntid`), when the contract names one.
    pub block: Option<[u32; 3]>,
    /// Dynamic shared memory per block in bytes: inclusive minimum and maximum.
    pub dynamic_shared: [u32; 2],
    /// The alignment the kernel assumes of its dynamic shared memory (a power of two).
    pub dynamic_shared_alignment: u32,
    /// The lowest compute capability the kernel runs on, `[major, minor]`.
    #[serde(default)]
    pub min_compute_capability: Option<[u32; 2]>,
}

/// Values of [`LaunchContract::to_attr_args`], in order.
const ATTR_ARGS: usize = 10;

impl LaunchContract {
    /// The integer arguments of the kernel's `oxide::launch_contract(..)` tool attribute:
    /// domain, u32 coordinates (0/1), block x, y, z (0 when none), dynamic shared min, max,
    /// alignment, minimum compute capability major, minor (0, 0 when none).
    pub fn to_attr_args(&self) -> [u32; ATTR_ARGS] {
        let [bx, by, bz] = self.block.unwrap_or([0; 3]);
        let [major, minor] = self.min_compute_capability.unwrap_or([0; 2]);
        [
            u32::from(self.domain),
            u32::from(self.u32_coordinates),
            bx,
            by,
            bz,
            self.dynamic_shared[0],
            self.dynamic_shared[1],
            self.dynamic_shared_alignment,
            major,
            minor,
        ]
    }

    /// Inverse of [`to_attr_args`](Self::to_attr_args); `None` for a malformed list.
    pub fn from_attr_args(args: &[u32]) -> Option<LaunchContract> {
        let &[domain, u32c, bx, by, bz, dmin, dmax, align, major, minor] = args else { return None };
        let contract = LaunchContract {
            domain: u8::try_from(domain).ok().filter(|d| (1..=3).contains(d))?,
            u32_coordinates: u32c != 0,
            block: (bx != 0).then_some([bx, by, bz]),
            dynamic_shared: [dmin, dmax],
            dynamic_shared_alignment: align,
            min_compute_capability: (major != 0 || minor != 0).then_some([major, minor]),
        };
        (dmin <= dmax && align.is_power_of_two()).then_some(contract)
    }

    /// Checks a launch of `grid` blocks of `block` threads with `dynamic_shared` bytes of dynamic
    /// shared memory against the contract.
    pub fn check(
        &self,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        dynamic_shared: u32,
    ) -> Result<(), ContractViolation> {
        let axes = [(Axis::X, grid.0, block.0), (Axis::Y, grid.1, block.1), (Axis::Z, grid.2, block.2)];
        for (i, &(axis, g, b)) in axes.iter().enumerate() {
            if i >= usize::from(self.domain) {
                if g != 1 {
                    return Err(ContractViolation::OutsideDomain { domain: self.domain, grid: true, axis, extent: g });
                }
                if b != 1 {
                    return Err(ContractViolation::OutsideDomain { domain: self.domain, grid: false, axis, extent: b });
                }
            }
        }
        if let Some(required) = self.block
            && required != [block.0, block.1, block.2]
        {
            return Err(ContractViolation::BlockShape { required, actual: [block.0, block.1, block.2] });
        }
        if self.u32_coordinates {
            for (axis, g, b) in axes {
                let positions = u64::from(g) * u64::from(b);
                if positions > 1 << 32 {
                    return Err(ContractViolation::CoordinatesExceedU32 { axis, grid: g, block: b });
                }
            }
        }
        let [min, max] = self.dynamic_shared;
        if dynamic_shared < min || dynamic_shared > max {
            return Err(ContractViolation::DynamicShared { min, max, actual: dynamic_shared });
        }
        Ok(())
    }
}

/// A launch axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl std::fmt::Display for Axis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        })
    }
}

/// How a launch breaks a [`LaunchContract`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContractViolation {
    /// The launch extends along an axis the kernel's domain does not have.
    OutsideDomain { domain: u8, grid: bool, axis: Axis, extent: u32 },
    /// The block is not the contract's exact shape.
    BlockShape { required: [u32; 3], actual: [u32; 3] },
    /// Some thread's coordinate on `axis` does not fit in `u32`.
    CoordinatesExceedU32 { axis: Axis, grid: u32, block: u32 },
    /// The dynamic shared memory is outside the contract's range.
    DynamicShared { min: u32, max: u32, actual: u32 },
}

impl std::fmt::Display for ContractViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            ContractViolation::OutsideDomain { domain, grid, axis, extent } => write!(
                f,
                "{}_dim.{axis} is {extent}, but the kernel's launch contract has domain = {domain} \
                 (a {domain}D launch: every later axis must be 1)",
                if grid { "grid" } else { "block" }
            ),
            ContractViolation::BlockShape { required, actual } => {
                write!(f, "block_dim is {actual:?}, but the kernel's launch contract requires block = {required:?}")
            }
            ContractViolation::CoordinatesExceedU32 { axis, grid, block } => write!(
                f,
                "grid_dim.{axis} * block_dim.{axis} = {grid} * {block} exceeds 2^32, but the kernel's \
                 launch contract has coordinates = u32"
            ),
            ContractViolation::DynamicShared { min, max, actual } if min == max => write!(
                f,
                "shared_mem_bytes is {actual}, but the kernel's launch contract requires dynamic_shared = {min}"
            ),
            ContractViolation::DynamicShared { min, max, actual } => write!(
                f,
                "shared_mem_bytes is {actual}, but the kernel's launch contract requires \
                 dynamic_shared_range = ({min}, {max})"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract(domain: u8) -> LaunchContract {
        LaunchContract {
            domain,
            u32_coordinates: true,
            block: Some([48, 1, 1]),
            dynamic_shared: [0, 128],
            dynamic_shared_alignment: 16,
            min_compute_capability: None,
        }
    }

    #[test]
    fn attr_args_round_trip() {
        let c = contract(2);
        assert_eq!(LaunchContract::from_attr_args(&c.to_attr_args()), Some(c));
        let none = LaunchContract { block: None, min_compute_capability: Some([9, 0]), ..c };
        assert_eq!(LaunchContract::from_attr_args(&none.to_attr_args()), Some(none));
        assert_eq!(LaunchContract::from_attr_args(&[1, 0]), None);
        assert_eq!(LaunchContract::from_attr_args(&[4, 0, 0, 0, 0, 0, 0, 1, 0, 0]), None);
        assert_eq!(LaunchContract::from_attr_args(&[1, 0, 0, 0, 0, 9, 8, 1, 0, 0]), None);
    }

    #[test]
    fn checks_domain_block_coordinates_and_shared_memory() {
        let c = contract(1);
        assert_eq!(c.check((7, 1, 1), (48, 1, 1), 0), Ok(()));
        let e = c.check((7, 2, 1), (48, 1, 1), 0).unwrap_err();
        assert!(matches!(e, ContractViolation::OutsideDomain { grid: true, axis: Axis::Y, .. }), "{e}");
        assert!(e.to_string().contains("grid_dim.y is 2"), "{e}");
        let e = c.check((7, 1, 1), (32, 1, 1), 0).unwrap_err();
        assert_eq!(e, ContractViolation::BlockShape { required: [48, 1, 1], actual: [32, 1, 1] });
        let wide = LaunchContract { block: None, ..c };
        assert!(wide.check(((1 << 31) - 1, 1, 1), (2, 1, 1), 0).is_ok());
        assert!(matches!(
            wide.check(((1 << 31) - 1, 1, 1), (4, 1, 1), 0),
            Err(ContractViolation::CoordinatesExceedU32 { axis: Axis::X, .. })
        ));
        assert_eq!(
            c.check((1, 1, 1), (48, 1, 1), 129),
            Err(ContractViolation::DynamicShared { min: 0, max: 128, actual: 129 })
        );
        let two = LaunchContract { block: Some([16, 16, 1]), ..contract(2) };
        assert!(two.check((6, 8, 1), (16, 16, 1), 0).is_ok());
        assert!(two.check((6, 8, 2), (16, 16, 1), 0).is_err());
    }
}
