//! A mutation fuzzer for the targets of `mcp_fuzz`, on stable Rust: each round takes an
//! input from the pool (seeds plus every input whose outcome signal, the path it took
//! through the parser, was new: a cheap stand-in for coverage), mutates it (bit flips, byte edits, splices of other inputs and
//! of dictionary tokens, truncation, duplication), and runs the target under
//! `catch_unwind`. A panic is saved under `fuzz/crashes/<target>/` and fails the run.
//!
//! `cargo run -p mcp-fuzz --release -- --seconds 30` runs every target for 30 s each;
//! `-- message --seconds 300 --seed 7` one target. Not coverage-guided (that needs a
//! nightly sanitizer toolchain); what it finds is what random structure-aware mutation
//! finds.

use clap::Parser;
use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(about = "Fuzz the parsers that see untrusted bytes (stable Rust, mutation based)")]
struct Args {
    /// The target to run (default: all, one after the other).
    target: Option<String>,
    /// Seconds per target.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// The random seed (default: from the clock; printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Largest input, in bytes.
    #[arg(long, default_value_t = 4096)]
    max_len: usize,
}

/// xorshift64*: enough randomness for mutation, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// A value to put in place of another: types and sizes parsers trip on.
fn odd_value(rng: &mut Rng) -> serde_json::Value {
    use serde_json::json;
    match rng.below(14) {
        0 => json!(null),
        1 => json!(true),
        2 => json!(-1),
        3 => json!(1.5e308),
        4 => json!(u64::MAX),
        5 => json!(""),
        6 => json!("x".repeat(rng.below(3000))),
        7 => json!([]),
        8 => json!({}),
        9 => json!("\u{0}\u{202e}é"),
        10 => json!([[[[[[[[1]]]]]]]]),
        11 => json!({"_meta": {}}),
        12 => json!("../../etc/passwd"),
        _ => json!(rng.next() as i64),
    }
}

/// Mutates a parsed JSON value in place: replaces, removes or adds one node.
fn mutate_json(rng: &mut Rng, v: &mut serde_json::Value, depth: usize) {
    use serde_json::Value;
    match v {
        Value::Object(m) if !m.is_empty() && depth < 8 => {
            let keys: Vec<String> = m.keys().cloned().collect();
            let k = &keys[rng.below(keys.len())];
            match rng.below(6) {
                0 => {
                    m.remove(k);
                }
                1 => {
                    m.insert(format!("{k}{}", rng.below(3)), odd_value(rng));
                }
                2 => {
                    m.insert(k.clone(), odd_value(rng));
                }
                _ => {
                    if let Some(child) = m.get_mut(k) {
                        mutate_json(rng, child, depth + 1);
                    }
                }
            }
        }
        Value::Array(a) if !a.is_empty() && depth < 8 => {
            let i = rng.below(a.len());
            match rng.below(4) {
                0 => {
                    a.remove(i);
                }
                1 => a.push(odd_value(rng)),
                _ => mutate_json(rng, &mut a[i], depth + 1),
            }
        }
        _ => *v = odd_value(rng),
    }
}

fn mutate(rng: &mut Rng, pool: &[Vec<u8>], input: &[u8], max_len: usize) -> Vec<u8> {
    // Half the time, structure-aware: change the JSON tree, so inputs get past the parser.
    if rng.below(2) == 0
        && let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(input)
    {
        for _ in 0..=rng.below(3) {
            mutate_json(rng, &mut v, 0);
        }
        let mut out = serde_json::to_vec(&v).unwrap_or_default();
        out.truncate(max_len);
        return out;
    }
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let len = out.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                out[i] = rng.next() as u8;
            }
            2 => {
                let i = rng.below(len + 1);
                out.insert(i, rng.next() as u8);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(16));
                out.drain(i..i + n);
            }
            4 => {
                let token = mcp_fuzz::DICTIONARY[rng.below(mcp_fuzz::DICTIONARY.len())];
                let i = rng.below(len + 1);
                out.splice(i..i, token.bytes());
            }
            5 if !pool.is_empty() => {
                let other = &pool[rng.below(pool.len())];
                if !other.is_empty() {
                    let a = rng.below(other.len());
                    let b = a + rng.below(other.len() - a + 1);
                    let i = rng.below(len + 1);
                    out.splice(i..i, other[a..b].iter().copied());
                }
            }
            6 if len > 0 => out.truncate(rng.below(len)),
            7 if len > 0 && len < max_len / 2 => {
                let a = rng.below(len);
                let chunk = out[a..].to_vec();
                out.extend(chunk);
            }
            _ => {
                // Interesting numbers and characters at a random place.
                let picks: [&[u8]; 6] = [b"0", b"-0", b"\"", b"\\", b"\xff", b"\xc3"];
                let i = rng.below(len + 1);
                out.splice(i..i, picks[rng.below(picks.len())].iter().copied());
            }
        }
    }
    out.truncate(max_len);
    out
}

/// What a run of one target found.
struct Found {
    runs: u64,
    signals: usize,
    pool: usize,
}

/// Fuzzes one target for `time`; `Err` with the crashing input's path on a panic.
fn fuzz(target: &str, time: Duration, rng: &mut Rng, max_len: usize) -> Result<Found, PathBuf> {
    let mut pool = mcp_fuzz::seeds(target);
    let n_seeds = pool.len().max(1);
    let mut seen: HashSet<u64> = HashSet::new();
    for s in &pool {
        if let Some(sig) = mcp_fuzz::run(target, s) {
            seen.insert(sig);
        }
    }
    let start = Instant::now();
    let mut runs = 0u64;
    while start.elapsed() < time {
        // Seeds stay likely picks however large the pool grows.
        let base = if rng.below(4) == 0 {
            pool[rng.below(n_seeds)].clone()
        } else {
            pool[rng.below(pool.len())].clone()
        };
        let input = mutate(rng, &pool, &base, max_len);
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| mcp_fuzz::run(target, &input)));
        runs += 1;
        match outcome {
            Err(_) => {
                let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("crashes")
                    .join(target);
                let _ = std::fs::create_dir_all(&dir);
                let path = dir.join(format!("crash-{runs}-{:016x}", rng.next()));
                let _ = std::fs::write(&path, &input);
                return Err(path);
            }
            // An input that took a path no earlier input took joins the pool.
            Ok(Some(sig)) => {
                if seen.insert(sig) && pool.len() < 8192 {
                    pool.push(input);
                }
            }
            Ok(None) => {}
        }
    }
    Ok(Found {
        runs,
        signals: seen.len(),
        pool: pool.len(),
    })
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1
    });
    // Panics are expected findings: report them ourselves, quietly.
    std::panic::set_hook(Box::new(|info| eprintln!("fuzz: panic: {info}")));
    let targets: Vec<&str> = match &args.target {
        Some(t) if mcp_fuzz::TARGETS.contains(&t.as_str()) => vec![t.as_str()],
        Some(t) => {
            eprintln!(
                "fuzz: unknown target {t}; targets: {}",
                mcp_fuzz::TARGETS.join(", ")
            );
            return std::process::ExitCode::from(2);
        }
        None => mcp_fuzz::TARGETS.to_vec(),
    };
    println!(
        "fuzz: seed {seed}, {}s per target, inputs up to {} bytes",
        args.seconds, args.max_len
    );
    let mut rng = Rng(seed);
    let mut failed = false;
    for t in targets {
        match fuzz(t, Duration::from_secs(args.seconds), &mut rng, args.max_len) {
            Ok(f) => println!(
                "fuzz: {t:<14} {:>9} runs, {:>5} distinct outcomes, pool {:>5}, no crash",
                f.runs, f.signals, f.pool
            ),
            Err(path) => {
                println!("fuzz: {t:<14} CRASH, input saved to {}", path.display());
                failed = true;
            }
        }
    }
    if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}
