//! Every workload passes on the CPU runtime on its own, without capture: a
//! pipeline failure later is then the tools' doing, not the workload's.

use hrr_tests::Pipeline;

fn direct(name: &str, args: &[&str]) {
    let mut p = Pipeline::new(name);
    for a in args {
        p = p.arg(a);
    }
    let p = p.run_direct();
    let log = std::fs::read_to_string(p.path("direct.log")).unwrap();
    assert!(log.contains(": OK"), "{name} did not report OK:\n{log}");
}

#[test]
fn saxpy_module_runs_on_cpu_runtime() {
    direct("saxpy_module", &[]);
}

#[test]
fn fatbin_path_runs_on_cpu_runtime() {
    direct("fatbin_path", &[]);
}

#[test]
fn streams_threads_runs_on_cpu_runtime() {
    direct("streams_threads", &[]);
}

#[test]
fn pool_interior_runs_on_cpu_runtime() {
    direct("pool_interior", &[]);
}

#[test]
fn struct_arg_runs_on_cpu_runtime() {
    direct("struct_arg", &[]);
}

#[test]
fn hidden_segment_runs_on_cpu_runtime() {
    direct("hidden_segment", &[]);
}

#[test]
fn seed_variants_run_on_cpu_runtime() {
    for mode in ["hostdst", "d2d", "kernel"] {
        direct("seed_variants", &[mode]);
    }
}

#[test]
fn progress_loop_runs_on_cpu_runtime() {
    direct("progress_loop", &["5", "0"]);
}
