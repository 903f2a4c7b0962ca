/* Ways for a capturing process to end. Usage: crash MODE
 *   segv     N recorded calls, then a null write (SIGSEGV)
 *   abort    N calls, then abort()
 *   handled  installs its own SIGSEGV handler first (it prints and _exit(42)s),
 *            then N calls and a null write
 *   _exit    N calls, then _exit(7)
 *   _Exit    N calls, then _Exit(8)
 *   kill     N calls, prints "ready <pid>", then waits to be killed */
#include "common.h"

#include <signal.h>
#include <unistd.h>

#define CALLS 25

static void calls(void) {
    uint32_t *p;
    CHECK(hipMalloc((void **)&p, 256));
    for (int i = 0; i < CALLS - 2; i++) CHECK(hipMemset(p, i, 256));
    CHECK(hipDeviceSynchronize());
}

static void on_segv(int sig) {
    (void)sig;
    static const char msg[] = "app handler ran\n";
    write(1, msg, sizeof msg - 1);
    _exit(42);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "handled")) signal(SIGSEGV, on_segv);
    calls();
    fflush(stdout);
    if (!strcmp(mode, "segv") || !strcmp(mode, "handled")) {
        *(volatile int *)(uintptr_t)8 = 1;
    } else if (!strcmp(mode, "abort")) {
        abort();
    } else if (!strcmp(mode, "_exit")) {
        _exit(7);
    } else if (!strcmp(mode, "_Exit")) {
        _Exit(8);
    } else if (!strcmp(mode, "kill")) {
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        for (;;) pause();
    }
    return 0;
}
