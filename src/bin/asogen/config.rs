//! Settings built from arguments where building them is more than a copy:
//! `template`'s flags, checked together (and its release name, namespace
//! and capabilities parsed), `validate`'s mode, and `release`'s
//! `SOURCE_DATE_EPOCH`. Every other command takes its [`crate::cli`]
//! arguments as they are.

use std::path::PathBuf;

use crate::cli::{ReleaseArgs, TemplateArgs, TemplateFormat, ValidateArgs};
use asogen::describe::{Capabilities, KubeVersion};
use asogen::read::ValuesInput;

/// What `template` renders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateInput {
    /// One install manifest for the merged values, to standard output.
    Values(ValuesInput),
    /// Fleet mode: one manifest per values file of `dir`, each on top of
    /// `shared` (`-f` before the file, `--set` after), into the folder `out`.
    Fleet {
        /// The folder of values files, one per cluster.
        dir: PathBuf,
        /// The folder for the manifests (replaced as a whole).
        out: PathBuf,
        /// The values every file is merged with.
        shared: ValuesInput,
    },
}

/// Settings of `template`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateConfig {
    /// What to render.
    pub input: TemplateInput,
    /// The namespace of namespaced objects.
    pub namespace: String,
    /// Also render the Namespace object first.
    pub create_namespace: bool,
    /// `.Release.Name`.
    pub release_name: String,
    /// What the cluster serves.
    pub capabilities: Capabilities,
    /// How to print the objects.
    pub output: TemplateFormat,
    /// Only the objects of these chart templates (patterns), when given.
    pub show_only: Vec<String>,
    /// Write one file per template under this folder instead of printing.
    pub output_dir: Option<PathBuf>,
}

/// What `validate` checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidateInput {
    /// The merged values.
    Values(ValuesInput),
    /// Fleet mode: each values file of `dir` on its own, on top of `shared`.
    Fleet {
        /// The folder of values files, one per cluster.
        dir: PathBuf,
        /// The values every file is merged with.
        shared: ValuesInput,
    },
    /// Fleet mode: each of `files` on its own, on top of `shared`.
    Each {
        /// The values files, in the order given.
        files: Vec<PathBuf>,
        /// The values every file is merged with.
        shared: ValuesInput,
    },
}

impl ValidateInput {
    /// The mode `validate`'s arguments ask for (clap refuses `--values-dir`
    /// with FILEs).
    pub fn new(args: &ValidateArgs) -> ValidateInput {
        let values = ValuesInput::from(args.values.clone());
        match &args.values_dir {
            None if args.each.is_empty() => ValidateInput::Values(values),
            None => ValidateInput::Each {
                files: args.each.clone(),
                shared: values,
            },
            Some(dir) => ValidateInput::Fleet {
                dir: dir.clone(),
                shared: values,
            },
        }
    }
}

/// Settings of `release`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseConfig {
    /// The chart version.
    pub version: String,
    /// The appVersion and image tag (default: v + version).
    pub app_version: Option<String>,
    /// The image digest.
    pub image_digest: Option<String>,
    /// The previous release's folder.
    pub previous: Option<PathBuf>,
    /// The output folder.
    pub out: PathBuf,
    /// The folder of values profiles; None for the built-in ones.
    pub profiles: Option<PathBuf>,
    /// Seconds since 1970 for every timestamp, from `SOURCE_DATE_EPOCH`
    /// (None when it is not set).
    pub source_date_epoch: Option<u64>,
}

/// Arguments that do not make sense together: exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `template --values-dir` without `--out`.
    #[error(
        "--values-dir needs --out DIR, the folder for one manifest per values file\nhelp: or leave out --values-dir to print one manifest to standard output"
    )]
    ValuesDirWithoutOut,
    /// `template --out` without `--values-dir`.
    #[error(
        "--out is the folder of fleet mode and needs --values-dir DIR\nhelp: without --values-dir, template prints one manifest to standard output"
    )]
    OutWithoutValuesDir,
    /// `-n` is not a name the API server accepts for a namespace.
    #[error(
        "--namespace {name:?} is not a valid namespace: {reason}\nhelp: a namespace is a lowercase RFC 1123 label of at most 63 characters, e.g. azureserviceoperator-system"
    )]
    Namespace {
        /// The name given.
        name: String,
        /// Why the API server would refuse it.
        reason: String,
    },
    /// `--create-namespace` for a namespace every cluster has.
    #[error(
        "--create-namespace would emit the Namespace {0}, which every cluster has: applying it would relabel it (asogen's Namespace enforces the restricted Pod Security Standard)\nhelp: leave out --create-namespace to install into {0}, or choose a namespace of its own, e.g. -n azureserviceoperator-system --create-namespace"
    )]
    SystemNamespace(String),
    /// `SOURCE_DATE_EPOCH` is set to something else than a number.
    #[error(
        "SOURCE_DATE_EPOCH={0:?} is not a number of seconds since 1970-01-01\nhelp: e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)"
    )]
    SourceDateEpoch(String),
    /// `SOURCE_DATE_EPOCH` is past the last second a four-digit year holds.
    #[error(
        "SOURCE_DATE_EPOCH={0} is after 9999-12-31T23:59:59Z ({MAX_SOURCE_DATE_EPOCH}), the last time chart indexes and archives can carry\nhelp: e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)"
    )]
    SourceDateEpochTooLate(u64),
    /// `template NAME` that Helm would refuse as a release name.
    #[error(
        "release name {name:?} is not valid: {reason}\nhelp: a release name is a lowercase RFC 1123 label of at most 53 characters, e.g. aso"
    )]
    ReleaseName {
        /// The name given.
        name: String,
        /// What makes it invalid.
        reason: String,
    },
    /// `--kube-version` that is not a Kubernetes version.
    #[error(
        "--kube-version {0:?} is not a Kubernetes version\nhelp: write MAJOR.MINOR, e.g. --kube-version 1.29 (a leading v and a patch are allowed)"
    )]
    KubeVersion(String),
    /// `--api-versions` that is not VERSION (the core group), GROUP/VERSION
    /// or GROUP/VERSION/KIND.
    #[error(
        "--api-versions {0:?} is not VERSION, GROUP/VERSION or GROUP/VERSION/KIND\nhelp: e.g. --api-versions admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy"
    )]
    ApiVersion(String),
    /// `--skip-schema-validation`.
    #[error(
        "--skip-schema-validation has no meaning for asogen: values.schema.json is generated from the typed model asogen renders from, so values that fail it cannot be rendered at all\nhelp: fix the values `asogen validate -f FILE` reports; the rules (the chart's guard) are checked with or without the schema"
    )]
    SkipSchemaValidation,
    /// A template flag that fleet mode does not take.
    #[error(
        "{0} prints or writes one manifest and cannot be used with --values-dir\nhelp: fleet mode writes one YAML manifest per values file into --out"
    )]
    NotInFleet(&'static str),
    /// `--output-dir` with `-o json`.
    #[error(
        "--output-dir writes YAML files, one per chart template, as helm template does; it cannot be used with -o json\nhelp: leave out -o json, or print the JSON List to standard output"
    )]
    OutputDirJson,
}

/// 9999-12-31T23:59:59Z: RFC 3339 (index.yaml's `created`) has four-digit
/// years, so a later SOURCE_DATE_EPOCH would print a date nobody can read.
pub const MAX_SOURCE_DATE_EPOCH: u64 = 253_402_300_799;

impl ConfigError {
    /// Always 2: a usage error.
    pub fn exit_code(&self) -> u8 {
        asogen::exit::EXIT_USAGE
    }
}

impl TemplateConfig {
    /// `template`'s settings, its flags checked together.
    pub fn new(args: TemplateArgs) -> Result<TemplateConfig, ConfigError> {
        let TemplateArgs {
            name,
            values,
            namespace,
            create_namespace,
            output,
            show_only,
            output_dir,
            release_name: name_in_path,
            kube_version,
            api_versions,
            skip_schema_validation,
            debug: _,
            values_dir,
            out,
        } = args;
        if skip_schema_validation {
            return Err(ConfigError::SkipSchemaValidation);
        }
        if values_dir.is_some() {
            let single = [
                (output == TemplateFormat::Json, "-o json"),
                (!show_only.is_empty(), "--show-only"),
                (output_dir.is_some(), "--output-dir"),
            ];
            if let Some((_, flag)) = single.iter().find(|(given, _)| *given) {
                return Err(ConfigError::NotInFleet(flag));
            }
        }
        if output_dir.is_some() && output == TemplateFormat::Json {
            return Err(ConfigError::OutputDirJson);
        }
        let release_name =
            name.unwrap_or_else(|| asogen::render::objects::DEFAULT_INSTANCE.to_string());
        check_release_name(&release_name)?;
        let capabilities = capabilities(kube_version.as_deref(), api_versions)?;
        let output_dir = output_dir.map(|dir| {
            if name_in_path {
                dir.join(&release_name)
            } else {
                dir
            }
        });
        let values = ValuesInput::from(values);
        let input = match (values_dir, out) {
            (None, None) => TemplateInput::Values(values),
            (Some(dir), Some(out)) => TemplateInput::Fleet {
                dir,
                out,
                shared: values,
            },
            (Some(_), None) => return Err(ConfigError::ValuesDirWithoutOut),
            (None, Some(_)) => return Err(ConfigError::OutWithoutValuesDir),
        };
        check_namespace(&namespace, create_namespace)?;
        Ok(TemplateConfig {
            input,
            namespace,
            create_namespace,
            release_name,
            capabilities,
            output,
            show_only,
            output_dir,
        })
    }
}

impl ReleaseConfig {
    /// `release`'s settings, in this process's environment.
    pub fn from_env(args: ReleaseArgs) -> Result<ReleaseConfig, ConfigError> {
        ReleaseConfig::new(args, std::env::var("SOURCE_DATE_EPOCH").ok())
    }

    /// `release`'s settings for the value of `SOURCE_DATE_EPOCH` (None
    /// when it is not set).
    pub fn new(
        args: ReleaseArgs,
        source_date_epoch: Option<String>,
    ) -> Result<ReleaseConfig, ConfigError> {
        let ReleaseArgs {
            version,
            app_version,
            image_tag,
            image_digest,
            previous,
            out,
            profiles,
        } = args;
        Ok(ReleaseConfig {
            version,
            app_version: app_version.or(image_tag),
            image_digest,
            previous,
            out,
            profiles,
            source_date_epoch: source_date_epoch
                .map(|text| parse_source_date_epoch(&text))
                .transpose()?,
        })
    }
}

/// The namespace of `template`: a name the API server accepts, and with
/// `--create-namespace` not one every cluster has.
fn check_namespace(namespace: &str, create: bool) -> Result<(), ConfigError> {
    if let Some(reason) = asogen::names::label_problem(namespace) {
        return Err(ConfigError::Namespace {
            name: namespace.to_string(),
            reason,
        });
    }
    if create && asogen::names::SYSTEM_NAMESPACES.contains(&namespace) {
        return Err(ConfigError::SystemNamespace(namespace.to_string()));
    }
    Ok(())
}

/// A release name Helm accepts: a DNS-1123 label of at most 53 characters
/// (Helm keeps 10 for the suffixes it appends).
fn check_release_name(name: &str) -> Result<(), ConfigError> {
    const MAX: usize = 53;
    let reason = if name.contains('/') || name.ends_with(".tgz") {
        // `helm template NAME CHART` habits: asogen is the chart.
        Some("it looks like a chart; asogen is the chart, so template takes only NAME".into())
    } else if name.len() > MAX {
        Some(format!("it has {} characters, more than {MAX}", name.len()))
    } else {
        asogen::names::label_problem(name)
    };
    match reason {
        Some(reason) => Err(ConfigError::ReleaseName {
            name: name.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

/// What the cluster serves, from `--kube-version` and `--api-versions`.
fn capabilities(
    kube_version: Option<&str>,
    api_versions: Vec<String>,
) -> Result<Capabilities, ConfigError> {
    let kube_version = kube_version
        .map(|text| KubeVersion::parse(text).ok_or_else(|| ConfigError::KubeVersion(text.into())))
        .transpose()?;
    for api in &api_versions {
        let parts: Vec<&str> = api.split('/').collect();
        let well_formed = (1..=3).contains(&parts.len())
            && parts.iter().all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            });
        if !well_formed {
            return Err(ConfigError::ApiVersion(api.clone()));
        }
    }
    Ok(Capabilities {
        kube_version,
        api_versions,
    })
}

/// `SOURCE_DATE_EPOCH`: whole seconds since 1970-01-01 (surrounding blanks
/// allowed).
fn parse_source_date_epoch(text: &str) -> Result<u64, ConfigError> {
    let epoch = text
        .trim()
        .parse()
        .map_err(|_| ConfigError::SourceDateEpoch(text.to_string()))?;
    if epoch > MAX_SOURCE_DATE_EPOCH {
        return Err(ConfigError::SourceDateEpochTooLate(epoch));
    }
    Ok(epoch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn command(args: &[&str]) -> Command {
        Cli::try_parse_from(std::iter::once("asogen").chain(args.iter().copied()))
            .expect("the arguments parse")
            .command
    }

    /// `template`'s settings for `args` (after `template`).
    fn template(args: &[&str]) -> Result<TemplateConfig, ConfigError> {
        let Command::Template(args) = command(&[&["template"], args].concat()) else {
            panic!("template");
        };
        TemplateConfig::new(args)
    }

    /// `release`'s settings for `args` (after `release`).
    fn release(args: &[&str], epoch: Option<&str>) -> Result<ReleaseConfig, ConfigError> {
        let Command::Release(args) = command(&[&["release"], args].concat()) else {
            panic!("release");
        };
        ReleaseConfig::new(args, epoch.map(str::to_string))
    }

    #[test]
    fn template_is_one_manifest_or_a_fleet() {
        let Ok(one) = template(&["-f", "a.yaml", "--set", "x=1"]) else {
            panic!("template");
        };
        assert_eq!(
            one.input,
            TemplateInput::Values(ValuesInput {
                files: vec!["a.yaml".into()],
                set: vec!["x=1".into()],
                ..Default::default()
            })
        );
        let Ok(fleet) = template(&["--values-dir", "in", "--out", "out", "-f", "a.yaml"]) else {
            panic!("fleet");
        };
        assert_eq!(
            fleet.input,
            TemplateInput::Fleet {
                dir: "in".into(),
                out: "out".into(),
                shared: ValuesInput {
                    files: vec!["a.yaml".into()],
                    ..Default::default()
                },
            }
        );
    }

    #[test]
    fn fleet_flags_need_each_other() {
        assert_eq!(
            template(&["--values-dir", "in"]),
            Err(ConfigError::ValuesDirWithoutOut)
        );
        assert_eq!(
            template(&["--out", "out"]),
            Err(ConfigError::OutWithoutValuesDir)
        );
    }

    #[test]
    fn template_flags_are_checked_together() {
        assert_eq!(
            template(&["--skip-schema-validation"]),
            Err(ConfigError::SkipSchemaValidation)
        );
        assert_eq!(
            template(&["--output-dir", "d", "-o", "json"]),
            Err(ConfigError::OutputDirJson)
        );
        assert_eq!(
            template(&["--values-dir", "in", "--out", "o", "-s", "x"]),
            Err(ConfigError::NotInFleet("--show-only"))
        );
        assert_eq!(
            template(&["--kube-version", "1"]),
            Err(ConfigError::KubeVersion("1".into()))
        );
        assert!(matches!(
            template(&["Bad"]),
            Err(ConfigError::ReleaseName { .. })
        ));
        let long = "a".repeat(54);
        assert!(matches!(
            template(&[&long]),
            Err(ConfigError::ReleaseName { .. })
        ));
        let Ok(named) = template(&[
            "aso",
            "--output-dir",
            "d",
            "--release-name",
            "--kube-version",
            "v1.29.1",
            "-a",
            "v1,apps/v1/Deployment",
        ]) else {
            panic!("template");
        };
        assert_eq!(named.release_name, "aso");
        assert_eq!(named.output_dir, Some(PathBuf::from("d/aso")));
        assert_eq!(
            named.capabilities,
            Capabilities {
                kube_version: KubeVersion::parse("1.29"),
                api_versions: vec!["v1".into(), "apps/v1/Deployment".into()],
            }
        );
    }

    #[test]
    fn release_app_version_and_its_earlier_name() {
        let settings = release(
            &["--version", "1.0.0", "--image-tag", "v1", "--out", "o"],
            None,
        );
        assert_eq!(settings.unwrap().app_version.as_deref(), Some("v1"));
        assert!(
            Cli::try_parse_from([
                "asogen",
                "release",
                "--version",
                "1.0.0",
                "--app-version",
                "v1",
                "--image-tag",
                "v1",
                "--out",
                "o"
            ])
            .is_err()
        );
    }

    #[test]
    fn source_date_epoch_is_whole_seconds() {
        assert_eq!(parse_source_date_epoch(" 1700000000\n"), Ok(1_700_000_000));
        assert_eq!(
            parse_source_date_epoch("253402300799"),
            Ok(MAX_SOURCE_DATE_EPOCH)
        );
        assert_eq!(
            parse_source_date_epoch("18446744073709551615"),
            Err(ConfigError::SourceDateEpochTooLate(u64::MAX))
        );
        for bad in ["", "-1", "1.5", "yesterday"] {
            assert_eq!(
                parse_source_date_epoch(bad),
                Err(ConfigError::SourceDateEpoch(bad.into()))
            );
        }
        let settings = release(&["--version", "1.0.0", "--out", "o"], Some("5"));
        assert_eq!(settings.unwrap().source_date_epoch, Some(5));
    }
}
