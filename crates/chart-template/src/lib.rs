//! A Helm chart's templates described as typed trees. Each object is
//! described once, as a tree whose values are constants or Helm
//! expressions ([`ast`]); the chart template is printed from that tree and
//! the object is evaluated from it with Helm's meaning ([`expr`],
//! [`tree`]), so the two cannot say different things. Templates made of
//! actions rather than objects (a chart's `fail` guard) are written as
//! statements ([`stmt`]). Only the functions of [`Func`] exist, so the
//! printed and the evaluated side stay small enough to keep in step.
//!
//! What the chart itself knows stays with the chart: which values keys
//! exist (it makes [`ValuesPath`]s from its own handles), its named
//! helpers ([`Helper`], included by reference), its name and which key
//! names are secret ([`Scope`]). Evaluated objects are written as YAML by
//! [`emit`].

#![forbid(unsafe_code)]

pub mod ast;
pub mod capabilities;
pub mod emit;
pub mod expr;
pub mod funcs;
pub mod stmt;
pub mod tree;

pub use ast::{Body, Helper, ValuesPath};
pub use capabilities::{Capabilities, KubeVersion};
pub use expr::{EvalError, Expr, Func, Locals, Scope};
pub use stmt::Stmt;
pub use tree::{Entry, Item, Node, Resource};

use serde_json::Value;

use emit::Doc;

/// Every object whose resource's condition holds, in the resources' order,
/// with each map's keys sorted (`apiVersion` and `kind` first), so that the
/// output does not depend on the order a description lists its fields in.
pub fn evaluate(resources: &[Resource], scope: &Scope) -> Result<Vec<Value>, EvalError> {
    let mut objects = Vec::new();
    for resource in resources {
        objects.extend(evaluate_doc(resource, scope)?.map(Doc::into_value));
    }
    Ok(objects)
}

/// One resource's object as [`evaluate`] gives it, as a document to write
/// (None when its condition does not hold).
pub fn evaluate_doc<'r>(
    resource: &'r Resource,
    scope: &Scope,
) -> Result<Option<Doc<'r>>, EvalError> {
    let object = resource
        .eval_doc(scope)
        .map_err(|err| EvalError(format!("templates/{}: {err}", resource.file)))?;
    Ok(object.map(|object| match object {
        // Keys are sorted: `apiVersion` and `kind` move to the front.
        Doc::Map(entries) => {
            let (mut first, rest): (Vec<_>, Vec<_>) = entries
                .into_iter()
                .partition(|(key, _)| matches!(key.as_ref(), "apiVersion" | "kind"));
            first.extend(rest);
            Doc::Map(first)
        }
        other => other,
    }))
}

/// A test's secret names: any key path with `secret` or `token` in it.
#[cfg(test)]
pub(crate) fn test_is_secret(path: &str) -> bool {
    let lower = path.to_lowercase();
    lower.contains("secret") || lower.contains("token")
}

/// A scope for unit tests: `values` with a fixed release (namespace `ns`,
/// name `r`, chart `c` 1.0.0, app v1.0.0) on a current cluster.
#[cfg(test)]
pub(crate) fn test_scope(values: &Value) -> Scope<'_> {
    static CURRENT: Capabilities = Capabilities {
        kube_version: None,
        api_versions: Vec::new(),
    };
    Scope {
        values,
        namespace: "ns",
        release_name: "r",
        release_service: "asogen",
        chart_name: "c",
        chart_version: "1.0.0",
        app_version: "v1.0.0",
        capabilities: &CURRENT,
        is_secret: test_is_secret,
    }
}
