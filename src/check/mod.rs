//! The check stage: merged values against the structural schema
//! (`shape.rs`) and the labels and annotations against the API server's
//! checks (`labels.rs`), then the integer ranges Kubernetes holds
//! (`ranges.rs`), then the rules (`rules.rs`); every problem as a
//! diagnostic at the key that caused it, or the validated model.
//!
//! This file owns the [`Checker`], which runs those checks in that order.

mod controller;
pub mod crds;
pub mod labels;
mod ranges;
mod shape;
mod topology;
mod violations;

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::catalog::Catalog;
use crate::diagnostics::Diagnostic;
use crate::model::Model;
use crate::read::{Merged, Source, merge_sources};
use crate::schema;
use crate::values::Values;

pub use labels::label_diagnostics;
pub use shape::shape_diagnostics;
pub use violations::rule_diagnostics;

use ranges::{integral_floats_to_integers, range_diagnostics};
use violations::rules_despite_shape_errors;

/// Everything `validate`, `template` and `render` need to check values.
pub struct Checker {
    release: crate::model::Release,
    /// The top-level keys the validator covers; `None` for all of them.
    covers: Option<BTreeSet<String>>,
    /// Compiled on first use: values that set nothing need no validator.
    validator: OnceLock<jsonschema::Validator>,
    catalog: Arc<Catalog>,
}

impl Default for Checker {
    fn default() -> Self {
        Self::new()
    }
}

impl Checker {
    /// A checker of any values: the whole structural schema, compiled once
    /// (on first use) for every check.
    pub fn new() -> Checker {
        Self::for_release(crate::model::Release::default())
    }

    /// A checker whose models render the given release's versions.
    pub fn for_release(release: crate::model::Release) -> Checker {
        Self::covering(release, None)
    }

    /// A checker for the given values only, for one-shot commands: its
    /// validator covers just the top-level keys they write, so it compiles
    /// several times faster than the whole schema and reports the same
    /// errors for them (see [`schema::structural_schema_for_keys`]). Checks
    /// of other values are not meaningful; use [`Checker::new`] for those.
    pub fn for_sources<'s>(
        release: crate::model::Release,
        sources: impl IntoIterator<Item = &'s Source>,
    ) -> Checker {
        let mut written = BTreeSet::new();
        for source in sources {
            match &source.document.value {
                Value::Object(map) => written.extend(map.keys().cloned()),
                Value::Null => {}
                // Not a mapping: the full schema reports it.
                _ => return Self::for_release(release),
            }
        }
        Self::covering(release, Some(written))
    }

    fn covering(release: crate::model::Release, covers: Option<BTreeSet<String>>) -> Checker {
        Checker {
            release,
            covers,
            validator: OnceLock::new(),
            catalog: Catalog::builtin(),
        }
    }

    fn validator(&self) -> &jsonschema::Validator {
        self.validator.get_or_init(|| {
            let narrowed;
            let validated_against = match &self.covers {
                None => schema::structural_schema_ref(),
                Some(keys) => {
                    narrowed = schema::structural_schema_for_keys(keys.iter().map(String::as_str));
                    &narrowed
                }
            };
            jsonschema::draft7::new(validated_against)
                .expect("the generated schema is valid draft-07")
        })
    }

    /// What the values mean otherwise than they may seem to, as warnings
    /// (the values are accepted): YAML 1.1 readings, values the release's
    /// controller cannot act on, values the topology does not read.
    pub fn warnings(&self, sources: &[Source]) -> Vec<Diagnostic> {
        if sources.is_empty() {
            // The chart defaults warn of nothing (`defaults_pass_every_check`).
            return Vec::new();
        }
        self.all_warnings(sources)
    }

    fn all_warnings(&self, sources: &[Source]) -> Vec<Diagnostic> {
        let mut warnings = crate::read::yaml_warnings(sources);
        warnings.extend(crate::read::profile_warnings(sources));
        let merged = merge_sources(sources);
        warnings.extend(controller::ignored_value_warnings(&merged, &self.catalog));
        warnings.extend(topology::unread_value_warnings(&merged));
        warnings.extend(topology::rolling_upgrade_warnings(&merged));
        warnings
    }

    /// Shape checks, then the rules; the model or every problem.
    pub fn check(&self, sources: &[Source], namespace: &str) -> Result<Model, Vec<Diagnostic>> {
        if sources.is_empty() {
            // No values given: the chart defaults, a constant of the build
            // that passes every check (`defaults_pass_every_check`).
            return self.model(Values::default(), namespace, sources);
        }
        self.check_all(sources, namespace)
    }

    /// Every check, whatever the sources.
    fn check_all(&self, sources: &[Source], namespace: &str) -> Result<Model, Vec<Diagnostic>> {
        let schema = schema::structural_schema_ref();
        let merged = merge_sources(sources);
        let mut shape = deleted_key_diagnostics(&merged);
        shape.extend(shape_diagnostics(&merged, schema, self.validator()));
        shape.extend(label_diagnostics(&merged));
        if !shape.is_empty() {
            // Report the broken rules too when the keys they read are well
            // formed, so one run shows every problem (as an editor does).
            shape.extend(rule_diagnostics(
                &merged,
                &rules_despite_shape_errors(&merged, &shape),
            ));
            return Err(shape);
        }
        let mut typed = merged.value.clone();
        integral_floats_to_integers(&mut typed);
        let ranges = range_diagnostics(&merged, &typed, schema);
        if !ranges.is_empty() {
            return Err(ranges);
        }
        let mut problems = template_diagnostics(&merged, &typed);
        problems.extend(crds::crd_pattern_diagnostics(
            &merged,
            &typed,
            &self.catalog,
        ));
        if !problems.is_empty() {
            return Err(problems);
        }
        let values: Values = serde_json::from_value(typed).map_err(|err| {
            vec![Diagnostic {
                file: sources
                    .last()
                    .map_or("<defaults>".into(), |s| s.name.clone()),
                keyword: Some("type".into()),
                // serde quotes the value it could not take: never shown.
                message: format!(
                    "values do not fit the model: {}",
                    crate::redact::without_quoted_text(&err.to_string())
                ),
                help: Some("see values.yaml for the expected shape".into()),
                ..Default::default()
            }]
        })?;
        self.model(values, namespace, sources)
    }

    /// The model of shape-checked values, or the rules they break.
    fn model(
        &self,
        values: Values,
        namespace: &str,
        sources: &[Source],
    ) -> Result<Model, Vec<Diagnostic>> {
        Model::new(
            values,
            namespace,
            Arc::clone(&self.catalog),
            self.release.clone(),
        )
        .map_err(|violations| rule_diagnostics(&merge_sources(sources), &violations))
    }
}

/// The keys the chart needs that a `null` deleted, as Helm merges values
/// (its merge with the chart's defaults removes a key set to null): each
/// at the null that deleted it. The chart's guard refuses them too.
fn deleted_key_diagnostics(merged: &Merged) -> Vec<Diagnostic> {
    crate::values::deleted_needed_keys(&merged.value)
        .into_iter()
        .map(|key| {
            let mut d = merged.diagnostic(&key.pointer(), true);
            d.keyword = Some("null".into());
            d.message = crate::values::deleted_key_message(key);
            d.help = Some(crate::values::deleted_key_help(key));
            d
        })
        .collect()
}

/// The values the chart evaluates with `tpl`, evaluated the same way: a
/// template that Helm would refuse or render wrong is a problem at its key.
fn template_diagnostics(merged: &Merged, values: &Value) -> Vec<Diagnostic> {
    crate::keys::templated()
        .filter_map(|key| {
            let path = key.path();
            let text = key
                .segments()
                .try_fold(values, |node, segment| node.get(segment))?
                .as_str()?;
            let err = crate::describe::expr::tpl(text, values, crate::describe::IS_SECRET).err()?;
            let pointer = key.pointer();
            let mut d = merged.diagnostic(&pointer, false);
            d.key = path.to_string();
            d.keyword = Some("tpl".into());
            // The error quotes the template's text: not a file's content.
            d.message = if merged.hides_value(&pointer) {
                format!("{path} is a template Helm evaluates, and Helm cannot evaluate it (the value is not shown)")
            } else {
                format!("{path} is a template Helm evaluates: {err}")
            };
            d.help = Some(crate::describe::expr::TPL_HELP.into());
            Some(d)
        })
        .collect()
}

/// Checks one values file's text with the full schema (for the tests of
/// each check).
#[cfg(test)]
fn check_text(text: &str) -> Result<Model, Vec<Diagnostic>> {
    use crate::read::{LoadError, parse_source};
    let source = parse_source("v.yaml".into(), text.into()).map_err(|err| match err {
        LoadError::Io(d) | LoadError::Invalid(d) => d,
    })?;
    Checker::new().check(&[source], "ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `check` and `warnings` take the chart defaults as checked when no
    /// values are given: every check passes them, to the same model.
    #[test]
    fn defaults_pass_every_check() {
        let none: [Source; 0] = [];
        for checker in [
            Checker::new(),
            Checker::for_sources(Default::default(), &none),
        ] {
            assert_eq!(checker.all_warnings(&[]), Vec::new());
            let checked = checker.check_all(&[], "ns").expect("the defaults pass");
            let given = checker.check(&[], "ns").expect("the defaults pass");
            assert_eq!(checked.values, given.values);
            assert_eq!(checked.values, Values::default());
            assert_eq!(format!("{checked:?}"), format!("{given:?}"));
        }
    }
}
