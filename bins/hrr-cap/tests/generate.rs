//! `hrr-cap --generate`: its man page and shell completions, from the same clap
//! definition as its `--help` (docs/USAGE.md, *Man pages and shell
//! completions*).

use assert_cmd::Command;

const TOOL: &str = "hrr-cap";
/// A flag of this tool the generated files must name.
const FLAG: &str = "--hsa-regions";

fn generate(what: &str) -> String {
    let out = Command::cargo_bin(TOOL)
        .unwrap()
        .args(["--generate", what])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{TOOL} --generate {what}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn man_page_is_the_tools() {
    let page = generate("man");
    assert!(page.starts_with(&format!(".TH {TOOL} 1 ")), "{page}");
    // roff escapes every '-' of an option.
    assert!(page.contains(&FLAG.replace('-', "\\-")), "{page}");
}

#[test]
fn completions_name_its_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let script = generate(shell);
        let flag = if shell == "fish" {
            FLAG.trim_start_matches('-')
        } else {
            FLAG
        };
        assert!(script.contains(flag), "{shell}: {script}");
        assert!(script.contains(TOOL), "{shell}: {script}");
    }
}

#[test]
fn generate_is_not_in_help_and_refuses_what_it_does_not_know() {
    let help = Command::cargo_bin(TOOL)
        .unwrap()
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    assert!(!String::from_utf8_lossy(&help.stdout).contains("--generate"));
    let out = Command::cargo_bin(TOOL)
        .unwrap()
        .args(["--generate", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with(&format!(
            "{TOOL}: error: --generate takes one of man, bash, zsh, fish"
        )),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
