//! The chart's side of the template language: the language itself (typed
//! object trees and Helm expressions, printed as Go templates and
//! evaluated with Helm's meaning) is the `chart-template` crate, re-exported
//! here; what only this chart knows is added: its named helpers
//! ([`helpers`]), the shorthands that read a key's default from the one
//! place defaults live, and the scope it evaluates in. The objects are
//! described in [`crate::objects`]; the chart guard
//! ([`crate::rules::guard`]) is written as statements of the same language.

pub mod helpers;

pub use chart_template::{
    Body, Capabilities, Entry, EvalError, Expr, Func, Helper, Item, KubeVersion, Locals, Node,
    Resource, Scope, Stmt, ValuesPath, ast, capabilities, evaluate, evaluate_doc, expr, funcs,
    stmt, tree,
};

use crate::keys::Key;

/// The chart's default for a key, as a constant (from
/// [`crate::values::default_of`], the one place defaults live).
pub fn default_of(key: Key) -> Expr {
    Expr::Lit(crate::values::default_of(key))
}

/// `default DEFAULT .Values.KEY`: the key, or its default when it is
/// empty (left out, null, or zero as Go templates see it).
pub fn value_or_default(key: Key) -> Expr {
    Expr::value(key).or_default(default_of(key))
}

/// `dig "a" "b" DEFAULT .Values.WITHIN`: `key`, read from the map at
/// `within` (one of its parents), or its default when anything on the way
/// is missing.
pub fn dig(key: Key, within: Key) -> Expr {
    Expr::dig(key, within, default_of(key))
}

/// Whether `tpl` must refuse to print a values key path: the chart's own
/// judgement of secret names ([`crate::redact::is_secret_name`]).
pub const IS_SECRET: fn(&str) -> bool = crate::redact::is_secret_name;
