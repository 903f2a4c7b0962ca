//! `HRR_CAPTURE_PROFILE=1`: the capture library prints its own time per
//! entry point when the program ends; without it, nothing.

use hrr_tests::Pipeline;

fn captured_stderr(env: &str) -> String {
    let p = Pipeline::new("launch_repeat");
    let script = format!(
        "{env} hrr-cap -o cap.hrr -- {} > app.log 2> cap.err",
        p.app_cmdline()
    );
    p.sh(&script).assert().success();
    std::fs::read_to_string(p.dir().join("cap.err")).unwrap()
}

#[test]
fn profile_lines_name_the_recorded_entry_points_only_when_asked() {
    let on = captured_stderr("HRR_CAPTURE_PROFILE=1");
    let lines: Vec<&str> = on
        .lines()
        .filter(|l| l.starts_with("hrr-intercept: profile: "))
        .collect();
    assert!(
        lines.iter().any(
            |l| l.starts_with("hrr-intercept: profile: hipModuleLaunchKernel: ")
                && l.contains(" calls, ")
                && l.contains(" ms recording (median < ")
                && l.ends_with(" µs per call")
        ),
        "{on}"
    );
    assert!(lines.iter().any(|l| l.contains(": hipMemcpy")), "{on}");
    // The parts several entry points share, timed at any depth.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("hrr-intercept: profile: phase events: append: ")),
        "{on}"
    );
    // What made kept launch lines stale, counted: the program allocates
    // and frees between its launches, and loads its module again.
    let count = |what: &str| {
        lines
            .iter()
            .find_map(|l| {
                l.strip_prefix("hrr-intercept: profile: ")?
                    .strip_prefix(what)?
                    .strip_prefix(": ")?
                    .split(' ')
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .unwrap_or(0)
    };
    for what in [
        "epoch moved: an allocation",
        "epoch moved: a free",
        "epoch moved: a HIP code object",
    ] {
        assert!(count(what) > 0, "no '{what}' line:\n{on}");
    }
    let off = captured_stderr("");
    assert!(!off.contains("profile:"), "{off}");
}
