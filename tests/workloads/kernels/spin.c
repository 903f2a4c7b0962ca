/* spin(int *flag): waits until *flag is non-zero. Nothing sets it in the
 * tests: a kernel that never finishes, for hrr-play's watchdog. */
#include "hrr_cpu_kernel.h"

HRR_KERNEL(spin) {
    volatile const int *flag = *(volatile const int *const *)kernarg;
    (void)l;
    while (*flag == 0) {
    }
}

HRR_KERNEL_METADATA("{\"kernels\":[{\"name\":\"spin\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"}]}]}");
