//! hrr-extract over a real capture: one launch pulled out of ptr_table's
//! archive replays alone, byte-exact, on the CPU runtime; what it snapshots
//! is really checked; the original is untouched and not needed; bad
//! selections are clear errors. Also: progress bars appear on a terminal
//! only, never on a pipe or with --json.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hrr_tests::{
    Pipeline, assert_no_crash, blob_path, d2h_counts, read_blob, read_events, read_manifest,
};
use predicates::prelude::*;
use serde_json::Value;

/// ptr_table captured, and its replay passing.
fn captured() -> Pipeline {
    let p = Pipeline::new("ptr_table").capture().play();
    assert!(p.app_log().contains("ptr_table: OK"), "{}", p.app_log());
    p
}

/// Seqs of the launches of `kernel` in an archive.
fn launches(archive: &Path, kernel: &str) -> Vec<u64> {
    read_events(archive)
        .iter()
        .filter(|e| e["op"] == "launch" && e["name"] == kernel)
        .map(|e| e["seq"].as_u64().unwrap())
        .collect()
}

/// The recorded address in argument `i` of the first launch of `kernel`.
fn arg_ptr(archive: &Path, kernel: &str, i: usize) -> u64 {
    let ev = read_events(archive);
    let l = ev
        .iter()
        .find(|e| e["op"] == "launch" && e["name"] == kernel)
        .unwrap();
    let hex = l["args"][i]["hex"].as_str().unwrap();
    let bytes: Vec<u8> = (0..8)
        .map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap())
        .collect();
    u64::from_le_bytes(bytes.try_into().unwrap())
}

fn addr(e: &Value, field: &str) -> u64 {
    u64::from_str_radix(e[field].as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// Every file of a directory tree with the BLAKE3 of its content.
fn hashes(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let h = blake3::hash(&std::fs::read(&p).unwrap())
                    .to_hex()
                    .to_string();
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), h);
            }
        }
    }
    out
}

/// `hrr-play --backend cpu ARCHIVE`: PASS, every D2H exact; returns stdout.
fn plays_exact(p: &Pipeline, archive: &str) -> String {
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", archive])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let (pass, exact, _, fail) = d2h_counts(&out).unwrap_or_else(|| panic!("{out}"));
    assert!(pass > 0 && exact == pass && fail == 0, "{out}");
    assert!(out.ends_with("PASS\n"), "{out}");
    out
}

fn extract(p: &Pipeline, args: &[&str]) -> assert_cmd::assert::Assert {
    p.tool("hrr-extract")
        .args(["cap.hrr", "--backend", "cpu"])
        .args(args)
        .assert()
}

#[test]
fn an_extracted_launch_replays_alone_byte_exact() {
    let p = captured();
    let cap = p.cap();
    let before = hashes(&cap);
    let gathers = launches(&cap, "gather");
    assert_eq!(gathers.len(), 2);
    let (out, table) = (arg_ptr(&cap, "gather", 0), arg_ptr(&cap, "gather", 1));
    let (b, c) = (
        arg_ptr(&cap, "build_table", 1),
        arg_ptr(&cap, "build_table", 2),
    );
    let a = arg_ptr(&cap, "twice", 1);

    // By seq.
    let seq = gathers[0].to_string();
    let a0 = extract(&p, &["--launch", &seq, "-o", "g0.hrr"]).success();
    let stdout = String::from_utf8_lossy(&a0.get_output().stdout).into_owned();
    assert!(
        stdout.contains(&format!("extracted : launch {seq} gather#0 from cap.hrr")),
        "{stdout}"
    );
    assert!(stdout.contains("memory : 4 allocations"), "{stdout}");
    let m = read_manifest(&p.path("g0.hrr"));
    assert_eq!(
        (m["kind"].as_str(), m["platform"].as_str()),
        (Some("capture"), Some("cpu"))
    );
    assert_eq!(m["complete"], true);
    assert_eq!(m["extracted_from"]["archive"], "cap.hrr");
    assert_eq!(m["extracted_from"]["seq"], gathers[0]);
    assert_eq!(m["extracted_from"]["kernel"], "gather");

    // What it holds: the launch, the four allocations it reaches (its two
    // arguments, and b and c through the table), the table relocated; not
    // the input of the earlier kernel, nor the unrelated buffer.
    let ev = read_events(&p.path("g0.hrr"));
    let ops: Vec<&str> = ev.iter().map(|e| e["op"].as_str().unwrap()).collect();
    assert_eq!(ops.iter().filter(|o| **o == "launch").count(), 1, "{ops:?}");
    assert_eq!(&ops[..2], ["module_load", "function"], "{ops:?}");
    assert!(
        !ops.contains(&"stream_create"),
        "gather#0 ran on the null stream"
    );
    let mut allocs: Vec<u64> = ev
        .iter()
        .filter(|e| e["op"] == "alloc")
        .map(|e| addr(e, "ptr"))
        .collect();
    allocs.sort();
    let mut want = vec![out, table, b, c];
    want.sort();
    assert_eq!(allocs, want, "a = {a:#x}");
    let relocs: Vec<&Value> = ev.iter().filter(|e| e["op"] == "relocate").collect();
    assert_eq!(relocs.len(), 1);
    assert_eq!(addr(relocs[0], "dst"), table);
    assert_eq!(relocs[0]["size"], 16, "the span of the two stored pointers");
    let out_check = ev
        .iter()
        .find(|e| e["op"] == "memcpy" && e["dir"] == "d2h" && addr(e, "src") == out)
        .expect("the output is checked");
    assert_eq!(out_check["size"], 1024);
    plays_exact(&p, "g0.hrr");

    // By name: the second gather. Its output is what the application read.
    extract(&p, &["--kernel", "gather#1", "-o", "g1.hrr"]).success();
    assert_eq!(
        read_manifest(&p.path("g1.hrr"))["extracted_from"]["seq"],
        gathers[1]
    );
    let app_read = read_events(&cap)
        .into_iter()
        .filter(|e| e["op"] == "memcpy" && e["dir"] == "d2h")
        .nth(1)
        .expect("round 1's read-back");
    let ev = read_events(&p.path("g1.hrr"));
    let creates: Vec<&Value> = ev.iter().filter(|e| e["op"] == "stream_create").collect();
    let launch = ev.iter().find(|e| e["op"] == "launch").unwrap();
    assert_eq!(creates.len(), 1, "gather#1 ran on a created stream");
    assert_eq!(creates[0]["stream"], launch["stream"]);
    let check = ev
        .iter()
        .find(|e| e["op"] == "memcpy" && e["dir"] == "d2h" && addr(e, "src") == out)
        .unwrap();
    assert_eq!(
        check["blob"], app_read["blob"],
        "expected bytes = the application's"
    );
    let looped = plays_exact(&p, "g1.hrr");
    assert_no_crash("hrr-play", &looped);

    // Benchmarking the kernel alone.
    p.tool("hrr-play")
        .args(["--backend", "cpu", "g1.hrr", "--loop", "5", "--timing"])
        .assert()
        .success()
        .stdout(predicate::str::contains("kernel : gather x5"))
        .stdout(predicate::str::contains("loop : 5 iterations"))
        .stdout(predicate::str::contains("PASS"));

    // The original is untouched, and not needed.
    assert_eq!(
        hashes(&cap),
        before,
        "extraction changed the source archive"
    );
    std::fs::remove_dir_all(&cap).unwrap();
    plays_exact(&p, "g1.hrr");
    plays_exact(&p, "g0.hrr");
}

#[test]
fn a_changed_snapshot_fails_the_replay() {
    let p = captured();
    let cap = p.cap();
    let b = arg_ptr(&cap, "build_table", 1);
    let out = arg_ptr(&cap, "gather", 0);
    extract(&p, &["--kernel", "gather", "-o", "g.hrr"]).success();
    let g = p.path("g.hrr");
    let events = hrr_tests::events_text(&g);
    let ev = read_events(&g);
    let upload = ev
        .iter()
        .find(|e| e["op"] == "memcpy" && e["dir"] == "h2d" && addr(e, "dst") == b)
        .expect("b, reached only through the table, is uploaded");
    let id = upload["blob"].as_str().unwrap();
    let bytes = read_blob(&g, id).unwrap();

    // One float of b changed, stored as a well-formed blob: the kernel reads
    // it through the table, so the output check fails.
    let mut changed = bytes.clone();
    changed[40] ^= 0x40;
    let new_id = blake3::hash(&changed).to_hex().to_string();
    std::fs::create_dir_all(blob_path(&g, &new_id).parent().unwrap()).unwrap();
    std::fs::write(blob_path(&g, &new_id), &changed).unwrap();
    std::fs::write(g.join("events.ndjson"), events.replace(id, &new_id)).unwrap();
    let out_seq = ev
        .iter()
        .find(|e| e["op"] == "memcpy" && e["dir"] == "d2h" && addr(e, "src") == out)
        .unwrap()["seq"]
        .as_u64()
        .unwrap();
    p.tool("hrr-play")
        .args(["--backend", "cpu", "g.hrr"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "mismatch : event {out_seq} (hrr-extract) size 1024 first diff at 40 "
        )))
        .stdout(predicate::str::ends_with("FAIL\n"));

    // A byte flipped in place: the blob no longer matches its name.
    std::fs::write(g.join("events.ndjson"), &events).unwrap();
    let mut flipped = bytes;
    flipped[0] ^= 1;
    std::fs::write(blob_path(&g, id), &flipped).unwrap();
    p.tool("hrr-play")
        .args(["--backend", "cpu", "g.hrr"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("the blob is corrupt"));
}

#[test]
fn bad_selections_are_clear_errors_and_leave_nothing() {
    let p = captured();
    let cap = p.cap();
    let last = read_events(&cap).last().unwrap()["seq"].as_u64().unwrap();
    let first = &read_events(&cap)[0];
    let first_seq = first["seq"].to_string();
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--launch".into(), "99999".into()],
            format!("cap.hrr: no event has seq 99999 (its last is {last})"),
        ),
        (
            vec!["--launch".into(), first_seq.clone()],
            format!(
                "cap.hrr: event {first_seq} ({}) is a `{}`, not a launch",
                first["api"].as_str().unwrap(),
                first["op"].as_str().unwrap()
            ),
        ),
        (
            vec!["--kernel".into(), "gathr".into()],
            "no launch of kernel `gathr`; close names: `gather` (2 launches)".into(),
        ),
        (
            vec!["--kernel".into(), "gather#2".into()],
            "kernel `gather` is launched 2 time(s) (#0 to #1); there is no #2".into(),
        ),
        (
            vec!["--kernel".into(), "gather#x".into()],
            "the index after `#` must be a number".into(),
        ),
    ];
    for (args, want) in cases {
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend(["-o", "x.hrr"]);
        let a = extract(&p, &all).code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
        assert!(
            err.contains("hrr-extract: error: ") && err.contains(&want),
            "{args:?}: {err}"
        );
        assert_no_crash("hrr-extract", &err);
        assert!(!p.path("x.hrr").exists(), "{args:?} left an archive");
    }
    let leftovers: Vec<_> = std::fs::read_dir(p.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // An output that holds something is never overwritten.
    std::fs::create_dir(p.path("full.hrr")).unwrap();
    std::fs::write(p.path("full.hrr/keep"), b"x").unwrap();
    extract(&p, &["--kernel", "gather", "-o", "full.hrr"])
        .code(2)
        .stderr(predicate::str::contains(
            "full.hrr: already exists and is not empty",
        ));
    assert_eq!(std::fs::read(p.path("full.hrr/keep")).unwrap(), b"x");
}

/// A progress bar draws with terminal escapes (and clears itself with
/// `\r\x1b[2K`); the tools write none otherwise.
fn drew_bar(text: &str) -> bool {
    text.contains("\x1b[")
}

/// Progress on a terminal (a pseudo-terminal from `script`), nothing on a
/// pipe or with --json. The one-second delay is set to 0 so a short run shows it.
#[test]
fn progress_only_on_a_terminal_and_never_with_json() {
    let p = captured();
    let seq = launches(&p.cap(), "gather")[1].to_string();
    let commands = [
        "hrr-play --backend cpu cap.hrr".to_string(),
        "hrr-diff cap.hrr replay.hrr".to_string(),
        format!("hrr-extract cap.hrr --backend cpu --launch {seq} -o OUT"),
        "hrr-play --repair cap.hrr -o OUT".to_string(),
    ];
    for (i, cmd) in commands.iter().enumerate() {
        let out_dir = format!("p{i}.hrr");
        let cmd = cmd.replace("OUT", &out_dir);
        // A pipe: stderr has none of a bar's characters.
        let a = p
            .sh(&format!(
                "HRR_PROGRESS_DELAY_MS=0 {cmd} 2>err.txt | cat >/dev/null; cat err.txt"
            ))
            .assert()
            .success();
        let err = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
        assert!(
            !drew_bar(&err) && !err.contains('\r'),
            "{cmd} on a pipe: {err:?}"
        );
        let _ = std::fs::remove_dir_all(p.path(&out_dir));

        // A terminal: the bar is drawn (and cleared) on it.
        let tty = |extra: &str| {
            let _ = std::fs::remove_dir_all(p.path(&out_dir));
            let inner = format!("HRR_PROGRESS_DELAY_MS=0 {cmd} {extra}");
            let a = p
                .sh(&format!(
                    "script -qefc {} /dev/null",
                    hrr_tests::shq(&inner)
                ))
                .assert()
                .success();
            String::from_utf8_lossy(&a.get_output().stdout).into_owned()
        };
        let shown = tty("");
        assert!(
            drew_bar(&shown),
            "{cmd} on a terminal drew nothing: {shown:?}"
        );
        if !cmd.contains("--repair") {
            let json = tty("--json");
            assert!(!drew_bar(&json), "{cmd} --json on a terminal: {json:?}");
            assert!(
                json.contains("\"seq\"")
                    || json.contains("\"passed\"")
                    || json.contains("\"result\""),
                "{json:?}"
            );
        }
        let _ = std::fs::remove_dir_all(p.path(&out_dir));
    }
}

/// The bytes of blob `id` of an archive.
fn blob(archive: &Path, id: &Value) -> Vec<u8> {
    read_blob(archive, id.as_str().unwrap()).unwrap()
}

/// Little-endian f32s.
fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Memory from hipMemAddressReserve / hipMemCreate / hipMemMap /
/// hipMemSetAccess (PyTorch's expandable segments): the launch reads a
/// pointer table stored in mapped memory and writes results there. The
/// extracted archive recreates the reservation and the pieces the launch
/// reaches, nothing else, and replays alone byte-exact.
#[test]
fn a_launch_on_mapped_virtual_memory_is_extracted() {
    let p = Pipeline::new("vmm_table").capture().play();
    assert!(p.app_log().contains("vmm_table: OK"), "{}", p.app_log());
    let cap = p.cap();
    let before = hashes(&cap);
    let ev = read_events(&cap);
    let reserve = ev.iter().find(|e| e["op"] == "va_reserve").unwrap();
    assert_eq!(reserve["api"], "hipMemAddressReserve");
    let maps: Vec<u64> = ev
        .iter()
        .filter(|e| e["op"] == "mem_map")
        .map(|e| addr(e, "ptr"))
        .collect();
    assert_eq!(maps.len(), 4, "four pieces mapped at capture");
    let combines = launches(&cap, "combine");
    assert_eq!(combines.len(), 3);

    // The middle one: its inputs are what earlier launches left.
    let seq = combines[1].to_string();
    let a = extract(&p, &["--launch", &seq, "-o", "v1.hrr"]).success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(stdout.contains("2 pointer words relocated"), "{stdout}");
    let x = p.path("v1.hrr");
    let xev = read_events(&x);
    let ops: Vec<&str> = xev.iter().map(|e| e["op"].as_str().unwrap()).collect();
    assert_eq!(ops.iter().filter(|o| **o == "va_reserve").count(), 1);
    assert!(!ops.contains(&"alloc"), "{ops:?}");
    let xres = xev.iter().find(|e| e["op"] == "va_reserve").unwrap();
    assert_eq!(
        (addr(xres, "ptr"), &xres["size"]),
        (addr(reserve, "ptr"), &reserve["size"])
    );
    // Pieces 0 and 1 (the table, a, and b across both) and 2 (out); not
    // the unrelated piece 3.
    let xmaps: Vec<u64> = xev
        .iter()
        .filter(|e| e["op"] == "mem_map")
        .map(|e| addr(e, "ptr"))
        .collect();
    assert_eq!(xmaps, maps[..3]);
    assert_eq!(ops.iter().filter(|o| **o == "mem_create").count(), 3);
    assert_eq!(ops.iter().filter(|o| **o == "mem_access").count(), 3);
    let relocs: Vec<&Value> = xev.iter().filter(|e| e["op"] == "relocate").collect();
    assert_eq!(relocs.len(), 1);
    assert_eq!(addr(relocs[0], "dst"), maps[0], "the table at the start");
    // A 1 GiB reservation, three 4-granule pieces: kilobytes, not a GiB.
    let stored: u64 = hashes(&x)
        .keys()
        .map(|f| std::fs::metadata(x.join(f)).unwrap().len())
        .sum();
    assert!(stored < 1 << 20, "{stored} bytes stored");

    // Expected bytes: out after the launch is what the application read.
    let app_read = ev
        .iter()
        .filter(|e| e["op"] == "memcpy" && e["dir"] == "d2h")
        .nth(1)
        .expect("round 1's read-back");
    let check = xev
        .iter()
        .find(|e| e["op"] == "memcpy" && e["dir"] == "d2h" && addr(e, "src") == maps[2])
        .expect("out is checked");
    let want = blob(&cap, &app_read["blob"]);
    assert_eq!(&blob(&x, &check["blob"])[..want.len()], &want[..]);
    plays_exact(&p, "v1.hrr");

    // The original is untouched, and not needed.
    assert_eq!(hashes(&cap), before, "extraction changed the source");
    std::fs::remove_dir_all(&cap).unwrap();
    plays_exact(&p, "v1.hrr");
}

/// A kernel reading and writing module globals by name: the extracted
/// archive carries the globals' values at that launch (a fresh load of the
/// module would start from their initial values and compute something
/// else), and checks them after it.
#[test]
fn module_globals_are_extracted_with_their_values_at_the_launch() {
    let p = Pipeline::new("module_global").capture().play();
    assert!(p.app_log().contains("module_global: OK"), "{}", p.app_log());
    let cap = p.cap();
    let before = hashes(&cap);
    let ev = read_events(&cap);
    let globals: Vec<&Value> = ev
        .iter()
        .filter(|e| e["op"] == "global" && e["ret"] == 0)
        .collect();
    assert_eq!(globals.len(), 2, "hipModuleGetGlobal is recorded");
    let g =
        |name: &str| -> u64 { addr(globals.iter().find(|e| e["name"] == name).unwrap(), "ptr") };
    let (acc, scale) = (g("g_acc"), g("g_scale"));

    extract(&p, &["--kernel", "accumulate#1", "-o", "a1.hrr"]).success();
    let x = p.path("a1.hrr");
    let xev = read_events(&x);
    let xg: Vec<&Value> = xev.iter().filter(|e| e["op"] == "global").collect();
    assert_eq!(xg.len(), 2);
    assert!(xg.iter().all(|e| e["api"] == "hipModuleGetGlobal"));
    let upload = |at: u64| {
        let e = xev
            .iter()
            .find(|e| e["op"] == "memcpy" && e["dir"] == "h2d" && addr(e, "dst") == at)
            .unwrap_or_else(|| panic!("global {at:#x} is uploaded"));
        floats(&blob(&x, &e["blob"]))
    };
    // After round 0: g_acc = 1 + i, g_scale = 3 (the host's).
    let want: Vec<f32> = (0..256).map(|i| 1.0 + i as f32).collect();
    assert_eq!(upload(acc), want);
    assert_eq!(upload(scale), [3.0]);
    for at in [acc, scale] {
        assert!(
            xev.iter()
                .any(|e| e["op"] == "memcpy" && e["dir"] == "d2h" && addr(e, "src") == at),
            "global {at:#x} is checked after the launch"
        );
    }
    // The launch's output check is what the application read in round 1.
    let app_read = ev
        .iter()
        .filter(|e| e["op"] == "memcpy" && e["dir"] == "d2h")
        .nth(1)
        .unwrap();
    assert!(
        xev.iter()
            .any(|e| e["op"] == "memcpy" && e["dir"] == "d2h" && e["blob"] == app_read["blob"]),
        "expected bytes = the application's"
    );
    plays_exact(&p, "a1.hrr");

    assert_eq!(hashes(&cap), before, "extraction changed the source");
    std::fs::remove_dir_all(&cap).unwrap();
    plays_exact(&p, "a1.hrr");
}

/// A launch that reads a pointer table the program copied to the device:
/// the replay up to it places every allocation, as hrr-play does, so the
/// table's pointers are right when the launch reads them and the launch is
/// extracted; translated instead (`--no-placement`), they are not.
#[test]
fn a_launch_reading_a_copied_pointer_table_is_extracted() {
    let p = Pipeline::new("ptr_placed").arg("a").capture().play();
    extract(&p, &["--kernel", "gather", "-o", "g.hrr"]).success();
    p.tool("hrr-play").arg("g.hrr").assert().success();
    let a = extract(
        &p,
        &["--kernel", "gather", "--no-placement", "-o", "g2.hrr"],
    );
    let out = a.get_output();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_no_crash("hrr-extract", &err);
    if out.status.success() {
        // The table's recorded addresses happened to lie inside this
        // process's own device reservation (both are large, at random
        // bases): the launch read the wrong bytes instead of faulting, and
        // what it wrote differs from the placed extraction's.
        p.tool("hrr-diff")
            .args(["g.hrr", "g2.hrr"])
            .assert()
            .code(1);
    } else {
        assert!(err.contains("gather"), "the launch is what fails:\n{err}");
    }
}

#[test]
fn an_extracted_archive_stays_plain_when_asked() {
    let p = captured();
    let seq = launches(&p.cap(), "gather")[0].to_string();
    extract(&p, &["--launch", &seq, "-o", "z.hrr"]).success();
    extract(&p, &["--launch", &seq, "-o", "flag.hrr", "--plain"]).success();
    p.tool("hrr-extract")
        .args([
            "cap.hrr",
            "--backend",
            "cpu",
            "--launch",
            &seq,
            "-o",
            "env.hrr",
        ])
        .env("HRR_EVENTS", "plain")
        .assert()
        .success();
    let z = p.path("z.hrr");
    assert!(z.join("events.ndjson.zst").exists() && !z.join("events.ndjson").exists());
    for a in ["flag.hrr", "env.hrr"] {
        let dir = p.path(a);
        assert!(dir.join("events.ndjson").exists(), "{a}");
        assert!(!dir.join("events.ndjson.zst").exists(), "{a}");
        // The same operations either way.
        let ops =
            |d: &Path| -> Vec<Value> { read_events(d).iter().map(|e| e["op"].clone()).collect() };
        assert_eq!(ops(&dir), ops(&z), "{a}");
    }
}
