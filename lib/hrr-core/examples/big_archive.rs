//! Writes a capture archive much larger than its live device memory, for
//! measuring hrr-play's peak memory (docs/PERFORMANCE.md):
//!
//!     cargo run --release -p hrr-core --features testkit --example big_archive -- OUT.hrr [COPIES] [MIB]
//!
//! One device buffer of MIB MiB receives COPIES distinct H2D uploads, each
//! read back by a D2H: the archive holds 2 x COPIES x MIB MiB of blobs.

use hrr_core::manifest::Platform;
use hrr_core::testkit::ArchiveBuilder;

fn main() {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .expect("usage: big_archive OUT.hrr [COPIES] [MIB]");
    let copies: u64 = args.next().map_or(32, |a| a.parse().expect("COPIES"));
    let mib: u64 = args.next().map_or(16, |a| a.parse().expect("MIB"));
    let size = mib << 20;
    let base = 0x7f00_0000_0000;
    let mut b = ArchiveBuilder::new(Platform::Cpu).alloc(base, size);
    for i in 0..copies {
        let data: Vec<u8> = (0..size)
            .map(|j| (j as u8) ^ (i as u8).wrapping_mul(31))
            .collect();
        b = b.h2d(base, &data).d2h(base, &data);
    }
    let dir = b.write(&out).expect("writing the archive");
    eprintln!("wrote {} ({copies} x {mib} MiB up and back)", dir.display());
}
