//! The docs say what is built: the paths and items they quote exist, the
//! commands they list are the binary's, and the keys they name are keys.
//! Their generated tables are `asogen::render::sourcegen`'s (written by
//! `cargo xtask regen`, checked by the library's tests and CI).

/// The entries of values/upstream-differences*.yaml.
fn differences() -> Vec<serde_json::Value> {
    asogen::render::sourcegen::differences(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|err| panic!("{err}"))
}

/// A values key named in a difference's reason is a key of the key table
/// (a reason that names a renamed or misspelt key fails here).
#[test]
fn the_differences_name_only_keys_that_exist() {
    let entries = differences();
    let mut named = Vec::new();
    for entry in &entries {
        for word in asogen::keys::mentioned_in(entry["reason"].as_str().unwrap()) {
            assert!(
                asogen::keys::Key::find(word).is_some(),
                "values/upstream-differences*.yaml names {word:?}, which is not a values key (src/keys/all.rs)"
            );
            named.push(word.to_string());
        }
    }
    // The check sees the keys the reasons do name.
    assert!(
        named.contains(&"admissionPolicy.enable".to_string()),
        "{named:?}"
    );
}

/// The README and every page under docs/, with their paths.
fn doc_pages() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![("README.md".to_string(), root.join("README.md"))];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    for path in docs {
        let name = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
        pages.push((name, path));
    }
    pages
        .into_iter()
        .map(|(name, path)| (name, std::fs::read_to_string(path).unwrap()))
        .collect()
}

/// Every command `asogen --help` lists (and every subcommand of those that
/// have some) has its synopsis line in docs/commands.md.
#[test]
fn docs_commands_lists_every_command() {
    let commands_md =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/commands.md")).unwrap();
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_asogen"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let commands: Vec<&str> = help
        .split("Commands:\n")
        .nth(1)
        .expect("--help lists commands")
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    assert!(commands.len() >= 10, "{commands:?}");
    let missing: Vec<&&str> = commands
        .iter()
        .filter(|name| {
            !commands_md.contains(&format!("\nasogen {name} "))
                && !commands_md.contains(&format!("\nasogen {name}\n"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/commands.md has no `asogen NAME ...` synopsis line for {missing:?}"
    );
}

/// Every repository path the docs quote (`src/...`, `tests/...` in
/// backticks) and every relative link exists, and every item quoted as
/// `path::name` (a test, a table, a constant) is named in that file.
#[test]
fn every_path_the_docs_quote_exists() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    const TOP: [&str; 12] = [
        "src/",
        "tests/",
        "values/",
        "generated/",
        "templates/",
        "bench/",
        "fuzz/",
        "evidence/",
        "docs/",
        "examples/",
        "crates/",
        "xtask/",
    ];
    let mut missing = Vec::new();
    let mut items = 0;
    for (page, text) in doc_pages() {
        let base = if page.starts_with("docs/") {
            root.join("docs")
        } else {
            root.to_path_buf()
        };
        // Quoted paths: `src/x.rs`, `tests/fixtures/...` (globs and
        // placeholders like <profile> cut at their first such character).
        for quoted in text.split('`').skip(1).step_by(2) {
            let Some(path) = quoted.split_whitespace().next() else {
                continue;
            };
            if !TOP.iter().any(|top| path.starts_with(top)) {
                continue;
            }
            // `tests/fast/cli.rs::a_test`: the file names the item
            if let Some((file, item)) = path.split_once("::") {
                items += 1;
                let named = std::fs::read_to_string(root.join(file)).is_ok_and(|source| {
                    source.contains(&format!("fn {item}(")) || source.contains(&format!(" {item}:"))
                });
                if !named {
                    missing.push(format!("{page}: `{file}::{item}`"));
                }
                continue;
            }
            let path = path
                .split(['*', '<', '{', '[', ':', ','])
                .next()
                .unwrap()
                .trim_end_matches(['.', ')']);
            if !root.join(path).exists() {
                missing.push(format!("{page}: `{path}`"));
            }
        }
        // Relative Markdown links: [text](path) or [text](path#anchor).
        for link in text.split("](").skip(1) {
            let target = link.split(')').next().unwrap_or_default();
            let target = target.split('#').next().unwrap_or_default();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            if !base.join(target).exists() {
                missing.push(format!("{page}: link ({target})"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name paths that do not exist:\n{}",
        missing.join("\n")
    );
    assert!(items >= 20, "docs/architecture.md names its tests: {items}");
}
