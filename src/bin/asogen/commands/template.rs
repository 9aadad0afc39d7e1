//! `asogen template`: the install manifest for the given values, to
//! standard output; or, in fleet mode, one manifest per values file of a
//! folder, written to an output folder in one atomic step, every invalid
//! file reported and the others still rendered.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{FleetError, Problems, Status, ValuesError, WriteFailed, error_line, human};
use crate::cli::TemplateFormat;
use crate::config::{TemplateConfig, TemplateInput};
use asogen::check::Checker;
use asogen::exit::{EXIT_FAILED, EXIT_USAGE};
use asogen::model::Release;
use asogen::output::Stdout;
use asogen::read::ValuesInput;
use asogen::render::{self, objects};
use output_folder::write::{Accept, OutputFolder};

/// Why `template` failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The values cannot be read (exit 2) or do not parse (exit 1).
    #[error(transparent)]
    Values(#[from] ValuesError),
    /// The values are refused (exit 1); nothing is rendered.
    #[error("the values are invalid: {} problem(s); nothing was rendered", .0.diagnostics.len())]
    Invalid(Problems),
    /// Fleet mode: the folder or the shared values cannot be used.
    #[error(transparent)]
    Fleet(#[from] FleetError),
    /// Fleet mode: two values files would write the same manifest.
    #[error("two values files in {} would both write {name}; rename one", .dir.display())]
    Collision {
        /// The fleet folder.
        dir: PathBuf,
        /// The manifest both would write.
        name: String,
    },
    /// `--show-only` names no template that renders an object.
    #[error("could not find template {pattern} in chart{}\nhelp: {help}", .reason)]
    NoSuchTemplate {
        /// The pattern given.
        pattern: String,
        /// Why nothing matched, when the template exists.
        reason: String,
        /// The templates that render an object for these values.
        help: String,
    },
    /// The output folder cannot be written; it is left as it was.
    #[error(transparent)]
    Write(#[from] WriteFailed),
}

impl super::Failure for Error {
    /// 1 for values that do not parse or are refused, else 2.
    fn exit_code(&self) -> u8 {
        match self {
            Error::Values(err) => err.exit_code(),
            Error::Invalid(_) => EXIT_FAILED,
            Error::Fleet(err) => err.exit_code(),
            Error::Collision { .. } | Error::Write(_) | Error::NoSuchTemplate { .. } => EXIT_USAGE,
        }
    }

    /// What to print: the problems, or the message.
    fn report(&self) -> String {
        match self {
            Error::Values(err) => err.report(),
            Error::Invalid(problems) => problems.human(),
            Error::Fleet(err) => err.report(),
            other => error_line(other),
        }
    }
}

/// Renders the manifest, or the fleet's manifests.
pub fn run<W: Write>(config: &TemplateConfig, stdout: &mut Stdout<W>) -> Result<Status, Error> {
    match &config.input {
        TemplateInput::Values(values) => one(values, config, stdout),
        TemplateInput::Fleet { dir, out, shared } => fleet(dir, out, shared, config),
    }
}

/// One manifest, to standard output.
fn one<W: Write>(
    values: &ValuesInput,
    config: &TemplateConfig,
    stdout: &mut Stdout<W>,
) -> Result<Status, Error> {
    let sources = super::read_values(values)?;
    // Checked once: compile only the part of the schema these values write.
    let checker = Checker::for_sources(Release::default(), &sources);
    let warnings = checker.warnings(&sources);
    if !warnings.is_empty() {
        eprint!("{}", human(&warnings, &sources));
    }
    let model = checker
        .check(&sources, &config.namespace)
        .map_err(|diagnostics| {
            Error::Invalid(Problems {
                diagnostics,
                sources: sources.clone(),
            })
        })?;
    let install = objects::Install::new(&model, installer(config));
    // The Namespace is no chart template's: --show-only leaves it out.
    let namespace = config.create_namespace && config.show_only.is_empty();
    let patterns = &config.show_only;
    match (&config.output_dir, config.output) {
        (Some(dir), _) => {
            let selected = select(&install, install.texts_by_file(), patterns)?;
            let namespace = namespace.then(|| chart_template::emit::to_yaml(&install.namespace()));
            return write_templates(dir, &values.files, &selected, namespace);
        }
        // The common case, from the cached object texts.
        (None, TemplateFormat::Yaml) if patterns.is_empty() => {
            render::print_manifest(&install, namespace, "", |part| stdout.print(part))
        }
        (None, TemplateFormat::Yaml) => {
            let selected = select(&install, install.texts_by_file(), patterns)?;
            let texts: Vec<_> = selected.into_iter().map(|(_, text)| text).collect();
            stdout.print(render::stream_of_texts(&texts));
        }
        (None, TemplateFormat::Json) => {
            let selected = select(&install, install.objects_by_file(), patterns)?;
            let mut items = Vec::with_capacity(selected.len() + 1);
            if namespace {
                items.push(install.namespace());
            }
            items.extend(selected.into_iter().map(|(_, object)| object));
            stdout.println(json_list(items));
        }
    }
    Ok(Status::Success)
}

/// The release name and the cluster of `template`.
fn installer(config: &TemplateConfig) -> objects::Installer<'_> {
    objects::Installer {
        instance: &config.release_name,
        capabilities: &config.capabilities,
        ..objects::ASOGEN
    }
}

/// Objects as kubectl prints several (`kubectl get -o json`): one `List`,
/// which `kubectl apply -f` and `jq '.items[]'` both take.
fn json_list(items: Vec<serde_json::Value>) -> String {
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    serde_json::to_string_pretty(&list).expect("objects serialize")
}

/// The objects of the templates `patterns` match (all when there are no
/// patterns; each pattern must match a template that renders an object, as
/// `helm template -s` requires), in install order. A pattern is a path under
/// the chart (`templates/FILE`), optionally after the chart's name.
fn select<T>(
    install: &objects::Install,
    rendered: Vec<(String, T)>,
    patterns: &[String],
) -> Result<Vec<(String, T)>, Error> {
    if patterns.is_empty() {
        return Ok(rendered);
    }
    let chart_prefix = format!("{}/", asogen::names::CHART_NAME);
    let patterns: Vec<&str> = patterns
        .iter()
        .map(|pattern| {
            let pattern = pattern.trim_start_matches("./");
            pattern.strip_prefix(&chart_prefix).unwrap_or(pattern)
        })
        .collect();
    let path = |file: &str| format!("templates/{file}");
    for pattern in &patterns {
        if rendered
            .iter()
            .any(|(file, _)| go_semantics::filepath::matches(pattern, &path(file)))
        {
            continue;
        }
        let exists = install
            .template_files()
            .iter()
            .any(|file| go_semantics::filepath::matches(pattern, &path(file)));
        let names: Vec<String> = rendered.iter().map(|(file, _)| path(file)).collect();
        let shown = if names.len() > 8 {
            format!("{}, ... ({} in all)", names[..8].join(", "), names.len())
        } else {
            names.join(", ")
        };
        return Err(Error::NoSuchTemplate {
            pattern: pattern.to_string(),
            reason: if exists {
                ": it renders nothing for these values".into()
            } else {
                String::new()
            },
            help: format!(
                "give a path under the chart, e.g. -s templates/deployment.yaml; these render objects: {shown}"
            ),
        });
    }
    Ok(rendered
        .into_iter()
        .filter(|(file, _)| {
            patterns
                .iter()
                .any(|pattern| go_semantics::filepath::matches(pattern, &path(file)))
        })
        .collect())
}

/// `--output-dir`: each template's objects in
/// DIR/azure-service-operator/templates/FILE, with Helm's `# Source:` line,
/// as `helm template --output-dir` writes them; the Namespace, which no
/// template renders, in DIR/azure-service-operator/namespace.yaml. The
/// folder follows asogen's output rules (a marker names the files it owns;
/// a folder of other files is refused).
fn write_templates(
    dir: &Path,
    inputs: &[PathBuf],
    selected: &[(String, std::sync::Arc<str>)],
    namespace: Option<String>,
) -> Result<Status, Error> {
    let chart = asogen::names::CHART_NAME;
    let mut files = std::collections::BTreeMap::new();
    if let Some(namespace) = namespace {
        files.insert(
            format!("{chart}/namespace.yaml"),
            format!("---\n{namespace}"),
        );
    }
    for (file, text) in selected {
        let path = format!("{chart}/templates/{file}");
        files.insert(path.clone(), format!("---\n# Source: {path}\n{text}"));
    }
    let fail = WriteFailed::at(dir);
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let folder = OutputFolder::open(dir, "template", &inputs, Accept::Outputs).map_err(fail)?;
    folder.put_all(&files).map_err(fail)?;
    folder.commit(|_| false).map_err(fail)?;
    for path in files.keys() {
        eprintln!("wrote {}", dir.join(path).display());
    }
    Ok(Status::Success)
}

/// One manifest per values file of `dir`, into `out`: each written into
/// the staged folder as soon as it is rendered (one manifest per core in
/// memory), the folder swapped in at the end. A file that fails keeps its
/// earlier manifest; the manifest of a file no longer in `dir` is gone.
fn fleet(
    dir: &Path,
    out: &Path,
    shared: &ValuesInput,
    config: &TemplateConfig,
) -> Result<Status, Error> {
    let started = std::time::Instant::now();
    let fleet = super::read_fleet(dir, shared)?;
    fleet
        .check_output_names()
        .map_err(|name| Error::Collision {
            dir: dir.to_path_buf(),
            name,
        })?;
    let fail = WriteFailed::at(out);
    let mut inputs: Vec<&Path> = vec![dir];
    inputs.extend(shared.files.iter().map(PathBuf::as_path));
    let folder = OutputFolder::open(out, "template", &inputs, Accept::Outputs).map_err(fail)?;
    let installer = installer(config);
    let tally = fleet.check_all(&config.namespace, |file, model| {
        let text = render::manifest_for(model, config.create_namespace, "", installer);
        folder.put(&asogen::features::fleet::output_name(file), text.as_bytes())
    });
    for failed in &tally.failed {
        eprint!("{}", human(&failed.diagnostics, &failed.sources));
    }
    let mut rendered = 0;
    for (_, written) in tally.passed {
        written.map_err(fail)?;
        rendered += 1;
    }
    // The earlier manifests of the files that failed stay.
    let failed_outputs: BTreeSet<String> = fleet
        .files
        .iter()
        .chain(fleet.unusable.iter().map(|entry| &entry.path))
        .map(|file| asogen::features::fleet::output_name(file))
        .collect();
    folder
        .commit(|path| failed_outputs.contains(path))
        .map_err(fail)?;
    let failed = tally.failed.len();
    let unreadable = tally.failed.iter().any(|failed| failed.unreadable);
    eprintln!(
        "rendered {rendered} of {} values files to {} in {:.2?}{}",
        fleet.len(),
        out.display(),
        started.elapsed(),
        if failed > 0 {
            format!(
                "; {failed} invalid or unreadable (above), not rendered (their earlier manifests, if any, are kept)"
            )
        } else {
            String::new()
        }
    );
    Ok(match (failed, unreadable) {
        (0, _) => Status::Success,
        (_, true) => Status::Unreadable,
        _ => Status::Failed,
    })
}
