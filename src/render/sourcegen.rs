//! Every file of the repository generated from its own data but
//! `generated/` (which `asogen render` writes), in one place: the
//! sources compiled into asogen (`src/keys/all.rs` from the values schema,
//! `src/catalog/tables.rs` from values/catalog.json) and the docs' tables
//! (the rules, the split keys, the differences from upstream). `cargo
//! xtask regen` writes them with [`ensure_file_contents`]; the tests only
//! ask [`stale`], and every stale file gets one remedy, [`REMEDY`]. This
//! follows rust-analyzer's sourcegen: generators are plain functions of
//! the repository's data, and one function compares and writes.

use std::path::Path;

/// What to do about any stale generated file.
pub const REMEDY: &str = "run `cargo xtask regen`";

/// Where a generated text goes in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The whole file.
    File,
    /// The lines between `<!-- NAME:begin -->` and `<!-- NAME:end -->`.
    Block(&'static str),
}

/// One generated text and where it belongs.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The file, from the repository root.
    pub path: &'static str,
    /// Where in the file.
    pub place: Place,
    /// What it must hold there.
    pub text: String,
}

impl Generated {
    /// How messages name it: `path`, or `path (block NAME)`.
    pub fn name(&self) -> String {
        match self.place {
            Place::File => self.path.to_string(),
            Place::Block(name) => format!("{} (block {name})", self.path),
        }
    }
}

/// The sources compiled into asogen: a change to them needs a new build
/// before anything built from them (the docs, `generated/`) is current.
pub fn compiled_in() -> Result<Vec<Generated>, String> {
    Ok(vec![
        Generated {
            path: super::keys_source::FILE,
            place: Place::File,
            text: super::keys_source::text()?,
        },
        Generated {
            path: super::catalog_source::FILE,
            place: Place::File,
            text: super::catalog_source::text()?,
        },
    ])
}

/// The docs' generated tables; `root` is the repository, where the
/// differences from upstream are read.
pub fn docs(root: &Path) -> Result<Vec<Generated>, String> {
    let block = |path, name, text| Generated {
        path,
        place: Place::Block(name),
        text,
    };
    Ok(vec![
        block("README.md", "rules", crate::rules::markdown_table()),
        block(
            "docs/rules.md",
            "enforcement",
            crate::rules::enforcement_table(),
        ),
        block(
            "docs/split-topology.md",
            "split-rules",
            crate::rules::split_table(),
        ),
        block(
            "docs/split-topology.md",
            "split-keys",
            super::values_doc::split_values_table(),
        ),
        block("docs/artifacts.md", "differences", differences_table(root)?),
    ])
}

/// The files that list the intended differences from upstream's render.
pub const DIFFERENCES: [&str; 2] = [
    "values/upstream-differences.yaml",
    "values/upstream-differences-split.yaml",
];

/// The entries of every file of [`DIFFERENCES`], in order.
pub fn differences(root: &Path) -> Result<Vec<serde_json::Value>, String> {
    let mut entries = Vec::new();
    for file in DIFFERENCES {
        let text =
            std::fs::read_to_string(root.join(file)).map_err(|err| format!("{file}: {err}"))?;
        match crate::yaml::parse_value(&text).map_err(|err| format!("{file}: {err}"))? {
            serde_json::Value::Array(items) => entries.extend(items),
            _ => return Err(format!("{file}: not a list of differences")),
        }
    }
    Ok(entries)
}

/// docs/artifacts.md's table of the differences from upstream.
fn differences_table(root: &Path) -> Result<String, String> {
    let mut table = String::from("| object | path | reason |\n| --- | --- | --- |\n");
    for entry in differences(root)? {
        let cell = |key: &str| entry[key].as_str().unwrap_or("(whole object)").to_string();
        table.push_str(&format!(
            "| `{}` | `{}` | {} |\n",
            cell("object"),
            cell("path"),
            cell("reason")
        ));
    }
    Ok(table)
}

/// Whether a generated text was found where it belongs, or written there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fresh {
    /// It was there already.
    Current,
    /// It was not, and `write` was false: nothing was written.
    Stale,
    /// It was not, and is now.
    Written,
}

/// Compares `generated` with what its file holds under `root`, and
/// writes it (atomically) when they differ and `write` is set. An error
/// when the file cannot be read or written, or lacks a block's markers.
pub fn ensure_file_contents(
    root: &Path,
    generated: &Generated,
    write: bool,
) -> Result<Fresh, String> {
    let path = root.join(generated.path);
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let new = match generated.place {
        Place::File => generated.text.clone(),
        Place::Block(name) => {
            let (begin, end) = (
                format!("<!-- {name}:begin -->\n"),
                format!("<!-- {name}:end -->"),
            );
            let start = old
                .find(&begin)
                .ok_or_else(|| format!("{} has no {}", generated.path, begin.trim_end()))?
                + begin.len();
            let stop = old[start..]
                .find(&end)
                .ok_or_else(|| format!("{} has no {end}", generated.path))?
                + start;
            format!("{}{}{}", &old[..start], generated.text, &old[stop..])
        }
    };
    if new == old {
        return Ok(Fresh::Current);
    }
    if !write {
        return Ok(Fresh::Stale);
    }
    super::write_file_atomically(&path, new.as_bytes())
        .map_err(|err| format!("{}: {err}", generated.path))?;
    Ok(Fresh::Written)
}

/// The generated texts (compiled-in sources and docs) their files do not
/// hold, each named as `path` or `path (block NAME)`; nothing is written.
pub fn stale(root: &Path) -> Result<Vec<String>, String> {
    let mut stale = Vec::new();
    for generated in compiled_in()?.iter().chain(&docs(root)?) {
        if ensure_file_contents(root, generated, false)? == Fresh::Stale {
            stale.push(generated.name());
        }
    }
    Ok(stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block is replaced between its markers and nowhere else; a file
    /// without them is an error, not a rewrite.
    #[test]
    fn a_block_is_written_between_its_markers_only() {
        let dir = tempfile::tempdir().unwrap();
        let doc = "before\n<!-- t:begin -->\nold\n<!-- t:end -->\nafter\n";
        std::fs::write(dir.path().join("a.md"), doc).unwrap();
        let generated = Generated {
            path: "a.md",
            place: Place::Block("t"),
            text: "new\n".into(),
        };
        assert_eq!(
            ensure_file_contents(dir.path(), &generated, false),
            Ok(Fresh::Stale)
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.md")).unwrap(),
            doc
        );
        assert_eq!(
            ensure_file_contents(dir.path(), &generated, true),
            Ok(Fresh::Written)
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.md")).unwrap(),
            "before\n<!-- t:begin -->\nnew\n<!-- t:end -->\nafter\n"
        );
        assert_eq!(
            ensure_file_contents(dir.path(), &generated, true),
            Ok(Fresh::Current)
        );
        let other = Generated {
            place: Place::Block("u"),
            ..generated
        };
        let err = ensure_file_contents(dir.path(), &other, true).unwrap_err();
        assert!(err.contains("a.md has no <!-- u:begin -->"), "{err}");
    }

    /// The repository's generated files are current: the check the fast
    /// lane runs (CI runs `cargo xtask regen --check` too).
    #[test]
    fn every_generated_source_and_table_is_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let stale = stale(root).unwrap_or_else(|err| panic!("{err}"));
        assert!(stale.is_empty(), "stale: {}; {REMEDY}", stale.join(", "));
    }
}
