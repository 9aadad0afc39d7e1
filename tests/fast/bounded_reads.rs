//! Reads are bounded: `diff` and `release --previous` on inputs built to
//! exhaust memory or time (a chart archive that decompresses to 3 GiB, a
//! values.yaml of 150,000 nested flow lists) stop early with a clear
//! error, exit 2, under 200 MiB and within seconds, with 1 GiB of address
//! space; and every YAML reader (catalog import, a chart repository's
//! index.yaml, diff, values files, upgrade-check's live file) refuses
//! deep nesting and alias bombs at once with a line and column.

use crate::measure;

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
    // The parser's own limit on flow nesting comes first here (level 256).
    assert!(
        run.stderr.contains(
            "a/values.yaml: nesting deeper than 128 levels; refused (line 1, column 259)"
        ),
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

/// YAML built to exhaust a parser's time or memory, each a mapping with
/// one key `k` (so every reader takes it), and what each reader must say.
fn hostile_yaml() -> Vec<(&'static str, String, &'static str)> {
    let deep = 100_000;
    let nest = |open: &str, leaf: &str, close: &str| {
        format!("k: {}{leaf}{}\n", open.repeat(deep), close.repeat(deep))
    };
    let mut block = String::from("k:\n");
    for depth in 1..200 {
        block.push_str(&format!("{}k{depth}:\n", "  ".repeat(depth)));
    }
    block.push_str(&format!("{}leaf: 1\n", "  ".repeat(200)));
    let mut laughs = String::from(
        "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for level in 1..10 {
        let refs = vec![format!("*a{}", level - 1); 10].join(",");
        laughs.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
    }
    laughs.push_str("k: *a9\n");
    let nesting = "nesting deeper than 128 levels";
    vec![
        ("flow lists", nest("[", "", "]"), nesting),
        ("flow maps", nest("{a: ", "1", "}"), nesting),
        ("lists of maps", nest("[{a: ", "1", "}]"), nesting),
        // Where a scan of the text for brackets sees a quote, a block
        // scalar or a plain scalar, the parser sees nesting.
        (
            "after a block scalar",
            format!("a: |\n  'x\n{}", nest("[", "", "]")),
            nesting,
        ),
        ("after a plain dash", nest("[-'", "", "]"), nesting),
        ("block mappings", block, nesting),
        (
            "block lists",
            format!("k:\n{}x\n", "- ".repeat(20_000)),
            nesting,
        ),
        ("an alias bomb", laughs, "an alias bomb?"),
    ]
}

/// Whether `out` names a line and column: `FILE:LINE:COLUMN` or
/// `(line L, column C)`.
fn names_position(out: &str, file: &str) -> bool {
    out.split(&format!("{file}:"))
        .skip(1)
        .any(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        || out.contains("(line ")
}

#[test]
fn every_yaml_reader_refuses_deep_and_aliased_yaml_at_once() {
    // Before one reader with one bound read every YAML text, 200 KB of
    // nested flow lists took 28-35 s in `catalog import` and in a chart
    // repository's index.yaml (`release --out REPO`).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (what, yaml, expected) in hostile_yaml() {
        let repo = root.join("repo");
        let chart = root.join("chart");
        let _ = std::fs::remove_dir_all(&repo);
        let _ = std::fs::remove_dir_all(&chart);
        std::fs::create_dir(&repo).unwrap();
        std::fs::create_dir(&chart).unwrap();
        std::fs::write(repo.join("index.yaml"), &yaml).unwrap();
        std::fs::write(chart.join("Chart.yaml"), "name: x\nversion: 1.0.0\n").unwrap();
        std::fs::write(chart.join("values.yaml"), &yaml).unwrap();
        std::fs::write(root.join("in.yaml"), &yaml).unwrap();
        let readers: [(&str, Vec<&str>, &str, i32); 5] = [
            (
                "catalog import",
                vec!["catalog", "import", "in.yaml", "--out", "catalog.json"],
                "in.yaml",
                1,
            ),
            (
                "release --out REPO",
                vec!["release", "--version", "2.22.0", "--out", "repo"],
                "index.yaml",
                2,
            ),
            ("diff", vec!["diff", "chart", "chart"], "values.yaml", 2),
            ("validate", vec!["validate", "-f", "in.yaml"], "in.yaml", 1),
            (
                "upgrade-check",
                vec!["upgrade-check", "--live", "in.yaml"],
                "in.yaml",
                2,
            ),
        ];
        for (reader, args, file, code) in readers {
            let run = run_limited(root, &args, &[], 60);
            let out = format!("{}{}", run.stdout, run.stderr);
            assert_eq!(run.code, Some(code), "{reader}, {what}: {out:.600}");
            assert!(
                out.contains(expected) && names_position(&out, file),
                "{reader}, {what}: expected {expected:?} at a line and column of {file}:\n{out:.600}"
            );
            assert!(
                run.seconds < 20.0,
                "{reader}, {what}: took {:.1} s",
                run.seconds
            );
            run.assert_bounded(&format!("{reader}, {what}"));
        }
        assert!(!root.join("catalog.json").exists());
        assert_eq!(
            std::fs::read_to_string(repo.join("index.yaml")).unwrap(),
            yaml
        );
    }
}

#[test]
fn long_flow_collections_read_in_linear_time_and_bounded_memory() {
    // Valid, only long: a flow mapping of 50,000 keys, a flow list of
    // 100,000 items, 100,000 block keys.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let map: Vec<String> = (0..50_000).map(|i| format!("a{i}: 1")).collect();
    let shapes = [
        ("a flow mapping", format!("k: {{{}}}\n", map.join(", "))),
        (
            "a flow list",
            format!("k: [{}]\n", vec!["1"; 100_000].join(", ")),
        ),
        (
            "block keys",
            format!(
                "k:\n{}",
                (0..100_000)
                    .map(|i| format!("  a{i}: 1\n"))
                    .collect::<String>()
            ),
        ),
    ];
    for (what, yaml) in shapes {
        std::fs::write(root.join("in.yaml"), format!("apiVersion: v1\n{yaml}")).unwrap();
        let run = run_limited(
            root,
            &["catalog", "import", "in.yaml", "--out", "catalog.json"],
            &[],
            60,
        );
        assert_eq!(run.code, Some(1), "{what}: {:.600}", run.stderr);
        assert!(
            run.stderr.contains("no MutatingWebhookConfiguration"),
            "{what}: {:.600}",
            run.stderr
        );
        assert!(run.seconds < 20.0, "{what}: took {:.1} s", run.seconds);
        run.assert_bounded(what);
        let repo = root.join("repo");
        let _ = std::fs::remove_dir_all(&repo);
        std::fs::create_dir(&repo).unwrap();
        std::fs::write(repo.join("index.yaml"), format!("apiVersion: v1\n{yaml}")).unwrap();
        let run = run_limited(
            root,
            &["release", "--version", "2.22.0", "--out", "repo"],
            &[],
            120,
        );
        assert_eq!(run.code, Some(0), "{what}: {:.600}", run.stderr);
        run.assert_bounded(what);
    }
}
