//! The command line: raw clap arguments, then one function per command.
//! Exit codes: 0 ok; 1 the input or the check failed; 2 usage or I/O error.

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use crate::diagnostics::{self, Diagnostic, Format};
use crate::load::{self, Checker, LoadError};
use crate::model::DEFAULT_NAMESPACE;
use crate::render::{self, RenderError};

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
    },
    /// Print values.schema.json (draft-07, with the rules).
    Schema,
}

/// Runs a parsed command line and returns the exit code.
pub fn run(cli: Cli) -> u8 {
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
        } => template_command(&values, &set, &namespace, create_namespace),
        Command::Validate {
            values,
            set,
            format,
        } => validate_command(&values, &set, format),
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
    let artifacts = match render::render_all(profiles) {
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
        Ok(()) => {
            eprintln!("wrote {} files to {}", artifacts.len(), out.display());
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
    match Checker::new().check(&sources, namespace) {
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
        Ok(sources) => match Checker::new().check(&sources, DEFAULT_NAMESPACE) {
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
