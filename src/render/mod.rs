//! Rendering every artifact into one in-memory map of path to contents;
//! writing and `--check` both consume that map.

pub mod helm;
pub mod kustomize;
pub mod objects;
pub mod output;
pub mod values_doc;

pub use output::{Staging, differences, write_atomically};

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
    render_all_into(profiles_dir, release, &|_: &Artifacts| {})
}

/// Every artifact, rendered in memory; each group of files is also handed
/// to `ready` as soon as it is rendered, from the thread that rendered it,
/// so writing can overlap rendering. Files are handed over before the
/// profiles are validated: a caller that writes them must discard them when
/// this returns an error (a [`Staging`] folder does).
pub fn render_all_into(
    profiles_dir: &Path,
    release: &Release,
    ready: &(dyn Fn(&Artifacts) + Sync),
) -> Result<Artifacts, RenderError> {
    let profiles: Vec<(Profile, Vec<load::Source>)> = profiles(profiles_dir)?
        .into_iter()
        .map(|profile| {
            let sources = read_profile(&profile)?;
            Ok((profile, sources))
        })
        .collect::<Result<_, RenderError>>()?;
    // Independent jobs, pulled by two threads: this one takes them from
    // the front, the helper from the back. Jobs are small so that neither
    // thread is left with a long one while the other idles: the helper
    // often starts a millisecond late. The chart's schema and docs lead
    // (they build the schema the validator then needs); the chart
    // templates, which need nothing, are the helper's first. Each profile
    // is rendered ahead of its validation (the checker's job) and kept only
    // if every profile then passes.
    let chart_schema = || {
        let mut files = Artifacts::new();
        helm::render_chart_schema(&mut files);
        ready(&files);
        Ok(files)
    };
    let chart_docs = || {
        let mut files = Artifacts::new();
        helm::render_chart_docs(release, &mut files)?;
        ready(&files);
        Ok(files)
    };
    let chart_templates = || {
        let mut files = Artifacts::new();
        helm::render_chart_templates(&crate::catalog::Catalog::builtin(), release, &mut files)?;
        ready(&files);
        Ok(files)
    };
    let check_profiles = || {
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
            .collect::<Result<Vec<Model>, RenderError>>()
    };
    // The base profile's objects, for the other profiles' components: set
    // once by the base's job (to None if it could not render ahead).
    let base_objects = BaseObjects::default();
    let profile_ahead = |index: usize| {
        let (profile, sources) = &profiles[index];
        let is_base = profile.name == BASE_PROFILE;
        let publish = is_base.then(|| base_objects.publisher());
        let model = load::unchecked_model(sources, DEFAULT_NAMESPACE, release.clone())?;
        let mut rendered = render_profile(profile, &model, ready);
        if let Some(publish) = publish {
            publish.set(std::mem::take(&mut rendered.objects));
        } else {
            let base = base_objects.wait()?;
            let component = render_component(profile, base, &rendered.objects, ready);
            rendered.files.extend(component);
        }
        Some(rendered.files)
    };
    let mut jobs: Vec<Box<dyn Fn() -> Done + Sync + '_>> = vec![
        Box::new(|| Done::ChartFiles(chart_schema())),
        Box::new(|| Done::ChartFiles(chart_docs())),
    ];
    // The base profile first: the others wait for its objects.
    let mut order: Vec<usize> = (0..profiles.len()).collect();
    order.sort_by_key(|&index| profiles[index].0.name != BASE_PROFILE);
    for index in order {
        jobs.push(Box::new(move || Done::Profile(index, profile_ahead(index))));
    }
    jobs.push(Box::new(|| Done::Checked(check_profiles())));
    jobs.push(Box::new(|| Done::ChartFiles(chart_templates())));
    let jobs: Vec<&(dyn Fn() -> Done + Sync)> = jobs.iter().map(|job| &**job).collect();
    let mut chart = Artifacts::new();
    let mut ahead: Vec<Option<Artifacts>> = profiles.iter().map(|_| None).collect();
    let mut checked = None;
    for done in run_jobs(&jobs) {
        match done {
            Done::ChartFiles(files) => chart.extend(files?),
            Done::Profile(index, rendered) => ahead[index] = rendered,
            Done::Checked(models) => checked = Some(models),
        }
    }
    let models = checked.expect("every job reports")?;
    // A profile the unchecked reading could not take (the checker took it,
    // with its defaults) is rendered from its checked model, and so then
    // are the components, which need every profile's objects.
    let manifests = if ahead.iter().all(Option::is_some) {
        ahead.into_iter().flatten().flatten().collect()
    } else {
        render_models(&profiles, &models, ready)
    };
    chart.extend(manifests);
    Ok(chart)
}

/// What a render job produced.
enum Done {
    ChartFiles(Result<Artifacts, RenderError>),
    /// A profile's index, and its files rendered from the unchecked model
    /// (none when that could not be read).
    Profile(usize, Option<Artifacts>),
    /// The profiles' checked models, or the first profile's problems.
    Checked(Result<Vec<Model>, RenderError>),
}

/// Runs every job, on this thread and one more; returns the results in
/// the order they finished.
///
/// Two workers for two cores, pulling work rather than owning a fixed
/// share: a new thread may still start late, and meanwhile this one goes
/// on with the next job.
/// This thread takes jobs from the front (longest first), the helper from
/// the back, so a helper that stalls holds the shortest job left.
fn run_jobs<T: Send>(jobs: &[&(dyn Fn() -> T + Sync)]) -> Vec<T> {
    // The next job from the front and the end of the jobs not yet taken.
    let left = std::sync::Mutex::new((0, jobs.len()));
    let take = |from_front: bool| {
        let mut left = left.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (front, back) = &mut *left;
        if front == back {
            None
        } else if from_front {
            *front += 1;
            Some(jobs[*front - 1])
        } else {
            *back -= 1;
            Some(jobs[*back])
        }
    };
    let (send, receive) = std::sync::mpsc::channel();
    let work = |send: std::sync::mpsc::Sender<T>, from_front: bool| {
        while let Some(job) = take(from_front) {
            // The receiver is alive until every result arrived.
            let _ = send.send(job());
        }
    };
    std::thread::scope(|scope| {
        let helper = send.clone();
        crate::cpu::spawn_elsewhere(scope, || work(helper, false));
        std::thread::yield_now();
        work(send, true);
        // Both senders are gone once the jobs are done (or a worker
        // panicked, which the scope then reports).
        receive.iter().take(jobs.len()).collect()
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

/// A profile's objects, and the files rendered from it alone.
struct RenderedProfile {
    objects: Vec<Value>,
    files: Artifacts,
}

/// The install manifest of one profile, and for the base profile the
/// kustomize base (the same objects, written as YAML once for both).
fn render_profile(
    profile: &Profile,
    model: &Model,
    ready: &(dyn Fn(&Artifacts) + Sync),
) -> RenderedProfile {
    let header = format!(
        "# {}\n# Profile: values/profiles/{}.yaml. Namespace: {}.\n",
        helm::GENERATED_BY,
        profile.name,
        model.namespace
    );
    let mut objects = vec![objects::namespace(model, objects::ASOGEN)];
    objects.extend(objects::objects(model, objects::ASOGEN));
    let texts: Vec<String> = objects.iter().map(crate::emit::to_yaml).collect();
    let mut files = Artifacts::new();
    files.insert(
        format!("manifests/{}.yaml", profile.name),
        stream_texts(&texts, &header),
    );
    if profile.name == BASE_PROFILE {
        kustomize::render_base(&objects, &texts, BASE_PROFILE, &mut files);
    }
    ready(&files);
    RenderedProfile { objects, files }
}

/// The install manifests and the kustomize tree, from the profiles' models.
fn render_models(
    profiles: &[(Profile, Vec<load::Source>)],
    models: &[Model],
    ready: &(dyn Fn(&Artifacts) + Sync),
) -> Artifacts {
    let rendered: Vec<RenderedProfile> = profiles
        .iter()
        .zip(models)
        .map(|((profile, _), model)| render_profile(profile, model, ready))
        .collect();
    let base = profiles
        .iter()
        .position(|(profile, _)| profile.name == BASE_PROFILE)
        .expect("profiles() requires the base profile");
    let mut artifacts = Artifacts::new();
    for ((profile, _), this) in profiles.iter().zip(&rendered) {
        if profile.name != BASE_PROFILE {
            let component =
                render_component(profile, &rendered[base].objects, &this.objects, ready);
            artifacts.extend(component);
        }
    }
    for profile in rendered {
        artifacts.extend(profile.files);
    }
    artifacts
}

/// The kustomize component of a profile other than the base: JSON
/// patches against the base's objects.
fn render_component(
    profile: &Profile,
    base: &[Value],
    objects: &[Value],
    ready: &(dyn Fn(&Artifacts) + Sync),
) -> Artifacts {
    let mut files = Artifacts::new();
    kustomize::render_component(&profile.name, base, objects, &mut files);
    ready(&files);
    files
}

/// The base profile's objects, handed from its render job to the jobs of
/// the other profiles.
#[derive(Default)]
struct BaseObjects(std::sync::OnceLock<Option<Vec<Value>>>);

impl BaseObjects {
    /// The base's objects once its job is done; None if it could not
    /// render them ahead.
    fn wait(&self) -> Option<&[Value]> {
        self.0.wait().as_deref()
    }

    /// Publishes the objects; dropped without `set` (the base could not
    /// render ahead, or its job panicked), it publishes None, so that no
    /// job waits for ever.
    fn publisher(&self) -> BasePublisher<'_> {
        BasePublisher(&self.0)
    }
}

struct BasePublisher<'a>(&'a std::sync::OnceLock<Option<Vec<Value>>>);

impl BasePublisher<'_> {
    fn set(self, objects: Vec<Value>) {
        let _ = self.0.set(Some(objects));
    }
}

impl Drop for BasePublisher<'_> {
    fn drop(&mut self) {
        let _ = self.0.set(None);
    }
}
