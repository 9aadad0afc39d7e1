//! An output folder that loses no file: read from the inside without
//! following a symbolic link or opening anything but a regular file, within
//! caps ([`folder`], and [`listing`] for the YAML files of a folder), and
//! written so that it deletes nothing its writer did not write, swapped in
//! with one atomic step ([`write`]). A pull request controls what such a
//! folder holds, so nothing in it is trusted; what is read from it is
//! printed through [`printable`].

#![forbid(unsafe_code)]

pub mod folder;
pub mod listing;
mod printable;
pub mod write;

pub use printable::printable;
