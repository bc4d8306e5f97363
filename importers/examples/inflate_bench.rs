//! Which inflater for `.sr` logic chunks: every `logic-*` member of a capture inflated (no
//! repeat is skipped) into a buffer of its declared size by miniz_oxide (what the zip reader
//! used), zlib-rs (flate2's `zlib-rs` backend) and libdeflate (libdeflater), on one thread
//! and on all cores, best of a few rounds each, alternating.
//!
//! `cargo run --release -p latscope-importers --example inflate_bench -- F.sr [ROUNDS]`

use rayon::prelude::*;
use std::io::Cursor;
use std::time::Instant;

type Inflate = fn(&[u8], &mut [u8]) -> usize;

fn miniz(raw: &[u8], out: &mut [u8]) -> usize {
    miniz_oxide::inflate::decompress_slice_iter_to_slice(out, std::iter::once(raw), false, true).unwrap_or(0)
}

fn zlib_rs(raw: &[u8], out: &mut [u8]) -> usize {
    let (done, rc) = zlib_rs::decompress_slice(out, raw, zlib_rs::InflateConfig { window_bits: -15 });
    if rc == zlib_rs::ReturnCode::Ok { done.len() } else { 0 }
}

fn libdeflate(raw: &[u8], out: &mut [u8]) -> usize {
    libdeflater::Decompressor::new().deflate_decompress(raw, out).unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: inflate_bench F.sr [ROUNDS]")?;
    let rounds: usize = args.next().map_or(Ok(3), |r| r.parse())?;
    let data = std::fs::read(&path)?;
    let mut zip = zip::ZipArchive::new(Cursor::new(&data[..]))?;
    let mut members: Vec<(usize, usize, usize)> = Vec::new();
    for i in 0..zip.len() {
        let f = zip.by_index_raw(i)?;
        if f.name()?.starts_with("logic-") && f.compression() == zip::CompressionMethod::Deflated {
            let start = f.data_start().ok_or("no data start")? as usize;
            members.push((start, f.compressed_size() as usize, f.size() as usize));
        }
    }
    let total: usize = members.iter().map(|m| m.2).sum();
    let largest = members.iter().map(|m| m.2).max().unwrap_or(0);
    println!("{path}: {} logic members, {total} bytes inflated", members.len());
    let inflaters: [(&str, Inflate); 3] =
        [("miniz_oxide", miniz), ("zlib-rs", zlib_rs), ("libdeflate", libdeflate)];
    let threads = rayon::current_num_threads();
    let mut best = vec![[f64::MAX; 2]; inflaters.len()];
    for _ in 0..rounds {
        for (k, (name, f)) in inflaters.iter().enumerate() {
            // One thread, one reused buffer.
            let mut out = vec![0u8; largest];
            let t0 = Instant::now();
            let mut n = 0;
            for &(at, c, size) in &members {
                n += f(&data[at..at + c], &mut out[..size]);
            }
            assert_eq!(n, total, "{name}");
            best[k][0] = best[k][0].min(t0.elapsed().as_secs_f64());
            // All cores, a buffer per thread.
            let t0 = Instant::now();
            let n: usize = members
                .par_iter()
                .map_init(|| vec![0u8; largest], |out, &(at, c, size)| f(&data[at..at + c], &mut out[..size]))
                .sum();
            assert_eq!(n, total, "{name}");
            best[k][1] = best[k][1].min(t0.elapsed().as_secs_f64());
        }
    }
    for ((name, _), [one, all]) in inflaters.iter().zip(best) {
        println!(
            "{name:>12}: 1 thread {one:.3} s ({:.2} GB/s), {threads} threads {all:.3} s ({:.2} GB/s)",
            total as f64 / one / 1e9,
            total as f64 / all / 1e9
        );
    }
    Ok(())
}
