//! One description per object. Each object of the install is described
//! once, as a tree whose values are constants or Helm expressions; the
//! chart template is printed from that tree and asogen's own object is
//! evaluated from it, so the two cannot say different things. The objects
//! themselves are described in [`crate::objects`].

pub mod expr;
pub mod helpers;
pub mod tree;

pub use expr::{EvalError, Expr, Func, Scope};
pub use tree::{Entry, Item, Node, Resource};

use serde_json::{Map, Value};

/// Every object whose resource's condition holds, in the resources' order,
/// with each map's keys sorted (`apiVersion` and `kind` first), so that the
/// output does not depend on the order a description lists its fields in.
pub fn evaluate(resources: &[Resource], scope: &Scope) -> Result<Vec<Value>, EvalError> {
    let mut objects = Vec::new();
    for resource in resources {
        if let Some(object) = resource
            .eval(scope)
            .map_err(|err| EvalError(format!("templates/{}: {err}", resource.file)))?
        {
            objects.push(canonical(object, true));
        }
    }
    Ok(objects)
}

fn canonical(value: Value, top: bool) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|(a, _), (b, _)| {
                let rank = |key: &str| match key {
                    "apiVersion" if top => 0,
                    "kind" if top => 1,
                    _ => 2,
                };
                rank(a).cmp(&rank(b)).then_with(|| a.cmp(b))
            });
            Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| (key, canonical(value, false)))
                    .collect::<Map<String, Value>>(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| canonical(v, false)).collect())
        }
        scalar => scalar,
    }
}
