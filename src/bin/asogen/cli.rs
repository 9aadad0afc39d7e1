//! The command line as clap parses it: one arguments struct per command.
//! A command takes its struct as its settings; only where flags are checked
//! together (`template`) or the environment is read (`release`) does
//! [`crate::config`] build the settings from it. [`crate::commands`] runs
//! them; exit codes are in [`asogen::exit`].

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use asogen::diagnostics::Format;
use asogen::model::DEFAULT_NAMESPACE;

/// Generate the Azure Service Operator Helm chart, kustomize bases, install
/// manifests and values schema from one typed model, refusing deployment
/// shapes that break clusters.
#[derive(Debug, Parser)]
#[command(name = "asogen", version, about, long_about = None)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
    /// Whether `-n/--namespace` is among the arguments (Helm's plugin
    /// runner never passes it: it takes it off and sets HELM_NAMESPACE).
    #[arg(skip)]
    pub namespace_given: bool,
}

impl Cli {
    /// The arguments as clap reads them, except that help or the version
    /// asked for only inside a cluster of short flags is a usage error:
    /// `-hvalues.yaml` is a file whose name starts with `-` that clap reads
    /// as `-h` and more, and a check that printed help and exited 0 would
    /// pass without reading it.
    pub fn parse_operands<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::CommandFactory as _;
        use clap::FromArgMatches as _;
        use clap::error::ErrorKind;
        use clap::parser::ValueSource;
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        let err = match Cli::command().try_get_matches_from(&args) {
            Ok(matches) => {
                let mut cli = Cli::from_arg_matches(&matches)?;
                cli.namespace_given = matches.subcommand().is_some_and(|(_, command)| {
                    command.ids().any(|id| id == "namespace")
                        && command.value_source("namespace") == Some(ValueSource::CommandLine)
                });
                return Ok(cli);
            }
            Err(err) => err,
        };
        let (asked, exact, long) = match err.kind() {
            ErrorKind::DisplayHelp => ('h', "-h", "--help"),
            ErrorKind::DisplayVersion => ('V', "-V", "--version"),
            _ => return Err(err),
        };
        let options: Vec<&str> = args
            .iter()
            .skip(1)
            .map(|arg| arg.to_str().unwrap_or(""))
            .take_while(|&arg| arg != "--")
            .collect();
        if options
            .iter()
            .any(|&arg| arg == exact || arg == long || arg == "help")
        {
            return Err(err);
        }
        match options.iter().find(|arg| {
            arg.len() > 2 && arg.starts_with('-') && !arg.starts_with("--") && arg.contains(asked)
        }) {
            Some(cluster) => Err(Cli::command().error(
                ErrorKind::UnknownArgument,
                format!(
                    "'{cluster}' reads as {exact} and more short flags, not as a file; \
                     put '--' before files whose names start with '-' (asogen validate -- {cluster}), \
                     or write them as ./{cluster}"
                ),
            )),
            None => Err(err),
        }
    }
}

/// What Helm tells a plugin in its environment about its own flags that
/// reach a cluster (Helm takes them off the plugin's arguments): asogen
/// contacts none, so a command that sets one is refused, not silently run
/// without it. (HELM_KUBECONFIG only feeds HELM_NAMESPACE.)
const HELM_CLUSTER_FLAGS: [(&str, &str); 8] = [
    ("HELM_KUBECONTEXT", "--kube-context"),
    ("HELM_KUBEAPISERVER", "--kube-apiserver"),
    ("HELM_KUBETOKEN", "--kube-token"),
    ("HELM_KUBEASUSER", "--kube-as-user"),
    ("HELM_KUBEASGROUPS", "--kube-as-group"),
    ("HELM_KUBECAFILE", "--kube-ca-file"),
    ("HELM_KUBETLS_SERVER_NAME", "--kube-tls-server-name"),
    (
        "HELM_KUBEINSECURE_SKIP_TLS_VERIFY",
        "--kube-insecure-skip-tls-verify",
    ),
];

impl Cli {
    /// The arguments as a Helm plugin means them (`HELM_PLUGIN_NAME` set,
    /// as Helm sets it for `helm asogen ...`): Helm takes `-n/--namespace`
    /// and the cluster flags off the arguments and passes them in the
    /// environment, so the namespace is `HELM_NAMESPACE` (`-n`, else the
    /// kube context's, else `default`, as `helm template` renders), and a
    /// cluster flag is refused. Outside Helm, the arguments as they are;
    /// and an explicit `-n` means outside Helm's plugin runner too (it
    /// never passes one), though another plugin's environment (`helm diff`
    /// running asogen) may hold HELM_PLUGIN_NAME and HELM_NAMESPACE.
    pub fn within_helm(mut self, env: impl Fn(&str) -> Option<String>) -> Result<Cli, clap::Error> {
        use clap::CommandFactory as _;
        use clap::error::ErrorKind;
        if env("HELM_PLUGIN_NAME").is_none_or(|name| name.is_empty()) || self.namespace_given {
            return Ok(self);
        }
        for (variable, flag) in HELM_CLUSTER_FLAGS {
            let value = env(variable).unwrap_or_default();
            if !value.is_empty() && value != "false" {
                return Err(Cli::command().error(
                    ErrorKind::ArgumentConflict,
                    format!(
                        "Helm passed {flag} ({variable}), and asogen contacts no cluster: it renders and checks offline; run `helm asogen ...` without {flag} (and unset {variable})"
                    ),
                ));
            }
        }
        if let Some(namespace) = env("HELM_NAMESPACE").filter(|ns| !ns.is_empty()) {
            match &mut self.command {
                Command::Template(args) => args.namespace = namespace,
                Command::UpgradePlan(args) => args.namespace = namespace,
                _ => {}
            }
        }
        Ok(self)
    }
}

/// The commands; each takes its own arguments, which are its settings
/// wherever no check across flags is needed.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write every artifact (chart, kustomize, manifests, schema) under the output folder.
    Render(RenderArgs),
    /// Print the install manifest for the given values (like `helm template`).
    #[command(after_help = TEMPLATE_AFTER_HELP)]
    Template(TemplateArgs),
    /// Check values files: every problem with file, line, column, key, rule id and help
    /// (`-o json` for tools, `-o github` for GitHub Actions annotations).
    Validate(ValidateArgs),
    /// Print values.schema.json (draft-07, with the rules).
    Schema,
    /// Show the chart's information, as `helm show` does: `values` prints every key
    /// with its default and documentation, a values file to start from
    /// (`asogen show values > my-values.yaml`).
    Show(ShowArgs),
    /// The catalog of what an ASO release serves (values/catalog.json).
    Catalog(CatalogArgs),
    /// Predict whether upgrading a live Deployment to what asogen renders is refused,
    /// per apply path (kubectl, Helm 3, Helm 4, server-side apply), and print the fix.
    /// Exit 0 safe, 1 refused on some path, 2 bad input.
    UpgradeCheck(UpgradeCheckArgs),
    /// Print the steps of an upgrade for your apply path (helm, flux, argo, kubectl) and
    /// topology: what each step applies, what it waits for, and the commands to run.
    /// `--manifest N` prints the objects step N applies.
    UpgradePlan(UpgradePlanArgs),
    /// Classify every change between two artifact sets (generated/ folders, chart
    /// folders or install manifests) and write the release notes' "Upgrade notes".
    Diff(DiffArgs),
    /// Write every artifact of one version into a folder: the packaged chart, index.yaml,
    /// install manifests, values.schema.json, upgrade notes and SHA256SUMS, reproducibly
    /// (timestamps from SOURCE_DATE_EPOCH).
    Release(ReleaseArgs),
    /// Print a shell completion script (e.g. `asogen completions bash >
    /// ~/.local/share/bash-completion/completions/asogen`).
    Completions(CompletionsArgs),
}

/// `asogen render`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct RenderArgs {
    /// Write nothing; exit 1 with a diff if the folder is not what render would write.
    #[arg(long)]
    pub check: bool,
    /// The output folder.
    #[arg(long, default_value = "generated")]
    pub out: PathBuf,
    /// A folder of values profiles to use instead of the built-in ones (one install
    /// manifest each; `ha.yaml` is the kustomize base).
    #[arg(long, value_name = "DIR")]
    pub profiles: Option<PathBuf>,
}

/// `asogen template`: checked together into
/// [`crate::config::TemplateConfig`].
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct TemplateArgs {
    /// The release name (Helm's NAME, `.Release.Name`): the
    /// app.kubernetes.io/instance label. Object names stay upstream's.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Values files and `--set` expressions, as Helm takes them.
    #[command(flatten)]
    pub values: ValuesFlags,
    /// The namespace of namespaced objects.
    #[arg(short = 'n', long, default_value = DEFAULT_NAMESPACE)]
    pub namespace: String,
    /// Also print the Namespace object first (as the install manifests do).
    #[arg(long)]
    pub create_namespace: bool,
    /// Output format: yaml (a YAML stream) or json (one kubectl-style `List`).
    #[arg(short = 'o', long = "output", alias = "format", value_enum, value_name = "FORMAT",
          default_value_t = TemplateFormat::Yaml)]
    pub output: TemplateFormat,
    /// Only the objects of these chart templates (e.g. `templates/deployment.yaml`;
    /// `*` and `?` match within a path segment), as `helm template -s` does.
    #[arg(short = 's', long = "show-only", value_name = "TEMPLATE")]
    pub show_only: Vec<String>,
    /// Write each template's objects to DIR/azure-service-operator/templates/FILE
    /// instead of standard output, as `helm template --output-dir` does.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// With --output-dir: write under DIR/NAME/ (Helm's --release-name).
    #[arg(long, requires = "output_dir")]
    pub release_name: bool,
    /// The cluster's Kubernetes version (e.g. 1.29): before 1.30 the cluster serves no
    /// ValidatingAdmissionPolicy, so the in-cluster guard is left out. Default: current.
    #[arg(long, value_name = "VERSION")]
    pub kube_version: Option<String>,
    /// APIs the cluster serves whatever --kube-version says (GROUP/VERSION or
    /// GROUP/VERSION/KIND; repeat or separate with commas).
    #[arg(short = 'a', long, value_name = "API", value_delimiter = ',')]
    pub api_versions: Vec<String>,
    /// Refused: asogen's schema and its typed model are one; see below.
    #[arg(long)]
    pub skip_schema_validation: bool,
    /// Accepted and ignored: asogen's errors always name file, line, key and rule.
    #[arg(long)]
    pub debug: bool,
    /// Fleet mode: render every *.yaml in DIR (one cluster each, on top of the -f
    /// files) into --out, on every core; invalid files are reported, the others rendered.
    #[arg(long, value_name = "DIR")]
    pub values_dir: Option<PathBuf>,
    /// Fleet mode: the folder for one manifest per values file (replaced atomically).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `asogen validate`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct ValidateArgs {
    /// Values files and `--set` expressions, as Helm takes them.
    #[command(flatten)]
    pub values: ValuesFlags,
    /// Output format: human, json or github (GitHub Actions annotations).
    #[arg(short = 'o', long = "output", alias = "format", value_enum, value_name = "FORMAT",
          default_value_t = Format::Human)]
    pub format: Format,
    /// Fleet mode: check every *.yaml in DIR on its own (on top of the -f files).
    #[arg(long, value_name = "DIR", conflicts_with = "each")]
    pub values_dir: Option<PathBuf>,
    /// Fleet mode: check each FILE on its own (on top of the -f files), as
    /// pre-commit and other hooks pass the files they check.
    #[arg(value_name = "FILE")]
    pub each: Vec<PathBuf>,
}

/// `asogen show`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct ShowArgs {
    /// What to show.
    #[arg(value_enum)]
    pub what: ShowWhat,
    /// With `profile`: which (ha, single-replica-rolling, split).
    #[arg(value_name = "NAME", value_parser = profile_names())]
    pub name: Option<String>,
}

/// `asogen catalog`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct CatalogArgs {
    /// What to do with it.
    #[command(subcommand)]
    pub action: CatalogCommand,
}

/// `asogen upgrade-check`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct UpgradeCheckArgs {
    /// The live Deployment, as `kubectl get deployment NAME -n NAMESPACE -o yaml
    /// --show-managed-fields` prints it.
    #[arg(long, value_name = "FILE")]
    pub live: PathBuf,
    /// Values files and `--set` expressions, as Helm takes them.
    #[command(flatten)]
    pub values: ValuesFlags,
    /// Check only these apply paths (default: the paths in use, read from the
    /// live object's managedFields; all when it shows none).
    #[arg(long = "via", value_enum, value_name = "PATH")]
    pub via: Vec<asogen::features::upgrade::ApplyMethod>,
    /// The field manager of your server-side applier (e.g. `argocd-controller`);
    /// default: the live object's Apply managers, else `kustomize-controller` (Flux).
    #[arg(long = "field-manager", value_name = "NAME")]
    pub field_manager: Vec<String>,
    /// Output format: human or json.
    #[arg(short = 'o', long = "output", alias = "format", value_enum, value_name = "FORMAT",
          default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
}

/// `asogen upgrade-plan`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct UpgradePlanArgs {
    /// How you apply the install.
    #[arg(long = "via", value_enum, value_name = "PATH")]
    pub via: asogen::features::plan::Via,
    /// Values files and `--set` expressions, as Helm takes them.
    #[command(flatten)]
    pub values: ValuesFlags,
    /// The namespace of namespaced objects.
    #[arg(short = 'n', long, default_value = DEFAULT_NAMESPACE)]
    pub namespace: String,
    /// Print the objects step N applies (a YAML stream), not the plan.
    #[arg(long, value_name = "N")]
    pub manifest: Option<usize>,
    /// The topology of the live install, when it differs from the values':
    /// the plan migrates (single to split, or back) at the same version;
    /// `bridge` finishes a Helm migration that stopped in its middle step.
    #[arg(long, value_enum, value_name = "TOPOLOGY")]
    pub from: Option<asogen::values::Topology>,
    /// Output format of the plan: human or json.
    #[arg(short = 'o', long = "output", alias = "format", value_enum, value_name = "FORMAT",
          default_value_t = ReportFormat::Human, conflicts_with = "manifest")]
    pub format: ReportFormat,
}

/// `asogen diff`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct DiffArgs {
    /// The previous release's artifacts.
    pub old: PathBuf,
    /// The new release's artifacts.
    pub new: PathBuf,
    /// Output format: human, json, or markdown (the "Upgrade notes" section).
    #[arg(short = 'o', long = "output", alias = "format", value_enum, value_name = "FORMAT",
          default_value_t = DiffFormat::Human)]
    pub format: DiffFormat,
    /// Exit 1 when there is a breaking or topology change (for CI gates).
    #[arg(long)]
    pub fail_on_breaking: bool,
}

/// `asogen release`: with `SOURCE_DATE_EPOCH`, made into
/// [`crate::config::ReleaseConfig`].
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct ReleaseArgs {
    /// The chart version, SemVer 2 without `v` (e.g. 2.22.0).
    #[arg(long)]
    pub version: String,
    /// The chart's appVersion and the controller image tag, as `helm package
    /// --app-version` sets it (default: v + version).
    #[arg(long, value_name = "VERSION", conflicts_with = "image_tag")]
    pub app_version: Option<String>,
    /// The same as --app-version (its earlier name).
    #[arg(long, value_name = "TAG")]
    pub image_tag: Option<String>,
    /// Pin the image by digest (sha256:...): every artifact then names tag@digest.
    #[arg(long, value_name = "DIGEST")]
    pub image_digest: Option<String>,
    /// The previous release's output folder: adds UPGRADE-NOTES.md.
    #[arg(long, value_name = "DIR")]
    pub previous: Option<PathBuf>,
    /// The output folder (replaced as a whole, atomically).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// A folder of values profiles to use instead of the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub profiles: Option<PathBuf>,
}

/// `asogen completions`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `helm template` flags that mean nothing for asogen, and why; shown by
/// `asogen template --help`.
pub const TEMPLATE_AFTER_HELP: &str = "\
helm template flags with no meaning here (exit 2, as unknown flags):
  CHART, --repo, --version, --devel, --verify, --keyring, --ca-file, --cert-file,
  --key-file, --username, --password, --pass-credentials, --insecure-skip-tls-verify,
  --plain-http, --dependency-update
      asogen is the chart: there is no chart to fetch, verify or update.
  --include-crds, --skip-crds
      asogen ships no CRDs: the controller installs them (--crd-management).
  --validate, --is-upgrade, --dry-run, --enable-dns, --kubeconfig, --kube-context
      no cluster is contacted: the output is always what a fresh install applies.
  --no-hooks, --skip-tests, --hide-notes, --render-subchart-notes
      the chart has no hooks, tests or subcharts, and template prints no notes.
  --post-renderer, --post-renderer-args
      pipe the output instead: asogen template ... | your-tool
  --name-template, --generate-name
      give the release name as NAME.
  --atomic, --rollback-on-failure, --wait, --wait-for-jobs, --timeout, --replace,
  --description, --labels, --take-ownership, --force, --server-side
      install-time options: nothing is installed.
Refused with a reason (exit 2): --skip-schema-validation: the schema is generated
  from the typed model asogen renders from, so values that fail it cannot be
  rendered; the rules are checked either way.
Accepted and ignored: --debug.
Differs from helm template: --kube-version decides what the cluster serves (before
  1.30, no ValidatingAdmissionPolicy, so no in-cluster guard); helm template
  without a cluster answers .Capabilities.APIVersions from its built-in list.";

/// Values as Helm's flags give them. Helm applies the files in order,
/// then every `--set-json`, `--set`, `--set-string`, `--set-file` and
/// `--set-literal`, in that order, whatever their order on the command line.
/// Like Helm's flag parser, each takes the next argument as its value even
/// when it starts with `-` (clap would otherwise print it back as an
/// unknown argument, secret and all).
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct ValuesFlags {
    /// A values profile built into asogen (ha, single-replica-rolling, split), applied
    /// before the -f files, as if it were the first of them; `asogen show profile
    /// NAME` prints it.
    #[arg(long = "profile", value_name = "NAME", value_parser = profile_names())]
    pub profiles: Vec<String>,
    /// A values file (`-` for standard input); later files win, maps merge deeply,
    /// lists replace.
    // The word after -f is the file, whatever it starts with, as Helm
    // reads it: `-f -hvalues.yaml` is that file, not -h.
    #[arg(
        short = 'f',
        long = "values",
        value_name = "FILE",
        allow_hyphen_values = true
    )]
    pub values: Vec<PathBuf>,
    /// Set values as Helm does: `a.b=v,c[0]=w`, `{x,y}` for a list, `\` escapes;
    /// only true, false, null and integers are typed, anything else is text.
    #[arg(long = "set", value_name = "KEY=VALUE", allow_hyphen_values = true)]
    pub set: Vec<String>,
    /// Set values as text, whatever they look like (e.g. --set-string podLabels.id=007).
    #[arg(
        long = "set-string",
        value_name = "KEY=VALUE",
        allow_hyphen_values = true
    )]
    pub set_string: Vec<String>,
    /// Set a value to a file's content, as text (`-` for standard input).
    #[arg(long = "set-file", value_name = "KEY=PATH", allow_hyphen_values = true)]
    pub set_file: Vec<String>,
    /// Set JSON values: KEY=JSON, or a whole JSON object.
    #[arg(long = "set-json", value_name = "KEY=JSON", allow_hyphen_values = true)]
    pub set_json: Vec<String>,
    /// Set one value to the literal text after `=` (commas, dots and backslashes included).
    #[arg(
        long = "set-literal",
        value_name = "KEY=TEXT",
        allow_hyphen_values = true
    )]
    pub set_literal: Vec<String>,
}

impl From<ValuesFlags> for asogen::read::ValuesInput {
    fn from(flags: ValuesFlags) -> Self {
        asogen::read::ValuesInput {
            profiles: flags.profiles,
            files: flags.values,
            set_json: flags.set_json,
            set: flags.set,
            set_string: flags.set_string,
            set_file: flags.set_file,
            set_literal: flags.set_literal,
        }
    }
}

/// The names `--profile` and `show profile` take: the built-in profiles.
fn profile_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        asogen::render::BUILTIN_PROFILES
            .iter()
            .map(|(name, _)| clap::builder::PossibleValue::new(*name)),
    )
}

/// Output format of `template`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TemplateFormat {
    /// A YAML stream, one document per object.
    Yaml,
    /// One JSON `List` holding every object, as `kubectl get -o json` prints.
    Json,
}

/// What `asogen show` prints, as `helm show` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowWhat {
    /// Chart.yaml, values.yaml and README.md, separated by `---`.
    All,
    /// The chart's Chart.yaml.
    Chart,
    /// The chart's README.md (every values key, the rules).
    Readme,
    /// The chart's values.yaml: every key, its default and its documentation.
    Values,
    /// A built-in values profile (`show profile split > split.yaml`), the file
    /// `--profile NAME` applies.
    Profile,
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

/// Output format of reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// For people.
    Human,
    /// One JSON document.
    Json,
}

/// `asogen catalog` subcommands.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum CatalogCommand {
    /// Rewrite the catalog from an ASO release: its install manifest, or any
    /// YAML streams holding its webhook configurations and ClusterRoles.
    Import(CatalogImportArgs),
}

/// `asogen catalog import`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct CatalogImportArgs {
    /// The YAML files to read (`-` for standard input is not supported).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The release they come from (e.g. v2.20.0); by default the tag of
    /// the controller image in the files.
    #[arg(long)]
    pub release: Option<String>,
    /// The controller's `--help` output, or a list of its flags (one
    /// `--flag` per line): the flags it defines beyond those the
    /// release's Deployment passes.
    #[arg(long, value_name = "FILE")]
    pub controller_flags: Option<PathBuf>,
    /// Where to write the catalog.
    #[arg(long, default_value = "values/catalog.json")]
    pub out: PathBuf,
}
