/* A stand-in for NVIDIA's runtime compiler, libnvrtc.so.13, for GPU-free
 * tests of the capture library's device hash: it "compiles" a CUDA source
 * into an image the stand-in driver (libcuda.c) loads: a first line it
 * recognises, the virtual architecture asked for (`.target compute_XY`,
 * from --gpu-architecture=compute_XY), and an `.entry NAME` line per
 * `extern "C" __global__` function of the source. The driver runs those
 * kernels itself; the source is checked, not translated. A source without
 * kernels, or options without an architecture, fail to compile with a
 * log, as NVRTC's would. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvrtcResult;
enum { SUCCESS = 0, OUT_OF_MEMORY = 1, INVALID_INPUT = 3, INVALID_PROGRAM = 4, INVALID_OPTION = 5,
       COMPILATION = 6 };

struct program { char *src, *image, *log; };

nvrtcResult nvrtcCreateProgram(struct program **prog, const char *src, const char *name, int n_headers,
                               const char *const *headers, const char *const *include_names) {
    (void)name; (void)headers; (void)include_names;
    if (!prog || !src || n_headers < 0) return INVALID_INPUT;
    struct program *p = calloc(1, sizeof *p);
    if (!p || !(p->src = strdup(src))) return OUT_OF_MEMORY;
    *prog = p;
    return SUCCESS;
}

nvrtcResult nvrtcDestroyProgram(struct program **prog) {
    if (!prog || !*prog) return INVALID_PROGRAM;
    free((*prog)->src);
    free((*prog)->image);
    free((*prog)->log);
    free(*prog);
    *prog = NULL;
    return SUCCESS;
}

/* Appends to a growing string. */
static void add(char **s, const char *fmt, const char *a, int n) {
    size_t have = *s ? strlen(*s) : 0;
    size_t more = strlen(fmt) + (size_t)n + 1;
    *s = realloc(*s, have + more);
    snprintf(*s + have, more, fmt, n, a);
}
static void add_text(char **s, const char *text) { add(s, "%.*s", text, (int)strlen(text)); }

/* The name of the kernel declared after `__global__` at `p` (its return
 * type and any `__launch_bounds__(…)` skipped): the identifier before its
 * parameter list. */
static int kernel_name(const char *p, const char **name) {
    const char *paren = strchr(p, '(');
    while (paren && paren - p >= 17 && !strncmp(paren - 17, "__launch_bounds__", 17)) {
        const char *close = strchr(paren, ')');
        paren = close ? strchr(close, '(') : NULL;
    }
    if (!paren) return 0;
    const char *end = paren;
    while (end > p && isspace((unsigned char)end[-1])) end--;
    const char *start = end;
    while (start > p && (isalnum((unsigned char)start[-1]) || start[-1] == '_')) start--;
    *name = start;
    return (int)(end - start);
}

nvrtcResult nvrtcCompileProgram(struct program *prog, int n, const char *const *options) {
    if (!prog) return INVALID_PROGRAM;
    const char *arch = NULL;
    for (int i = 0; i < n; i++)
        if (!strncmp(options[i], "--gpu-architecture=compute_", 27)) arch = options[i] + 27;
    if (!arch) {
        add_text(&prog->log, "error: no --gpu-architecture=compute_XY option\n");
        return INVALID_OPTION;
    }
    char *image = NULL;
    add_text(&image, "// hrr stand-in NVRTC image\n.target compute_");
    add(&image, "%.*s\n", arch, (int)strlen(arch));
    int kernels = 0;
    for (const char *p = prog->src; (p = strstr(p, "extern \"C\" __global__")); p += 21) {
        const char *name;
        int len = kernel_name(p + 21, &name);
        if (len > 0) {
            add(&image, ".entry %.*s\n", name, len);
            kernels++;
        }
    }
    if (!kernels) {
        free(image);
        add_text(&prog->log, "error: no extern \"C\" __global__ function\n");
        return COMPILATION;
    }
    free(prog->image);
    prog->image = image;
    return SUCCESS;
}

/* A text and its size with the terminating NUL, as NVRTC's getters. */
static nvrtcResult size_of(const char *s, size_t *size) {
    *size = (s ? strlen(s) : 0) + 1;
    return SUCCESS;
}
static nvrtcResult copy_of(const char *s, char *out) {
    strcpy(out, s ? s : "");
    return SUCCESS;
}
nvrtcResult nvrtcGetPTXSize(struct program *prog, size_t *size) {
    return prog && prog->image ? size_of(prog->image, size) : INVALID_PROGRAM;
}
nvrtcResult nvrtcGetPTX(struct program *prog, char *out) {
    return prog && prog->image ? copy_of(prog->image, out) : INVALID_PROGRAM;
}
nvrtcResult nvrtcGetProgramLogSize(struct program *prog, size_t *size) {
    return prog ? size_of(prog->log, size) : INVALID_PROGRAM;
}
nvrtcResult nvrtcGetProgramLog(struct program *prog, char *out) {
    return prog ? copy_of(prog->log, out) : INVALID_PROGRAM;
}
