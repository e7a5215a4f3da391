//! What ships beside the code: the licence files Cargo.toml names.

use std::fs;
use std::path::Path;

fn repo_file(name: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_licence_cargo_toml_names_ships_in_its_standard_text() {
    let manifest: toml::Value = toml::from_str(&repo_file("Cargo.toml")).unwrap();
    let expression = manifest["package"]["license"].as_str().unwrap();
    let ids: Vec<&str> = expression.split(" OR ").collect();
    assert_eq!(ids, ["MIT", "Apache-2.0"], "{expression}");
    for id in ids {
        match id {
            "MIT" => {
                let text = repo_file("LICENSE-MIT");
                let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(text.starts_with("MIT License\n\nCopyright (c) herd-sim contributors\n"));
                for sentence in [
                    "Permission is hereby granted, free of charge, to any person obtaining a copy \
                     of this software and associated documentation files (the \"Software\"), to \
                     deal in the Software without restriction,",
                    "The above copyright notice and this permission notice shall be included in \
                     all copies or substantial portions of the Software.",
                    "THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND,",
                ] {
                    assert!(flat.contains(sentence), "LICENSE-MIT: {sentence}");
                }
            }
            "Apache-2.0" => {
                let text = repo_file("LICENSE-APACHE");
                let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(flat.starts_with(
                    "Apache License Version 2.0, January 2004 http://www.apache.org/licenses/"
                ));
                // All nine sections, in order, and the end of the terms.
                let mut at = 0;
                for heading in [
                    "1. Definitions.",
                    "2. Grant of Copyright License.",
                    "3. Grant of Patent License.",
                    "4. Redistribution.",
                    "5. Submission of Contributions.",
                    "6. Trademarks.",
                    "7. Disclaimer of Warranty.",
                    "8. Limitation of Liability.",
                    "9. Accepting Warranty or Additional Liability.",
                    "END OF TERMS AND CONDITIONS",
                ] {
                    at += flat[at..]
                        .find(heading)
                        .unwrap_or_else(|| panic!("LICENSE-APACHE: {heading}"));
                }
            }
            other => panic!("Cargo.toml names {other}: ship its text"),
        }
    }
}
