//! Generates `pads.rs`: small functions of about one 64-byte cache line each, and the
//! three ways `main.rs` runs 700 calls of them per line of input (see `main.rs`).

use std::fmt::Write as _;

/// Calls per line of input, in every mode (in the "lines" mode, of as many functions).
const CALLS: usize = 700;
/// Functions for the "pages" mode, each followed by a filler of about 4 KiB that never runs.
const PAGES: usize = 110;

/// A deterministic sequence (a 64-bit LCG), so every build generates the same code.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 1 | 1
    }
    fn below(&mut self, n: u64) -> u64 {
        (self.next() >> 8) % n
    }
    /// `0..n` in a shuffled order (Fisher-Yates).
    fn shuffled(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            v.swap(i, self.below(i as u64 + 1) as usize);
        }
        v
    }
}

/// One small function: a dependent chain of a few multiplies and rotations (about 16
/// instructions).
fn pad(out: &mut String, name: &str, rng: &mut Lcg) {
    let (a, b, c, d) = (rng.next(), rng.next(), rng.next(), rng.next());
    let (r1, r2) = (1 + rng.below(62), 1 + rng.below(62));
    writeln!(
        out,
        "#[inline(never)] fn {name}(x: u64) -> u64 {{ let y = x.wrapping_mul({a}).rotate_left({r1}) ^ {b}; \
         let z = y.wrapping_add({c}).rotate_right({r2}); (z ^ (z >> 7)).wrapping_mul({d}) ^ (y >> 3) }}"
    )
    .unwrap();
}

fn main() {
    let mut rng = Lcg(0x5eed);
    let mut out = String::new();
    // "lines": 700 distinct functions, called once each in a shuffled order.
    for i in 0..CALLS {
        pad(&mut out, &format!("l{i:04}"), &mut rng);
    }
    let calls: String = rng
        .shuffled(CALLS)
        .iter()
        .map(|i| format!("x = l{i:04}(std::hint::black_box(x)); "))
        .collect();
    writeln!(
        out,
        "#[inline(never)] pub fn lines(mut x: u64) -> u64 {{ {calls}x }}"
    )
    .unwrap();
    // "pages": 110 functions, each followed (by run.sh's ordering file) by a filler of
    // about 4 KiB that only `fill` runs; 700 calls go round them in a shuffled order.
    for i in 0..PAGES {
        pad(&mut out, &format!("p{i:03}"), &mut rng);
        let body: String = (0..330)
            .map(|_| {
                format!(
                    "x = x.wrapping_mul({}).rotate_left({}); ",
                    rng.next(),
                    1 + rng.below(62)
                )
            })
            .collect();
        writeln!(
            out,
            "#[inline(never)] fn p{i:03}f(mut x: u64) -> u64 {{ {body}x }}"
        )
        .unwrap();
    }
    let fillers: Vec<String> = (0..PAGES).map(|i| format!("p{i:03}f")).collect();
    writeln!(
        out,
        "pub static FILLERS: [fn(u64) -> u64; {PAGES}] = [{}];",
        fillers.join(", ")
    )
    .unwrap();
    let ring = rng.shuffled(PAGES);
    let calls: String = (0..CALLS)
        .map(|k| format!("x = p{:03}(std::hint::black_box(x)); ", ring[k % PAGES]))
        .collect();
    writeln!(
        out,
        "#[inline(never)] pub fn pages(mut x: u64) -> u64 {{ {calls}x }}"
    )
    .unwrap();
    // "same": one function called 700 times: the same instructions, the least code.
    pad(&mut out, "s0", &mut rng);
    writeln!(
        out,
        "#[inline(never)] pub fn same(mut x: u64) -> u64 {{ for _ in 0..{CALLS} {{ x = s0(std::hint::black_box(x)); }} x }}"
    )
    .unwrap();
    let path = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("pads.rs");
    std::fs::write(path, out).unwrap();
}
