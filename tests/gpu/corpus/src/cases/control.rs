//! References and subslices, iterators, `for`/`while`/`loop` with `break`/`continue`.

pub fn subslices(a: [u32; 16]) -> (u32, u32, (bool, u32), u32, u32) {
    let lo = (a[0] % 8) as usize;
    let hi = lo + (a[1] % 9) as usize;
    let sub = &a[lo..hi];
    let sum = sub.iter().fold(0u32, |s, v| s.wrapping_add(*v));
    let (left, right) = a.split_at((a[2] % 17) as usize);
    let got = match a.get(lo..hi + (a[3] % 6) as usize) {
        Some(s) => (true, s.len() as u32),
        None => (false, 0),
    };
    let first = left.first().copied().unwrap_or(1) ^ right.last().copied().unwrap_or(2);
    let tail = a[12..].iter().copied().max().unwrap_or(0);
    (sum, sub.len() as u32, got, first, tail)
}

pub fn chunks_windows(a: [u16; 12]) -> (u32, u32, u32, u32) {
    let chunk_sums = a.chunks(5).map(|c| c.iter().map(|&v| v as u32).sum::<u32>()).fold(0u32, |m, s| m.max(s));
    let best_window = a.windows(3).map(|w| w[0] as u32 + w[1] as u32 + w[2] as u32).max().unwrap_or(0);
    let exact = a.chunks_exact(5);
    let rem = exact.remainder().len() as u32;
    let rchunks = a.rchunks(4).next().map_or(0, |c| c[0] as u32);
    (chunk_sums, best_window, rem + exact.len() as u32, rchunks)
}

pub fn iterators(a: [i32; 10]) -> [i64; 9] {
    let enumerated = a.iter().enumerate().map(|(i, &v)| i as i64 * v as i64).sum::<i64>();
    let zipped = a.iter().zip(a.iter().rev()).map(|(&x, &y)| (x as i64 - y as i64).abs()).max().unwrap_or(0);
    let stepped = a.iter().step_by(3).fold(0i64, |acc, &v| acc.wrapping_mul(31).wrapping_add(v as i64));
    let pos = a.iter().position(|&v| v < 0).map_or(-1, |p| p as i64);
    let rpos = a.iter().rposition(|&v| v % 7 == 0).map_or(-1, |p| p as i64);
    let any_all = (a.iter().any(|&v| v > 1000) as i64) * 2 + a.iter().all(|&v| v != 0) as i64;
    let filtered = a.iter().filter(|&&v| v % 2 == 0).count() as i64;
    let min_max =
        *a.iter().min().unwrap_or(&0) as i64 ^ *a.iter().max_by_key(|v| v.unsigned_abs()).unwrap_or(&0) as i64;
    let skip_take = a.iter().skip(2).take(5).chain(a.iter().take_while(|&&v| v > 0)).map(|&v| v as i64).sum::<i64>();
    [enumerated, zipped, stepped, pos, rpos, any_all, filtered, min_max, skip_take]
}

pub fn loops(a: u64) -> (u32, u64, u32, u32) {
    // Collatz steps with `while`, bounded.
    let mut n = a % 100_000 + 1;
    let mut steps = 0;
    while n != 1 && steps < 500 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    // `loop` with a break value.
    let mut x = a;
    let mut i = 0u64;
    let found = loop {
        x = x.rotate_left(5) ^ 0x9e37_79b9;
        i += 1;
        if x % 17 == 3 || i == 64 {
            break x ^ i;
        }
    };
    // Labelled break / continue.
    let mut count = 0;
    'outer: for r in 0..8u32 {
        for c in 0..8u32 {
            if (a >> (r * 8 + c)) & 1 == 1 {
                continue 'outer;
            }
            if c == 6 {
                break 'outer;
            }
            count += 1;
        }
    }
    let mut rev = 0;
    for k in (0..10u32).rev() {
        if k % 3 == 0 {
            continue;
        }
        rev = rev * 2 + k;
    }
    (steps, found, count, rev)
}

pub fn binary_search(x: ([u32; 16], u32)) -> (i32, i32, u32) {
    let (mut a, key) = x;
    a.sort_unstable();
    let key = if key % 2 == 0 { a[(key % 16) as usize] } else { key };
    let r = match a.binary_search(&key) {
        Ok(i) => a[i] as i32 - key as i32,
        Err(i) => -(i as i32) - 1,
    };
    let pp = a.partition_point(|&v| v < key) as i32;
    (r, pp, a.contains(&key) as u32)
}

pub fn slice_methods(mut a: [u8; 16]) -> ([u8; 16], u32, bool, u32) {
    let zeros = a.split(|&b| b < 32).filter(|part| !part.is_empty()).count() as u32;
    let starts = a.starts_with(&[a[0], a[1]]) && !a.ends_with(&[0, 0, 0]);
    a.swap(0, 15);
    let (head, tail) = a.split_at_mut(8);
    head.copy_from_slice(&[tail[7], tail[6], tail[5], tail[4], tail[3], tail[2], tail[1], tail[0]]);
    tail[..2].fill(0xAB);
    let r = a.iter().rev().skip_while(|&&b| b == 0xAB).count() as u32;
    (a, zeros, starts, r)
}

/// `str` methods whose code `core` ships as MIR (generic or `#[inline]`): byte-level work,
/// ASCII helpers, `parse`. (`str::from_utf8`, `find`/`split` with a `char` or `&str` pattern are
/// precompiled in `core` and rejected on the device: see docs/supported-rust.md.)
pub fn str_ops(x: ([u8; 8], u32)) -> (bool, u32, u32, u32, u32) {
    let (bytes, n) = x;
    let text = "the quick brown fox jumps over the lazy dog";
    let word = text.as_bytes().split(|&b| b == b' ').nth((n % 9) as usize).unwrap_or(b"");
    let digits = [b'0' + (n % 10) as u8, b'0' + (n / 10 % 10) as u8, b'7'];
    // SAFETY: ASCII digits are UTF-8.
    let parsed = unsafe { core::str::from_utf8_unchecked(&digits) }.parse::<u32>().unwrap_or(0);
    let ascii = bytes.map(|b| b & 0x7f);
    let upper = ascii.iter().filter(|b| b.is_ascii_uppercase()).count() as u32;
    let (head, tail) = text.split_at((n % 40) as usize);
    let same = head.eq_ignore_ascii_case("THE QUICK") as u32
        + tail.starts_with("fox") as u32 * 2
        + text.ends_with("dog") as u32 * 4;
    (
        bytes.iter().all(u8::is_ascii),
        word.len() as u32 * 100 + same,
        parsed,
        upper,
        u32::from_str_radix("7fz", 36).unwrap_or(0) ^ n,
    )
}
