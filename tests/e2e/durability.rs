//! A capture whose application is killed with SIGKILL midway is still
//! replayable: `hrr-play --repair` rewrites it as a clean archive, and the
//! replay passes up to the last complete event.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use hrr_core::manifest::Platform;
use hrr_core::testkit::ArchiveBuilder;
use hrr_tests::{Pipeline, assert_no_crash, d2h_counts, read_events, read_manifest};

/// Lines of progress to wait for before the kill.
const LINES_BEFORE_KILL: usize = 25;

#[test]
fn sigkill_midway_then_repair_replays_up_to_last_complete_event() {
    let p = Pipeline::new("progress_loop").arg("1000000").arg("2000");
    let script = format!("hrr-cap -o cap.hrr -- {} | tee app.log", p.app_cmdline());
    let mut child = p
        .sh_std(&script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the capture pipeline");
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let drain = std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                // keep draining so the app never blocks on a full pipe
            }
        }
    });

    let deadline = Instant::now() + Duration::from_secs(120);
    let mut pid = None;
    let mut iterations = 0;
    while iterations < LINES_BEFORE_KILL {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| {
                let _ = child.kill();
                panic!("no progress from the captured app (pid {pid:?}, {iterations} iterations)")
            });
        if let Some(v) = line.strip_prefix("progress_loop: pid=") {
            pid = Some(v.trim().parse::<i32>().unwrap());
        } else if line.contains(" iteration ") {
            iterations += 1;
        }
    }
    let pid = pid.expect("the app printed its pid");
    // Events are flushed periodically, a little behind the app's output:
    // wait until the completed iterations' D2H events are on disk (a busy
    // machine can delay the writer past the app's next lines).
    let events = p.cap().join("events.ndjson");
    let d2h_on_disk = || {
        std::fs::read_to_string(&events)
            .map(|t| t.lines().filter(|l| l.contains(r#""dir":"d2h""#)).count())
            .unwrap_or(0)
    };
    while d2h_on_disk() < LINES_BEFORE_KILL {
        assert!(
            Instant::now() < deadline,
            "hrr-cap flushed the completed iterations' events too late"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: plain kill(2) of the app this test started (its own pid).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0, "kill {pid}");
    let status = child.wait().unwrap();
    drop(rx);
    drain.join().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(
        status.code(),
        Some(128 + libc::SIGKILL),
        "hrr-cap exits 128+signal when its app is killed: {err}"
    );
    assert_no_crash("hrr-cap", &err);

    let m = read_manifest(&p.cap());
    assert_eq!(
        m["complete"], false,
        "a killed capture is not complete: {m}"
    );
    let raw = read_events(&p.cap());
    assert!(
        !raw.iter().any(|e| e["op"] == "eof"),
        "no eof after SIGKILL"
    );
    assert!(
        raw.len() > 10,
        "periodic flushes left events on disk ({})",
        raw.len()
    );

    // Repair into a new archive.
    p.tool("hrr-play")
        .args(["--repair", "cap.hrr", "-o", "fixed.hrr"])
        .assert()
        .success();
    let m = read_manifest(&p.path("fixed.hrr"));
    assert_eq!(m["complete"], true, "repaired archive is clean: {m}");
    let fixed = read_events(&p.path("fixed.hrr"));
    assert_eq!(
        fixed.last().map(|e| e["op"].clone()),
        Some("eof".into()),
        "repaired archive ends with eof"
    );
    let d2h_recorded = fixed
        .iter()
        .filter(|e| e["op"] == "memcpy" && e["dir"] == "d2h" && e["blob"].is_string())
        .count();
    eprintln!(
        "killed after {iterations} iterations: {} events on disk, {d2h_recorded} D2H after repair",
        raw.len()
    );
    assert!(
        d2h_recorded >= LINES_BEFORE_KILL,
        "every completed iteration's D2H survives ({d2h_recorded})"
    );

    // Replay the repaired archive: every recorded D2H passes.
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "fixed.hrr", "-o", "replay.hrr"])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let (pass, exact, _, fail) = d2h_counts(&out).unwrap_or_else(|| panic!("{out}"));
    assert_eq!(
        (pass, exact, fail),
        (d2h_recorded as u64, d2h_recorded as u64, 0),
        "{out}"
    );
    p.tool("hrr-diff")
        .args(["fixed.hrr", "replay.hrr"])
        .assert()
        .success();
}

#[test]
fn repair_drops_a_torn_last_line() {
    let p = Pipeline::empty("repair_torn");
    let data: Vec<u8> = (0..4096u32).map(|i| i as u8).collect();
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(0x7f00_0000_0000, 4096)
        .h2d(0x7f00_0000_0000, &data)
        .d2h(0x7f00_0000_0000, &data)
        .write_unfinished(p.cap())
        .unwrap();
    // What a crash mid-write leaves: half a line.
    let ev = p.cap().join("events.ndjson");
    let mut text = std::fs::read_to_string(&ev).unwrap();
    text.push_str(r#"{"seq":3,"t":1003,"tid":1,"api":"hipMemcpy","op":"mem"#);
    std::fs::write(&ev, text).unwrap();

    // In place this time.
    p.tool("hrr-play")
        .args(["--repair", "cap.hrr"])
        .assert()
        .success();
    let fixed = read_events(&p.cap());
    let ops: Vec<_> = fixed
        .iter()
        .map(|e| e["op"].as_str().unwrap_or("?").to_string())
        .collect();
    assert_eq!(
        ops,
        ["alloc", "memcpy", "memcpy", "eof"],
        "torn line dropped, eof added"
    );
    assert_eq!(read_manifest(&p.cap())["complete"], true);
    let raw = hrr_tests::events_text(&p.cap());
    assert!(
        raw.ends_with('\n') && !raw.contains("\"op\":\"mem\n"),
        "no torn text left:\n{raw}"
    );
    p.play().diff();
}

/// SIGTERM sent to hrr-cap alone (as `timeout` sends it) reaches the
/// application, which ends as it would without hrr-cap: hrr-cap reports
/// and exits 128 + SIGTERM, no application is left running, and the archive
/// it leaves is marked incomplete and repairs into one that replays.
#[test]
fn sigterm_to_hrr_cap_ends_the_application_and_leaves_a_repairable_archive() {
    signal_to_hrr_cap_reaches_the_application(libc::SIGTERM);
}

/// SIGINT sent to hrr-cap alone (`kill -INT`, not a terminal's Ctrl-C,
/// which reaches the application itself) is passed on the same way.
#[test]
fn sigint_to_hrr_cap_ends_the_application_and_leaves_a_repairable_archive() {
    signal_to_hrr_cap_reaches_the_application(libc::SIGINT);
}

/// `sig` sent to hrr-cap alone while the application runs: see the tests
/// above.
fn signal_to_hrr_cap_reaches_the_application(sig: i32) {
    // About 10 s of iterations: long enough to be cut, short enough that an
    // application left running ends by itself.
    let p = Pipeline::new("progress_loop").arg("5000").arg("2000");
    let script = format!("exec hrr-cap -o cap.hrr -- {}", p.app_cmdline());
    let mut cap = p
        .sh_std(&script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hrr-cap");
    let mut lines = BufReader::new(cap.stdout.take().unwrap()).lines();
    let mut app = None;
    let mut iterations = 0;
    while iterations < 5 {
        let line = lines.next().expect("the app's output ended early").unwrap();
        if let Some(v) = line.strip_prefix("progress_loop: pid=") {
            app = Some(v.trim().parse::<i32>().unwrap());
        } else if line.contains(" iteration ") {
            iterations += 1;
        }
    }
    let app = app.expect("the app printed its pid");
    // SAFETY: plain kill(2) of the hrr-cap this test started.
    assert_eq!(unsafe { libc::kill(cap.id() as i32, sig) }, 0);
    for _ in lines {}
    let status = cap.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut cap.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(128 + sig), "{err}");
    assert!(err.contains(&format!("app died by signal {sig}")), "{err}");
    // SAFETY: signal 0 only asks whether the process exists.
    let alive = unsafe { libc::kill(app, 0) } == 0;
    assert!(!alive, "the application {app} was left running");
    assert_eq!(read_manifest(&p.cap())["complete"], false);
    p.tool("hrr-play")
        .args(["--repair", "cap.hrr", "-o", "fixed.hrr"])
        .assert()
        .success();
    // Whole, or the prefix it is where the capture gave a reason.
    p.tool("hrr-play")
        .args(["--allow-partial", "fixed.hrr"])
        .assert()
        .success();
}
