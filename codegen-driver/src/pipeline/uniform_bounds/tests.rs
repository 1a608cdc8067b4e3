use crate::markers::POISON_OFFSET;
use crate::pipeline::ir::Module;

const POISON_F32: u64 = POISON_OFFSET / 4;

/// The module versioned, as text.
fn version(module: &str) -> String {
    version_with_conditions(module).0
}

/// The module versioned, as text, and the host's conditions.
fn version_with_conditions(module: &str) -> (String, Vec<super::NamedCondition>) {
    let mut m = Module::parse(module);
    let conditions = super::version(&mut m).unwrap_or_default();
    (m.to_string(), conditions)
}

/// A kernel with parameters `%x` (f32 data), `%len`, `%n`, `%w`, `%h` and `body` after the
/// label `start`.
fn kernel(body: &str) -> String {
    format!(
        "define ptx_kernel void @k(ptr %x, i64 %len, i64 %n, i64 %w, i64 %h) {{\nstart:\n{body}}}\n\
         declare void @__oxide_bounds_fail_if(i1)\n"
    )
}

/// The checked load `x[idx]` with its marker and poison select (`lower/bounds.rs`).
fn checked_load(n: u32, idx: &str) -> String {
    format!(
        "  %oob{n} = icmp uge i64 {idx}, %len\n  tail call void @__oxide_bounds_fail_if(i1 %oob{n})\n  \
         %s{n} = select i1 %oob{n}, i64 {POISON_F32}, i64 {idx}\n  %a{n} = getelementptr float, ptr %x, i64 %s{n}\n  \
         %v{n} = load float, ptr %a{n}, align 4\n"
    )
}

/// `%i` = this thread's 1D index; `if %i < %n { x[%i] }`.
fn guarded(index_def: &str) -> String {
    kernel(&format!(
        "{index_def}  %in = icmp ult i64 %i, %n\n  br i1 %in, label %then, label %exit\nthen:\n{}  br label %exit\n\
         exit:\n  ret void\n",
        checked_load(0, "%i")
    ))
}

const THREAD_INDEX: &str = "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %i = zext i32 %t to i64\n";

#[test]
fn a_guard_on_a_uniform_length_versions_the_kernel() {
    let out = version(&guarded("  %i = load i64, ptr %x, align 8\n"));
    // U: n - 1 < len, spelled n <= len.
    assert!(out.contains("%oxide.uv.2 = icmp ule i64 %n, %len"), "{out}");
    assert!(out.contains("%oxide.uv.3 = and i1 true, %oxide.uv.2\n  br i1 %oxide.uv.3, label %oxide.fast.start, label %start\nstart:\n"), "{out}");
    // The fast copy: the check is its in-bounds value, the marker records nothing.
    assert!(out.contains("  %oxide.fast.oob0 = and i1 true, false\n"), "{out}");
    assert!(out.contains("@__oxide_bounds_fail_if(i1 false)"), "{out}");
    assert!(out.contains(&format!("%oxide.fast.s0 = select i1 %oxide.fast.oob0, i64 {POISON_F32}, i64 %oxide.fast.i")));
    assert!(out.contains("br i1 %oxide.fast.in, label %oxide.fast.then, label %oxide.fast.exit"), "{out}");
    // The original copy is unchanged.
    assert!(out.contains("tail call void @__oxide_bounds_fail_if(i1 %oob0)"), "{out}");
}

#[test]
fn the_host_gets_the_entry_test() {
    // `tid.x <= ntid.x - 1 < len`: the host's condition reads `ntid.x` and `%len` (PTX
    // parameter 1) and agrees with the kernel's for each launch.
    let body = format!("{THREAD_INDEX}{}  ret void\n", checked_load(0, "%i"));
    let (_, conditions) = version_with_conditions(&kernel(&body));
    let [(name, condition)] = &conditions[..] else { panic!("one condition: {conditions:?}") };
    assert_eq!(name, "k");
    let holds = |block: u32, len: u64| {
        let param = |i: u32, _: u32| (i == 1).then_some(len);
        let launch = oxide_contract::fast_launch::LaunchValues { block: (block, 1, 1), grid: (7, 1, 1), param: &param };
        condition.holds(&launch)
    };
    assert_eq!(holds(256, 256), Some(true));
    assert_eq!(holds(256, 255), Some(false));
    assert_eq!(holds(1, 1), Some(true));
}

#[test]
fn thread_indices_are_bounded_by_the_block_size() {
    // No guard: tid.x <= ntid.x - 1 < len.
    let body = format!("{THREAD_INDEX}{}  ret void\n", checked_load(0, "%i"));
    let out = version(&kernel(&body));
    // Without launch bounds a block has at most 1024 threads.
    assert!(out.contains("call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()"), "{out}");
    assert!(out.contains("declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()"), "{out}");
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    // `launch_bounds(256)` (`"nvvm.maxntid"="256,1,1"`): at most 256.
    let bounded = kernel(&body).replace(") {\nstart:", ") #3 {\nstart:")
        + "attributes #3 = { convergent \"nvvm.maxntid\"=\"256,1,1\" }\n";
    let out = version(&bounded);
    assert!(out.contains("call range(i32 1, 257) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()"), "{out}");
}

#[test]
fn launch_bounds_decide_a_condition_at_compile_time() {
    // `parts[t / 32]` under `t % 32 == 0` with 8 parts and launch_bounds(256): the bound
    // `(ntid.x - 1) & -32` is at most 224 < 225, so no runtime condition is needed.
    let body = "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %t64 = zext i32 %t to i64\n  \
                %low = and i64 %t64, 31\n  %lead = icmp eq i64 %low, 0\n  br i1 %lead, label %w, label %exit\n\
                w:\n  %i = lshr i64 %t64, 5\n"
        .to_string()
        + &checked_load(0, "%i").replace("%len", "8")
        + "  br label %exit\nexit:\n  ret void\n";
    let bounded = kernel(&body).replace(") {\nstart:", ") #3 {\nstart:")
        + "attributes #3 = { convergent \"nvvm.maxntid\"=\"256,1,1\" }\n";
    let out = version(&bounded);
    // The answer, always the condition's last step, is `true`.
    assert!(out.contains(" = and i1 true, true\n"), "{out}");
    assert!(!out[..out.find("\nstart:").unwrap()].contains(" icmp "), "{out}");
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    // Without launch bounds (1024 threads) it is a runtime condition, `(ntid.x - 1) / 32 < 8`.
    assert!(version(&kernel(&body)).contains(", 32\n"), "{}", version(&kernel(&body)));
    let out = version(&kernel(&body));
    assert!(out.contains("icmp ult i64 %oxide.uv."), "{out}");
}

#[test]
fn an_assumed_constant_bound_is_combined_with_the_operands_bound() {
    // `tid.x < 256` assumed (launch bounds) and a shared index `tid.x * 33 < 1056`: 255 alone
    // proves nothing, `ntid.x - 1` (a runtime condition) does; both are kept.
    let body = "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %small = icmp ult i32 %t, 256\n  \
                call void @llvm.assume(i1 %small)\n  br label %next\nnext:\n  %t64 = zext i32 %t to i64\n  \
                %i = mul i64 %t64, 33\n"
        .to_string()
        + &checked_load(0, "%i").replace("%len", "1056")
        + "  ret void\n";
    let out = version(&kernel(&body));
    assert!(
        out.contains("@llvm.umin.i64(i64 255, i64 %oxide.uv.") || out.contains("@llvm.umin.i64(i64 %oxide.uv."),
        "{out}"
    );
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
}

#[test]
fn two_guarded_coordinates_bound_a_row_major_index() {
    // transpose: `if x < w && y < h { x[y * w + x] }`, x and y loaded (not uniform).
    let body = format!(
        "  %x0 = load i64, ptr %x, align 8\n  %y0 = load i64, ptr %x, align 8\n  %cx = icmp ult i64 %x0, %w\n  \
         %cy = icmp ult i64 %y0, %h\n  %both = select i1 %cx, i1 %cy, i1 false\n  br i1 %both, label %then, label %exit\n\
         then:\n  %row = mul i64 %y0, %w\n  %i = add i64 %row, %x0\n{}  br label %exit\nexit:\n  ret void\n",
        checked_load(0, "%i")
    );
    let out = version(&kernel(&body));
    assert!(out.contains("@llvm.umul.with.overflow.i64(i64 %oxide.uv.1, i64 %w)"), "{out}");
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
}

#[test]
fn a_constant_length_check_of_shared_memory_is_bounded_by_ntid() {
    // `tile[tid.x * 33 + tid.y]` against 1056 elements, spelled as opt does (`ugt … 1055`).
    let body = "  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()\n  \
                %a = zext i32 %tx to i64\n  %b = zext i32 %ty to i64\n  %m = mul nuw nsw i64 %a, 33\n  \
                %i = add nuw nsw i64 %m, %b\n  %bad = icmp samesign ugt i64 %i, 1055\n  \
                tail call void @__oxide_bounds_fail_if(i1 %bad)\n  ret void\n";
    let out = version(&kernel(body));
    assert!(out.contains("ntid.y()"), "{out}");
    assert!(out.contains("icmp ule i64 %oxide.uv."), "{out}");
    assert!(out.contains(", 1055\n"), "{out}");
    assert!(out.contains("%oxide.fast.bad = and i1 true, false"), "{out}");
}

#[test]
fn a_multiple_of_a_power_of_two_rounds_its_bound_down() {
    // `if t % 32 == 0 { parts[t / 32] }` with 8 parts, spelled as opt does: `t > 224` fails.
    let body = "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %z = zext i32 %t to i64\n  \
                %low = and i64 %z, 31\n  %lead = icmp eq i64 %low, 0\n  br i1 %lead, label %then, label %exit\n\
                then:\n  %bad = icmp samesign ugt i32 %t, 224\n  tail call void @__oxide_bounds_fail_if(i1 %bad)\n  \
                br label %exit\nexit:\n  ret void\n";
    let out = version(&kernel(body));
    assert!(out.contains("= and i64 %oxide.uv.3, -32\n"), "{out}");
    assert!(out.contains("%oxide.fast.bad = and i1 true, false"), "{out}");
}

#[test]
fn checks_at_constant_offsets_share_one_condition() {
    // `tile[i]` and `tile[i + 264]` of a 1056-element tile: one condition `i <= 791`.
    let body = "  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %i = zext i32 %tx to i64\n  \
                %j = add nuw nsw i64 %i, 264\n  %bad0 = icmp ugt i64 %i, 1055\n  \
                tail call void @__oxide_bounds_fail_if(i1 %bad0)\n  %bad1 = icmp ugt i64 %j, 1055\n  \
                tail call void @__oxide_bounds_fail_if(i1 %bad1)\n  ret void\n";
    let out = version(&kernel(body));
    let entry = &out[..out.find("\nstart:").unwrap()];
    assert_eq!(entry.matches(" = icmp ").count(), 1, "{out}");
    assert!(entry.contains("icmp ule i64 %oxide.uv.3, 791"), "{out}");
    assert!(
        out.contains("%oxide.fast.bad0 = and i1 true, false") && out.contains("%oxide.fast.bad1 = and i1 true, false")
    );
}

#[test]
fn checks_at_constant_offsets_against_a_length_share_the_largest() {
    // `x[t]`, `x[t + 256]` with `t < ntid.x`: one condition `ntid.x - 1 + 256 < len`.
    let body = format!(
        "{THREAD_INDEX}{}  %j = add nuw i64 %i, 256\n{}  ret void\n",
        checked_load(0, "%i"),
        checked_load(1, "%j")
    );
    let out = version(&kernel(&body));
    let entry = &out[..out.find("\nstart:").unwrap()];
    assert_eq!(entry.matches(" = icmp ").count(), 1, "{out}");
    assert!(entry.contains(", 256\n"), "{out}");
    assert!(entry.contains("icmp ult i64 %oxide.uv."), "{out}");
}

#[test]
fn a_proven_index_is_computed_in_32_bits_in_the_fast_copy() {
    // `x[y * w + x]` with zero-extended u32 coordinates under `y < h`, `x < w`: in the fast
    // copy, `len <= 2^32` asked at entry, the index is `zext (add i32 (mul i32 y, w), x)`.
    let body =
        "  %y = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n  %c = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  \
                %y64 = zext i32 %y to i64\n  %c64 = zext i32 %c to i64\n  %w32 = trunc i64 %w to i32\n  \
                %w64 = zext i32 %w32 to i64\n  %row = mul nuw i64 %y64, %w64\n  %i = add nuw i64 %row, %c64\n"
            .to_string()
            + &checked_load(0, "%i")
            + "  ret void\n";
    let out = version(&kernel(&body));
    let entry = &out[..out.find("\nstart:").unwrap()];
    assert!(entry.contains("icmp ule i64 %len, 4294967296"), "{out}");
    assert!(out.contains("  %oxide.fast.n32.1 = mul i32 %oxide.fast.y, %oxide.fast.w32\n"), "{out}");
    assert!(out.contains("  %oxide.fast.n32.2 = add i32 %oxide.fast.n32.1, %oxide.fast.c\n"), "{out}");
    assert!(out.contains("  %oxide.fast.n64.1 = zext i32 %oxide.fast.n32.2 to i64\n"), "{out}");
    assert!(out.contains("%oxide.fast.s0 = select i1 %oxide.fast.oob0, i64 "), "{out}");
    assert!(out.contains(", i64 %oxide.fast.n64.1\n"), "{out}");
    // The checked copy keeps its 64-bit index.
    assert!(out.contains("  %s0 = select i1 %oob0, i64 "), "{out}");
    assert!(!out[..out.find("oxide.fast.start:").unwrap()].contains("n32"), "{out}");
}

/// `x[tid.x]` in a kernel that reads `%ctaid.z` and `%nctaid.y` (`thread::index_1d`'s
/// linearisation: a flat kernel).
fn flat_kernel_body() -> String {
    format!(
        "  %bz = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()\n  %gy = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()\n\
         {THREAD_INDEX}{}  ret void\n",
        checked_load(0, "%i")
    )
}

#[test]
fn a_kernel_that_linearises_the_grid_assumes_a_flat_launch_in_its_fast_copy() {
    let body = flat_kernel_body();
    let out = version(&kernel(&body));
    for reg in ["ntid.y", "ntid.z", "nctaid.y", "nctaid.z"] {
        assert!(out.contains(&format!("@llvm.nvvm.read.ptx.sreg.{reg}()")), "{out}");
    }
    assert!(out.contains("= icmp eq i32 %oxide.uv."), "{out}");
    assert!(out.contains("  %oxide.fast.bz = add i32 0, 0\n  %oxide.fast.gy = add i32 1, 0\n"), "{out}");
    // The checked copy reads them.
    assert!(out.contains("  %bz = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()"), "{out}");
}

#[test]
fn a_flat_kernel_asks_for_fewer_than_2_pow_32_threads() {
    // The fast copy computes `ctaid.x * ntid.x + tid.x` in 32 bits (`flat_index_u32.rs`):
    // `U` asks that `nctaid.x * ntid.x` not wrap in 32 bits, under the name that pass looks for.
    // Only for a kernel with a loop (here a counted one after the access).
    let straight = flat_kernel_body();
    let out = version(&kernel(&straight));
    assert!(out.contains("%oxide.fast.") && !out.contains(super::GRID_THREADS_U32), "{out}");
    let flat = straight.replace(
        "  ret void\n",
        "  br label %loop\nloop:\n  %k = phi i64 [ 0, %start ], [ %k1, %loop ]\n  %k1 = add i64 %k, 1\n  \
         %more = icmp ult i64 %k1, 4\n  br i1 %more, label %loop, label %done\ndone:\n  ret void\n",
    );
    let out = version(&kernel(&flat));
    let entry = out.split("\nstart:").next().unwrap();
    let line = |prefix: &str| entry.lines().find(|l| l.trim_start().starts_with(prefix)).map(str::trim);
    // The name of the entry's value `= rhs`.
    let defined_as = |rhs: &str| {
        let tail = format!(" = {rhs}");
        entry.lines().map(str::trim).find(|l| l.ends_with(&tail)).and_then(|l| l.split(" = ").next())
    };
    // The entry's read of `reg` (maybe with a `range`).
    let read = |reg: &str| {
        let tail = format!(" i32 @llvm.nvvm.read.ptx.sreg.{reg}()");
        entry.lines().map(str::trim).find(|l| l.starts_with("%oxide.uv.") && l.ends_with(&tail))?.split(" = ").next()
    };
    let blocks = read("nctaid.x").expect(&out);
    let marker = format!("%{}", super::GRID_THREADS_U32);
    // At most 1024 threads per block: nctaid.x <= 2^32 / 1024.
    let test = format!("{marker} = icmp ule i32 {blocks}, 4194304");
    assert_eq!(line(&marker), Some(test.as_str()), "{out}");
    let _ = defined_as;
    // One of the conditions the branch to the fast copy ands.
    let anded = entry.lines().any(|l| l.contains(" = and i1 ") && l.ends_with(&format!(", {marker}")));
    assert!(anded, "{out}");
    // A kernel that does not linearise the grid gets no such condition.
    let out = version(&kernel(&format!("{THREAD_INDEX}{}  ret void\n", checked_load(0, "%i"))));
    assert!(out.contains("%oxide.fast.") && !out.contains(super::GRID_THREADS_U32), "{out}");
}

#[test]
fn a_flat_kernel_bounds_its_index_as_in_a_flat_launch() {
    // `thread::index_1d`: ((ctaid.z * nctaid.y + ctaid.y) * nctaid.x + ctaid.x) * threads +
    // thread, unchecked `x[i]`. In a flat launch that is `ctaid.x * ntid.x + tid.x`: the
    // entry test needs no saturating product of the six extents.
    let sreg = |v: &str, r: &str| format!("  %{v} = call i32 @llvm.nvvm.read.ptx.sreg.{r}()\n");
    let mut body = String::new();
    for (v, r) in [("bz", "ctaid.z"), ("gy", "nctaid.y"), ("by", "ctaid.y"), ("gx", "nctaid.x"), ("bx", "ctaid.x")] {
        body += &sreg(v, r);
    }
    for (v, r) in [("nx", "ntid.x"), ("ny", "ntid.y"), ("tx", "tid.x"), ("ty", "tid.y")] {
        body += &sreg(v, r);
    }
    body += "  %b0 = mul i32 %bz, %gy\n  %b1 = add i32 %b0, %by\n  %b2 = zext i32 %b1 to i64\n  \
             %gx64 = zext i32 %gx to i64\n  %b3 = mul i64 %b2, %gx64\n  %bx64 = zext i32 %bx to i64\n  \
             %b4 = add i64 %b3, %bx64\n  %n0 = mul i32 %nx, %ny\n  %n64 = zext i32 %n0 to i64\n  \
             %b5 = mul i64 %b4, %n64\n  %t0 = mul i32 %ty, %nx\n  %t1 = add i32 %t0, %tx\n  \
             %t64 = zext i32 %t1 to i64\n  %i = add i64 %b5, %t64\n";
    body += &checked_load(0, "%i");
    body += "  ret void\n";
    let out = version(&kernel(&body));
    let entry = out.split("br i1").next().unwrap();
    assert!(!entry.contains("umul.with.overflow"), "{out}");
    assert!(!entry.contains("uadd.sat"), "{out}");
    // The bound is (nctaid.x - 1) * ntid.x + ntid.x - 1 < len.
    assert!(entry.contains("call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()"), "{out}");
    assert!(entry.contains("icmp ult i64 %oxide.uv.") && entry.contains(", %len"), "{out}");
    assert!(out.contains("  %oxide.fast.oob0 = and i1 true, false\n"), "{out}");
}

#[test]
fn the_first_blocks_index_reads_happen_before_the_test() {
    // `tid.x` (first block) is read once in the new entry, both copies use that value; the
    // read in a later block stays where it is.
    let body = format!(
        "  %t = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !7\n  \
         %i = zext i32 %t to i64\n{}  br label %next\nnext:\n  \
         %u = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()\n  ret void\n",
        checked_load(0, "%i")
    );
    let out = version(&kernel(&body));
    let entry = out.split("br i1").next().unwrap();
    assert!(
        entry.contains("  %oxide.uv.tid_x = call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"),
        "{out}"
    );
    assert!(out.contains("  %t = add i32 %oxide.uv.tid_x, 0\n"), "{out}");
    assert!(out.contains("  %oxide.fast.t = add i32 %oxide.uv.tid_x, 0\n"), "{out}");
    assert!(out.contains("  %oxide.fast.u = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()"), "{out}");
    assert!(!entry.contains("tid.y"), "{out}");
}

#[test]
fn a_read_past_a_guarded_length_stays_checked() {
    // `if i < n { x[i]; x[i + 1] }`: only `x[i]` gets a condition (`n <= len`).
    let body = format!(
        "  %i = load i64, ptr %x, align 8\n  %in = icmp ult i64 %i, %n\n  br i1 %in, label %then, label %exit\n\
         then:\n{}  %j = add nuw i64 %i, 1\n{}  br label %exit\nexit:\n  ret void\n",
        checked_load(0, "%i"),
        checked_load(1, "%j")
    );
    // `n` the length of another slice (`out.get_mut(i)`).
    let input = kernel(&body).replace("i64 %len, i64 %n,", "i64 %len, ptr %out, i64 %n,");
    let out = version(&input);
    assert!(out.contains("icmp ule i64 %n, %len"), "{out}");
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    assert!(out.contains("%oxide.fast.oob1 = icmp uge i64 %oxide.fast.j, %len"), "{out}");
    // `n` a plain parameter: both checks get a condition.
    assert!(version(&kernel(&body)).contains("%oxide.fast.oob1 = and i1 true, false"));
}

/// The bench's stencil5 as opt leaves it: `x < w` (`to_linear`), `c = y * w + x < n` with
/// `n` the length of `out` (`out.get_mut(c)`), interior `x, y != 0`, `x, y != w - 1`; then
/// `x[c]`, `x[c - w]`, `x[c + w]`, `x[c - 1]`, `x[c + 1]`. `flags` go on the row index's
/// `mul` and `add` (`x`, `y` and `w` are 32-bit values zero-extended: no wrap either way).
fn stencil(flags: &str) -> String {
    let body = format!(
        "  %x32 = load i32, ptr %x, align 4\n  %y32 = load i32, ptr %x, align 4\n  %w32 = trunc i64 %w to i32\n  \
         %x0 = zext i32 %x32 to i64\n  %y0 = zext i32 %y32 to i64\n  %ww = zext i32 %w32 to i64\n  \
         %inx = icmp ult i64 %x0, %ww\n  br i1 %inx, label %row, label %exit\nrow:\n  \
         %r = mul {flags}i64 %ww, %y0\n  %c = add {flags}i64 %r, %x0\n  %inc = icmp ult i64 %c, %n\n  \
         br i1 %inc, label %b0, label %exit\nb0:\n  %x00 = icmp eq i64 %x0, 0\n  %y00 = icmp eq i32 %y32, 0\n  \
         %e0 = or i1 %y00, %x00\n  br i1 %e0, label %exit, label %b1\nb1:\n  %last = add nsw i64 %ww, -1\n  \
         %xl = icmp eq i64 %x0, %last\n  %yl = icmp eq i64 %last, %y0\n  %e1 = or i1 %xl, %yl\n  \
         br i1 %e1, label %exit, label %then\nthen:\n{}  %north = sub nsw i64 %c, %ww\n{}  \
         %south = add nuw nsw i64 %c, %ww\n{}  %west = add nsw i64 %c, -1\n{}  %east = add nuw nsw i64 %c, 1\n{}  \
         br label %exit\nexit:\n  ret void\n",
        checked_load(0, "%c"),
        checked_load(1, "%north"),
        checked_load(2, "%south"),
        checked_load(3, "%west"),
        checked_load(4, "%east"),
    );
    // `n` the length of another slice, `out`.
    kernel(&body).replace("i64 %len, i64 %n,", "i64 %len, ptr %out, i64 %n,")
}

#[test]
fn a_stencil_loses_all_its_checks() {
    for flags in ["nuw nsw ", ""] {
        let out = version(&stencil(flags));
        for k in 0..5 {
            assert!(out.contains(&format!("%oxide.fast.oob{k} = and i1 true, false")), "{k} {flags}: {out}");
        }
        let entry = &out[..out.find("\nstart:").unwrap()];
        // y <= w - 2 (`y != w - 1` and `c < n`) where U has `w * w >= n`; x <= w - 2.
        assert!(entry.contains(" = mul i64 %oxide.uv.2, %oxide.uv.2\n"), "{out}");
        assert!(entry.contains(" = add i64 %oxide.uv.2, -2\n"), "{out}");
        assert!(entry.contains(" = icmp uge i64 %oxide.uv.8, %n\n"), "{out}");
        // All plain arithmetic: no division, no overflow tests.
        for op in ["udiv", "with.overflow", "uadd.sat", "icmp eq"] {
            assert!(!entry.contains(op), "{op}: {out}");
        }
        // `c` and `c - w`, `c - 1`: `n - 1 < len`; `c + w`, `c + 1` from `y * w + x`.
        assert!(entry.contains("icmp ule i64 %n, %len"), "{out}");
        // (`c + 1 < len` follows from `c + w < len` where `w >= 1`, as `x < w` says.)
        assert_eq!(entry.matches(", %len\n").count(), 2, "{out}");
    }
}

#[test]
fn an_offset_of_one_is_implied_by_a_positive_offset() {
    // `if i < w { x[i + 1]; x[i + n] }` (`w`, `n` u32s): `w - 1 + 1 < len` follows from
    // `w - 1 + n < len` only where `n >= 1`, which a guard `k < n` says (a loaded `k`).
    let body = |guard: &str| {
        format!(
            "  %i = load i64, ptr %x, align 8\n  %k = load i64, ptr %x, align 8\n  %w32 = trunc i64 %w to i32\n  \
             %wz = zext i32 %w32 to i64\n  %in = icmp ult i64 %i, %wz\n  %n32 = trunc i64 %n to i32\n  %nz = zext i32 %n32 to i64\n  %kn = icmp ult i64 %k, {guard}\n  \
             %both = select i1 %in, i1 %kn, i1 false\n  br i1 %both, label %then, label %exit\nthen:\n  \
             %a = add nuw i64 %i, 1\n{}  %b = add nuw i64 %i, %nz\n{}  br label %exit\nexit:\n  ret void\n",
            checked_load(0, "%a"),
            checked_load(1, "%b")
        )
    };
    let conditions = |out: &str| out[..out.find("\nstart:").unwrap()].matches(", %len\n").count();
    let out = version(&kernel(&body("%nz")));
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    assert_eq!(conditions(&out), 1, "{out}");
    // `k < h` says nothing of `n`: both conditions.
    let out = version(&kernel(&body("%h")));
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    assert_eq!(conditions(&out), 2, "{out}");
}

#[test]
fn several_ne_guards_on_a_coordinate_each_select_their_bound() {
    // The stencil with one more interior test `y != h`: no one `k` is asked of U; each
    // `k - 1` is chosen where `(k + 1) * w >= n`, else `y`'s largest value (u32::MAX).
    let input = stencil("").replace(
        "%e1 = or i1 %xl, %yl\n",
        "%yh = icmp eq i64 %y0, %h\n  %e2 = or i1 %xl, %yh\n  %e1 = or i1 %e2, %yl\n",
    );
    let out = version(&input);
    let entry = &out[..out.find("\nstart:").unwrap()];
    assert_eq!(entry.matches(", i64 4294967295\n").count(), 2, "{out}");
    for k in 0..5 {
        assert!(out.contains(&format!("%oxide.fast.oob{k} = and i1 true, false")), "{k}: {out}");
    }
}

#[test]
fn a_ne_guard_lowers_a_bound_that_equals_it() {
    // `if i < n && i != n - 1 { x[i + 1] }`: i <= n - 2, so n - 2 + 1 < len.
    let body = format!(
        "  %i = load i64, ptr %x, align 8\n  %in = icmp ult i64 %i, %n\n  %m = add i64 %n, -1\n  \
         %last = icmp eq i64 %i, %m\n  br i1 %in, label %test, label %exit\ntest:\n  \
         br i1 %last, label %exit, label %then\nthen:\n  %j = add nuw i64 %i, 1\n{}  br label %exit\n\
         exit:\n  ret void\n",
        checked_load(0, "%j")
    );
    let out = version(&kernel(&body));
    let entry = &out[..out.find("\nstart:").unwrap()];
    assert!(entry.contains("%oxide.uv.1 = add i64 %n, -1\n"), "{out}");
    assert!(entry.contains("%oxide.uv.2 = add i64 %oxide.uv.1, -1\n  %oxide.uv.3 = add i64 %oxide.uv.2, 1\n"), "{out}");
    assert!(entry.contains("icmp ult i64 %oxide.uv.3, %len") && !entry.contains("select"), "{out}");
    // `i != w` with `w` another uniform value: `i <= (n - 1 == w ? n - 2 : n - 1)`.
    let out = version(&kernel(&body.replace("%last = icmp eq i64 %i, %m", "%last = icmp eq i64 %w, %i")));
    assert!(out.contains("= icmp eq i64 %oxide.uv.1, %w\n"), "{out}");
    assert!(out.contains("= select i1 %oxide.uv."), "{out}");
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
}

#[test]
fn a_difference_that_cannot_wrap_is_bounded_by_its_first_operand() {
    // `if t != 0 { x[t - 1] }` (opt: `add nsw %t, -1`): t >= 1, so t - 1 <= ntid.x - 1.
    let body = format!(
        "{THREAD_INDEX}  %z = icmp eq i64 %i, 0\n  br i1 %z, label %exit, label %then\nthen:\n  \
         %j = add nsw i64 %i, -1\n{}  br label %exit\nexit:\n  ret void\n",
        checked_load(0, "%j")
    );
    let out = version(&kernel(&body));
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    // `if n <= i { x[i - n] }` (a `sub` of a uniform value): U asks `n >= n`.
    let body = format!(
        "  %i = load i64, ptr %x, align 8\n  %in = icmp ult i64 %i, %w\n  %ge = icmp uge i64 %i, %n\n  \
         %both = select i1 %in, i1 %ge, i1 false\n  br i1 %both, label %then, label %exit\nthen:\n  \
         %j = sub i64 %i, %n\n{}  br label %exit\nexit:\n  ret void\n",
        checked_load(0, "%j")
    );
    let out = version(&kernel(&body));
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    let entry = &out[..out.find("\nstart:").unwrap()];
    assert!(entry.contains("icmp ule i64 %w, %len") && !entry.contains("icmp uge"), "{out}");
    // Not below 2: `x[t - 2]` stays checked.
    unchanged_by_version(&kernel(&format!(
        "{THREAD_INDEX}  %z = icmp eq i64 %i, 0\n  br i1 %z, label %exit, label %then\nthen:\n  \
         %j = add nsw i64 %i, -2\n{}  br label %exit\nexit:\n  ret void\n",
        checked_load(0, "%j")
    )));
}

fn unchanged_by_version(input: &str) {
    assert_eq!(version(input), input);
}

#[test]
fn refusals_leave_the_kernel_as_it_was() {
    let unchanged = |input: String| assert_eq!(version(&input), input);
    // An index loaded from memory, no guard: no bound.
    unchanged(kernel(&format!("  %i = load i64, ptr %x, align 8\n{}  ret void\n", checked_load(0, "%i"))));
    // Arithmetic that may wrap below zero: `sub` without `nuw`, `sext`.
    unchanged(kernel(&format!("{THREAD_INDEX}  %j = sub i64 %i, 1\n{}  ret void\n", checked_load(0, "%j"))));
    unchanged(kernel(&format!(
        "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %i = sext i32 %t to i64\n{}  ret void\n",
        checked_load(0, "%i")
    )));
    // A guard with a bound that is not uniform (loaded).
    let loaded_bound = guarded("  %i = load i64, ptr %x, align 8\n")
        .replace("  %in = icmp ult i64 %i, %n\n", "  %m = load i64, ptr %x, align 8\n  %in = icmp ult i64 %i, %m\n");
    unchanged(loaded_bound);
    // A length that is not uniform.
    unchanged(
        kernel(&format!("{THREAD_INDEX}  %l = load i64, ptr %x, align 8\n{}  ret void\n", checked_load(0, "%i")))
            .replace("icmp uge i64 %i, %len", "icmp uge i64 %i, %l"),
    );
    // A guard that does not dominate the check: `then` is also reached without it.
    let joined = kernel(&format!(
        "  %i = load i64, ptr %x, align 8\n  %in = icmp ult i64 %i, %n\n  %other = icmp eq i64 %n, 7\n  \
         br i1 %other, label %then, label %test\ntest:\n  br i1 %in, label %then, label %exit\nthen:\n{}  \
         br label %exit\nexit:\n  ret void\n",
        checked_load(0, "%i")
    ));
    unchanged(joined);
    // A guard on the false edge of `<` says nothing about an upper bound.
    unchanged(
        guarded("  %i = load i64, ptr %x, align 8\n").replace("label %then, label %exit", "label %exit, label %then"),
    );
    // A device function: its parameters differ between threads.
    unchanged(guarded("  %i = load i64, ptr %x, align 8\n").replace("define ptx_kernel void", "define void"));
    // A bound that saturates (the condition could never hold): 31 * 2^63.
    unchanged(kernel(&format!(
        "  %l = call i32 @llvm.nvvm.read.ptx.sreg.laneid()\n  %i = zext i32 %l to i64\n  \
         %j = shl i64 %i, 63\n{}  ret void\n",
        checked_load(0, "%j")
    )));
    // One check proven of three (two indices loaded from memory): the copy would not pay
    // for its entry test.
    unchanged(kernel(&format!(
        "{THREAD_INDEX}{}  %u = load i64, ptr %x, align 8\n{}  %v = load i64, ptr %x, align 8\n{}  ret void\n",
        checked_load(0, "%i"),
        checked_load(1, "%u"),
        checked_load(2, "%v")
    )));
    // A loop counter whose back edge has a guard on a loaded value.
    unchanged(kernel(&format!(
        "  %m = load i64, ptr %x, align 8\n  br label %loop\nloop:\n  %i = phi i64 [ 0, %start ], [ %j, %loop ]\n{}  \
         %j = add i64 %i, 1\n  %more = icmp ult i64 %j, %m\n  br i1 %more, label %loop, label %exit\nexit:\n  \
         ret void\n",
        checked_load(0, "%i")
    )));
}

#[test]
fn a_loop_counter_is_bounded_by_the_guard_of_its_back_edge() {
    // A rotated loop: `x[i]` runs for i = 0 and for every `j` that passed `j < n` at the
    // latch, so i <= max(0, n - 1). With n = 0 that `n - 1` wraps to u64::MAX: the phi's
    // first arm runs anyway, and the condition fails as it must (no `n <= len` shortcut).
    let out = version(&kernel(&format!(
        "  br label %loop\nloop:\n  %i = phi i64 [ 0, %start ], [ %j, %loop ]\n{}  %j = add i64 %i, 1\n  \
         %more = icmp ult i64 %j, %n\n  br i1 %more, label %loop, label %exit\nexit:\n  ret void\n",
        checked_load(0, "%i")
    )));
    assert!(out.contains("= add i64 %n, -1\n"), "{out}");
    // Clamped to its largest value when the edge is taken (u64::MAX - 1): see the next test.
    // (`umax(0, b)` is `b`.)
    assert!(out.contains("= call i64 @llvm.umin.i64(i64 %oxide.uv.1, i64 -2)"), "{out}");
    assert!(!out.contains("icmp ule i64 %n, %len"), "{out}");
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
}

#[test]
fn a_phi_arm_bounded_by_its_edge_is_clamped_to_its_largest_value() {
    // `n` a u32: the back edge's `j < n` bounds `j` by `n - 1`, at most 2^32 - 2 when that
    // edge is taken; but the first arm runs for n = 0 too, where `n - 1` wraps to u64::MAX
    // and `+ 5` would wrap to 4 (a fast copy for len = 5 reading x[5]). The clamp keeps it
    // at 2^32 - 2.
    let out = version(&kernel(&format!(
        "  %n32 = trunc i64 %n to i32\n  %nz = zext i32 %n32 to i64\n  br label %loop\nloop:\n  \
         %i = phi i64 [ 0, %start ], [ %j, %loop ]\n  %k = add i64 %i, 5\n{}  %j = add i64 %i, 1\n  \
         %more = icmp ult i64 %j, %nz\n  br i1 %more, label %loop, label %exit\nexit:\n  ret void\n",
        checked_load(0, "%k")
    )));
    assert!(out.contains("@llvm.umin.i64(i64 %oxide.uv."), "{out}");
    assert!(out.contains(", i64 4294967294)"), "{out}");
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
}

#[test]
fn an_induction_variable_stepping_by_a_power_of_two_rounds_its_bound_down() {
    // sgemm's `t` (0, 32, 64, … while `t < n`) plus `tx <= 31`: t <= (n - 1) & -32, so
    // `x[t + tx]` is in bounds when ((n - 1) & -32) + 31 < len.
    let out = version(&kernel(&format!(
        "  %tx = call i32 @llvm.nvvm.read.ptx.sreg.laneid()\n  %tx64 = zext i32 %tx to i64\n  \
         br label %loop\nloop:\n  %t = phi i64 [ 0, %start ], [ %u, %loop ]\n  %i = add i64 %t, %tx64\n{}  \
         %u = add nuw i64 %t, 32\n  %more = icmp ult i64 %u, %n\n  br i1 %more, label %loop, label %exit\n\
         exit:\n  ret void\n",
        checked_load(0, "%i")
    )));
    assert!(out.contains("= and i64 %oxide.uv."), "{out}");
    assert!(out.contains(", -32\n"), "{out}");
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
}

#[test]
fn checks_that_cannot_be_proven_stay_in_both_copies() {
    // `x[l]` with `l` loaded has no bound; `x[i - 1]` (`add nsw %i, -1`) has only `u64::MAX`.
    // Two of the four checks are proven: enough for a copy (`worth_a_copy`).
    let body = format!(
        "{THREAD_INDEX}  %l = load i64, ptr %x, align 8\n{}{}  %j = add nsw i64 %i, -1\n{}{}  ret void\n",
        checked_load(0, "%i"),
        checked_load(1, "%l"),
        checked_load(2, "%j"),
        checked_load(3, "%i")
    );
    let out = version(&kernel(&body));
    assert!(out.contains("%oxide.fast.oob2 = icmp uge i64 %oxide.fast.j, %len"), "{out}");
    assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    assert!(out.contains("%oxide.fast.oob1 = icmp uge i64 %oxide.fast.l, %len"), "{out}");
    assert!(out.contains("@__oxide_bounds_fail_if(i1 %oxide.fast.oob1)"), "{out}");
}

#[test]
fn uniform_values_are_recomputed_without_poison_flags() {
    // The guard's bound `n * 4 + 1` is uniform; `nuw`/`nsw` are dropped at entry.
    let out = version(&guarded("  %i = load i64, ptr %x, align 8\n").replace(
        "  %in = icmp ult i64 %i, %n\n",
        "  %n4 = shl nuw nsw i64 %n, 2\n  %n5 = add nuw i64 %n4, 1\n  %in = icmp ult i64 %i, %n5\n",
    ));
    assert!(out.contains("%oxide.uv.1 = shl i64 %n, 2\n  %oxide.uv.2 = add i64 %oxide.uv.1, 1\n"), "{out}");
}
