//! A manifest's `complete:true` is a claim about the events file; readers
//! check it against the file (`Archive::incomplete_reason`) and repair does
//! not turn an archive that lost events into a complete one.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use hrr_core::archive::{Archive, repair, repair_in_memory};
use hrr_core::archive_writer::{ArchiveWriter, EVENTS_FILE, ManifestExtra};
use hrr_core::event::{Dir, Event, Op};
use hrr_core::hex::Addr;
use hrr_core::manifest::{ArchiveKind, MANIFEST_FILE, Manifest, Platform};
use hrr_core::mem_files::MemFiles;

fn memcpy(seq: u64) -> Event {
    Event {
        seq,
        t: seq,
        tid: 1,
        api: "hipMemcpy".into(),
        ret: 0,
        dev: 0,
        op: Op::Memcpy {
            dir: Dir::H2d,
            dst: Addr(0x10),
            src: Addr(0x20),
            size: 3,
            stream: None,
            blob: None,
        },
    }
}

/// A finished capture of `n` events (and its `eof`).
fn finished(dir: &Path, n: u64) -> PathBuf {
    let mut w = ArchiveWriter::create(
        dir,
        ArchiveKind::Capture,
        Platform::Cpu,
        ManifestExtra::default(),
    )
    .unwrap()
    .compress(false);
    for seq in 0..n {
        w.append(&memcpy(seq)).unwrap();
    }
    let m = w.finish().unwrap();
    assert!(m.complete);
    dir.to_path_buf()
}

/// The events text, plain or compressed.
fn events(dir: &Path) -> String {
    match fs::read(dir.join(EVENTS_FILE)) {
        Ok(b) => String::from_utf8(b).unwrap(),
        Err(_) => {
            let z = fs::read(dir.join(hrr_core::archive_writer::EVENTS_ZST_FILE)).unwrap();
            String::from_utf8(zstd::decode_all(&z[..]).unwrap()).unwrap()
        }
    }
}

fn set_events(dir: &Path, text: &str) {
    fs::write(dir.join(EVENTS_FILE), text).unwrap();
}

fn why(dir: &Path) -> Option<String> {
    Archive::open(dir).unwrap().incomplete_reason()
}

/// The same archive held in memory says the same.
fn why_in_memory(dir: &Path) -> Option<String> {
    let files = MemFiles::new();
    for name in [MANIFEST_FILE, EVENTS_FILE] {
        files.write(dir.join(name), fs::read(dir.join(name)).unwrap());
    }
    Archive::open_in_memory(dir, &files)
        .unwrap()
        .incomplete_reason()
}

#[test]
fn a_compressed_archive_is_checked_as_a_plain_one() {
    let t = tempfile::tempdir().unwrap();
    let dir = finished(&t.path().join("a.hrr"), 3);
    hrr_core::archive_writer::compress_events(&dir).unwrap();
    hrr_core::archive_writer::remove_plain_events(&dir).unwrap();
    let a = Archive::open(&dir).unwrap();
    assert!(a.is_compressed());
    assert_eq!(a.incomplete_reason(), None);
    assert_eq!(a.events(Default::default()).unwrap().count(), 4);
    // The mapped and parallel readers read the stream too.
    assert_eq!(a.events_mapped(Default::default()).unwrap().count(), 4);
    let mut seqs = Vec::new();
    let parallel = a.events_parallel(Default::default()).unwrap().threads(2);
    assert_eq!(parallel.len(), events(&dir).len() as u64);
    parallel
        .run(
            |e, _| e.seq,
            |batch: &[u64], _| {
                seqs.extend_from_slice(batch);
                Ok::<(), ()>(())
            },
        )
        .unwrap();
    assert_eq!(seqs, [0, 1, 2, 3]);
    // Its last line dropped and compressed again: the claim fails, naming
    // the compressed file.
    let z = dir.join(hrr_core::archive_writer::EVENTS_ZST_FILE);
    let text = String::from_utf8(zstd::decode_all(&fs::read(&z).unwrap()[..]).unwrap()).unwrap();
    let cut: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    fs::write(&z, zstd::encode_all(cut.as_bytes(), 3).unwrap()).unwrap();
    let why = why(&dir).unwrap();
    assert!(why.starts_with("no eof: the last event (line 3)"), "{why}");
    // Cut short: a reader error naming the file, not a panic.
    let z_bytes = zstd::encode_all(text.as_bytes(), 3).unwrap();
    fs::write(&z, &z_bytes[..z_bytes.len() - 4]).unwrap();
    let err = Archive::open(&dir)
        .unwrap()
        .events(Default::default())
        .unwrap()
        .find_map(Result::err)
        .expect("a truncated frame is an error");
    let err = hrr_core::error_chain::chain(&err).to_string();
    assert!(err.contains("events.ndjson.zst"), "{err}");
    assert!(err.contains("truncated"), "{err}");
}

#[test]
fn a_finished_archive_is_complete() {
    let t = tempfile::tempdir().unwrap();
    let a = finished(&t.path().join("a.hrr"), 3);
    assert_eq!(why(&a), None);
    assert_eq!(why_in_memory(&a), None);
    assert!(Archive::open(&a).unwrap().is_complete());
    // Blank lines are not events, before or after the trailer.
    let text = events(&a);
    set_events(&a, &format!("\n{}  \n\n", text.replacen('\n', "\n\n", 1)));
    assert_eq!(why(&a), None);
    // Nor is a trailer without its newline torn when it reads.
    set_events(&a, text.trim_end());
    assert_eq!(why(&a), None);
    // No events at all, and the trailer says so.
    let empty = finished(&t.path().join("empty.hrr"), 0);
    assert_eq!(why(&empty), None);
}

#[test]
fn a_complete_manifest_over_an_empty_events_file_is_incomplete() {
    let t = tempfile::tempdir().unwrap();
    let a = finished(&t.path().join("a.hrr"), 3);
    set_events(&a, "");
    let want = "no eof: events.ndjson is empty, though the manifest says the archive is \
                complete (3 events)";
    assert_eq!(why(&a).as_deref(), Some(want));
    assert_eq!(why_in_memory(&a).as_deref(), Some(want));
    assert!(!Archive::open(&a).unwrap().is_complete());
    // Blank lines are no more.
    set_events(&a, "\n \n");
    assert_eq!(why(&a).as_deref(), Some(want));
}

#[test]
fn a_complete_manifest_without_the_eof_line_is_incomplete() {
    let t = tempfile::tempdir().unwrap();
    let a = finished(&t.path().join("a.hrr"), 3);
    let text = events(&a);
    let lines: Vec<&str> = text.lines().collect();
    set_events(&a, &format!("{}\n", lines[..3].join("\n")));
    let want = "no eof: the last event (line 3) is not the eof trailer, though the manifest \
                says the archive is complete";
    assert_eq!(why(&a).as_deref(), Some(want));
    assert_eq!(why_in_memory(&a).as_deref(), Some(want));
}

#[test]
fn a_complete_manifest_over_a_torn_eof_line_is_incomplete() {
    let t = tempfile::tempdir().unwrap();
    let a = finished(&t.path().join("a.hrr"), 3);
    let text = events(&a);
    // The trailer cut short anywhere: no newline, not JSON.
    let eof_at = text.trim_end().rfind('\n').unwrap() + 1;
    for cut in [eof_at + 1, eof_at + 10, text.len() - 2] {
        set_events(&a, &text[..cut]);
        let got = why(&a).unwrap();
        assert!(
            got.starts_with("torn last line: line 4 ("),
            "cut at {cut}: {got}"
        );
        assert!(
            got.ends_with("bytes, no newline) does not parse, though the manifest says the archive is complete"),
            "{got}"
        );
        assert_eq!(why_in_memory(&a), Some(got));
    }
    // A torn line that is not the trailer: torn just the same.
    set_events(
        &a,
        &format!("{}{{\"seq\":3,\"api\":\"hipMem", &text[..eof_at]),
    );
    assert!(why(&a).unwrap().starts_with("torn last line: line 4 ("));
}

#[test]
fn an_eof_whose_count_disagrees_with_the_lines_is_incomplete() {
    let t = tempfile::tempdir().unwrap();
    let a = finished(&t.path().join("a.hrr"), 3);
    let text = events(&a);
    let lines: Vec<&str> = text.lines().collect();
    // A line lost before the trailer.
    set_events(&a, &format!("{}\n{}\n", lines[0], lines[3]));
    let want = "the eof trailer (line 2) counts 3 events, but events.ndjson holds 1";
    assert_eq!(why(&a).as_deref(), Some(want));
    assert_eq!(why_in_memory(&a).as_deref(), Some(want));
    // The trailer and the file agree, the manifest does not.
    let mut m = Manifest::read(&a).unwrap();
    set_events(&a, &text);
    m.events = 5;
    m.write_atomic(&a).unwrap();
    assert_eq!(
        why(&a).as_deref(),
        Some("the manifest counts 5 events, but events.ndjson holds 3")
    );
}

#[test]
fn a_complete_manifest_that_counts_lost_events_is_incomplete() {
    let t = tempfile::tempdir().unwrap();
    let a = finished(&t.path().join("a.hrr"), 3);
    let mut m = Manifest::read(&a).unwrap();
    m.extra.insert("lost_events".into(), 9007.into());
    m.write_atomic(&a).unwrap();
    assert_eq!(why(&a).as_deref(), Some("9007 events lost"));
    m.extra.insert(
        "incomplete".into(),
        "events.ndjson: No space left on device".into(),
    );
    m.write_atomic(&a).unwrap();
    assert_eq!(
        why(&a).as_deref(),
        Some("events.ndjson: No space left on device; 9007 events lost")
    );
}

/// What a capture to a full disk leaves: the manifest rewritten in place
/// with `complete:false`, why, the events lost; no line and no `eof` on
/// disk.
fn full_disk_capture(dir: &Path, lines: u64, lost: u64) {
    let mut w = ArchiveWriter::create(
        dir,
        ArchiveKind::Capture,
        Platform::Cpu,
        ManifestExtra::default(),
    )
    .unwrap();
    for seq in 0..lines {
        w.append(&memcpy(seq)).unwrap();
    }
    drop(w);
    let mut m = Manifest::read(dir).unwrap();
    m.events = lines;
    m.extra.insert(
        "incomplete".into(),
        "events.ndjson: No space left on device".into(),
    );
    m.extra.insert("lost_events".into(), lost.into());
    m.write_atomic(dir).unwrap();
}

#[test]
fn repair_keeps_an_archive_that_lost_events_incomplete() {
    let t = tempfile::tempdir().unwrap();
    for lines in [0, 2] {
        let src = t.path().join(format!("full{lines}.hrr"));
        full_disk_capture(&src, lines, 9007);
        let dst = t.path().join(format!("fixed{lines}.hrr"));
        let r = repair(&src, &dst).unwrap();
        assert_eq!(r.events_kept, lines);
        let m = Manifest::read(&dst).unwrap();
        assert!(!m.complete, "{m:?}");
        assert!(m.repaired);
        assert_eq!(m.events, lines);
        assert_eq!(m.extra["lost_events"], 9007);
        assert_eq!(
            m.incomplete_reason(),
            Some("events.ndjson: No space left on device")
        );
        let want = "events.ndjson: No space left on device; 9007 events lost";
        assert_eq!(why(&dst).as_deref(), Some(want));
        // In memory, the same.
        let files = MemFiles::new();
        let src_archive = Archive::open(&src).unwrap();
        repair_in_memory(&src_archive, "mem.hrr", &files).unwrap();
        let fixed = Archive::open_in_memory("mem.hrr", &files).unwrap();
        assert!(!fixed.manifest().complete);
        assert_eq!(fixed.incomplete_reason().as_deref(), Some(want));
        // The repaired events end with their trailer: a second repair
        // changes nothing it could.
        let again = t.path().join(format!("again{lines}.hrr"));
        repair(&dst, &again).unwrap();
        assert_eq!(events(&again).lines().count() as u64, lines + 1);
        assert_eq!(why(&again).as_deref(), Some(want));
    }
}

#[test]
fn repair_of_a_capture_that_died_is_complete() {
    // No reason given and no count of lost events: the writer died; its
    // events up to there are the archive, as before.
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("died.hrr");
    let mut w = ArchiveWriter::create(
        &src,
        ArchiveKind::Capture,
        Platform::Cpu,
        ManifestExtra::default(),
    )
    .unwrap();
    w.append(&memcpy(0)).unwrap();
    drop(w);
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(src.join(EVENTS_FILE))
        .unwrap();
    f.write_all(b"{\"seq\":1,\"ap").unwrap();
    let dst = t.path().join("fixed.hrr");
    repair(&src, &dst).unwrap();
    assert!(Manifest::read(&dst).unwrap().complete);
    assert_eq!(why(&dst), None);
}

#[test]
fn repair_that_drops_events_leaves_the_archive_incomplete() {
    let t = tempfile::tempdir().unwrap();
    let src = finished(&t.path().join("a.hrr"), 4);
    let text = events(&src);
    let lines: Vec<&str> = text.lines().collect();
    let unknown = lines[1].replace("\"op\":\"memcpy\"", "\"op\":\"from_the_future\"");
    for (n, (damaged, kept, want)) in [
        (
            // A malformed line: it and what follows are dropped.
            format!("{}\n{{\"seq\":1}}\n{}\n{}\n{}\n", lines[0], lines[2], lines[3], lines[4]),
            1,
            "repair dropped line 2 and every line after it (malformed event: invalid JSON: \
             missing field `api` at line 1 column 9); the manifest counted 4 events, 1 were read; 3 events lost",
        ),
        (
            // A line of an op this hrr does not know.
            format!("{}\n{unknown}\n{}\n{}\n{}\n", lines[0], lines[2], lines[3], lines[4]),
            3,
            "repair dropped 1 events of ops this hrr does not know; 1 events lost",
        ),
        (
            // Lines lost before the trailer.
            format!("{}\n{}\n", lines[0], lines[4]),
            1,
            "the eof trailer counted 4 events, 1 were read; 3 events lost",
        ),
        (
            // No trailer: the manifest's claim.
            format!("{}\n{}\n", lines[0], lines[1]),
            2,
            "the manifest counted 4 events, 2 were read; 2 events lost",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        set_events(&src, &damaged);
        let dst = t.path().join(format!("fixed{n}.hrr"));
        let r = repair(&src, &dst).unwrap();
        assert_eq!(r.events_kept, kept, "{n}");
        assert!(!Manifest::read(&dst).unwrap().complete, "{n}");
        assert_eq!(why(&dst).as_deref(), Some(want), "{n}");
        assert_eq!(r.incomplete.as_deref(), Some(want), "{n}");
    }
}

#[test]
fn a_reason_beside_complete_true_is_still_a_reason() {
    // What repair wrote before it kept such archives incomplete.
    let t = tempfile::tempdir().unwrap();
    let a = finished(&t.path().join("a.hrr"), 1);
    let mut m = Manifest::read(&a).unwrap();
    m.extra.insert(
        "incomplete".into(),
        "blobs: blob 00 not written: No space left on device".into(),
    );
    m.write_atomic(&a).unwrap();
    assert_eq!(
        why(&a).as_deref(),
        Some("blobs: blob 00 not written: No space left on device")
    );
}
