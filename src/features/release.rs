//! `asogen release`: every artifact of one version, byte-for-byte
//! reproducible: the packaged chart, a Helm repository index entry, one
//! install manifest per profile, the values schema, the upgrade notes
//! against the previous release, and SHA256SUMS over all of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::model::Release;
use crate::names::{self, CHART_NAME};
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
    /// The values profiles folder; None for the built-in profiles.
    pub profiles: Option<PathBuf>,
    /// Seconds since the epoch for every timestamp (SOURCE_DATE_EPOCH).
    pub source_date_epoch: u64,
    /// The `index.yaml` already in the output folder (a chart
    /// repository): the new version's entry is merged into it.
    pub existing_index: Option<Vec<u8>>,
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
        "--app-version {0:?} is not a valid image tag (1 to 128 of A-Z a-z 0-9 _ . -, not starting with . or -)"
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
    /// The output folder's index.yaml cannot be merged.
    #[error(
        "{path}: {message}; nothing was written\nhelp: the --out folder of a chart repository needs the index.yaml `helm repo index` writes; fix or move it"
    )]
    Index {
        /// The index.
        path: String,
        /// What is wrong with it.
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
                format!(
                    "write --version {rest} (--app-version, the image tag, is v{rest} by default)"
                )
            }
            _ => "write MAJOR.MINOR.PATCH, e.g. 2.22.0 or 2.22.0-rc.1".to_string(),
        },
    })
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
    if !names::valid_image_tag(&image_tag) {
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
    // Read before anything is rendered: a bad index is refused at once.
    let existing_index = match &request.existing_index {
        Some(existing) => Some(read_index(existing)?),
        None => None,
    };
    let release = Release {
        chart_version: request.version.clone(),
        app_version: image_tag,
        image_digest: request.image_digest.clone(),
    };
    let artifacts = render::render_all(request.profiles.as_deref(), &release)?;
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
    let index = index_yaml(
        &chart["Chart.yaml"],
        &archive,
        &tgz,
        request.source_date_epoch,
    );
    let index = match existing_index {
        Some(existing) => merge_parsed_index(existing, &index)?,
        None => crate::yaml::to_yaml(&index),
    };
    out.insert("index.yaml".into(), index.into_bytes());
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
        let current = super::diff::Side {
            manifests: release_manifests(&out)?,
            values: crate::yaml::parse_value(&chart["values.yaml"]).ok(),
            schema: serde_json::from_str(&chart["values.schema.json"]).ok(),
        };
        let changes = super::diff::compare(&previous, &current);
        out.insert(
            "UPGRADE-NOTES.md".into(),
            super::diff::format_markdown(&changes).into_bytes(),
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
) -> Result<BTreeMap<String, BTreeMap<super::diff::ObjectKey, serde_json::Value>>, ReleaseError> {
    let mut manifests = BTreeMap::new();
    for (name, bytes) in files {
        if let Some(profile) = name
            .strip_prefix("install-")
            .and_then(|p| p.strip_suffix(".yaml"))
        {
            let text = String::from_utf8_lossy(bytes);
            let objects =
                super::diff::parse_manifest(name, &text).map_err(|err| ReleaseError::Previous {
                    path: name.clone(),
                    message: err.to_string(),
                })?;
            manifests.insert(profile.to_string(), objects);
        }
    }
    Ok(manifests)
}

/// Reads a previous release folder (as `release` wrote it) for the diff.
fn read_previous(dir: &Path) -> Result<super::diff::Side, ReleaseError> {
    let fail = |message: String| ReleaseError::Previous {
        path: dir.display().to_string(),
        message,
    };
    if !dir.is_dir() {
        return Err(fail(
            "not found or not a folder; pass the previous release's output folder".into(),
        ));
    }
    super::diff::read_side(dir).map_err(|err| fail(err.to_string()))
}

/// The index for this release alone: one entry.
fn index_yaml(chart_yaml: &str, archive: &str, tgz: &[u8], epoch: u64) -> serde_json::Value {
    let chart: serde_json::Value =
        crate::yaml::parse_value(chart_yaml).expect("the rendered Chart.yaml parses");
    let mut entry = chart.as_object().cloned().unwrap_or_default();
    entry.insert("created".into(), json!(rfc3339(epoch)));
    entry.insert("digest".into(), json!(sha256_hex(tgz)));
    entry.insert("urls".into(), json!([archive]));
    let sorted: BTreeMap<String, serde_json::Value> = entry.into_iter().collect();
    json!({
        "apiVersion": "v1",
        "entries": {CHART_NAME: [sorted]},
        "generated": rfc3339(epoch),
    })
}

/// Merges this release's index into a chart repository's, as `helm repo
/// index --merge` does: every other chart and version stays as it was, an
/// entry of the same version is replaced, each chart's versions newest
/// first, `generated` is this release's.
pub fn merge_index(existing: &[u8], new: &serde_json::Value) -> Result<String, ReleaseError> {
    merge_parsed_index(read_index(existing)?, new)
}

fn index_error(message: String) -> ReleaseError {
    ReleaseError::Index {
        path: "index.yaml".into(),
        message,
    }
}

/// A chart repository's index.yaml, read (through the one YAML reader,
/// within its bounds) as a mapping.
fn read_index(existing: &[u8]) -> Result<serde_json::Value, ReleaseError> {
    use serde_json::Value;
    let text = std::str::from_utf8(existing).map_err(|_| index_error("not UTF-8 text".into()))?;
    match crate::yaml::parse_value(text) {
        Ok(Value::Object(map)) => Ok(Value::Object(map)),
        Ok(Value::Null) => Ok(json!({})),
        Ok(_) => Err(index_error("not a mapping".into())),
        Err(err) => Err(ReleaseError::Index {
            path: format!("index.yaml:{}:{}", err.position.line, err.position.column),
            message: format!("not YAML: {}", err.message),
        }),
    }
}

/// Merges this release's index into a read index (see [`merge_index`]).
fn merge_parsed_index(
    mut index: serde_json::Value,
    new: &serde_json::Value,
) -> Result<String, ReleaseError> {
    use serde_json::Value;
    let fail = index_error;
    let map = index.as_object_mut().expect("a mapping");
    if let Some(version) = map.get("apiVersion")
        && version != "v1"
    {
        return Err(fail(format!(
            "apiVersion {version} is not v1, the index format asogen writes"
        )));
    }
    let entries = map
        .entry("entries")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| fail("`entries` is not a mapping".into()))?;
    for (chart, new_versions) in new["entries"].as_object().into_iter().flatten() {
        let versions = entries
            .entry(chart.clone())
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .ok_or_else(|| fail(format!("`entries.{chart}` is not a list")))?;
        for entry in new_versions.as_array().into_iter().flatten() {
            versions.retain(|old| old.get("version") != entry.get("version"));
            versions.push(entry.clone());
        }
        // Newest first, as Helm sorts them; versions that do not parse last.
        let parsed = |entry: &Value| {
            entry
                .get("version")
                .and_then(Value::as_str)
                .and_then(|v| semver::Version::parse(v).ok())
        };
        versions.sort_by_key(|entry| std::cmp::Reverse(parsed(entry)));
    }
    map.insert("apiVersion".into(), json!("v1"));
    map.insert("generated".into(), new["generated"].clone());
    Ok(crate::yaml::to_yaml(&index))
}

/// Whether `path` is a chart archive of a release: the archives of earlier
/// versions in a chart repository folder are kept.
pub fn is_archive(path: &str) -> bool {
    !path.contains('/') && path.starts_with(&format!("{CHART_NAME}-")) && path.ends_with(".tgz")
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
    fn an_index_merges_like_helm_repo_index_merge() {
        let entry = |version: &str| json!({"name": CHART_NAME, "version": version});
        let existing = format!(
            "apiVersion: v1\nentries:\n  {CHART_NAME}:\n  - name: {CHART_NAME}\n    version: 2.9.0\n    digest: old\n  - name: {CHART_NAME}\n    version: 2.22.0\n    digest: stale\n  other:\n  - name: other\n    version: 1.0.0\ngenerated: \"2020-01-01T00:00:00Z\"\nserverInfo: {{}}\n"
        );
        let new = json!({"apiVersion": "v1", "entries": {CHART_NAME: [entry("2.22.0"), entry("2.10.0")]}, "generated": "2026-01-01T00:00:00Z"});
        let merged: serde_json::Value =
            crate::yaml::parse_value(&merge_index(existing.as_bytes(), &new).unwrap()).unwrap();
        let versions: Vec<&str> = merged["entries"][CHART_NAME]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["version"].as_str().unwrap())
            .collect();
        assert_eq!(versions, ["2.22.0", "2.10.0", "2.9.0"]);
        assert!(
            merged["entries"][CHART_NAME][0].get("digest").is_none(),
            "replaced"
        );
        assert_eq!(merged["entries"][CHART_NAME][2]["digest"], "old");
        assert_eq!(merged["entries"]["other"][0]["version"], "1.0.0");
        assert_eq!(merged["generated"], "2026-01-01T00:00:00Z");
        assert!(merged.get("serverInfo").is_some());
        for bad in ["- a list\n", "entries: 5\n", "apiVersion: v2\n", "a: [\n"] {
            assert!(merge_index(bad.as_bytes(), &new).is_err(), "{bad}");
        }
    }

    #[test]
    fn packages_are_reproducible() {
        let files = BTreeMap::from([("a".to_string(), "1".to_string())]);
        assert_eq!(package(&files, "top", 5), package(&files, "top", 5));
        assert_ne!(package(&files, "top", 5), package(&files, "top", 6));
    }
}
