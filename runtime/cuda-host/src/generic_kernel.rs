//! `GenericCudaKernel`: the PTX entry name of one instantiation of a generic kernel, as a trait.

/// One instantiation of a generic kernel (`scale::<f32>`), naming its PTX entry.
///
/// NVIDIA's `#[kernel]` implements it on a hidden marker type per generic kernel, and code
/// written for it asks `<kernels::__scale_CudaKernel<f32> as GenericCudaKernel>::ptx_name()`.
/// Our entry names are `oxide_contract::naming::entry_name(base, key, plain)` (contract §5);
/// this trait gives them the same shape, for code and generated items that implement it.
///
/// ```
/// use cuda_host::GenericCudaKernel;
/// use std::marker::PhantomData;
///
/// struct Scale<T>(PhantomData<T>);
/// impl<T: 'static> GenericCudaKernel for Scale<T> {
///     fn ptx_name() -> &'static str {
///         cuda_host::intern_entry_name(|| {
///             use cuda_core::oxide_contract::naming::{entry_name, type_key};
///             entry_name("scale", type_key::<T>(), false)
///         })
///     }
/// }
/// assert!(<Scale<f32> as GenericCudaKernel>::ptx_name().starts_with("scale_"));
/// assert_ne!(Scale::<f32>::ptx_name(), Scale::<f64>::ptx_name());
/// ```
pub trait GenericCudaKernel {
    /// The PTX entry name of this instantiation.
    fn ptx_name() -> &'static str;
}

/// A `'static` copy of an entry name, made once per distinct name (entry names are computed at
/// run time, `ptx_name` returns `&'static str`). Each distinct name is kept for the rest of the
/// program; there are as many as the program has kernel instantiations.
///
/// ```
/// let a = cuda_host::intern_entry_name(|| "scale_00ff".to_string());
/// let b = cuda_host::intern_entry_name(|| "scale_00ff".to_string());
/// assert!(std::ptr::eq(a, b));
/// ```
pub fn intern_entry_name(make: impl FnOnce() -> String) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let name = make();
    let mut names = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(existing) = names.get(name.as_str()) {
        return existing;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.insert(leaked);
    leaked
}
