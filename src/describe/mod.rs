//! One description per object. Each object of the install is described
//! once, as a tree whose values are constants or Helm expressions; the
//! chart template is printed from that tree and asogen's own object is
//! evaluated from it, so the two cannot say different things. The objects
//! themselves are described in [`crate::objects`]; the chart guard
//! ([`crate::rules::guard`]) is described with the same expressions, as
//! actions ([`stmt`]).

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
            objects.push(canonical(object));
        }
    }
    Ok(objects)
}

fn canonical(mut value: Value) -> Value {
    // Sorted in place (no map is rebuilt), then the top level rebuilt once
    // with `apiVersion` and `kind` first.
    value.sort_all_objects();
    match value {
        Value::Object(map) => {
            let mut ordered = Map::with_capacity(map.len());
            let mut rest = Vec::with_capacity(map.len());
            for (key, item) in map {
                match key.as_str() {
                    "apiVersion" | "kind" => {
                        ordered.insert(key, item);
                    }
                    _ => rest.push((key, item)),
                }
            }
            ordered.sort_keys();
            ordered.extend(rest);
            Value::Object(ordered)
        }
        other => other,
    }
}
