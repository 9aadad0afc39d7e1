//! One description per object. Each object of the install is described
//! once, as a tree whose values are constants or Helm expressions; the
//! chart template is printed from that tree and asogen's own object is
//! evaluated from it, so the two cannot say different things. The objects
//! themselves are described in [`crate::objects`], in the types of
//! [`ast`]; [`expr`] and [`tree`] evaluate and print them. The chart guard
//! ([`crate::rules::guard`]) is described with the same expressions, as
//! actions ([`stmt`]).

pub mod ast;
pub mod capabilities;
pub mod expr;
pub mod funcs;
pub mod helpers;
pub mod stmt;
pub mod tree;

pub use capabilities::{Capabilities, KubeVersion};
pub use expr::{EvalError, Expr, Func, Locals, Scope};
pub use stmt::Stmt;
pub use tree::{Entry, Item, Node, Resource};

use serde_json::Value;

use crate::emit::Doc;

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

/// A scope for unit tests: `values` with a fixed release (namespace `ns`,
/// name `r`, chart 1.0.0, app v1.0.0) on a current cluster.
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
        chart_version: "1.0.0",
        app_version: "v1.0.0",
        capabilities: &CURRENT,
    }
}
