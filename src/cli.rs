//! The command line: raw clap arguments, then one function per command.
//! Exit codes: 0 ok; 1 the input or the check failed; 2 usage or I/O error.

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use crate::diagnostics::{self, Diagnostic, Format};
use crate::fleet;
use crate::load::{self, Checker, LoadError};
use crate::model::DEFAULT_NAMESPACE;
use crate::render::{self, RenderError};
use crate::upgrade;

/// Prints to standard output through [`stdout::write`].
macro_rules! print {
    ($($arg:tt)*) => { stdout::write(format_args!($($arg)*)) };
}

/// Prints a line to standard output through [`stdout::write`].
macro_rules! println {
    ($($arg:tt)*) => { stdout::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: the values or the check failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code: bad usage or an I/O error.
pub const EXIT_USAGE: u8 = 2;

/// Generate the Azure Service Operator Helm chart, kustomize bases, install
/// manifests and values schema from one typed model, refusing deployment
/// shapes that break clusters.
#[derive(Debug, Parser)]
#[command(name = "asogen", version, about, long_about = None)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write every artifact (chart, kustomize, manifests, schema) under the output folder.
    Render {
        /// Write nothing; exit 1 with a diff if the folder is not what render would write.
        #[arg(long)]
        check: bool,
        /// The output folder.
        #[arg(long, default_value = "generated")]
        out: PathBuf,
        /// The folder of values profiles (one install manifest each; `ha.yaml` is the kustomize base).
        #[arg(long, default_value = "values/profiles")]
        profiles: PathBuf,
    },
    /// Print the install manifest for the given values (like `helm template`).
    Template {
        /// A values file; later files win, maps merge deeply, lists replace.
        #[arg(short = 'f', long = "values", value_name = "FILE")]
        values: Vec<PathBuf>,
        /// Set a value, e.g. --set replicaCount=1 (applied after the files).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// The namespace of namespaced objects.
        #[arg(short = 'n', long, default_value = DEFAULT_NAMESPACE)]
        namespace: String,
        /// Also print the Namespace object first (as the install manifests do).
        #[arg(long)]
        create_namespace: bool,
        /// Fleet mode: render every *.yaml in DIR (one cluster each, on top of the -f
        /// files) into --out, on every core; invalid files are reported, the others rendered.
        #[arg(long, value_name = "DIR", requires = "out")]
        values_dir: Option<PathBuf>,
        /// Fleet mode: the folder for one manifest per values file (replaced atomically).
        #[arg(long, value_name = "DIR", requires = "values_dir")]
        out: Option<PathBuf>,
    },
    /// Check values files: every problem with file, line, column, key, rule id and help
    /// (`--format json` for tools, `--format github` for GitHub Actions annotations).
    Validate {
        /// A values file; several are merged in order, as Helm does.
        #[arg(short = 'f', long = "values", value_name = "FILE")]
        values: Vec<PathBuf>,
        /// Set a value, e.g. --set replicaCount=1 (applied after the files).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Fleet mode: check every *.yaml in DIR on its own (on top of the -f files).
        #[arg(long, value_name = "DIR")]
        values_dir: Option<PathBuf>,
    },
    /// Print values.schema.json (draft-07, with the rules).
    Schema,
    /// Predict whether upgrading a live Deployment to what asogen renders is refused,
    /// per apply path (kubectl, Helm 3, Helm 4, server-side apply), and print the fix.
    /// Exit 0 safe, 1 refused on some path, 2 bad input.
    UpgradeCheck {
        /// The live Deployment, as `kubectl get deployment NAME -n NAMESPACE -o yaml
        /// --show-managed-fields` prints it.
        #[arg(long, value_name = "FILE")]
        live: PathBuf,
        /// A values file for the new release; later files win.
        #[arg(short = 'f', long = "values", value_name = "FILE")]
        values: Vec<PathBuf>,
        /// Set a value, e.g. --set replicaCount=1 (applied after the files).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Check only these apply paths (default: all).
        #[arg(long = "via", value_enum, value_name = "PATH")]
        via: Vec<Via>,
        /// The field manager of your server-side applier (e.g. `argocd-controller`);
        /// default: the live object's Apply managers, else `kustomize-controller` (Flux).
        #[arg(long = "field-manager", value_name = "NAME")]
        field_manager: Vec<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
        format: ReportFormat,
    },
    /// Classify every change between two artifact sets (generated/ folders, chart
    /// folders or install manifests) and write the release notes' "Upgrade notes".
    Diff {
        /// The previous release's artifacts.
        old: PathBuf,
        /// The new release's artifacts.
        new: PathBuf,
        /// Output format: human, json, or markdown (the "Upgrade notes" section).
        #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
        format: DiffFormat,
        /// Exit 1 when there is a breaking or topology change (for CI gates).
        #[arg(long)]
        fail_on_breaking: bool,
    },
    /// Write every artifact of one version into a folder: the packaged chart, index.yaml,
    /// install manifests, values.schema.json, upgrade notes and SHA256SUMS, reproducibly
    /// (timestamps from SOURCE_DATE_EPOCH).
    Release {
        /// The chart version, SemVer 2 without `v` (e.g. 2.22.0).
        #[arg(long)]
        version: String,
        /// The controller image tag and appVersion (default: v + version).
        #[arg(long, value_name = "TAG")]
        image_tag: Option<String>,
        /// Pin the image by digest (sha256:...): every artifact then names tag@digest.
        #[arg(long, value_name = "DIGEST")]
        image_digest: Option<String>,
        /// The previous release's output folder: adds UPGRADE-NOTES.md.
        #[arg(long, value_name = "DIR")]
        previous: Option<PathBuf>,
        /// The output folder (replaced as a whole, atomically).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The folder of values profiles (one install manifest each).
        #[arg(long, default_value = "values/profiles")]
        profiles: PathBuf,
    },
}

/// Output format of `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    /// One line per change.
    Human,
    /// A JSON list of changes.
    Json,
    /// The "Upgrade notes" section for release notes.
    Markdown,
}

/// An apply path, as `upgrade-check --via` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Via {
    /// `kubectl apply` without --server-side (and Argo CD's default sync).
    ClientSide,
    /// Helm 3 (and Helm 4 upgrading a release last applied client-side).
    Helm3,
    /// Helm 4 server-side apply.
    Helm4,
    /// Server-side apply by a field manager (Flux, Argo CD ServerSideApply, kubectl --server-side).
    ServerSide,
}

/// Output format of reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// For people.
    Human,
    /// One JSON document.
    Json,
}

/// Runs a parsed command line and returns the exit code.
pub fn run(cli: Cli) -> u8 {
    let code = run_command(cli);
    stdout::finish(code)
}

fn run_command(cli: Cli) -> u8 {
    match cli.command {
        Command::Render {
            check,
            out,
            profiles,
        } => render_command(check, &out, &profiles),
        Command::Template {
            values,
            set,
            namespace,
            create_namespace,
            values_dir: Some(dir),
            out: Some(out),
        } => template_fleet_command(&dir, &out, &values, &set, &namespace, create_namespace),
        Command::Template {
            values,
            set,
            namespace,
            create_namespace,
            ..
        } => template_command(&values, &set, &namespace, create_namespace),
        Command::Validate {
            values,
            set,
            format,
            values_dir: Some(dir),
        } => validate_fleet_command(&dir, &values, &set, format),
        Command::Validate {
            values,
            set,
            format,
            values_dir: None,
        } => validate_command(&values, &set, format),
        Command::UpgradeCheck {
            live,
            values,
            set,
            via,
            field_manager,
            format,
        } => upgrade_check_command(&live, &values, &set, &via, &field_manager, format),
        Command::Diff {
            old,
            new,
            format,
            fail_on_breaking,
        } => diff_command(&old, &new, format, fail_on_breaking),
        Command::Release {
            version,
            image_tag,
            image_digest,
            previous,
            out,
            profiles,
        } => release_command(
            crate::release::ReleaseRequest {
                version,
                image_tag,
                image_digest,
                previous,
                profiles,
                source_date_epoch: 0,
            },
            &out,
        ),
        Command::Schema => {
            print!("{}", crate::schema::published_schema_text());
            EXIT_OK
        }
    }
}

fn source_text(sources: &[load::Source]) -> impl Fn(&str) -> Option<String> + '_ {
    move |name: &str| {
        sources
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.text.clone())
            .or_else(|| std::fs::read_to_string(name).ok())
    }
}

fn print_diagnostics(diagnostics: &[Diagnostic], sources: &[load::Source]) {
    eprint!(
        "{}",
        diagnostics::format_human(
            diagnostics,
            &source_text(sources),
            diagnostics::use_colour()
        )
    );
}

fn render_command(check: bool, out: &Path, profiles: &Path) -> u8 {
    let release = crate::model::Release::default();
    let rendered = render::render_all(profiles, &release);
    let artifacts = match rendered {
        Ok(artifacts) => artifacts,
        Err(RenderError::InvalidProfile {
            profile,
            diagnostics,
            sources,
        }) => {
            eprintln!("error: profile {profile} is invalid; nothing was written");
            print_diagnostics(&diagnostics, &sources);
            return EXIT_FAILED;
        }
        Err(err) => {
            eprintln!("error: {err}");
            return EXIT_USAGE;
        }
    };
    if check {
        let diffs = render::differences(out, &artifacts);
        if diffs.is_empty() {
            eprintln!(
                "{} is up to date ({} files)",
                out.display(),
                artifacts.len()
            );
            return EXIT_OK;
        }
        for (path, have, want) in &diffs {
            let have = have.as_deref().unwrap_or("");
            let want = want.as_deref().unwrap_or("");
            let diff = similar::TextDiff::from_lines(have, want);
            print!(
                "{}",
                diff.unified_diff()
                    .context_radius(2)
                    .header(&format!("a/{path}"), &format!("b/{path}"))
            );
        }
        eprintln!(
            "error: {} is out of date: {} file(s) differ; run `cargo run -- render` to update",
            out.display(),
            diffs.len()
        );
        return EXIT_FAILED;
    }
    match render::write_atomically(out, &artifacts) {
        Ok(true) => {
            eprintln!("wrote {} files to {}", artifacts.len(), out.display());
            EXIT_OK
        }
        Ok(false) => {
            eprintln!(
                "{} is up to date ({} files); nothing written",
                out.display(),
                artifacts.len()
            );
            EXIT_OK
        }
        Err(err) => {
            eprintln!(
                "error: cannot write {}: {err}; the previous contents are unchanged",
                out.display()
            );
            EXIT_USAGE
        }
    }
}

fn load_or_report(values: &[PathBuf], set: &[String]) -> Result<Vec<load::Source>, u8> {
    match load::read_sources(values, set) {
        Ok(sources) => Ok(sources),
        Err(LoadError::Io(d)) => {
            print_diagnostics(&d, &[]);
            Err(EXIT_USAGE)
        }
        Err(LoadError::Invalid(d)) => {
            print_diagnostics(&d, &[]);
            Err(EXIT_FAILED)
        }
    }
}

/// The checker for values checked once: it compiles only the part of the
/// schema they write (fleet commands compile the whole schema once instead).
fn one_shot_checker(sources: &[load::Source]) -> Checker {
    Checker::for_sources(crate::model::Release::default(), sources)
}

fn template_command(
    values: &[PathBuf],
    set: &[String],
    namespace: &str,
    create_namespace: bool,
) -> u8 {
    let sources = match load_or_report(values, set) {
        Ok(sources) => sources,
        Err(code) => return code,
    };
    match one_shot_checker(&sources).check(&sources, namespace) {
        Ok(model) => {
            print!("{}", render::manifest(&model, create_namespace, ""));
            EXIT_OK
        }
        Err(diagnostics) => {
            print_diagnostics(&diagnostics, &sources);
            EXIT_FAILED
        }
    }
}

fn validate_command(values: &[PathBuf], set: &[String], format: Format) -> u8 {
    let (diagnostics, sources, code) = match load::read_sources(values, set) {
        Err(LoadError::Io(d)) => (d, Vec::new(), EXIT_USAGE),
        Err(LoadError::Invalid(d)) => (d, Vec::new(), EXIT_FAILED),
        Ok(sources) => match one_shot_checker(&sources).check(&sources, DEFAULT_NAMESPACE) {
            Ok(_) => (Vec::new(), sources, EXIT_OK),
            Err(d) => (d, sources, EXIT_FAILED),
        },
    };
    match format {
        Format::Json => print!("{}", diagnostics::format_json(&diagnostics)),
        Format::Github => print!("{}", diagnostics::format_github(&diagnostics)),
        Format::Human if diagnostics.is_empty() => {
            let names: Vec<String> = values.iter().map(|p| p.display().to_string()).collect();
            let what = if names.is_empty() {
                "the chart defaults".to_string()
            } else {
                names.join(", ")
            };
            println!("ok: {what}: valid");
        }
        Format::Human => print!(
            "{}",
            diagnostics::format_human(
                &diagnostics,
                &source_text(&sources),
                diagnostics::use_colour()
            )
        ),
    }
    code
}

fn upgrade_check_command(
    live_path: &Path,
    values: &[PathBuf],
    set: &[String],
    via: &[Via],
    field_managers: &[String],
    format: ReportFormat,
) -> u8 {
    let live_source = match load::read_yaml_file(live_path, "live Deployment file") {
        Ok(source) => source,
        Err(LoadError::Io(d) | LoadError::Invalid(d)) => {
            print_diagnostics(&d, &[]);
            return EXIT_USAGE;
        }
    };
    let live = match upgrade::read_live(&live_source) {
        Ok(live) => live,
        Err(d) => {
            print_diagnostics(&[*d], std::slice::from_ref(&live_source));
            return EXIT_USAGE;
        }
    };
    let sources = match load_or_report(values, set) {
        Ok(sources) => sources,
        Err(code) => return code,
    };
    let model = match one_shot_checker(&sources).check(&sources, &live.namespace) {
        Ok(model) => model,
        Err(diagnostics) => {
            eprintln!("error: the values are refused, so there is nothing to upgrade to");
            print_diagnostics(&diagnostics, &sources);
            return EXIT_FAILED;
        }
    };
    let target = upgrade::Target::from_deployment(&render::deployment(&model));
    let paths: Vec<upgrade::ApplyPath> = upgrade::default_paths(&live, field_managers)
        .into_iter()
        .filter(|path| {
            via.is_empty()
                || via.iter().any(|v| {
                    matches!(
                        (v, path),
                        (Via::ClientSide, upgrade::ApplyPath::ClientSide)
                            | (Via::Helm3, upgrade::ApplyPath::Helm3)
                            | (Via::Helm4, upgrade::ApplyPath::Helm4)
                            | (Via::ServerSide, upgrade::ApplyPath::ServerSide { .. })
                    )
                })
        })
        .collect();
    let report = upgrade::check(live, target, &paths);
    match format {
        ReportFormat::Human => print!("{}", upgrade::format_human(&report)),
        ReportFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("reports serialize")
        ),
    }
    if report.any_refused() {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}

fn diff_command(old: &Path, new: &Path, format: DiffFormat, fail_on_breaking: bool) -> u8 {
    let sides = crate::diff::read_side(old).and_then(|o| Ok((o, crate::diff::read_side(new)?)));
    let (old_side, new_side) = match sides {
        Ok(sides) => sides,
        Err(err) => {
            eprintln!("error: {err}");
            eprintln!(
                "help: pass two generated/ folders, two chart folders or two install manifests"
            );
            return EXIT_USAGE;
        }
    };
    let changes = crate::diff::compare(&old_side, &new_side);
    match format {
        DiffFormat::Human => print!("{}", crate::diff::format_human(&changes)),
        DiffFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&changes).expect("changes serialize")
        ),
        DiffFormat::Markdown => print!("{}", crate::diff::format_markdown(&changes)),
    }
    if fail_on_breaking && changes.iter().any(|c| c.class.is_breaking()) {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}

fn release_command(mut request: crate::release::ReleaseRequest, out: &Path) -> u8 {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(epoch) => request.source_date_epoch = epoch,
            Err(_) => {
                eprintln!(
                    "error: SOURCE_DATE_EPOCH={text:?} is not a number of seconds since 1970-01-01"
                );
                eprintln!("help: e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)");
                return EXIT_USAGE;
            }
        },
        Err(_) => eprintln!(
            "note: SOURCE_DATE_EPOCH is not set; timestamps are 1970-01-01T00:00:00Z (set it, e.g. to the commit time, for a meaningful index.yaml `created`)"
        ),
    }
    if out.is_file() {
        eprintln!(
            "error: --out {} is a file, not a folder; nothing was written",
            out.display()
        );
        return EXIT_USAGE;
    }
    let files = match crate::release::build(&request) {
        Ok(files) => files,
        Err(crate::release::ReleaseError::Render(RenderError::InvalidProfile {
            profile,
            diagnostics,
            sources,
        })) => {
            eprintln!("error: profile {profile} is invalid; nothing was written");
            print_diagnostics(&diagnostics, &sources);
            return EXIT_FAILED;
        }
        Err(err) => {
            eprintln!("error: {err}; nothing was written");
            return EXIT_USAGE;
        }
    };
    if request.previous.is_none() {
        eprintln!("note: no --previous release given; UPGRADE-NOTES.md is skipped");
    }
    match crate::release::write(out, &files) {
        Ok(_) => {
            for (name, bytes) in &files {
                eprintln!("  {:>9} bytes  {}/{name}", bytes.len(), out.display());
            }
            eprintln!(
                "wrote release {} ({} files) to {}",
                request.version,
                files.len(),
                out.display()
            );
            EXIT_OK
        }
        Err(err) => {
            eprintln!(
                "error: cannot write {}: {err}; nothing was written",
                out.display()
            );
            EXIT_USAGE
        }
    }
}

/// The fleet's files and the shared sources (`-f` before each file, `--set` after).
struct FleetInputs {
    files: Vec<PathBuf>,
    before: Vec<load::Source>,
    after: Vec<load::Source>,
}

fn fleet_inputs(dir: &Path, values: &[PathBuf], set: &[String]) -> Result<FleetInputs, u8> {
    let files = match crate::files::yaml_files(dir) {
        Ok(files) if files.is_empty() => {
            eprintln!(
                "error: {} holds no *.yaml or *.yml values files",
                dir.display()
            );
            return Err(EXIT_USAGE);
        }
        Ok(files) => files,
        Err(err) => {
            eprintln!("error: cannot read the folder {}: {err}", dir.display());
            eprintln!("help: --values-dir takes a folder of values files, one per cluster");
            return Err(EXIT_USAGE);
        }
    };
    let before = load_or_report(values, &[])?;
    let after = load_or_report(&[], set)?;
    Ok(FleetInputs {
        files,
        before,
        after,
    })
}

fn template_fleet_command(
    dir: &Path,
    out: &Path,
    values: &[PathBuf],
    set: &[String],
    namespace: &str,
    create_namespace: bool,
) -> u8 {
    let started = std::time::Instant::now();
    let FleetInputs {
        files,
        before,
        after,
    } = match fleet_inputs(dir, values, set) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    let mut names = std::collections::BTreeSet::new();
    for file in &files {
        if !names.insert(fleet::output_name(file)) {
            eprintln!(
                "error: two values files in {} would both write {}; rename one",
                dir.display(),
                fleet::output_name(file)
            );
            return EXIT_USAGE;
        }
    }
    let checker = Checker::new();
    let outcomes = fleet::parallel_map(&files, fleet::workers(), |file| {
        fleet::check_one(&checker, &before, &after, file, namespace, |model| {
            render::manifest(model, create_namespace, "")
        })
    });
    let mut rendered = std::collections::BTreeMap::new();
    let mut failed = 0;
    for (file, outcome) in files.iter().zip(outcomes) {
        match outcome {
            fleet::Outcome::Ok(text) => {
                rendered.insert(fleet::output_name(file), text);
            }
            fleet::Outcome::Invalid {
                diagnostics,
                sources,
            } => {
                failed += 1;
                print_diagnostics(&diagnostics, &sources);
            }
            fleet::Outcome::Unreadable(diagnostics) => {
                failed += 1;
                print_diagnostics(&diagnostics, &[]);
            }
        }
    }
    if let Err(err) = render::write_atomically(out, &rendered) {
        eprintln!(
            "error: cannot write {}: {err}; the previous contents are unchanged",
            out.display()
        );
        return EXIT_USAGE;
    }
    eprintln!(
        "rendered {} of {} values files to {} in {:.2?}{}",
        rendered.len(),
        files.len(),
        out.display(),
        started.elapsed(),
        if failed > 0 {
            format!("; {failed} invalid (above), not rendered")
        } else {
            String::new()
        }
    );
    if failed > 0 { EXIT_FAILED } else { EXIT_OK }
}

fn validate_fleet_command(dir: &Path, values: &[PathBuf], set: &[String], format: Format) -> u8 {
    let started = std::time::Instant::now();
    let FleetInputs {
        files,
        before,
        after,
    } = match fleet_inputs(dir, values, set) {
        Ok(inputs) => inputs,
        Err(code) => return code,
    };
    let checker = Checker::new();
    let outcomes = fleet::parallel_map(&files, fleet::workers(), |file| {
        fleet::check_one(&checker, &before, &after, file, DEFAULT_NAMESPACE, |_| ())
    });
    let mut all = Vec::new();
    let mut human = String::new();
    let mut failed = 0;
    let mut unreadable = false;
    for outcome in outcomes {
        let (diagnostics, sources) = match outcome {
            fleet::Outcome::Ok(()) => continue,
            fleet::Outcome::Invalid {
                diagnostics,
                sources,
            } => (diagnostics, sources),
            fleet::Outcome::Unreadable(diagnostics) => {
                unreadable = true;
                (diagnostics, Vec::new())
            }
        };
        failed += 1;
        if format == Format::Human {
            human.push_str(&diagnostics::format_human(
                &diagnostics,
                &source_text(&sources),
                diagnostics::use_colour(),
            ));
        }
        all.extend(diagnostics);
    }
    match format {
        Format::Json => print!("{}", diagnostics::format_json(&all)),
        Format::Github => print!("{}", diagnostics::format_github(&all)),
        Format::Human => {
            print!("{human}");
            println!(
                "{} of {} values files valid ({failed} invalid) in {:.2?}",
                files.len() - failed,
                files.len(),
                started.elapsed()
            );
        }
    }
    match (failed, unreadable) {
        (0, _) => EXIT_OK,
        (_, true) => EXIT_USAGE,
        _ => EXIT_FAILED,
    }
}

/// Standard output that a reader may close early: `asogen schema | head`
/// stops the output quietly (the command still finishes and exits with
/// its own code), where std's `print!` would panic. Any other write error
/// is reported once and turns a success into exit code 2.
mod stdout {
    use std::io::{ErrorKind, Write};
    use std::sync::atomic::{AtomicBool, Ordering};

    static CLOSED: AtomicBool = AtomicBool::new(false);
    static FAILED: AtomicBool = AtomicBool::new(false);

    pub fn write(args: std::fmt::Arguments) {
        if !CLOSED.load(Ordering::Relaxed) {
            let result = std::io::stdout().lock().write_fmt(args);
            settle(result);
        }
    }

    /// Flushes what is buffered; returns the exit code.
    pub fn finish(code: u8) -> u8 {
        if !CLOSED.load(Ordering::Relaxed) {
            settle(std::io::stdout().lock().flush());
        }
        if FAILED.load(Ordering::Relaxed) && code == super::EXIT_OK {
            super::EXIT_USAGE
        } else {
            code
        }
    }

    fn settle(result: std::io::Result<()>) {
        if let Err(err) = result {
            CLOSED.store(true, Ordering::Relaxed);
            if err.kind() != ErrorKind::BrokenPipe {
                FAILED.store(true, Ordering::Relaxed);
                eprintln!("error: cannot write to standard output: {err}");
            }
        }
    }
}
