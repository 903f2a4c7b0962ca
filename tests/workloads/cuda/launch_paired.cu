// Paired blocks: what recording a launch costs, measured inside one process,
// free of the process-to-process spread of a VM (docs/PERFORMANCE.md).
//
//   launch_paired [PAIRS] [BLOCK]   (default 300 pairs of 500 launches)
//
// Blocks of BLOCK launches of one tiny kernel alternate (in alternating
// order) between two routes to the driver's cuLaunchKernel:
//   linked  the cuLaunchKernel this program links against: libcuda's, or a
//           capture library's wrapper preloaded in front of it (recorded);
//   direct  the driver's own function, its address read from the dynamic
//           symbol table of the loaded libcuda.so.1, which no interposer sees.
// Without a capture both are the driver's and their difference is the
// probe's own noise. A third pair of routes, both direct, compares the two
// forms of arguments the driver takes, kernelParams (an application's) and
// the packed `extra` buffer (what hrr-play passes). A fourth pair sets
//   runtime  the same kernel by `<<<>>>`: the CUDA runtime's launch, which a
//            capture records at the runtime layer and whose own driver
//            call then passes through the capture's driver wrapper
// against direct. Without a capture their difference is the runtime's own
// cost; under one, the difference less that (from a plain run of the same
// round) is what recording costs a runtime launch (scripts/gpu-speed.sh).
// Each block's launch calls are timed; the GPU is drained between blocks.
// Prints medians of ns per launch and of the per-pair differences.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

__global__ void tick(unsigned* counter, unsigned* scratch) {
    if (threadIdx.x == 0) counter[0] += 1u;
    scratch[threadIdx.x] = threadIdx.x;
}

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, CUstream, void**, void**);

struct Found {
    const char* name;
    ElfW(Addr) base;
    char path[4096];
};

static int find_libcuda(struct dl_phdr_info* info, size_t, void* data) {
    Found* f = (Found*)data;
    if (info->dlpi_name && std::strstr(info->dlpi_name, "libcuda.so")) {
        f->base = info->dlpi_addr;
        std::snprintf(f->path, sizeof f->path, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

// The address of `name` in the loaded libcuda.so.1, from its file's .dynsym.
static void* driver_symbol(const char* name) {
    Found f = {name, 0, {0}};
    if (!dl_iterate_phdr(find_libcuda, &f)) return nullptr;
    int fd = open(f.path, O_RDONLY);
    if (fd < 0) return nullptr;
    struct stat st;
    fstat(fd, &st);
    void* map = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return nullptr;
    const unsigned char* b = (const unsigned char*)map;
    const ElfW(Ehdr)* eh = (const ElfW(Ehdr)*)b;
    const ElfW(Shdr)* sh = (const ElfW(Shdr)*)(b + eh->e_shoff);
    void* found = nullptr;
    for (int i = 0; i < eh->e_shnum && !found; ++i) {
        if (sh[i].sh_type != SHT_DYNSYM) continue;
        const ElfW(Sym)* sym = (const ElfW(Sym)*)(b + sh[i].sh_offset);
        const char* str = (const char*)(b + sh[sh[i].sh_link].sh_offset);
        size_t n = sh[i].sh_size / sizeof(ElfW(Sym));
        for (size_t k = 0; k < n; ++k)
            if (sym[k].st_shndx != SHN_UNDEF && std::strcmp(str + sym[k].st_name, name) == 0) {
                found = (void*)(f.base + sym[k].st_value);
                break;
            }
    }
    munmap(map, st.st_size);
    return found;
}

using Clock = std::chrono::steady_clock;

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char** argv) {
    int pairs = argc > 1 ? std::atoi(argv[1]) : 300;
    int block = argc > 2 ? std::atoi(argv[2]) : 500;
    unsigned *counter, *scratch, got = 0;
    CK(cudaMalloc(&counter, sizeof(unsigned)));
    CK(cudaMalloc(&scratch, 32 * sizeof(unsigned)));
    CK(cudaMemset(counter, 0, sizeof(unsigned)));
    CK(cudaDeviceSynchronize());
    cudaFunction_t fn;
    CK(cudaGetFuncBySymbol(&fn, (const void*)tick));
    CUfunction f = (CUfunction)fn;
    launch_fn direct = (launch_fn)driver_symbol("cuLaunchKernel");
    if (!direct) {
        std::printf("launch_paired: cuLaunchKernel not found in libcuda.so.1\n");
        return 1;
    }
    void* params[] = {&counter, &scratch};
    struct {
        unsigned* c;
        unsigned* s;
    } packed = {counter, scratch};
    size_t packed_size = sizeof packed;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE,
                     &packed_size, CU_LAUNCH_PARAM_END};
    long launches = 0;
    // One block through `route`: 0 linked, 1 direct, 2 direct with `extra`,
    // 3 the runtime's `<<<>>>`.
    auto run = [&](int route) {
        auto t = Clock::now();
        if (route == 3) {
            for (int i = 0; i < block; ++i) tick<<<1, 32>>>(counter, scratch);
        } else {
            for (int i = 0; i < block; ++i) {
                CUresult r = route == 0   ? cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, params, nullptr)
                             : route == 1 ? direct(f, 1, 1, 1, 32, 1, 1, 0, 0, params, nullptr)
                                          : direct(f, 1, 1, 1, 32, 1, 1, 0, 0, nullptr, extra);
                if (r != CUDA_SUCCESS) {
                    std::printf("launch_paired: route %d: error %d\n", route, (int)r);
                    std::exit(1);
                }
            }
        }
        double ns = std::chrono::duration<double, std::nano>(Clock::now() - t).count() / block;
        if (route == 3) CK(cudaGetLastError());
        launches += block;
        CK(cudaDeviceSynchronize());
        return ns;
    };
    std::vector<double> linked, direct_p, cost, direct_p2, direct_x, form, runtime, direct_p3, rt_cost;
    for (int p = 0; p < pairs; ++p) {
        double a, b;
        if (p % 2) { b = run(1); a = run(0); } else { a = run(0); b = run(1); }
        linked.push_back(a), direct_p.push_back(b), cost.push_back(a - b);
        if (p % 2) { b = run(2); a = run(1); } else { a = run(1); b = run(2); }
        direct_p2.push_back(a), direct_x.push_back(b), form.push_back(b - a);
        if (p % 2) { b = run(1); a = run(3); } else { a = run(3); b = run(1); }
        runtime.push_back(a), direct_p3.push_back(b), rt_cost.push_back(a - b);
    }
    CK(cudaMemcpy(&got, counter, sizeof(unsigned), cudaMemcpyDeviceToHost));
    std::printf("launch_paired: %d pairs of %d launches: linked %.1f ns/launch, direct %.1f, "
                "difference %.1f ns (median of pairs)\n",
                pairs, block, median(linked), median(direct_p), median(cost));
    std::printf("launch_paired: direct kernelParams %.1f ns/launch, direct extra %.1f, "
                "extra - kernelParams %.1f ns (median of pairs)\n",
                median(direct_p2), median(direct_x), median(form));
    std::printf("launch_paired: runtime <<<>>> %.1f ns/launch, direct %.1f, difference %.1f ns "
                "(median of pairs)\n",
                median(runtime), median(direct_p3), median(rt_cost));
    std::printf("HRR_TIME paired_cost_ns=%.1f paired_linked_ns=%.1f paired_direct_ns=%.1f "
                "paired_extra_minus_params_ns=%.1f paired_runtime_ns=%.1f "
                "paired_runtime_minus_direct_ns=%.1f\n",
                median(cost), median(linked), median(direct_p), median(form), median(runtime),
                median(rt_cost));
    return report("launch_paired", got == (unsigned)launches, "counter == launches");
}
