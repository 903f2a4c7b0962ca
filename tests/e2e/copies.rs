//! 2D/3D copies, module symbols and memory pools through the whole pipeline
//! (hrr-cap → hrr-play → hrr-diff) on the CPU runtime: each workload checks
//! its own results, the capture must hold the new ops under the entry
//! points' names with nothing unrecorded, and the replay must reproduce
//! every download byte for byte.

use hrr_tests::{Pipeline, assert_no_crash, d2h_counts, read_manifest};
use serde_json::Value;

/// capture → play → diff of `name`, every check exact; the pipeline and
/// the capture's events.
fn pipeline(name: &str) -> (Pipeline, Vec<Value>) {
    let p = Pipeline::new(name).capture();
    assert!(
        p.app_log().contains(&format!("{name}: OK")),
        "{}",
        p.app_log()
    );
    let cap_err = p.last_stderr();
    assert!(
        cap_err.lines().any(|l| l == "unrecorded : 0 calls"),
        "{name}: every call recorded:\n{cap_err}"
    );
    let m = read_manifest(&p.cap());
    assert_eq!(m["complete"], true, "{m}");
    let events = p.events("cap.hrr");
    let p = p.play();
    let out = p.last_stdout();
    let (pass, exact, _, fail) = d2h_counts(&out).unwrap_or_else(|| panic!("no d2h line:\n{out}"));
    assert!(pass > 0 && exact == pass && fail == 0, "{name}: {out}");
    assert!(out.trim_end().ends_with("PASS"), "{out}");
    assert_no_crash("hrr-play", &p.last_stderr());
    let p = p.diff();
    assert!(p.last_stdout().contains("PASS"), "{}", p.last_stdout());
    (p, events)
}

fn with_api<'a>(events: &'a [Value], api: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["api"] == api).collect()
}

/// Pitched allocations, 2D copies in every direction, a 2D memset, a kernel
/// over the pitched rows, a 3D upload at an offset, a 3D memset and a 3D
/// download: recorded as `alloc`, `memcpy_rect` and `memset_rect`, replayed
/// exactly (the 2D/3D downloads are D2H checks of their own).
#[test]
fn pitched_2d_and_3d_copies_replay_exactly() {
    let (p, ev) = pipeline("pitched");
    let one = |api: &str, op: &str, n: usize| {
        let e = with_api(&ev, api);
        assert!(
            e.len() == n && e.iter().all(|e| e["op"] == op && e["ret"] == 0),
            "{api}: {n} successful {op}: {e:?}"
        );
        e
    };
    let alloc = one("hipMallocPitch", "alloc", 2);
    let size = alloc[0]["size"].as_u64().unwrap();
    assert!(
        size >= 40 * 4 * 12 && size % 12 == 0,
        "pitch × height: {size}"
    );
    one("hipMalloc3D", "alloc", 1);
    let up = one("hipMemcpy2D", "memcpy_rect", 1);
    assert_eq!(up[0]["dir"], "h2d");
    assert_eq!(up[0]["extent"], serde_json::json!([160, 12, 1]));
    assert!(up[0]["blob"].is_string(), "{up:?}");
    let asy = one("hipMemcpy2DAsync", "memcpy_rect", 2);
    assert!(asy.iter().all(|e| e["stream"].is_string()));
    assert_eq!(
        (asy[0]["dir"].as_str(), asy[1]["dir"].as_str()),
        (Some("d2d"), Some("d2h"))
    );
    one("hipMemcpyParam2D", "memcpy_rect", 1);
    one("hipMemset2D", "memset_rect", 1);
    one("hipMemset3D", "memset_rect", 1);
    let up3 = one("hipMemcpy3D", "memcpy_rect", 1);
    assert_eq!(up3[0]["extent"], serde_json::json!([20, 4, 2]));
    one("hipMemcpy3DAsync", "memcpy_rect", 1);
    // 2D and 3D downloads are validated: Param2D, 2DAsync, 3DAsync, plus
    // the plain download of the whole pitched buffer.
    let out = p.path("replay.hrr");
    let replayed = hrr_tests::read_events(&out);
    let rect_d2h = replayed
        .iter()
        .filter(|e| e["op"] == "memcpy_rect" && e["dir"] == "d2h" && e["blob"].is_string())
        .count();
    assert_eq!(rect_d2h, 3, "the replay archive holds the 2D/3D downloads");
}

/// A pool created and configured, a block allocated from it, freed and
/// allocated again at the same address (the application checks the reuse),
/// kernels on both lives, the pool made the device's for `hipMallocAsync`,
/// trimmed and destroyed: recorded as pool ops and `pool_alloc`, replayed
/// onto the CPU runtime's real pools (the second life starts from what the
/// first left, so a replay without reuse would fail its checks).
#[test]
fn pool_allocations_and_reused_addresses_replay_exactly() {
    let (_p, ev) = pipeline("pools");
    let ops = |op: &str| ev.iter().filter(|e| e["op"] == op).count();
    assert_eq!(
        (
            ops("pool_create"),
            ops("pool_attr"),
            ops("device_pool"),
            ops("pool_trim"),
            ops("pool_destroy")
        ),
        (1, 1, 1, 1, 1)
    );
    let allocs: Vec<&Value> = with_api(&ev, "hipMallocFromPoolAsync");
    assert_eq!(allocs.len(), 2);
    assert!(
        allocs
            .iter()
            .all(|e| e["op"] == "pool_alloc" && e["pool"].is_string())
    );
    assert_eq!(
        allocs[0]["ptr"], allocs[1]["ptr"],
        "the same address twice: {allocs:?}"
    );
    let attr = ev.iter().find(|e| e["op"] == "pool_attr").unwrap();
    assert_eq!(attr["attr_value"].as_u64(), Some(u64::MAX), "{attr}");
    assert_eq!(with_api(&ev, "hipFreeAsync").len(), 3);
}

/// Symbols of the compiler path (`__hipRegisterVar`, copies to and from
/// symbols, `hipGetSymbolAddress`) and module globals
/// (`hipModuleGetGlobal`): each global is made known by one `global` event,
/// each symbol copy is one `memcpy` at the variable's address, and the
/// replay, on its own copies of the variables, reads back what the kernels
/// computed from them.
#[test]
fn symbol_copies_and_module_globals_replay_exactly() {
    let (_p, ev) = pipeline("symbols");
    let globals: Vec<&Value> = ev.iter().filter(|e| e["op"] == "global").collect();
    let names: Vec<&str> = globals.iter().filter_map(|e| e["name"].as_str()).collect();
    assert_eq!(
        names,
        ["table", "counter", "table", "counter"],
        "{globals:?}"
    );
    let table = globals[0]["ptr"].as_str().unwrap();
    let to = with_api(&ev, "hipMemcpyToSymbol");
    let copies: Vec<&&Value> = to.iter().filter(|e| e["op"] == "memcpy").collect();
    assert_eq!(copies.len(), 1, "one copy per symbol copy: {to:?}");
    assert_eq!(
        (copies[0]["dir"].as_str(), copies[0]["dst"].as_str()),
        (Some("h2d"), Some(table))
    );
    let from = with_api(&ev, "hipMemcpyFromSymbolAsync");
    let d2h = from
        .iter()
        .find(|e| e["op"] == "memcpy")
        .expect("the download");
    assert_eq!(d2h["dir"], "d2h");
    let at =
        u64::from_str_radix(d2h["src"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let base = u64::from_str_radix(table.trim_start_matches("0x"), 16).unwrap();
    assert_eq!(at - base, 48, "the offset is in the address");
    assert_eq!(with_api(&ev, "hipModuleGetGlobal").len(), 2);
}

/// Arrays and a texture object: array creations (runtime and driver forms),
/// an upload into an array, array → array (`hipMemcpy3D`), array → device,
/// array → host windows (`hipMemcpyParam2D`, `hipMemcpyAtoH`), a 1D upload
/// (`hipMemcpyHtoA`), a texture object over an array handed to a kernel:
/// recorded as `array_create`, `memcpy_array`, `tex_create` and their
/// destroys, the kernel's argument marked as an object; replayed exactly
/// (the array downloads are D2H checks of their own).
/// Mipmapped arrays through the pipeline: two made (the runtime's and the
/// driver style), their levels looked up and used as arrays in copies, a
/// texture object over one read by a kernel; every level download and the
/// kernel's result replayed exactly, nothing unrecorded.
#[test]
fn mipmapped_arrays_and_their_levels_replay_exactly() {
    let (p, ev) = pipeline("mipmaps");
    let ok = |op: &str| {
        ev.iter()
            .filter(|e| e["op"] == op && e["ret"] == 0)
            .collect::<Vec<_>>()
    };
    let created = ok("mipmap_create");
    assert_eq!(created.len(), 2);
    assert_eq!(
        (
            &created[0]["api"],
            &created[0]["extent"],
            &created[0]["levels"]
        ),
        (
            &serde_json::json!("hipMallocMipmappedArray"),
            &serde_json::json!([16, 8, 0]),
            &serde_json::json!(3)
        )
    );
    assert_eq!(created[1]["api"], "hipMipmappedArrayCreate");
    let levels: Vec<(&Value, &Value)> = ok("mipmap_level")
        .iter()
        .map(|e| (&e["api"], &e["level"]))
        .collect();
    assert_eq!(levels.len(), 3, "{levels:?}");
    // The refused lookup of a fourth level is recorded with its error.
    assert!(
        ev.iter()
            .any(|e| e["op"] == "mipmap_level" && e["ret"] != 0 && e["level"] == 3)
    );
    assert_eq!(ok("mipmap_destroy").len(), 2);
    // A level is an array in copies: level 1's handle as the copy's side.
    let level1 = ok("mipmap_level")[1]["array"].clone();
    let to_level1 = ev
        .iter()
        .filter(|e| e["op"] == "memcpy_array" && e["dst"] == level1)
        .count();
    assert_eq!(to_level1, 1);
    // The texture's resource is the mipmapped array (type 1).
    let tex = ok("tex_create");
    assert!(
        tex[0]["res"].as_str().unwrap().starts_with("01000000"),
        "{tex:?}"
    );
    let replayed = hrr_tests::read_events(&p.path("replay.hrr"));
    let array_d2h = replayed
        .iter()
        .filter(|e| e["op"] == "memcpy_array" && e["blob"].is_string())
        .count();
    assert_eq!(array_d2h, 2, "the replay archive holds the level downloads");
}

#[test]
fn arrays_and_texture_objects_replay_exactly() {
    let (p, ev) = pipeline("arrays");
    let ops = |op: &str| ev.iter().filter(|e| e["op"] == op && e["ret"] == 0).count();
    assert_eq!(ops("array_create"), 3);
    assert_eq!(ops("array_destroy"), 3);
    assert_eq!(ops("tex_create"), 1);
    assert_eq!(ops("tex_destroy"), 1);
    let copies: Vec<&Value> = ev.iter().filter(|e| e["op"] == "memcpy_array").collect();
    let dirs: Vec<(&str, &str)> = copies
        .iter()
        .map(|e| (e["api"].as_str().unwrap(), e["dir"].as_str().unwrap()))
        .collect();
    assert_eq!(
        dirs,
        [
            ("hipMemcpy2DToArray", "h2d"),
            ("hipMemcpy3D", "d2d"),
            ("hipMemcpy2DFromArray", "d2d"),
            ("hipMemcpyParam2D", "d2h"),
            ("hipMemcpyHtoA", "h2d"),
            ("hipMemcpyAtoH", "d2h"),
        ]
    );
    // Array sides carry a position in bytes; a 3D copy's element counts
    // became bytes.
    assert_eq!(copies[1]["extent"], serde_json::json!([64, 8, 1]));
    assert_eq!(copies[3]["spos"], serde_json::json!([16, 2, 0]));
    assert!(copies[3]["blob"].is_string() && copies[0]["blob"].is_string());
    let launch = with_api(&ev, "hipModuleLaunchKernel");
    assert_eq!(
        launch[0]["args"][1]["objs"],
        serde_json::json!([0]),
        "{launch:?}"
    );
    let replayed = hrr_tests::read_events(&p.path("replay.hrr"));
    let array_d2h = replayed
        .iter()
        .filter(|e| e["op"] == "memcpy_array" && e["blob"].is_string())
        .count();
    assert_eq!(array_d2h, 2, "the replay archive holds the array downloads");
}

/// The texture object a kernel receives is the capture's handle: replay
/// must map it to its own object. The same capture with the argument's
/// `objs` mark removed passes the recorded handle through, and the replay
/// fails (the kernel reads through a pointer of the capture's process).
#[test]
fn an_unmapped_texture_object_fails_the_replay() {
    let p = Pipeline::new("arrays").capture();
    assert!(p.app_log().contains("arrays: OK"), "{}", p.app_log());
    let cap = p.cap();
    let text = hrr_tests::events_text(&cap);
    let marked = text.matches(",\"objs\":[0]").count();
    assert_eq!(marked, 1, "the launch marks its texture argument");
    std::fs::write(cap.join("events.ndjson"), text.replace(",\"objs\":[0]", "")).unwrap();
    std::fs::remove_file(cap.join("events.ndjson.zst")).unwrap();
    let out = p.play_cmd(&[]).assert().failure().get_output().clone();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(stdout.contains("FAIL"), "{stdout}\n{stderr}");
    assert!(stderr.contains("illegal memory access"), "{stderr}");
    assert_no_crash("hrr-play", &stderr);
}
