//! `TOOL --generate WHAT`: the tool's manual page (`man`) or a completion
//! script for a shell (`bash`, `zsh`, `fish`, `elvish`, `powershell`),
//! written to stdout from the same clap definition as its `--help`
//! (`clap_mangen`, `clap_complete`), so each binary carries its own and
//! nothing is generated at build time.
//!
//! `--generate` is looked for before clap parses the command line: it is
//! not one of the tool's arguments, so `--help` does not list it and the
//! tool's required arguments do not apply. It must be the only argument
//! (`--generate WHAT` or `--generate=WHAT`).

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;

/// What `--generate` accepts.
pub const KINDS: [&str; 6] = ["man", "bash", "zsh", "fish", "elvish", "powershell"];

/// The exit status of a command line `--generate` cannot serve.
const EXIT_USAGE: u8 = 2;

/// When this process's command line is `TOOL --generate WHAT`, writes WHAT
/// for `C`'s command to stdout and returns the exit status to end with;
/// `None` for any other command line. Call it first in `main`:
///
/// ```ignore
/// if let Some(code) = hrr_cli::generate::requested::<Args>() {
///     return code;
/// }
/// ```
pub fn requested<C: CommandFactory>() -> Option<ExitCode> {
    let status = requested_from(&C::command(), std::env::args_os(), &mut io::stdout().lock())?;
    Some(ExitCode::from(status))
}

/// [`requested`] over a given command, command line (program name first)
/// and output; the exit status as a number. Errors go to stderr as
/// `TOOL: error: …`.
pub fn requested_from(
    cmd: &clap::Command,
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
) -> Option<u8> {
    let mut args = args.into_iter().skip(1);
    let first = args.next()?;
    let what = match first.to_str()? {
        "--generate" => args.next(),
        s => Some(s.strip_prefix("--generate=")?.into()),
    };
    let name = cmd.get_name().to_string();
    let result = match (what, args.next()) {
        (Some(what), None) => match what.to_str() {
            Some(what) => write(cmd.clone(), what, out),
            None => Err(Error::Unknown),
        },
        (None, _) => Err(Error::Unknown),
        (Some(_), Some(_)) => Err(Error::Extra),
    };
    Some(match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{name}: error: {e}");
            EXIT_USAGE
        }
    })
}

/// Why `--generate` wrote nothing (or not all).
#[derive(Debug)]
enum Error {
    /// WHAT is missing or not one of [`KINDS`].
    Unknown,
    /// Something follows WHAT.
    Extra,
    /// Writing the output failed.
    Write(io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Unknown => write!(f, "--generate takes one of {}", KINDS.join(", ")),
            Error::Extra => write!(f, "--generate WHAT takes no other argument"),
            Error::Write(e) => write!(f, "writing the output: {e}"),
        }
    }
}

/// Writes `what` for `cmd` to `out`.
fn write(mut cmd: clap::Command, what: &str, out: &mut dyn Write) -> Result<(), Error> {
    if what == "man" {
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd)
            .render(&mut page)
            .map_err(Error::Write)?;
        return out
            .write_all(&title_first(page))
            .and_then(|()| out.flush())
            .map_err(Error::Write);
    }
    let shell: Shell = what.parse().map_err(|_| Error::Unknown)?;
    let name = cmd.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut script);
    out.write_all(&script)
        .and_then(|()| out.flush())
        .map_err(Error::Write)
}

/// The page with its `.TH` line first: `roff` puts the definition of the
/// apostrophe string (`.ie`/`.el .ds Aq …`) before it, and tools that read
/// a page's title (`man -l`, `lexgrog`) and readers expect `.TH` at the top.
/// The title names no apostrophe, so the string can be defined after it.
fn title_first(page: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&page);
    let mut lines: Vec<&str> = text.lines().collect();
    match lines.iter().position(|l| l.starts_with(".TH ")) {
        Some(i) if i > 0 && !lines[i].contains("\\*(Aq") => {
            let th = lines.remove(i);
            lines.insert(0, th);
        }
        _ => {}
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command with a required argument, as the tools have.
    fn cmd() -> clap::Command {
        clap::Command::new("hrr-test")
            .version("1.2.3")
            .about("A tool's one line")
            .arg(clap::Arg::new("archive").required(true))
            .arg(
                clap::Arg::new("no-placement")
                    .long("no-placement")
                    .action(clap::ArgAction::SetTrue)
                    .help("Translate every allocation"),
            )
    }

    fn run(args: &[&str]) -> (Option<u8>, String) {
        let mut out = Vec::new();
        let argv = std::iter::once("hrr-test")
            .chain(args.iter().copied())
            .map(OsString::from);
        let status = requested_from(&cmd(), argv, &mut out);
        (status, String::from_utf8(out).unwrap())
    }

    #[test]
    fn other_command_lines_are_left_to_the_tool() {
        assert_eq!(run(&[]).0, None);
        assert_eq!(run(&["cap.hrr"]).0, None);
        assert_eq!(run(&["cap.hrr", "--generate", "man"]).0, None);
        assert_eq!(run(&["--generated"]).0, None);
    }

    #[test]
    fn man_page_starts_with_its_title() {
        for args in [&["--generate", "man"][..], &["--generate=man"][..]] {
            let (status, page) = run(args);
            assert_eq!(status, Some(0));
            assert!(page.starts_with(".TH hrr-test 1 "), "{page}");
            assert!(
                page.contains(".ds Aq"),
                "the apostrophe string is kept: {page}"
            );
            assert!(page.contains("\\-\\-no\\-placement"), "{page}");
            assert!(page.ends_with('\n'));
        }
    }

    #[test]
    fn every_shell_gets_a_script_naming_the_flags() {
        for shell in &KINDS[1..] {
            let (status, script) = run(&["--generate", shell]);
            assert_eq!(status, Some(0), "{shell}");
            assert!(script.contains("no-placement"), "{shell}: {script}");
        }
    }

    #[test]
    fn unknown_or_extra_arguments_are_usage_errors() {
        assert_eq!(run(&["--generate"]), (Some(2), String::new()));
        assert_eq!(run(&["--generate", "tcsh"]), (Some(2), String::new()));
        assert_eq!(run(&["--generate", "man", "x"]), (Some(2), String::new()));
    }

    #[test]
    fn title_first_moves_only_the_title() {
        let page = b".ie a\n.el b\n.TH x 1\n.SH NAME\n".to_vec();
        assert_eq!(title_first(page), b".TH x 1\n.ie a\n.el b\n.SH NAME\n");
        let page = b".TH x 1\n.SH NAME\n".to_vec();
        assert_eq!(title_first(page.clone()), page);
    }
}
