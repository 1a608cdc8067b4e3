//! What a generated program has in scope: local variables (with borrow state, so the generator
//! never writes code the borrow checker rejects) and the items declared before the current function.
use super::ty::Scalar;

/// The shape of a local variable.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Scalar(Scalar),
    /// `[T; N]`
    Array(Scalar, usize),
    /// `(A, B, ..)` of scalars.
    Tuple(Vec<Scalar>),
    /// A generated `struct` (index into [`Items::structs`]).
    Struct(usize),
    /// A generated `enum` (index into [`Items::enums`]).
    Enum(usize),
    Option(Scalar),
    /// `&[T]`, never empty.
    Slice(Scalar),
    /// `&mut [T]`, never empty.
    SliceMut(Scalar),
    /// A `move` closure `Fn(A) -> R` with `Copy` captures.
    Closure(Scalar, Scalar),
    /// A `fn(A) -> R` pointer.
    FnPtr(Scalar, Scalar),
}

#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    pub kind: Kind,
    pub mutable: bool,
    /// Mutably borrowed by a live reference: neither read nor written by name.
    pub hidden: u32,
    /// Shared-borrowed (or captured) by something live: read, never written.
    pub frozen: u32,
}

/// A scalar a program can read (and, when `writable`, assign).
#[derive(Clone, Debug)]
pub enum Place {
    /// `v`
    Var(String),
    /// `v[i]` of an array of `len` elements, or of a slice when `len` is `None`.
    Index(String, Option<usize>),
    /// `v.f` or `t.0`
    Field(String),
}

/// A field of a generated struct.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldKind {
    Scalar(Scalar),
    Array(Scalar, usize),
}

#[derive(Clone, Debug)]
pub struct StructDef {
    pub name: String,
    pub fields: Vec<(String, FieldKind)>,
    /// `&self` methods that return a scalar: (name, parameter, result).
    pub getters: Vec<(String, Scalar, Scalar)>,
    /// `&mut self` methods that return nothing: (name, parameter).
    pub setters: Vec<(String, Scalar)>,
}

#[derive(Clone, Debug)]
pub enum Shape {
    Unit,
    Tuple(Vec<Scalar>),
    Named(Vec<(String, Scalar)>),
}

#[derive(Clone, Debug)]
pub struct EnumDef {
    pub name: String,
    pub variants: Vec<(String, Shape)>,
}

/// A parameter of a generated helper function.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    Value(Scalar),
    /// `&T`
    Ref(Scalar),
    /// `&mut T`: the call is a statement.
    MutRef(Scalar),
    /// `&[T]`
    Slice(Scalar),
    /// `&mut [T]`: the call is a statement.
    MutSlice(Scalar),
    /// `[T; N]` by value.
    Array(Scalar, usize),
    /// `&S` of a generated struct.
    StructRef(usize),
    /// `S` of a generated struct, by value.
    StructVal(usize),
}

/// What a generated helper returns.
#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Scalar(Scalar),
    /// `(A, B)`
    Pair(Scalar, Scalar),
    /// A generated struct, by value.
    Struct(usize),
}

impl Param {
    pub fn mutates(&self) -> bool {
        matches!(self, Param::MutRef(_) | Param::MutSlice(_))
    }
}

#[derive(Clone, Debug)]
pub struct FnSig {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Ret,
}

impl FnSig {
    /// Whether a call may appear inside an expression (it writes through no parameter).
    pub fn pure(&self) -> bool {
        !self.params.iter().any(Param::mutates)
    }
}

/// Generic items: `trait Mix` implemented for `mix_types`, generic functions over it.
#[derive(Clone, Debug, Default)]
pub struct Generics {
    pub mix_types: Vec<Scalar>,
    /// `fn gN<T: Mix + ..>(a: T, b: T, n: u32) -> T`
    pub generic_fns: Vec<String>,
    /// `fn apply<T: Copy, F: Fn(T) -> T>(f: F, x: T, n: u32) -> T`
    pub apply: bool,
    /// `fn fold_arr<T: Mix, const N: usize>(a: [T; N], k: u32) -> T`
    pub fold_arr: bool,
}

/// Everything declared so far that the current function may use.
#[derive(Clone, Debug, Default)]
pub struct Items {
    pub structs: Vec<StructDef>,
    pub enums: Vec<EnumDef>,
    pub fns: Vec<FnSig>,
    pub generics: Generics,
    /// `trait Mix` has `&dyn` users: the structs implementing `Dyn` (struct indices).
    pub dyn_trait: Vec<usize>,
    /// `fn recN(n: u32, acc: T) -> T`, recursing at most 15 deep: (name, T).
    pub recursive: Vec<(String, Scalar)>,
}

/// The stack of block scopes.
#[derive(Clone, Debug, Default)]
pub struct Scopes {
    frames: Vec<Vec<Var>>,
    next: usize,
}

impl Scopes {
    /// Empty, continuing the numbering at `next` (a non-capturing closure's own world).
    pub fn with_next(next: usize) -> Scopes {
        Scopes { frames: Vec::new(), next }
    }

    pub fn next_id(&self) -> usize {
        self.next
    }

    pub fn set_next(&mut self, next: usize) {
        self.next = next;
    }

    /// The visible variables of the innermost scope.
    pub fn innermost(&self) -> Vec<Var> {
        self.frames.last().map(|f| f.iter().filter(|v| v.hidden == 0).cloned().collect()).unwrap_or_default()
    }

    pub fn push(&mut self) {
        self.frames.push(Vec::new());
    }

    pub fn pop(&mut self) {
        self.frames.pop();
    }

    /// A fresh name with the given prefix; names are never reused within a function.
    pub fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    pub fn declare(&mut self, name: &str, kind: Kind, mutable: bool) {
        let var = Var { name: name.to_string(), kind, mutable, hidden: 0, frozen: 0 };
        self.frames.last_mut().expect("a scope is open").push(var);
    }

    /// Visible variables, innermost last. Names are unique, so there is no shadowing.
    pub fn visible(&self) -> impl Iterator<Item = &Var> {
        self.frames.iter().flatten().filter(|v| v.hidden == 0)
    }

    fn find_mut(&mut self, name: &str) -> Option<&mut Var> {
        self.frames.iter_mut().flatten().rev().find(|v| v.name == name)
    }

    /// Marks `name` mutably borrowed (`hide`) or shared-borrowed (`freeze`) until the matching release.
    pub fn hide(&mut self, name: &str) {
        if let Some(v) = self.find_mut(name) {
            v.hidden += 1;
        }
    }

    pub fn unhide(&mut self, name: &str) {
        if let Some(v) = self.find_mut(name) {
            v.hidden -= 1;
        }
    }

    pub fn freeze(&mut self, name: &str) {
        if let Some(v) = self.find_mut(name) {
            v.frozen += 1;
        }
    }

    pub fn unfreeze(&mut self, name: &str) {
        if let Some(v) = self.find_mut(name) {
            v.frozen -= 1;
        }
    }

    /// Freezes every visible variable (a `loop` body's counter, a closure's world); returns what
    /// to unfreeze.
    pub fn freeze_all(&mut self) -> Vec<String> {
        let names: Vec<String> = self.visible().map(|v| v.name.clone()).collect();
        for n in &names {
            self.freeze(n);
        }
        names
    }

    pub fn vars_of(&self, pred: impl Fn(&Kind) -> bool) -> Vec<Var> {
        self.visible().filter(|v| pred(&v.kind)).cloned().collect()
    }

    /// The scalar places of type `t`: variables, array and slice elements, tuple and struct fields.
    pub fn places(&self, t: Scalar, items: &Items, writable: bool) -> Vec<Place> {
        let mut out = Vec::new();
        for v in self.visible() {
            let can_write = v.mutable && v.frozen == 0;
            if writable && !matches!(v.kind, Kind::SliceMut(_)) && !can_write {
                continue;
            }
            match &v.kind {
                Kind::Scalar(s) if *s == t => out.push(Place::Var(v.name.clone())),
                Kind::Array(s, n) if *s == t => out.push(Place::Index(v.name.clone(), Some(*n))),
                Kind::Slice(s) if *s == t && !writable => out.push(Place::Index(v.name.clone(), None)),
                Kind::SliceMut(s) if *s == t && v.frozen == 0 => out.push(Place::Index(v.name.clone(), None)),
                Kind::Tuple(ts) => {
                    for (i, s) in ts.iter().enumerate() {
                        if *s == t {
                            out.push(Place::Field(format!("{}.{i}", v.name)));
                        }
                    }
                }
                Kind::Struct(si) => {
                    for (f, fk) in &items.structs[*si].fields {
                        match fk {
                            FieldKind::Scalar(s) if *s == t => out.push(Place::Field(format!("{}.{f}", v.name))),
                            FieldKind::Array(s, n) if *s == t => {
                                out.push(Place::Index(format!("{}.{f}", v.name), Some(*n)))
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }
}
