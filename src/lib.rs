//! asogen: one typed model of the Azure Service Operator v2
//! controller-manager deployment, rendered into a Helm chart, kustomize
//! bases and components, install manifests and the values JSON Schema, with
//! the deployment shapes that break clusters refused at every step.
//!
//! The command line is a crate of its own over this library
//! (`src/bin/asogen/`): nothing here can reach back into it.
#![deny(missing_docs, unsafe_code)]

pub mod catalog;
pub mod check;
pub mod describe;
pub mod diagnostics;
pub mod exit;
pub mod features;
pub mod keys;
pub mod metadata;
pub mod model;
pub mod names;
pub mod objects;
pub mod output;
pub mod progress;
pub mod read;
pub mod redact;
pub mod render;
pub mod roles;
pub mod rules;
pub mod schema;
pub mod values;
pub mod yaml;
