//! Measures zstd levels on files: `cargo run --release -p hrr-core
//! --example zst_levels -- FILE…` prints, per level, the compressed size,
//! the ratio and the compression and decompression speed of the files
//! taken together (docs/PERFORMANCE.md, *Compression*).

use std::time::Instant;

fn main() {
    let files: Vec<Vec<u8>> = std::env::args()
        .skip(1)
        .map(|p| std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}")))
        .collect();
    let raw: usize = files.iter().map(Vec::len).sum();
    println!("{} files, {raw} bytes", files.len());
    for level in [1, 3, 6, 9, 12, 19] {
        let t = Instant::now();
        let packed: Vec<Vec<u8>> = files
            .iter()
            .map(|f| zstd::bulk::compress(f, level).unwrap())
            .collect();
        let c = t.elapsed().as_secs_f64();
        let size: usize = packed.iter().map(Vec::len).sum();
        let t = Instant::now();
        for (p, f) in packed.iter().zip(&files) {
            assert_eq!(zstd::bulk::decompress(p, f.len()).unwrap().len(), f.len());
        }
        let d = t.elapsed().as_secs_f64();
        let mb = raw as f64 / 1e6;
        println!(
            "level {level:2}: {size:10} bytes  ratio {:6.1}  compress {:7.1} MB/s  decompress {:7.1} MB/s",
            raw as f64 / size as f64,
            mb / c,
            mb / d
        );
    }
}
