//! Rendering every artifact as maps of path to contents: in parts
//! ([`render_in_parts`]), which `render` writes one at a time, or into one
//! map ([`render_all`]), which `--check` and `release` compare or pack.

pub mod helm;
pub mod kustomize;
pub mod objects;
pub mod output;
pub mod values_doc;

mod catalog_source;
mod keys_source;
pub mod sourcegen;

pub use output::{CompareError, Difference, Have, differences, write_file_atomically};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::check::Checker;
use crate::diagnostics::Diagnostic;
use crate::model::{DEFAULT_NAMESPACE, Model, Release};
use crate::read;

/// Relative path to file contents.
pub type Artifacts = BTreeMap<String, String>;

/// The profile the kustomize base and the chart defaults stand for.
pub const BASE_PROFILE: &str = "ha";

/// A values profile: a file of a `--profiles` folder, or one built in.
#[derive(Debug, Clone)]
pub struct Profile {
    /// File stem, e.g. `ha`.
    pub name: String,
    /// The file (for a built-in profile, where it lives in the repository).
    pub path: PathBuf,
    /// A built-in profile's text (None: read `path`).
    pub builtin: Option<&'static str>,
}

pub use crate::read::profiles::{BUILTIN_PROFILES, builtin_profile};

/// The built-in profiles, sorted by name.
pub fn builtin_profiles() -> Vec<Profile> {
    let mut profiles: Vec<Profile> = BUILTIN_PROFILES
        .iter()
        .map(|(name, text)| Profile {
            name: (*name).to_string(),
            path: PathBuf::from(format!("values/profiles/{name}.yaml")),
            builtin: Some(text),
        })
        .collect();
    profiles.sort_by(|a, b| a.name.cmp(&b.name));
    profiles
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
        sources: Vec<read::Source>,
    },
    /// A template failed to render (a bug in asogen's templates).
    #[error("template error: {0}")]
    Template(#[from] minijinja::Error),
}

/// Lists the profiles of a folder (its `*.yaml` and `*.yml` files, see
/// [`output_folder::listing::yaml_files`]), sorted by name; the base profile must be
/// one of them.
pub fn profiles(dir: &Path) -> Result<Vec<Profile>, RenderError> {
    let files = output_folder::listing::yaml_files(dir).map_err(|err| {
        RenderError::Io(format!("cannot list profiles in {}: {err}", dir.display()))
    })?;
    let mut profiles: Vec<Profile> = files
        .into_iter()
        .map(|path| Profile {
            name: output_folder::listing::stem(&path),
            path,
            builtin: None,
        })
        .collect();
    profiles.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(pair) = profiles
        .windows(2)
        .find(|pair| pair[0].name == pair[1].name)
    {
        return Err(RenderError::Io(format!(
            "{} and {} are both the profile {}; remove one",
            pair[0].path.display(),
            pair[1].path.display(),
            pair[0].name
        )));
    }
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
    manifest_for(model, with_namespace, header, objects::ASOGEN)
}

/// The install manifest text for a model, as `installer` (a release name
/// and cluster) installs it.
pub fn manifest_for(
    model: &Model,
    with_namespace: bool,
    header: &str,
    installer: objects::Installer,
) -> String {
    let install = objects::Install::new(model, installer);
    let mut out = String::new();
    manifest_start(&install, with_namespace, header, &mut out);
    install.write_texts(SEPARATOR, &mut out);
    out
}

/// What a manifest starts with: `header`, then the Namespace if wanted.
fn manifest_start(
    install: &objects::Install,
    with_namespace: bool,
    header: &str,
    out: &mut String,
) {
    out.push_str(header);
    if with_namespace {
        out.push_str(SEPARATOR);
        out.push_str(&chart_template::emit::to_yaml(&install.namespace()));
    }
}

/// An install's manifest text ([`manifest_for`]), handed to `print` in parts of about [`PART`] bytes
/// as it is written: one buffer, reused, where the whole manifest would
/// take 800 KiB and a page fault per 4 KiB of it, twice over as it grew.
pub fn print_manifest(
    install: &objects::Install,
    with_namespace: bool,
    header: &str,
    mut print: impl FnMut(&str),
) {
    let mut out = String::with_capacity(2 * PART);
    manifest_start(install, with_namespace, header, &mut out);
    install.write_texts_with(SEPARATOR, &mut out, |out| {
        if out.len() >= PART {
            print(out);
            out.clear();
        }
    });
    print(&out);
}

/// How much of a manifest [`print_manifest`] gathers before printing it.
const PART: usize = 64 * 1024;

/// What starts each object of a YAML stream.
const SEPARATOR: &str = "---\n";

/// Objects as a YAML stream.
pub fn stream(objects: &[Value], header: &str) -> String {
    let texts: Vec<String> = objects.iter().map(chart_template::emit::to_yaml).collect();
    stream_texts(&texts, header)
}

/// Objects already written as YAML, as one stream with no header.
pub fn stream_of_texts<T: AsRef<str>>(texts: &[T]) -> String {
    stream_texts(texts, "")
}

/// Objects already written as YAML, as one stream.
fn stream_texts<T: AsRef<str>>(texts: &[T], header: &str) -> String {
    let mut out = String::with_capacity(
        header.len() + texts.iter().map(|t| t.as_ref().len() + 4).sum::<usize>(),
    );
    out.push_str(header);
    for text in texts {
        out.push_str(SEPARATOR);
        out.push_str(text.as_ref());
    }
    out
}

/// The Deployments asogen renders for a model, in install order (the
/// controller's, then under topology split or bridge the webhooks').
pub fn deployments(model: &Model) -> Vec<Value> {
    objects::Install::new(model, objects::ASOGEN).objects_of_kind("Deployment")
}

/// Every artifact, rendered in memory, in order: the profiles are listed,
/// read and checked (an invalid profile stops the render before anything
/// is rendered), then the chart, each profile's install manifest, the
/// kustomize base and the components are rendered into one map.
/// `profiles_dir` None renders the built-in profiles.
pub fn render_all(
    profiles_dir: Option<&Path>,
    release: &Release,
) -> Result<Artifacts, RenderError> {
    let mut all = Artifacts::new();
    render_in_parts(profiles_dir, release, |part| {
        all.extend(part);
        Ok::<(), RenderError>(())
    })?;
    Ok(all)
}

/// [`render_all`] handed to `take` in parts (the chart, then each
/// profile's manifest, base or component), each dropped once taken, so a
/// writer holds one part at a time instead of every artifact. Every
/// profile is checked before the first part; an error of `take` stops it.
pub fn render_in_parts<E: From<RenderError>>(
    profiles_dir: Option<&Path>,
    release: &Release,
    mut take: impl FnMut(Artifacts) -> Result<(), E>,
) -> Result<(), E> {
    let listed = match profiles_dir {
        Some(dir) => profiles(dir)?,
        None => builtin_profiles(),
    };
    let profiles: Vec<(Profile, Vec<read::Source>)> = listed
        .into_iter()
        .map(|profile| {
            let sources = read_profile(&profile)?;
            Ok((profile, sources))
        })
        .collect::<Result<_, RenderError>>()?;
    let models = check_profiles(&profiles, release)?;

    let mut artifacts = Artifacts::new();
    helm::render_chart_schema(&mut artifacts);
    helm::render_chart_docs(release, &mut artifacts).map_err(RenderError::from)?;
    helm::render_chart_templates(&crate::catalog::Catalog::builtin(), release, &mut artifacts)
        .map_err(RenderError::from)?;
    take(std::mem::take(&mut artifacts))?;

    let base = profiles
        .iter()
        .position(|(profile, _)| profile.name == BASE_PROFILE)
        .expect("profiles() requires the base profile");
    let base = objects::Install::new(&models[base], objects::ASOGEN);
    for ((profile, _), model) in profiles.iter().zip(&models) {
        let install = objects::Install::new(model, objects::ASOGEN);
        render_profile(profile, &install, model, &mut artifacts);
        take(std::mem::take(&mut artifacts))?;
        if profile.name != BASE_PROFILE {
            // Only the objects that may differ from the base's are
            // evaluated again, and only for as long as the component takes.
            let (from, to): (Vec<_>, Vec<_>) = base
                .differing(&install)
                .into_iter()
                .map(|pair| (pair.base, pair.other))
                .unzip();
            let from: Vec<Value> = from.into_iter().flatten().collect();
            let to: Vec<Value> = to.into_iter().flatten().collect();
            kustomize::render_component(&profile.name, &from, &to, &mut artifacts);
            take(std::mem::take(&mut artifacts))?;
        }
    }
    Ok(())
}

/// The model of every profile, or the problems of the first invalid one.
fn check_profiles(
    profiles: &[(Profile, Vec<read::Source>)],
    release: &Release,
) -> Result<Vec<Model>, RenderError> {
    let checker = Checker::for_sources(
        release.clone(),
        profiles.iter().flat_map(|(_, sources)| sources),
    );
    profiles
        .iter()
        .map(|(profile, sources)| {
            checker
                .check(sources, DEFAULT_NAMESPACE)
                .map_err(|diagnostics| RenderError::InvalidProfile {
                    profile: profile.path.display().to_string(),
                    diagnostics,
                    sources: sources.clone(),
                })
        })
        .collect()
}

fn read_profile(profile: &Profile) -> Result<Vec<read::Source>, RenderError> {
    let read = match profile.builtin {
        Some(text) => read::parse_source(profile.path.display().to_string(), text.to_string()),
        None => read::read_source(&profile.path),
    };
    let source = read.map_err(|err| match err {
        read::LoadError::Io(d) | read::LoadError::Invalid(d) => RenderError::InvalidProfile {
            profile: profile.path.display().to_string(),
            diagnostics: d,
            sources: Vec::new(),
        },
    })?;
    Ok(vec![source])
}

/// The install manifest of one profile into `artifacts`, and for the base
/// profile the kustomize base (the same objects, written as YAML once for
/// both).
fn render_profile(
    profile: &Profile,
    install: &objects::Install,
    model: &Model,
    artifacts: &mut Artifacts,
) {
    let header = format!(
        "# {}\n# Profile: values/profiles/{}.yaml. Namespace: {}.\n",
        helm::GENERATED_BY,
        profile.name,
        model.namespace
    );
    let manifest = format!("manifests/{}.yaml", profile.name);
    let namespace = install.namespace();
    if profile.name == BASE_PROFILE {
        // The base files are named after their objects' heads; their texts
        // are the install's own (shared with its text cache), so no object
        // is held whole beyond its turn.
        let mut texts = vec![Arc::from(chart_template::emit::to_yaml(&namespace))];
        texts.extend(install.texts());
        let mut heads = vec![namespace];
        heads.extend(install.heads());
        artifacts.insert(manifest, stream_texts(&texts, &header));
        kustomize::render_base(&heads, &texts, BASE_PROFILE, artifacts);
    } else {
        // Texts only: each object is dropped once written.
        let mut texts = vec![Arc::from(chart_template::emit::to_yaml(&namespace))];
        texts.extend(install.texts());
        artifacts.insert(manifest, stream_texts(&texts, &header));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile added to values/profiles/ must be built in too, or a
    /// released binary would render without it.
    #[test]
    fn every_profile_file_is_built_in_as_it_is() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("values/profiles");
        let files = profiles(&dir).expect("values/profiles lists");
        let builtin = builtin_profiles();
        let names = |list: &[Profile]| list.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&builtin),
            names(&files),
            "add every values/profiles file to BUILTIN_PROFILES in src/render/mod.rs"
        );
        for (file, builtin) in files.iter().zip(&builtin) {
            assert_eq!(
                std::fs::read_to_string(&file.path).unwrap(),
                builtin.builtin.unwrap(),
                "{}",
                file.name
            );
        }
    }
}
