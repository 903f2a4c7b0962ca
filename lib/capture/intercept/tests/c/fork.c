/* Fork and exec under capture. Usage: fork SELF
 *   the parent records; a forked child calls HIP and exits (must not touch
 *   the parent's archive); an exec'd child (SELF child) records on its own. */
#include "common.h"

#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "child")) {
        void *p;
        CHECK(hipMalloc(&p, 4096));
        CHECK(hipMemset(p, 1, 4096));
        CHECK(hipFree(p));
        printf("exec child %d: OK\n", (int)getpid());
        return 0;
    }
    void *a;
    CHECK(hipMalloc(&a, 1024));
    fflush(stdout);
    pid_t f = fork();
    if (f == 0) {
        void *c;
        CHECK(hipMalloc(&c, 2048)); /* forked child: not recorded */
        CHECK(hipMemset(c, 2, 2048));
        exit(0);                    /* runs destructors: must not finish the parent's archive */
    }
    int st;
    waitpid(f, &st, 0);
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    pid_t e = fork();
    if (e == 0) {
        execl(argv[0], argv[0], "child", (char *)NULL);
        _exit(127);
    }
    waitpid(e, &st, 0);
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(hipMemset(a, 3, 1024));
    CHECK(hipFree(a));
    printf("fork parent %d: forked %d, exec'd %d: OK\n", (int)getpid(), (int)f, (int)e);
    return 0;
}
