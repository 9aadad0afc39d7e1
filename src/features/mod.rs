//! What asogen does beyond rendering, each built on the pipeline below it
//! (read, check, model, describe, render, write) and run by the commands:
//! comparing two releases' artifacts ([`diff`]), predicting whether an
//! upgrade of a live Deployment is refused ([`upgrade`]), building every
//! artifact of one version ([`release`]), the steps of an upgrade per
//! apply path ([`plan`]), checking and rendering one values
//! file per cluster ([`fleet`]), and writing the catalog from a release's
//! manifests ([`catalog_import`]).

pub mod catalog_import;
pub mod diff;
pub mod fleet;
pub mod plan;
pub mod release;
pub mod upgrade;
