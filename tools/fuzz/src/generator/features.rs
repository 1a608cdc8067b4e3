//! The constructs the generator may use, each behind a name: `--enable`/`--disable` switch them,
//! so a construct that hits a known compiler bug can be left out of runs and put back to check a fix.
use std::collections::BTreeSet;

/// (name, on by default, what it generates)
pub const ALL: &[(&str, bool, &str)] = &[
    ("i128", true, "i128/u128 values, arithmetic and casts"),
    ("floats", true, "f32/f64 arithmetic, comparisons, mul_add, sqrt, rounding, min/max, casts"),
    ("float-to-int", true, "saturating `as` casts from f32/f64 to integers"),
    ("plain-arith", true, "plain `+ - *` (on operands narrowed so they cannot overflow)"),
    ("div", true, "`/`, `%`, div_euclid/rem_euclid with guarded divisors"),
    ("loops", true, "for/while/loop with break, continue, labels and break values"),
    ("arrays", true, "local arrays, indexing, swap/reverse/rotate/fill/sort_unstable"),
    ("slices", true, "subslices, `&mut` slices, slice methods"),
    ("iterators", true, "iter/iter_mut/enumerate/zip/rev/step_by/fold/position/any/all"),
    ("structs", true, "structs with methods, tuples"),
    ("enums", true, "enums with payloads, match with guards, Option"),
    ("calls", true, "generated helper functions (by value, &, &mut, slices, arrays)"),
    ("aggregates", true, "structs and tuples passed to and returned from helpers by value"),
    ("generics", true, "a trait implemented for several types, generic fns, const generics"),
    ("closures", true, "move closures, FnMut closures, closures passed to generic fns"),
    ("refs", true, "blocks holding & and &mut references"),
    ("raw-ptr", true, "raw pointers: add/wrapping_add, read/write, byte views of arrays"),
    ("dyn", true, "&dyn Trait calls"),
    ("fn-ptr", true, "fn pointers from non-capturing closures and helpers"),
    ("recursion", true, "self-recursive functions (depth at most 15)"),
];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Features {
    on: BTreeSet<&'static str>,
}

impl Default for Features {
    fn default() -> Features {
        Features { on: ALL.iter().filter(|f| f.1).map(|f| f.0).collect() }
    }
}

impl Features {
    pub fn on(&self, name: &str) -> bool {
        debug_assert!(ALL.iter().any(|f| f.0 == name), "unknown feature {name}");
        self.on.contains(name)
    }

    /// The defaults with `enable` turned on and `disable` turned off (comma-separated names).
    pub fn with(enable: &[String], disable: &[String]) -> Result<Features, String> {
        let mut f = Features::default();
        for (list, on) in [(enable, true), (disable, false)] {
            for name in list.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()) {
                let Some(&(known, _, _)) = ALL.iter().find(|f| f.0 == name) else {
                    let names: Vec<&str> = ALL.iter().map(|f| f.0).collect();
                    return Err(format!("unknown generator feature `{name}` (known: {})", names.join(", ")));
                };
                if on {
                    f.on.insert(known);
                } else {
                    f.on.remove(known);
                }
            }
        }
        Ok(f)
    }

    /// ` --disable a,b --enable c` relative to the defaults, for headers and replay commands.
    pub fn describe_changes(&self) -> String {
        let off: Vec<&str> = ALL.iter().filter(|f| f.1 && !self.on.contains(f.0)).map(|f| f.0).collect();
        let on: Vec<&str> = ALL.iter().filter(|f| !f.1 && self.on.contains(f.0)).map(|f| f.0).collect();
        let mut s = String::new();
        if !off.is_empty() {
            s += &format!(" --disable {}", off.join(","));
        }
        if !on.is_empty() {
            s += &format!(" --enable {}", on.join(","));
        }
        s
    }
}
