//! The command line of the `hrr-play` that replays one process of a job:
//! the job's own, less what the job replay decides per process.
//!
//! Every replay option (backend, device map, tolerances, `--strict`,
//! `--runs`, …) is passed on as the user wrote it, by reading the command
//! line with the parser's own description of each option: an option added
//! later is passed on with no change here.

use std::ffi::{OsStr, OsString};

use clap::Command;

/// Options (by id) the job replay sets per process or handles itself:
/// the archive, the output, the summary's form, the job's own options,
/// and what a job refuses or answers without replaying.
pub const DROPPED: &[&str] = &[
    "archive", "output", "json", "jobs", "no_job", "info", "events", "repair",
];

/// `raw` (the arguments after the program name) without the options
/// `drop` names (and their values) and without positionals.
pub fn without(cmd: &Command, raw: &[OsString], drop: &[&str]) -> Vec<OsString> {
    let dropped = |id: &str| drop.contains(&id);
    let mut kept = Vec::new();
    let mut it = raw.iter();
    while let Some(a) = it.next() {
        let s = a.to_string_lossy();
        if s == "--" {
            break; // the rest are positionals
        }
        if let Some(long) = s.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let arg = cmd.get_arguments().find(|x| x.get_long() == Some(name));
            let takes = arg.is_some_and(|x| x.get_action().takes_values());
            let value = (takes && !inline).then(|| it.next()).flatten();
            if !arg.is_some_and(|x| dropped(x.get_id().as_str())) {
                kept.push(a.clone());
                kept.extend(value.cloned());
            }
            continue;
        }
        if s.len() > 1 && s.starts_with('-') {
            // A cluster of short flags, the last of which may take a value
            // (`-o OUT`, `-oOUT`).
            let mut out = String::from("-");
            let mut value: Option<OsString> = None;
            let mut keep_value = false;
            for (i, c) in s[1..].char_indices() {
                let arg = cmd.get_arguments().find(|x| x.get_short() == Some(c));
                let keep = !arg.is_some_and(|x| dropped(x.get_id().as_str()));
                if keep {
                    out.push(c);
                }
                if arg.is_some_and(|x| x.get_action().takes_values()) {
                    let rest = &s[1 + i + c.len_utf8()..];
                    value = if rest.is_empty() {
                        it.next().cloned()
                    } else {
                        Some(OsString::from(rest))
                    };
                    keep_value = keep;
                    break;
                }
            }
            if out.len() > 1 {
                kept.push(OsString::from(out));
                if keep_value {
                    kept.extend(value);
                }
            }
            continue;
        }
        // A positional: the archive, which each process replaces.
    }
    kept
}

/// `--name VALUE` as two arguments.
pub fn pair(name: &str, value: impl AsRef<OsStr>) -> [OsString; 2] {
    [OsString::from(name), value.as_ref().to_os_string()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn run(args: &[&str]) -> Vec<String> {
        let raw: Vec<OsString> = args.iter().map(OsString::from).collect();
        without(&crate::args::Args::command(), &raw, DROPPED)
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn replay_options_pass_the_job_s_do_not() {
        assert_eq!(
            run(&[
                "--backend",
                "cpu",
                "job.hrr",
                "-o",
                "out.hrr",
                "--device-map=1=0",
                "--json",
                "--jobs",
                "2",
                "--atol",
                "0.5",
                "--strict",
            ]),
            [
                "--backend",
                "cpu",
                "--device-map=1=0",
                "--atol",
                "0.5",
                "--strict"
            ]
        );
        assert_eq!(
            run(&["-oout.hrr", "--output=x", "--no-job", "--", "a.hrr"]),
            Vec::<String>::new()
        );
        assert_eq!(
            run(&["--runs", "3", "--device-map", "0=0,1=0", "x.hrr"]),
            ["--runs", "3", "--device-map", "0=0,1=0"]
        );
    }
}
