//! Rendering every artifact into one in-memory map of path to contents;
//! writing and `--check` both consume that map.

pub mod helm;
pub mod kustomize;
pub mod objects;
pub mod values_doc;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::diagnostics::Diagnostic;
use crate::load::{self, Checker};
use crate::model::{DEFAULT_NAMESPACE, Model, Release};

/// Relative path to file contents.
pub type Artifacts = BTreeMap<String, String>;

/// The profile the kustomize base and the chart defaults stand for.
pub const BASE_PROFILE: &str = "ha";

/// A values profile under `values/profiles/`.
#[derive(Debug, Clone)]
pub struct Profile {
    /// File stem, e.g. `ha`.
    pub name: String,
    /// The file.
    pub path: PathBuf,
}

/// Why rendering failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A profile could not be read or listed.
    #[error("{0}")]
    Io(String),
    /// A profile breaks the rules or the schema; it is never rendered.
    #[error("profile {profile} is invalid")]
    InvalidProfile {
        /// The profile.
        profile: String,
        /// What is wrong with it.
        diagnostics: Vec<Diagnostic>,
        /// The sources, to show the offending lines.
        sources: Vec<load::Source>,
    },
    /// A template failed to render (a bug in asogen's templates).
    #[error("template error: {0}")]
    Template(#[from] minijinja::Error),
}

/// Lists `values/profiles/*.yaml`, sorted by name.
pub fn profiles(dir: &Path) -> Result<Vec<Profile>, RenderError> {
    let entries = std::fs::read_dir(dir).map_err(|err| {
        RenderError::Io(format!("cannot list profiles in {}: {err}", dir.display()))
    })?;
    let mut profiles = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|err| RenderError::Io(err.to_string()))?
            .path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let name = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            profiles.push(Profile { name, path });
        }
    }
    profiles.sort_by(|a, b| a.name.cmp(&b.name));
    if !profiles.iter().any(|p| p.name == BASE_PROFILE) {
        return Err(RenderError::Io(format!(
            "{} has no {BASE_PROFILE}.yaml profile (the kustomize base)",
            dir.display()
        )));
    }
    Ok(profiles)
}

/// The install manifest text for a model: a header then every object.
pub fn manifest(model: &Model, with_namespace: bool, header: &str) -> String {
    let mut objects = Vec::new();
    if with_namespace {
        objects.push(objects::namespace(model, objects::ASOGEN));
    }
    objects.extend(objects::objects(model, objects::ASOGEN));
    stream(&objects, header)
}

/// Objects as a YAML stream.
pub fn stream(objects: &[Value], header: &str) -> String {
    let texts: Vec<String> = objects.iter().map(crate::emit::to_yaml).collect();
    stream_texts(&texts, header)
}

/// Objects already written as YAML, as one stream.
fn stream_texts(texts: &[String], header: &str) -> String {
    let mut out =
        String::with_capacity(header.len() + texts.iter().map(|t| t.len() + 4).sum::<usize>());
    out.push_str(header);
    for text in texts {
        out.push_str("---\n");
        out.push_str(text);
    }
    out
}

/// The Deployment asogen renders for a model.
pub fn deployment(model: &Model) -> Value {
    objects::objects(model, objects::ASOGEN)
        .into_iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("every install has the controller Deployment")
}

/// Every artifact, rendered in memory.
pub fn render_all(profiles_dir: &Path, release: &Release) -> Result<Artifacts, RenderError> {
    let catalog = crate::catalog::Catalog::builtin();
    let profiles: Vec<(Profile, Vec<load::Source>)> = profiles(profiles_dir)?
        .into_iter()
        .map(|profile| {
            let sources = read_profile(&profile)?;
            Ok((profile, sources))
        })
        .collect::<Result<_, RenderError>>()?;
    std::thread::scope(|scope| {
        // Three independent pieces of work: the chart; compiling the schema
        // validator; and the profiles, rendered ahead of their validation
        // and kept only if every profile then passes.
        let chart = scope.spawn(|| {
            let mut chart = Artifacts::new();
            helm::render_chart(&catalog, release, &mut chart).map(|()| chart)
        });
        let checker = scope.spawn(|| {
            Checker::for_sources(
                release.clone(),
                profiles.iter().flat_map(|(_, sources)| sources),
            )
        });
        let ahead: Option<Vec<Model>> = profiles
            .iter()
            .map(|(_, sources)| load::unchecked_model(sources, DEFAULT_NAMESPACE, release.clone()))
            .collect();
        let rendered_ahead = ahead
            .as_ref()
            .map(|models| render_models(&profiles, models));
        let checker = checker.join().expect("compiling the schema does not panic");
        let mut models = Vec::new();
        for (profile, sources) in &profiles {
            let model = checker
                .check(sources, DEFAULT_NAMESPACE)
                .map_err(|diagnostics| RenderError::InvalidProfile {
                    profile: profile.path.display().to_string(),
                    diagnostics,
                    sources: sources.clone(),
                })?;
            models.push(model);
        }
        let manifests = match rendered_ahead {
            Some(rendered) => rendered,
            None => render_models(&profiles, &models),
        };
        let mut artifacts = chart.join().expect("chart rendering does not panic")?;
        artifacts.extend(manifests);
        Ok(artifacts)
    })
}

fn read_profile(profile: &Profile) -> Result<Vec<load::Source>, RenderError> {
    let source = load::read_source(&profile.path).map_err(|err| match err {
        load::LoadError::Io(d) | load::LoadError::Invalid(d) => RenderError::InvalidProfile {
            profile: profile.path.display().to_string(),
            diagnostics: d,
            sources: Vec::new(),
        },
    })?;
    Ok(vec![source])
}

/// The install manifests and the kustomize tree, from the profiles' models.
fn render_models(profiles: &[(Profile, Vec<load::Source>)], models: &[Model]) -> Artifacts {
    let built: Vec<(&str, String, Vec<Value>)> = profiles
        .iter()
        .zip(models)
        .map(|((profile, _), model)| {
            let header = format!(
                "# {}\n# Profile: values/profiles/{}.yaml. Namespace: {}.\n",
                helm::GENERATED_BY,
                profile.name,
                model.namespace
            );
            let mut objects = vec![objects::namespace(model, objects::ASOGEN)];
            objects.extend(objects::objects(model, objects::ASOGEN));
            (profile.name.as_str(), header, objects)
        })
        .collect();
    let base = &built
        .iter()
        .find(|(name, _, _)| *name == BASE_PROFILE)
        .expect("profiles() requires the base profile")
        .2;
    std::thread::scope(|scope| {
        // The components (JSON patches against the base) on one core...
        let components = scope.spawn(|| {
            let mut artifacts = Artifacts::new();
            for (name, _, objects) in built.iter().filter(|(name, _, _)| *name != BASE_PROFILE) {
                kustomize::render_component(name, base, objects, &mut artifacts);
            }
            artifacts
        });
        // ...the manifests and the base on the other: one set of objects,
        // each written as YAML once, feeds both.
        let mut artifacts = Artifacts::new();
        for (name, header, objects) in &built {
            let texts: Vec<String> = objects.iter().map(crate::emit::to_yaml).collect();
            artifacts.insert(
                format!("manifests/{name}.yaml"),
                stream_texts(&texts, header),
            );
            if *name == BASE_PROFILE {
                kustomize::render_base(objects, &texts, BASE_PROFILE, &mut artifacts);
            }
        }
        artifacts.extend(
            components
                .join()
                .expect("kustomize rendering does not panic"),
        );
        artifacts
    })
}

/// Whether `out` holds exactly `artifacts`, byte for byte, and nothing else.
fn tree_matches<C: AsRef<[u8]>>(out: &Path, artifacts: &BTreeMap<String, C>) -> bool {
    fn count_files(dir: &Path) -> Option<usize> {
        let mut count = 0;
        for entry in std::fs::read_dir(dir).ok()? {
            let entry = entry.ok()?;
            let kind = entry.file_type().ok()?;
            if kind.is_dir() {
                count += count_files(&entry.path())?;
            } else {
                count += 1;
            }
        }
        Some(count)
    }
    out.is_dir()
        && count_files(out) == Some(artifacts.len())
        && artifacts.iter().all(|(path, contents)| {
            std::fs::read(out.join(path)).is_ok_and(|bytes| bytes == contents.as_ref())
        })
}

/// Files that differ between `artifacts` and the folder `out`.
pub fn differences(
    out: &Path,
    artifacts: &Artifacts,
) -> Vec<(String, Option<String>, Option<String>)> {
    let mut found = BTreeMap::new();
    collect_files(out, out, &mut found);
    let mut diffs = Vec::new();
    for (path, want) in artifacts {
        match found.remove(path) {
            Some(have) if &have == want => {}
            have => diffs.push((path.clone(), have, Some(want.clone()))),
        }
    }
    for (path, have) in found {
        diffs.push((path, Some(have), None));
    }
    diffs
}

fn collect_files(root: &Path, dir: &Path, found: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(root, &path, found);
        } else if let Ok(relative) = path.strip_prefix(root) {
            let text = std::fs::read(&path)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            found.insert(relative.to_string_lossy().replace('\\', "/"), text);
        }
    }
}

/// Writes every file under `root` (its folders exist) on two threads.
/// Creating a file locks its folder, so the files are split by folder:
/// creating files is most of the cost of writing a tree this small.
fn write_files_in_parallel<C: AsRef<[u8]> + Sync>(
    root: &Path,
    artifacts: &BTreeMap<String, C>,
) -> std::io::Result<()> {
    let mut by_folder: BTreeMap<&str, Vec<(&String, &C)>> = BTreeMap::new();
    for (path, contents) in artifacts {
        let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
        by_folder.entry(folder).or_default().push((path, contents));
    }
    // Largest folders first, each to the lighter of two halves.
    let mut folders: Vec<_> = by_folder.into_values().collect();
    folders.sort_by_key(|files| std::cmp::Reverse(files.len()));
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for files in folders {
        if first.len() <= second.len() {
            first.extend(files);
        } else {
            second.extend(files);
        }
    }
    let write = |files: Vec<(&String, &C)>| -> std::io::Result<()> {
        for (path, contents) in files {
            std::fs::write(root.join(path), contents)?;
        }
        Ok(())
    };
    std::thread::scope(|scope| {
        let other = scope.spawn(|| write(second));
        let here = write(first);
        let other = other.join().expect("writing files does not panic");
        here.and(other)
    })
}

/// Writes `artifacts` as the whole content of `out`, atomically: the new
/// tree is written beside it and swapped in by renames, so a failure
/// leaves the old tree as it was. A lock file serialises concurrent renders.
/// Returns false when `out` already held exactly these files (nothing is
/// written then, so an up-to-date tree keeps its timestamps).
pub fn write_atomically<C: AsRef<[u8]> + Sync>(
    out: &Path,
    artifacts: &BTreeMap<String, C>,
) -> std::io::Result<bool> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("{} is not a folder name", out.display())))?
        .to_string_lossy()
        .to_string();
    if out.exists() && !out.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} exists and is not a folder",
            out.display()
        )));
    }
    std::fs::create_dir_all(&parent)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(parent.join(format!(".{name}.lock")))?;
    lock.lock()?;
    let staging = parent.join(format!(".{name}.new-{}", std::process::id()));
    let retired = parent.join(format!(".{name}.old-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    if tree_matches(out, artifacts) {
        return Ok(false);
    }
    let result = (|| {
        let folders: std::collections::BTreeSet<PathBuf> = artifacts
            .keys()
            .filter_map(|path| staging.join(path).parent().map(Path::to_path_buf))
            .collect();
        for folder in &folders {
            std::fs::create_dir_all(folder)?;
        }
        write_files_in_parallel(&staging, artifacts)?;
        if out.exists() {
            std::fs::rename(out, &retired)?;
        }
        if let Err(err) = std::fs::rename(&staging, out) {
            // Put the old tree back before reporting.
            if retired.exists() {
                let _ = std::fs::rename(&retired, out);
            }
            return Err(err);
        }
        let _ = std::fs::remove_dir_all(&retired);
        Ok(true)
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    // The lock file stays: removing it would race with a waiting render.
    result
}
