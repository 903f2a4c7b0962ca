/* Shared by the driver-API workloads (C, linked with -lcuda): a checked
 * call, and a PTX module (JIT-compiled by the driver for whatever GPU runs
 * it) with a module global.
 *
 *   scale_bias(float *y, const float *x, float a, int n): y[i] = a*x[i] + bias
 *
 * where `bias` is the module's global float, set by the program through
 * cuModuleGetGlobal. */
#pragma once
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CKD(call)                                                                           \
    do {                                                                                    \
        CUresult r_ = (call);                                                               \
        if (r_ != CUDA_SUCCESS) {                                                           \
            const char *s_ = "?";                                                           \
            cuGetErrorName(r_, &s_);                                                        \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, s_);      \
            exit(2);                                                                        \
        }                                                                                   \
    } while (0)

static const char SCALE_BIAS_PTX[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .global .align 4 .f32 bias;\n"
    ".visible .entry scale_bias(\n"
    "    .param .u64 scale_bias_param_0,\n"
    "    .param .u64 scale_bias_param_1,\n"
    "    .param .f32 scale_bias_param_2,\n"
    "    .param .u32 scale_bias_param_3\n"
    ")\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .f32 %f<6>;\n"
    "    .reg .b32 %r<6>;\n"
    "    .reg .b64 %rd<8>;\n"
    "    ld.param.u64 %rd1, [scale_bias_param_0];\n"
    "    ld.param.u64 %rd2, [scale_bias_param_1];\n"
    "    ld.param.f32 %f1, [scale_bias_param_2];\n"
    "    ld.param.u32 %r1, [scale_bias_param_3];\n"
    "    mov.u32 %r2, %ctaid.x;\n"
    "    mov.u32 %r3, %ntid.x;\n"
    "    mov.u32 %r4, %tid.x;\n"
    "    mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "    setp.ge.u32 %p1, %r5, %r1;\n"
    "    @%p1 bra DONE;\n"
    "    cvta.to.global.u64 %rd3, %rd1;\n"
    "    cvta.to.global.u64 %rd4, %rd2;\n"
    "    mul.wide.u32 %rd5, %r5, 4;\n"
    "    add.s64 %rd6, %rd3, %rd5;\n"
    "    add.s64 %rd7, %rd4, %rd5;\n"
    "    ld.global.f32 %f2, [%rd7];\n"
    "    ld.global.f32 %f3, [bias];\n"
    "    fma.rn.f32 %f4, %f1, %f2, %f3;\n"
    "    st.global.f32 [%rd6], %f4;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

static int report_c(const char *name, int ok, const char *what) {
    printf("%s: %s: %s\n", name, what, ok ? "OK" : "WRONG");
    fflush(stdout);
    return ok ? 0 : 1;
}
