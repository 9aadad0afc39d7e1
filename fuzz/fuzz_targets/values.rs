//! A values file (`-f`): parse, check, and format whatever is reported.
//! Must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

const NAME: &str = "fuzz.yaml";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sources = match asogen::read::parse_source(NAME.into(), text.into()) {
        Ok(source) => vec![source],
        Err(err) => {
            let diagnostics = common::load_error(err);
            common::format_all(&diagnostics, &common::source_lookup(&[], Some((NAME, text))));
            return;
        }
    };
    if let Err(diagnostics) = common::checker().check(&sources, "azureserviceoperator-system") {
        common::format_all(&diagnostics, &common::source_lookup(&sources, None));
    }
});
