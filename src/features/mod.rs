//! What asogen does beyond rendering, each built on the pipeline below it
//! (read, check, model, describe, render, write) and run by one command:
//! comparing two releases' artifacts ([`diff`]), predicting whether an
//! upgrade of a live Deployment is refused ([`upgrade`]), and building every
//! artifact of one version ([`release`]).

pub mod diff;
pub mod release;
pub mod upgrade;
