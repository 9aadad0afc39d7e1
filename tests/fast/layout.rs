//! The layout of the library (`src/`) as docs/development.md describes
//! it: no circle of imports across files, and no module importing from a
//! later stage of the pipeline (read → check → describe → render → write,
//! then the features; the facts every stage shares stand below them). The
//! command line (`src/bin/asogen/`) is a crate of its own above the
//! library: the compiler keeps the library from reaching into it.
//!
//! The graph: a file per node; an edge for every `crate::` or `super::`
//! path (in code, not in comments or in a `#[cfg(test)]` module) and every
//! use a module makes of a child it declares, each to the file of the
//! longest module the path names. A file's paths to its own folder's
//! `mod.rs` (its parent module) are not edges: the folder's face declares
//! the file, and the file sees the face's items as Rust's module tree gives
//! them. `cargo test --test fast layout:: -- --nocapture` prints the figures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use regex::Regex;

/// The stages, from the lowest: first the facts every stage shares (names
/// and handles; what values mean and how text is written; diagnostics and
/// metadata; YAML and the template language; the catalog; the rules; the
/// schema and the model), then the pipeline (read, check, describe,
/// render; the template language and the output folder are crates of
/// their own) and the features.
/// Every file of the library is on one (a test says so), so a new file is
/// placed on purpose. `model.rs` is what the check builds.
const STAGES: [(&str, usize); 22] = [
    ("src/names.rs", 0),
    ("src/exit.rs", 0),
    ("src/keys", 0),
    ("src/progress.rs", 0),
    ("src/redact.rs", 1),
    ("src/output.rs", 1),
    ("src/values", 1),
    ("src/roles.rs", 1),
    ("src/diagnostics.rs", 2),
    ("src/metadata.rs", 2),
    ("src/yaml.rs", 3),
    ("src/describe/", 3),
    ("src/catalog", 4),
    ("src/read/", 4),
    ("src/rules/", 5),
    ("src/schema.rs", 6),
    ("src/check/", 8),
    ("src/model.rs", 8),
    ("src/objects/", 9),
    ("src/render/", 10),
    ("src/features/", 11),
    ("src/lib.rs", 12),
];

/// The circles still open (none: a new one is a failure; keep the list
/// for the day one has to be tolerated while it is broken).
const KNOWN_CIRCLES: [&[&str]; 0] = [];

/// The imports that still run to a later stage (none: a new one is a
/// failure).
const KNOWN_LATER: [(&str, &str); 0] = [];

type Graph = BTreeMap<String, BTreeSet<String>>;

fn stage(file: &str) -> usize {
    STAGES
        .iter()
        .find(|(prefix, _)| file.starts_with(prefix))
        .map(|(_, stage)| *stage)
        .unwrap_or_else(|| panic!("{file} is on no stage: add it to STAGES"))
}

/// The library's files: src/ but the command line's crate (src/bin/).
fn rust_files(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("src/ lists") {
        let path = entry.expect("an entry of src/").path();
        if path == Path::new("src/bin") {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path.to_string_lossy().into_owned());
        }
    }
}

/// The module path of a file: `src/read/mod.rs` is `read`.
fn module_of(file: &str) -> Vec<String> {
    let path = file.trim_start_matches("src/").trim_end_matches(".rs");
    let mut parts: Vec<String> = path.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    if parts == ["lib"] {
        parts.clear();
    }
    parts
}

/// The code of a file without comments and without its test module.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn graph() -> Graph {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|file| (module_of(file), file.clone()))
        .collect();
    let resolve = |parts: &[String]| {
        (1..=parts.len())
            .rev()
            .find_map(|n| modules.get(&parts[..n]).cloned())
    };
    let path = Regex::new(r"\b(crate|super)((?:::\w+)+)(?:::\{([^}]*)\})?").unwrap();
    let declared = Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))? )?mod (\w+);").unwrap();
    let mut graph = Graph::new();
    for file in &files {
        let code = code_of(&std::fs::read_to_string(file).expect("a source file reads"));
        let me = module_of(file);
        let parent: Vec<String> = me[..me.len().saturating_sub(1)].to_vec();
        let mut targets = BTreeSet::new();
        for found in path.captures_iter(&code) {
            let mut base = if &found[1] == "crate" {
                Vec::new()
            } else {
                parent.clone()
            };
            base.extend(
                found[2]
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            );
            let items: Vec<&str> = found
                .get(3)
                .map(|group| group.as_str().split(',').map(str::trim).collect())
                .unwrap_or_default();
            targets.extend(resolve(&base));
            for item in items {
                let name = item.split(" as ").next().unwrap_or_default();
                if !name.is_empty() && name != "self" {
                    let mut full = base.clone();
                    full.extend(name.split("::").map(String::from));
                    targets.extend(resolve(&full));
                }
            }
        }
        for child in declared.captures_iter(&code) {
            let used = Regex::new(&format!(r"(?:^|[^:\w])(?:self::)?{}::", &child[1])).unwrap();
            if used.is_match(&code) {
                let mut full = me.clone();
                full.push(child[1].to_string());
                targets.extend(resolve(&full));
            }
        }
        // The file's own module and its parent module (the folder's face).
        targets.remove(file);
        if let Some(face) = modules.get(&parent).filter(|_| !me.is_empty()) {
            targets.remove(face);
        }
        graph.insert(file.clone(), targets);
    }
    graph
}

/// The circles: strongly connected sets of more than one file (Tarjan).
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(walk: &mut Walk<'a>, node: &'a str) {
        let at = walk.index.len();
        walk.index.insert(node, at);
        walk.low.insert(node, at);
        walk.stack.push(node);
        for next in &walk.graph[node] {
            if !walk.index.contains_key(next.as_str()) {
                visit(walk, next);
                let low = walk.low[next.as_str()].min(walk.low[node]);
                walk.low.insert(node, low);
            } else if walk.stack.contains(&next.as_str()) {
                let low = walk.index[next.as_str()].min(walk.low[node]);
                walk.low.insert(node, low);
            }
        }
        if walk.low[node] == walk.index[node] {
            let mut set = Vec::new();
            while let Some(top) = walk.stack.pop() {
                set.push(top.to_string());
                if top == node {
                    break;
                }
            }
            if set.len() > 1 {
                set.sort();
                walk.found.push(set);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            visit(&mut walk, node);
        }
    }
    walk.found.sort();
    walk.found
}

#[test]
fn no_circle_across_files() {
    let graph = graph();
    let found = circles(&graph);
    let known: Vec<Vec<String>> = KNOWN_CIRCLES
        .iter()
        .map(|set| set.iter().map(|f| f.to_string()).collect())
        .collect();
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    println!(
        "{} files, {edges} imports, {} circle(s): {found:?}",
        graph.len(),
        found.len()
    );
    assert_eq!(
        found, known,
        "the circles of src/ changed; break a new one (move what both files need into a \
         module below them), and update KNOWN_CIRCLES when one is broken"
    );
}

#[test]
fn no_import_from_a_later_stage() {
    let graph = graph();
    let later: Vec<(String, String)> = graph
        .iter()
        .flat_map(|(from, to)| to.iter().map(move |to| (from.clone(), to.clone())))
        .filter(|(from, to)| stage(to) > stage(from))
        .collect();
    let known: Vec<(String, String)> = KNOWN_LATER
        .iter()
        .map(|(from, to)| (from.to_string(), to.to_string()))
        .collect();
    println!("{} import(s) from a later stage: {later:?}", later.len());
    assert_eq!(
        later, known,
        "imports from a later stage changed; move what the earlier file needs down to its \
         stage or below, and update KNOWN_LATER when one is gone"
    );
}

/// The graph sees what it must: an import through a group, through
/// `super::` and through a declared child, and nothing in a comment.
#[test]
fn the_graph_reads_the_imports_it_must() {
    let graph = graph();
    let has = |from: &str, to: &str| graph[from].contains(to);
    // `use crate::read::{Merged, Source, merge_sources}`.
    assert!(has("src/check/mod.rs", "src/read/mod.rs"));
    // `use super::files::{...}` from the read folder's face.
    assert!(has("src/read/mod.rs", "src/read/files.rs"));
    // `mod grammar;` and `grammar::Field`.
    assert!(has("src/catalog.rs", "src/catalog/grammar.rs"));
    // Paths in doc comments are no imports: `keys.rs` names
    // `render::keys_source` only in its documentation.
    assert!(!has("src/keys.rs", "src/render/mod.rs"));
    // The command line is no part of the library's graph.
    assert!(graph.keys().all(|file| !file.starts_with("src/bin/")));
}
