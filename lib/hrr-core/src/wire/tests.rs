//! The wire form as a whole: every op of the table, generated from the
//! table itself, through the reference encoding, the fast encoder, serde,
//! the scanner and the reader; and the golden lines of `golden/`, bytes
//! the format is held to (`ops.ndjson`: every op, as the reference encoding
//! writes it; `captured.ndjson`: lines of real captures).

use std::fmt;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::event::{DevTime, Dir, Event, KernelArg, LaunchAttr, MemKind, Op, op_table};
use crate::event_reader::EventReader;
use crate::graph::{GraphNode, NodeBlob};
use crate::hex::{Addr, BlobId, HexBytes};
use crate::wire::{Wire, encode, scan};

/// Values of a field's type, as a strategy: what the table's types need
/// for [`op_strategies`] to generate every op.
trait Gen: Sized + fmt::Debug {
    fn strategy() -> BoxedStrategy<Self>;
}

macro_rules! gen_any {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn strategy() -> BoxedStrategy<$t> {
                any::<$t>().boxed()
            }
        }
    )*};
}

gen_any!(u8, u32, u64, i32, [u32; 3], [u64; 2], [u64; 3]);

impl Gen for Addr {
    fn strategy() -> BoxedStrategy<Addr> {
        prop_oneof![Just(Addr(0)), any::<u64>().prop_map(Addr)].boxed()
    }
}

impl Gen for BlobId {
    fn strategy() -> BoxedStrategy<BlobId> {
        any::<[u8; 32]>().prop_map(BlobId).boxed()
    }
}

impl Gen for MemKind {
    fn strategy() -> BoxedStrategy<MemKind> {
        prop_oneof![
            Just(MemKind::Device),
            Just(MemKind::Host),
            Just(MemKind::Managed),
            Just(MemKind::Pinned)
        ]
        .boxed()
    }
}

impl Gen for Dir {
    fn strategy() -> BoxedStrategy<Dir> {
        prop_oneof![
            Just(Dir::H2d),
            Just(Dir::D2h),
            Just(Dir::D2d),
            Just(Dir::H2h)
        ]
        .boxed()
    }
}

/// Mostly names as compilers make them (the scanner's fast path), now
/// and then anything (escapes, non-ASCII: serde's path).
impl Gen for String {
    fn strategy() -> BoxedStrategy<String> {
        prop_oneof![4 => "[_A-Za-z0-9]{1,40}", 1 => any::<String>()].boxed()
    }
}

impl Gen for Vec<KernelArg> {
    fn strategy() -> BoxedStrategy<Vec<KernelArg>> {
        let arg = (
            proptest::option::of(any::<u32>()),
            prop_oneof![
                3 => proptest::collection::vec(any::<u8>(), 0..24),
                1 => proptest::collection::vec(any::<u8>(), 64..160)
            ],
            proptest::collection::vec(any::<u32>(), 0..4),
            proptest::collection::vec(any::<u32>(), 0..2),
        )
            .prop_map(|(offset, hex, ptrs, objs)| KernelArg {
                offset,
                size: hex.len() as u32,
                hex: HexBytes(hex),
                ptrs,
                objs,
            });
        proptest::collection::vec(arg, 0..5).boxed()
    }
}

impl Gen for Vec<Addr> {
    fn strategy() -> BoxedStrategy<Vec<Addr>> {
        proptest::collection::vec(Addr::strategy(), 0..6).boxed()
    }
}

impl Gen for Vec<i32> {
    fn strategy() -> BoxedStrategy<Vec<i32>> {
        proptest::collection::vec(any::<i32>(), 0..6).boxed()
    }
}

impl Gen for HexBytes {
    fn strategy() -> BoxedStrategy<HexBytes> {
        proptest::collection::vec(any::<u8>(), 0..160)
            .prop_map(HexBytes)
            .boxed()
    }
}

impl Gen for Vec<LaunchAttr> {
    fn strategy() -> BoxedStrategy<Vec<LaunchAttr>> {
        let attr =
            (any::<u32>(), proptest::collection::vec(any::<u8>(), 0..64)).prop_map(|(id, hex)| {
                LaunchAttr {
                    id,
                    hex: HexBytes(hex),
                }
            });
        proptest::collection::vec(attr, 0..3).boxed()
    }
}

impl Gen for Vec<GraphNode> {
    fn strategy() -> BoxedStrategy<Vec<GraphNode>> {
        let nodes = crate::graph::tests::sample_nodes();
        let n = nodes.len();
        proptest::sample::subsequence(nodes, 0..=n).boxed()
    }
}

impl Gen for Vec<NodeBlob> {
    fn strategy() -> BoxedStrategy<Vec<NodeBlob>> {
        let blob =
            (any::<u32>(), BlobId::strategy()).prop_map(|(node, blob)| NodeBlob { node, blob });
        proptest::collection::vec(blob, 0..3).boxed()
    }
}

impl<T: Gen + 'static> Gen for Option<T> {
    fn strategy() -> BoxedStrategy<Option<T>> {
        proptest::option::of(T::strategy()).boxed()
    }
}

/// One variant's strategy: its fields' strategies, together.
macro_rules! variant_strategy {
    ($V:ident) => {
        Just(Op::$V).boxed()
    };
    ($V:ident { $($f:ident : $t:ty),* }) => {
        ($(<$t as Gen>::strategy(),)*)
            .prop_map(|($($f,)*)| Op::$V { $($f),* })
            .boxed()
    };
}

/// Callback of `op_table!`: each op's name and a strategy for it.
macro_rules! op_strategies {
    ($(
        $(#[$vm:meta])*
        $V:ident $name:literal $({
            $(
                $(#[doc = $fd:literal])*
                $(#[wire($($wa:tt)*)])?
                $f:ident : $t:ty
            ),* $(,)?
        })?
    ),* $(,)?) => {
        /// Every op of the table, by name, with a strategy for its values.
        fn op_strategies() -> Vec<(&'static str, BoxedStrategy<Op>)> {
            vec![$( ($name, variant_strategy!($V $({ $($f: $t),* })?)), )*]
        }
    };
}

op_table!(op_strategies);

/// An event's header around `op`.
fn event(op: Op) -> impl Strategy<Value = (Event, Option<DevTime>)> {
    (
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        prop_oneof![8 => "[A-Za-z_][A-Za-z0-9_]{0,30}", 1 => any::<String>()],
        prop_oneof![Just(0i64), any::<i64>()],
        proptest::option::of(any::<(u64, u64)>()),
        prop_oneof![4 => Just(0u32), 1 => any::<u32>()],
    )
        .prop_map(move |(seq, t, tid, api, ret, dev, device)| {
            let e = Event {
                seq,
                t,
                tid,
                api,
                ret,
                dev: device,
                op: op.clone(),
            };
            (e, dev.map(|(t, ns)| DevTime { t, ns }))
        })
}

/// Printable ASCII without backslashes: what the scanner takes.
fn plain(line: &[u8]) -> bool {
    line.iter()
        .all(|&b| (0x20..0x80).contains(&b) && b != b'\\')
}

/// A launch's line as a recorder writes it ([`encode::launch_head`], then
/// its arguments and attributes); `None` for other ops.
fn launch_line(e: &Event) -> Option<Vec<u8>> {
    let Op::Launch {
        name,
        code,
        func,
        grid,
        block,
        shmem,
        stream,
        args,
        attrs,
    } = &e.op
    else {
        return None;
    };
    let code = encode::BlobHex::of(code);
    let k = encode::LaunchRef {
        name,
        code: &code,
        func: func.map(|f| f.0),
        grid: *grid,
        block: *block,
        shmem: *shmem,
        stream: stream.0,
    };
    let mut body = Vec::new();
    let mut l = encode::launch_head(&mut body, e.tid, e.dev, &e.api, e.ret, &k);
    l.args(args.iter().map(|a| encode::ArgRef {
        offset: a.offset,
        bytes: &a.hex.0,
        ptrs: &a.ptrs,
        objs: &a.objs,
    }));
    l.attrs(attrs.iter().map(|a| (a.id, &a.hex.0[..])));
    l.end();
    Some(encode::line(e.seq, e.t, &body))
}

/// Every way of writing and reading `e` agrees with every other.
fn check(e: &Event, dev: Option<DevTime>) -> Result<(), TestCaseError> {
    let mut line = Vec::new();
    e.write_line_timed(dev, &mut line);
    let text = String::from_utf8_lossy(&line).into_owned();
    prop_assert!(
        text.contains(&format!(r#","op":"{}","ret":"#, e.op.name())),
        "{}",
        text
    );
    if dev.is_none() {
        let mut body = Vec::new();
        encode::encode_op(&mut body, e.tid, e.dev, &e.api, e.ret, &e.op);
        let fast = encode::line(e.seq, e.t, &body);
        prop_assert_eq!(
            String::from_utf8_lossy(&fast),
            text.as_str(),
            "fast encoder"
        );
        if let Some(fast) = launch_line(e) {
            prop_assert_eq!(String::from_utf8_lossy(&fast), text.as_str(), "launch_head");
        }
    }
    prop_assert_eq!(Event::parse(&line), Ok(e.clone()), "serde: {}", text);
    let serde_wire: Wire<'_> = serde_json::from_slice(&line).unwrap();
    prop_assert_eq!(serde_wire.dev_time(), dev);
    let fast_path = plain(line.trim_ascii_end())
        && !text.contains(r#""nodes":"#)
        && !text.contains(r#""blobs":"#);
    match scan::scan(line.trim_ascii_end()) {
        Some(w) => {
            prop_assert_eq!(w.dev_time(), dev);
            prop_assert_eq!(Event::from_wire(w), Ok(e.clone()), "scanner: {}", text);
        }
        None => prop_assert!(!fast_path, "a plain line must take the fast path: {}", text),
    }
    let read: Vec<Event> = EventReader::from_reader(&line[..], "t")
        .collect::<Result<_, _>>()
        .unwrap();
    prop_assert_eq!(read.as_slice(), std::slice::from_ref(e), "reader: {}", text);
    Ok(())
}

#[test]
fn the_table_lists_each_op_once() {
    let names: Vec<&str> = op_strategies().iter().map(|(n, _)| *n).collect();
    assert_eq!(names, Op::NAMES);
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "an op name twice: {names:?}");
}

/// Every op, many values each: encode, scan, parse, read, all equal.
#[test]
fn every_op_round_trips_through_every_path() {
    for (name, ops) in op_strategies() {
        let mut runner = TestRunner::new_with_rng(
            Config {
                cases: 96,
                failure_persistence: None,
                ..Config::default()
            },
            proptest::test_runner::TestRng::deterministic_rng(Default::default()),
        );
        let events = ops.prop_flat_map(event);
        runner
            .run(&events, |(e, dev)| {
                prop_assert_eq!(e.op.name(), name);
                check(&e, dev)
            })
            .unwrap_or_else(|err| panic!("op `{name}`: {err}"));
    }
}

const GOLDEN: [(&str, &str); 2] = [
    ("ops.ndjson", include_str!("golden/ops.ndjson")),
    ("captured.ndjson", include_str!("golden/captured.ndjson")),
];

/// Each golden line is read back to the event it holds and that event is
/// written back to the very same bytes, by both encoders.
#[test]
fn golden_lines_read_and_write_byte_for_byte() {
    for (file, text) in GOLDEN {
        for (i, line) in text.lines().enumerate() {
            let at = format!("{file}:{}", i + 1);
            let e = Event::parse(line.as_bytes()).unwrap_or_else(|err| panic!("{at}: {err}"));
            let dev = serde_json::from_str::<Wire<'_>>(line).unwrap().dev_time();
            let mut again = Vec::new();
            e.write_line_timed(dev, &mut again);
            assert_eq!(
                String::from_utf8(again).unwrap(),
                format!("{line}\n"),
                "{at}"
            );
            if dev.is_none() {
                let mut body = Vec::new();
                encode::encode_op(&mut body, e.tid, e.dev, &e.api, e.ret, &e.op);
                let fast = encode::line(e.seq, e.t, &body);
                assert_eq!(
                    String::from_utf8(fast).unwrap(),
                    format!("{line}\n"),
                    "{at}"
                );
                if let Some(fast) = launch_line(&e) {
                    assert_eq!(
                        String::from_utf8(fast).unwrap(),
                        format!("{line}\n"),
                        "{at}"
                    );
                }
            }
            if let Some(w) = scan::scan(line.as_bytes()) {
                assert_eq!(w.dev_time(), dev, "{at}");
                assert_eq!(Event::from_wire(w).as_ref(), Ok(&e), "{at}");
            } else {
                assert!(
                    !plain(line.as_bytes())
                        || line.contains(r#""nodes":"#)
                        || line.contains(r#""blobs":"#),
                    "{at}: a plain line must take the fast path"
                );
            }
        }
    }
}
