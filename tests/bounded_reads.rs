//! Reads are bounded: `diff` and `release --previous` on inputs built to
//! exhaust memory or time (a chart archive that decompresses to 3 GiB, a
//! values.yaml of 150,000 nested flow lists) stop early with a clear
//! error, exit 2, under 200 MiB and within seconds, with 1 GiB of address
//! space.

mod measure;

use std::io::Write;
use std::path::Path;

use measure::run_limited;

/// Deflate bits, least significant first, as RFC 1951 packs them.
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    count: u32,
}

impl Bits {
    fn put(&mut self, value: u64, count: u32) {
        self.acc |= value << self.count;
        self.count += count;
        while self.count >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.count -= 8;
        }
    }

    /// A Huffman code: most significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        for i in (0..len).rev() {
            self.put(u64::from(code >> i & 1), 1);
        }
    }

    fn align(&mut self) {
        if self.count > 0 {
            self.put(0, 8 - self.count);
        }
    }
}

/// A gzipped tar with one file `name` of `size` zero bytes, without ever
/// holding them: the tar header in a stored block, then one fixed-Huffman
/// block of length-258 matches (13 bits per 258 bytes), so 3 GiB take
/// 20 MB. Helm would refuse the checksum; asogen must stop long before.
fn zero_bomb(path: &Path, name: &str, size: u64) {
    let mut header = tar::Header::new_ustar();
    header.set_path(name).unwrap();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    let mut bits = Bits::default();
    // Stored block, not final: the 512-byte header as it is.
    bits.put(0, 1);
    bits.put(0, 2);
    bits.align();
    bits.put(512, 16);
    bits.put(!512u64 & 0xffff, 16);
    bits.out.extend_from_slice(header.as_bytes());
    // Final fixed block: the file's zeros, its padding, the two empty
    // end-of-archive records.
    let zeros = size.div_ceil(512) * 512 + 1024;
    bits.put(1, 1);
    bits.put(1, 2);
    bits.code(0b0011_0000, 8); // literal 0
    let matches = (zeros - 1) / 258;
    for _ in 0..matches {
        bits.code(0b1100_0101, 8); // length 258
        bits.code(0, 5); // distance 1
    }
    for _ in 0..(zeros - 1) % 258 {
        bits.code(0b0011_0000, 8);
    }
    bits.code(0, 7); // end of block
    bits.align();
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255])
        .unwrap();
    file.write_all(&bits.out).unwrap();
    // The CRC is not computed: nothing may read that far.
    file.write_all(&[0; 4]).unwrap();
    file.write_all(&(zeros as u32).to_le_bytes()).unwrap();
}

/// A release folder (what `diff` and `release --previous` read) whose
/// chart archive is `archive`.
fn release_folder(dir: &Path, archive: impl FnOnce(&Path)) {
    std::fs::create_dir_all(dir).unwrap();
    let name = "azure-service-operator-1.0.0.tgz";
    archive(&dir.join(name));
    std::fs::write(
        dir.join("SHA256SUMS"),
        format!("{}  {name}\n", "0".repeat(64)),
    )
    .unwrap();
}

const GIB: u64 = 1024 * 1024 * 1024;

#[test]
fn a_chart_archive_holding_3_gib_is_refused_under_200_mib() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb");
    release_folder(&bomb, |path| {
        zero_bomb(path, "azure-service-operator/values.yaml", 3 * GIB)
    });
    let bomb = bomb.to_str().unwrap();
    let run = run_limited(dir.path(), &["diff", bomb, bomb], &[], 60);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("values.yaml is 3221225472 bytes; asogen reads files up to"),
        "{}",
        run.stderr
    );
    run.assert_bounded("diff of a 3 GiB archive");

    // The same as the previous release.
    let out = dir.path().join("out");
    let profiles = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("values/profiles");
    let run = run_limited(
        dir.path(),
        &[
            "release",
            "--version",
            "2.22.0",
            "--previous",
            bomb,
            "--profiles",
            profiles.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
        60,
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("--previous"), "{}", run.stderr);
    assert!(!out.exists());
    run.assert_bounded("release --previous with a 3 GiB archive");
}

#[test]
fn a_chart_archive_that_decompresses_past_64_mib_is_refused() {
    // A huge file before values.yaml: skipping it still decompresses it.
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb");
    release_folder(&bomb, |path| {
        zero_bomb(path, "azure-service-operator/templates/big.yaml", 3 * GIB)
    });
    let bomb = bomb.to_str().unwrap();
    let run = run_limited(dir.path(), &["diff", bomb, bomb], &[], 60);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("decompresses to more than 64 MiB"),
        "{}",
        run.stderr
    );
    assert!(run.seconds < 30.0, "took {:.1} s", run.seconds);
    run.assert_bounded("diff of an archive with a 3 GiB file");
}

#[test]
fn deeply_nested_flow_lists_are_refused_at_once() {
    // 300 KB of `[`: the YAML parser's time grows with the square of the
    // depth (104 s in diff before the limit).
    let dir = tempfile::tempdir().unwrap();
    for (side, leaf) in [("a", ""), ("b", "1")] {
        let chart = dir.path().join(side);
        std::fs::create_dir(&chart).unwrap();
        std::fs::write(chart.join("Chart.yaml"), "name: x\nversion: 1.0.0\n").unwrap();
        std::fs::write(
            chart.join("values.yaml"),
            format!("k: {}{leaf}{}\n", "[".repeat(150_000), "]".repeat(150_000)),
        )
        .unwrap();
    }
    let run = run_limited(dir.path(), &["diff", "a", "b"], &[], 20);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("a/values.yaml: line 1 column 132: lists and maps nest more than 128 levels"),
        "{}",
        run.stderr
    );
    assert!(run.seconds < 5.0, "took {:.1} s", run.seconds);
    run.assert_bounded("diff of nested flow lists");

    // Ordinary nesting still compares.
    for side in ["a", "b"] {
        std::fs::write(
            dir.path().join(side).join("values.yaml"),
            format!("k: [[{side}]]\n"),
        )
        .unwrap();
    }
    let run = run_limited(dir.path(), &["diff", "a", "b"], &[], 20);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn a_manifest_larger_than_a_side_reads_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    let file = std::fs::File::create(&big).unwrap();
    // 64 MiB of comment lines, sparse on disk: no object to hold, but
    // reading it whole would.
    file.set_len(64 * 1024 * 1024).unwrap();
    let run = run_limited(dir.path(), &["diff", "big.yaml", "big.yaml"], &[], 30);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("big.yaml: too large: one side of a comparison reads at most 16 MiB"),
        "{}",
        run.stderr
    );
    run.assert_bounded("diff of a 64 MiB manifest");
}

#[cfg(unix)]
#[test]
fn a_fifo_as_a_side_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe.yaml"))
        .status();
    if !made.is_ok_and(|status| status.success()) {
        return;
    }
    let run = run_limited(dir.path(), &["diff", "pipe.yaml", "pipe.yaml"], &[], 10);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("pipe.yaml: not a regular file"),
        "{}",
        run.stderr
    );
}
