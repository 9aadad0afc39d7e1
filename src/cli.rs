//! The command line as clap parses it: the raw arguments, with no logic.
//! [`crate::config::Config`] turns them into a checked configuration and
//! [`crate::commands`] runs it; exit codes are documented there.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::diagnostics::Format;
use crate::model::DEFAULT_NAMESPACE;

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
        /// Values files and `--set` expressions, as Helm takes them.
        #[command(flatten)]
        values: ValuesFlags,
        /// The namespace of namespaced objects.
        #[arg(short = 'n', long, default_value = DEFAULT_NAMESPACE)]
        namespace: String,
        /// Also print the Namespace object first (as the install manifests do).
        #[arg(long)]
        create_namespace: bool,
        /// Fleet mode: render every *.yaml in DIR (one cluster each, on top of the -f
        /// files) into --out, on every core; invalid files are reported, the others rendered.
        #[arg(long, value_name = "DIR")]
        values_dir: Option<PathBuf>,
        /// Fleet mode: the folder for one manifest per values file (replaced atomically).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Check values files: every problem with file, line, column, key, rule id and help
    /// (`--format json` for tools, `--format github` for GitHub Actions annotations).
    Validate {
        /// Values files and `--set` expressions, as Helm takes them.
        #[command(flatten)]
        values: ValuesFlags,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Fleet mode: check every *.yaml in DIR on its own (on top of the -f files).
        #[arg(long, value_name = "DIR")]
        values_dir: Option<PathBuf>,
    },
    /// Print values.schema.json (draft-07, with the rules).
    Schema,
    /// The catalog of what an ASO release serves (values/catalog.json).
    Catalog {
        /// What to do with it.
        #[command(subcommand)]
        action: CatalogCommand,
    },
    /// Predict whether upgrading a live Deployment to what asogen renders is refused,
    /// per apply path (kubectl, Helm 3, Helm 4, server-side apply), and print the fix.
    /// Exit 0 safe, 1 refused on some path, 2 bad input.
    UpgradeCheck {
        /// The live Deployment, as `kubectl get deployment NAME -n NAMESPACE -o yaml
        /// --show-managed-fields` prints it.
        #[arg(long, value_name = "FILE")]
        live: PathBuf,
        /// Values files and `--set` expressions, as Helm takes them.
        #[command(flatten)]
        values: ValuesFlags,
        /// Check only these apply paths (default: the paths in use, read from the
        /// live object's managedFields; all when it shows none).
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

/// Values as Helm's flags give them. Helm applies the files in order,
/// then every `--set-json`, `--set`, `--set-string`, `--set-file` and
/// `--set-literal`, in that order, whatever their order on the command line.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ValuesFlags {
    /// A values file (`-` for standard input); later files win, maps merge deeply,
    /// lists replace.
    #[arg(short = 'f', long = "values", value_name = "FILE")]
    pub values: Vec<PathBuf>,
    /// Set values as Helm does: `a.b=v,c[0]=w`, `{x,y}` for a list, `\` escapes;
    /// only true, false, null and integers are typed, anything else is text.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Set values as text, whatever they look like (e.g. --set-string podLabels.id=007).
    #[arg(long = "set-string", value_name = "KEY=VALUE")]
    pub set_string: Vec<String>,
    /// Set a value to a file's content, as text (`-` for standard input).
    #[arg(long = "set-file", value_name = "KEY=PATH")]
    pub set_file: Vec<String>,
    /// Set JSON values: KEY=JSON, or a whole JSON object.
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    pub set_json: Vec<String>,
    /// Set one value to the literal text after `=` (commas, dots and backslashes included).
    #[arg(long = "set-literal", value_name = "KEY=TEXT")]
    pub set_literal: Vec<String>,
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

/// `asogen catalog` subcommands.
#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Rewrite the catalog from an ASO release: its install manifest, or any
    /// YAML streams holding its webhook configurations and ClusterRoles.
    Import {
        /// The YAML files to read (`-` for standard input is not supported).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The release they come from (e.g. v2.20.0); by default the tag of
        /// the controller image in the files.
        #[arg(long)]
        release: Option<String>,
        /// The controller's `--help` output, or a list of its flags (one
        /// `--flag` per line): the flags it defines beyond those the
        /// release's Deployment passes.
        #[arg(long, value_name = "FILE")]
        controller_flags: Option<PathBuf>,
        /// Where to write the catalog.
        #[arg(long, default_value = "values/catalog.json")]
        out: PathBuf,
    },
}
