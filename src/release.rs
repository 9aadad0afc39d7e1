//! `asogen release`: every artifact of one version, byte-for-byte
//! reproducible: the packaged chart, a Helm repository index entry, one
//! install manifest per profile, the values schema, the upgrade notes
//! against the previous release, and SHA256SUMS over all of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::model::{CHART_NAME, Release};
use crate::render::{self, RenderError};

/// Where the chart sits among the rendered artifacts.
const CHART_PREFIX: &str = "charts/azure-service-operator/";

/// What `release` was asked for.
#[derive(Debug, Clone)]
pub struct ReleaseRequest {
    /// The chart version (SemVer 2, no `v`).
    pub version: String,
    /// The image tag (and appVersion); default `v` + version.
    pub image_tag: Option<String>,
    /// The image digest (`sha256:` and 64 hex digits) that pins the tag.
    pub image_digest: Option<String>,
    /// The previous release's output folder, for the upgrade notes.
    pub previous: Option<PathBuf>,
    /// The values profiles folder.
    pub profiles: PathBuf,
    /// Seconds since the epoch for every timestamp (SOURCE_DATE_EPOCH).
    pub source_date_epoch: u64,
}

/// Why a release could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    /// The version is not SemVer 2.
    #[error("--version {version:?} is not a SemVer 2 version ({reason}); {help}")]
    Version {
        /// As given.
        version: String,
        /// The parser's complaint.
        reason: String,
        /// What to write instead.
        help: String,
    },
    /// The image tag is not a valid OCI tag.
    #[error(
        "--image-tag {0:?} is not a valid image tag (1 to 128 of A-Z a-z 0-9 _ . -, not starting with . or -)"
    )]
    ImageTag(String),
    /// The image digest is not `sha256:` and 64 lowercase hex digits.
    #[error(
        "--image-digest {0:?} is not a digest; write sha256: and 64 lowercase hex digits (as `crane digest` or `docker buildx imagetools inspect` print it)"
    )]
    ImageDigest(String),
    /// The previous release folder is missing or unreadable.
    #[error("--previous {path}: {message}")]
    Previous {
        /// As given.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// A profile is invalid or unreadable.
    #[error(transparent)]
    Render(#[from] RenderError),
}

/// Parses a chart version: SemVer 2 without a leading `v` (what Helm and
/// chart repositories expect).
pub fn parse_version(version: &str) -> Result<semver::Version, ReleaseError> {
    semver::Version::parse(version).map_err(|err| ReleaseError::Version {
        version: version.to_string(),
        reason: err.to_string(),
        help: match version.strip_prefix('v') {
            Some(rest) if semver::Version::parse(rest).is_ok() => {
                format!("write --version {rest} (the image tag gets the v)")
            }
            _ => "write MAJOR.MINOR.PATCH, e.g. 2.22.0 or 2.22.0-rc.1".to_string(),
        },
    })
}

fn valid_image_tag(tag: &str) -> bool {
    (1..=128).contains(&tag.len())
        && !tag.starts_with(['.', '-'])
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// `created` timestamps: RFC 3339 UTC from seconds since the epoch.
pub fn rfc3339(epoch: u64) -> String {
    let days = (epoch / 86_400) as i64;
    let secs = epoch % 86_400;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// A gzipped tar of `files` under `top/`, reproducible: sorted entries
/// (the map is ordered), fixed mode, owner and mtime, and a gzip header
/// without name or time.
pub fn package(files: &BTreeMap<String, String>, top: &str, mtime: u64) -> Vec<u8> {
    let gzip = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::best());
    let mut tar = tar::Builder::new(gzip);
    tar.mode(tar::HeaderMode::Deterministic);
    for (path, contents) in files {
        let mut header = tar::Header::new_ustar();
        header.set_size(contents.len() as u64);
        header.set_mode(0o644);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(mtime);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, format!("{top}/{path}"), contents.as_bytes())
            .expect("writing to memory cannot fail");
    }
    tar.into_inner()
        .and_then(|gzip| gzip.finish())
        .expect("writing to memory cannot fail")
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The chart archive's file name for a version.
pub fn archive_name(version: &str) -> String {
    format!("{CHART_NAME}-{version}.tgz")
}

/// Builds every file of the release in memory (nothing is written).
pub fn build(request: &ReleaseRequest) -> Result<BTreeMap<String, Vec<u8>>, ReleaseError> {
    parse_version(&request.version)?;
    let image_tag = request
        .image_tag
        .clone()
        .unwrap_or_else(|| format!("v{}", request.version));
    if !valid_image_tag(&image_tag) {
        return Err(ReleaseError::ImageTag(image_tag));
    }
    if let Some(digest) = &request.image_digest {
        let hex = digest.strip_prefix("sha256:").unwrap_or("");
        if hex.len() != 64 || !hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')) {
            return Err(ReleaseError::ImageDigest(digest.clone()));
        }
    }
    let previous = match &request.previous {
        Some(dir) => Some(read_previous(dir)?),
        None => None,
    };
    let release = Release {
        chart_version: request.version.clone(),
        app_version: image_tag,
        image_digest: request.image_digest.clone(),
    };
    let artifacts = render::render_all(&request.profiles, &release)?;
    let mut out: BTreeMap<String, Vec<u8>> = BTreeMap::new();

    let chart: BTreeMap<String, String> = artifacts
        .iter()
        .filter_map(|(path, text)| {
            path.strip_prefix(CHART_PREFIX)
                .map(|p| (p.to_string(), text.clone()))
        })
        .collect();
    let archive = archive_name(&request.version);
    let tgz = package(&chart, CHART_NAME, request.source_date_epoch);
    out.insert(
        "index.yaml".into(),
        index_yaml(
            &chart["Chart.yaml"],
            &archive,
            &tgz,
            request.source_date_epoch,
        )
        .into_bytes(),
    );
    out.insert(archive, tgz);
    for (path, text) in &artifacts {
        if let Some(profile) = path
            .strip_prefix("manifests/")
            .and_then(|p| p.strip_suffix(".yaml"))
        {
            out.insert(format!("install-{profile}.yaml"), text.clone().into_bytes());
        }
    }
    out.insert(
        "values.schema.json".into(),
        chart["values.schema.json"].clone().into_bytes(),
    );
    if let Some(previous) = previous {
        let current = crate::diff::Side {
            manifests: release_manifests(&out)?,
            values: crate::yaml::from_str(&chart["values.yaml"]).ok(),
            schema: serde_json::from_str(&chart["values.schema.json"]).ok(),
        };
        let changes = crate::diff::compare(&previous, &current);
        out.insert(
            "UPGRADE-NOTES.md".into(),
            crate::diff::format_markdown(&changes).into_bytes(),
        );
    }
    let sums: String = out
        .iter()
        .map(|(name, bytes)| format!("{}  {name}\n", sha256_hex(bytes)))
        .collect();
    out.insert("SHA256SUMS".into(), sums.into_bytes());
    Ok(out)
}

fn release_manifests(
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<BTreeMap<String, BTreeMap<crate::diff::ObjectKey, serde_json::Value>>, ReleaseError> {
    let mut manifests = BTreeMap::new();
    for (name, bytes) in files {
        if let Some(profile) = name
            .strip_prefix("install-")
            .and_then(|p| p.strip_suffix(".yaml"))
        {
            let text = String::from_utf8_lossy(bytes);
            let objects =
                crate::diff::parse_manifest(name, &text).map_err(|err| ReleaseError::Previous {
                    path: name.clone(),
                    message: err.to_string(),
                })?;
            manifests.insert(profile.to_string(), objects);
        }
    }
    Ok(manifests)
}

/// Reads a previous release folder (as `release` wrote it) for the diff.
fn read_previous(dir: &Path) -> Result<crate::diff::Side, ReleaseError> {
    let fail = |message: String| ReleaseError::Previous {
        path: dir.display().to_string(),
        message,
    };
    if !dir.is_dir() {
        return Err(fail(
            "not found or not a folder; pass the previous release's output folder".into(),
        ));
    }
    crate::diff::read_side(dir).map_err(|err| fail(err.to_string()))
}

fn index_yaml(chart_yaml: &str, archive: &str, tgz: &[u8], epoch: u64) -> String {
    let chart: serde_json::Value =
        crate::yaml::from_str(chart_yaml).expect("the rendered Chart.yaml parses");
    let mut entry = chart.as_object().cloned().unwrap_or_default();
    entry.insert("created".into(), json!(rfc3339(epoch)));
    entry.insert("digest".into(), json!(sha256_hex(tgz)));
    entry.insert("urls".into(), json!([archive]));
    let sorted: BTreeMap<String, serde_json::Value> = entry.into_iter().collect();
    let index = json!({
        "apiVersion": "v1",
        "entries": {CHART_NAME: [sorted]},
        "generated": rfc3339(epoch),
    });
    crate::yaml::to_yaml(&index)
}

/// Writes the release into `out` atomically (all files or none).
pub fn write(out: &Path, files: &BTreeMap<String, Vec<u8>>) -> std::io::Result<bool> {
    render::write_atomically(out, files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_764_672_301), "2025-12-02T10:45:01Z");
    }

    #[test]
    fn versions_must_be_semver_without_v() {
        assert!(parse_version("2.22.0").is_ok());
        assert!(parse_version("2.22.0-rc.1+build.5").is_ok());
        let err = parse_version("v2.22.0").unwrap_err().to_string();
        assert!(err.contains("write --version 2.22.0"), "{err}");
        assert!(parse_version("2.22").is_err());
        assert!(parse_version("").is_err());
    }

    #[test]
    fn image_tags() {
        assert!(valid_image_tag("v2.22.0"));
        assert!(valid_image_tag("2.22.0_build-1"));
        assert!(!valid_image_tag("-x"));
        assert!(!valid_image_tag("a/b"));
        assert!(!valid_image_tag(""));
    }

    #[test]
    fn packages_are_reproducible() {
        let files = BTreeMap::from([("a".to_string(), "1".to_string())]);
        assert_eq!(package(&files, "top", 5), package(&files, "top", 5));
        assert_ne!(package(&files, "top", 5), package(&files, "top", 6));
    }
}
