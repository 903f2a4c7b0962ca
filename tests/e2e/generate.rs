//! Every tool's `--generate`: its man page and shell completions, from the
//! same clap definition as its `--help` (docs/USAGE.md, *Man pages and
//! shell completions*).

use hrr_tests::{Command, tools};

/// Each tool, with a flag of its own the generated files must name.
const TOOLS: [(&str, &str); 6] = [
    ("hrr-cap", "--hsa-regions"),
    ("hrr-play", "--no-placement"),
    ("hrr-diff", "--allow-partial"),
    ("hrr-sidecar", "--from-hrrr"),
    ("hrr-extract", "--ptr-depth"),
    ("hrr-trace", "--output"),
];

fn run(tool: &str, args: &[&str]) -> std::process::Output {
    Command::new(tools().bin(tool)).args(args).output().unwrap()
}

fn generate(tool: &str, what: &str) -> String {
    let out = run(tool, &["--generate", what]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.is_empty(),
        "{tool} --generate {what}: {:?}\n{err}",
        out.status
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn man_pages_are_the_tools() {
    for (tool, flag) in TOOLS {
        let page = generate(tool, "man");
        assert!(page.starts_with(&format!(".TH {tool} 1 ")), "{page}");
        // roff escapes every '-' of an option.
        assert!(page.contains(&flag.replace('-', "\\-")), "{tool}: {page}");
    }
}

#[test]
fn completions_name_their_flags() {
    for (tool, flag) in TOOLS {
        for shell in ["bash", "zsh", "fish"] {
            let script = generate(tool, shell);
            let flag = if shell == "fish" {
                flag.trim_start_matches('-')
            } else {
                flag
            };
            assert!(
                script.contains(flag) && script.contains(tool),
                "{tool} {shell}: {script}"
            );
        }
    }
}

#[test]
fn generate_is_not_in_help_and_refuses_what_it_does_not_know() {
    for (tool, _) in TOOLS {
        let help = run(tool, &["--help"]);
        assert!(help.status.success(), "{tool}");
        assert!(
            !String::from_utf8_lossy(&help.stdout).contains("--generate"),
            "{tool}"
        );
        let out = run(tool, &["--generate", "tcsh"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tool}: {err}");
        assert!(out.stdout.is_empty(), "{tool}");
        assert!(
            err.starts_with(&format!(
                "{tool}: error: --generate takes one of man, bash, zsh, fish"
            )),
            "{err}"
        );
    }
}
