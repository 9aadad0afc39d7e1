//! `--set` expressions: each input line is one `--set` argument (Helm's
//! `strvals` language), turned into a source and checked. Must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut sources = Vec::new();
    let mut invalid = Vec::new();
    for set in text.split('\n').take(16) {
        match asogen::read::set_source(set) {
            Ok(source) => sources.push(source),
            Err(err) => invalid.extend(common::load_error(err)),
        }
    }
    if !invalid.is_empty() {
        common::format_all(&invalid, &common::source_lookup(&sources, None));
        return;
    }
    if let Err(diagnostics) = common::checker().check(&sources, "azureserviceoperator-system") {
        common::format_all(&diagnostics, &common::source_lookup(&sources, None));
    }
});
