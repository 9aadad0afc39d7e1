//! `asogen catalog import`: rewrites values/catalog.json from an ASO
//! release's own manifests.

use std::io::Write;
use std::path::PathBuf;

use super::Status;
use crate::cli::CatalogImportArgs;
use asogen::exit::{EXIT_FAILED, EXIT_USAGE};
use asogen::features::catalog_import::{self, ImportError};
use asogen::output::Stdout;

/// The largest release manifest read (ASO's with every CRD is about 100 MiB).
const MAX_MANIFEST_BYTES: u64 = asogen::yaml::MAX_YAML_BYTES as u64;

/// Why the catalog could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file cannot be read.
    #[error("cannot read {}: {source}", .file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The file system's error.
        source: std::io::Error,
    },
    /// The files do not describe a release, or hold what a release does not.
    #[error("{0}\nhelp: {help}", help = .0.help())]
    Import(#[from] ImportError),
    /// The catalog cannot be written; the old one is left as it was.
    #[error("cannot write {}: {source}; the old catalog is unchanged", .file.display())]
    Write {
        /// The file.
        file: PathBuf,
        /// The file system's error.
        source: std::io::Error,
    },
}

impl super::Failure for Error {
    /// 1 when the files do not describe a release, 2 for I/O and usage.
    fn exit_code(&self) -> u8 {
        match self {
            Error::Import(_) => EXIT_FAILED,
            _ => EXIT_USAGE,
        }
    }
}

/// Reads the files, imports the catalog and writes it.
pub fn run<W: Write>(config: &CatalogImportArgs, stdout: &mut Stdout<W>) -> Result<Status, Error> {
    let mut files = Vec::new();
    for file in &config.files {
        let text = asogen::read::read_capped_text(file, MAX_MANIFEST_BYTES).map_err(|source| {
            Error::Read {
                file: file.clone(),
                source,
            }
        })?;
        files.push((file.display().to_string(), text));
    }
    let flags_help = match &config.controller_flags {
        Some(file) => Some((
            file.display().to_string(),
            asogen::read::read_capped_text(file, MAX_MANIFEST_BYTES).map_err(|source| {
                Error::Read {
                    file: file.clone(),
                    source,
                }
            })?,
        )),
        None => None,
    };
    let catalog = catalog_import::import(config.release.as_deref(), &files, flags_help.as_ref())?;
    asogen::render::write_file_atomically(&config.out, catalog.to_file().as_bytes()).map_err(
        |source| Error::Write {
            file: config.out.clone(),
            source,
        },
    )?;
    let webhooks: usize = catalog.groups.iter().map(|g| g.webhooks.len()).sum();
    stdout.print(format!(
        "wrote {}: ASO {}, {} API groups, {webhooks} resource versions with webhooks, {} ClusterRoles, {} Roles, {} controller flags, {} environment variables\n",
        config.out.display(),
        catalog.release,
        catalog.groups.len(),
        catalog.cluster_roles.len(),
        catalog.roles.len(),
        catalog.controller.flags.len(),
        catalog.controller.env.len()
    ));
    // A build compiles the catalog in from Rust tables generated from it,
    // and refuses to build until they are regenerated.
    stdout.print(
        "to compile it into asogen: `cargo xtask regen` (writes src/catalog/tables.rs, then what is built from it)\n",
    );
    Ok(Status::Success)
}
