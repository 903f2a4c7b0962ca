/* Fault recovery for CPU kernels (see src/fault.rs for the design).
 *
 * hrr_fault_call() runs one kernel block under a per-thread recovery point:
 * a synchronous SIGSEGV, SIGBUS, SIGFPE or SIGILL raised while the block runs
 * jumps back here (siglongjmp) and the call returns the signal number instead
 * of killing the process. A fault anywhere else goes to the handler that was
 * installed before ours, or to the default action.
 *
 * Only C frames lie between sigsetjmp and the fault (this function, the
 * kernel, whatever the kernel calls): no Rust frame is skipped by the jump.
 *
 * Async-signal-safety: the handler reads one initial-exec TLS pointer
 * (static TLS: no allocation on access), writes through it, and calls
 * siglongjmp, sigaction and raise, all async-signal-safe.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

typedef void (*hrr_kernel_fn)(const void *launch, const void *kernarg);

struct hrr_guard {
    sigjmp_buf env;
    volatile sig_atomic_t signo;
    void *volatile addr;
    struct hrr_guard *prev;
};

/* The recovery point of the block running on this thread (NULL: none). */
static __thread struct hrr_guard *current __attribute__((tls_model("initial-exec")));
/* This thread's alternate signal stack, when we installed it. */
static __thread void *alt_stack __attribute__((tls_model("initial-exec")));

#define NSIG_GUARDED 4
static const int guarded[NSIG_GUARDED] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
static struct sigaction previous[NSIG_GUARDED];
static pthread_once_t installed = PTHREAD_ONCE_INIT;
static pthread_key_t alt_key;
static int install_error;

/* Large enough for the handler and a kernel's stack overflow report. */
#define ALT_STACK_SIZE (64 * 1024)

static struct sigaction *previous_for(int sig) {
    for (int i = 0; i < NSIG_GUARDED; i++)
        if (guarded[i] == sig) return &previous[i];
    return NULL;
}

static void on_fault(int sig, siginfo_t *si, void *uc) {
    struct hrr_guard *g = current;
    /* si_code > 0: raised by the CPU for this thread's instruction, not sent
     * by kill() or raise(), which are never a kernel's fault. */
    if (g != NULL && si != NULL && si->si_code > 0) {
        current = g->prev;
        g->signo = sig;
        g->addr = si->si_addr;
        siglongjmp(g->env, 1);
    }
    struct sigaction *p = previous_for(sig);
    if (p != NULL && (p->sa_flags & SA_SIGINFO) && p->sa_sigaction != NULL) {
        p->sa_sigaction(sig, si, uc);
        return;
    }
    if (p != NULL && p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    }
    /* Default action (ignoring a synchronous fault is not possible): restore
     * it; a hardware fault repeats when the instruction is retried, a sent
     * signal is raised again. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (si == NULL || si->si_code <= 0) raise(sig);
}

static void free_alt_stack(void *p) {
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, NULL);
    munmap(p, ALT_STACK_SIZE);
}

static void install(void) {
    if (pthread_key_create(&alt_key, free_alt_stack) != 0) {
        install_error = 1;
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NSIG_GUARDED; i++) {
        if (sigaction(guarded[i], &sa, &previous[i]) != 0) install_error = 1;
    }
}

/* A kernel that overflows its stack faults on the guard page: the handler
 * then needs a stack of its own. Threads that already have one (Rust's std
 * gives its threads one) keep theirs. */
static void ensure_alt_stack(void) {
    if (alt_stack != NULL) return;
    stack_t old;
    if (sigaltstack(NULL, &old) == 0 && !(old.ss_flags & SS_DISABLE)) {
        alt_stack = (void *)1; /* someone else's: leave it */
        return;
    }
    void *p = mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = p;
    ss.ss_size = ALT_STACK_SIZE;
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(p, ALT_STACK_SIZE);
        return;
    }
    alt_stack = p;
    /* Freed (and disabled) when the thread exits. */
    pthread_setspecific(alt_key, p);
}

/* Installs the handlers (once per process); 0 on success. */
int hrr_fault_install(void) {
    pthread_once(&installed, install);
    return install_error;
}

/* Runs f(launch, kernarg); returns 0, or the signal number of a fault it
 * raised (its address in *addr). */
int hrr_fault_call(hrr_kernel_fn f, const void *launch, const void *kernarg, void **addr) {
    struct hrr_guard g;
    ensure_alt_stack();
    g.signo = 0;
    g.addr = NULL;
    g.prev = current;
    if (sigsetjmp(g.env, 1) != 0) {
        /* The handler restored `current` before jumping. */
        if (addr != NULL) *addr = g.addr;
        return g.signo;
    }
    current = &g;
    f(launch, kernarg);
    current = g.prev;
    return 0;
}
