// kvscope_shim_race racy|atomic: runs tests/shim/racy_max.cu's kernel on the CPU shim, 64 threads
// at once over 4096 values, a few times; exits 0 when every result is the true maximum. Under
// ThreadSanitizer (scripts/tsan-shim.sh) `racy` must be reported as a data race and `atomic` not.
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/shim/cuda_shim.h"
// ^ first, in an include block of its own: what nvcc would provide, before the kernel file
#include "tests/shim/racy_max.cu"

int main(int argc, char** argv) {
    using namespace kvs::race_demo;
    const bool racy = argc == 2 && std::strcmp(argv[1], "racy") == 0;
    if (argc != 2 || (!racy && std::strcmp(argv[1], "atomic") != 0)) {
        std::fprintf(stderr, "usage: kvscope_shim_race racy|atomic\n");
        return 2;
    }
    const int n = 4096;
    int wrong = 0;
    for (int run = 0; run < 8; ++run) {
        // A permutation of 0..n-1, different each run: the maximum turns up in any thread.
        std::vector<float> x(n);
        std::vector<int> xi(n);
        for (int i = 0; i < n; ++i) xi[i] = (i * 7919 + run) % n;
        for (int i = 0; i < n; ++i) x[i] = static_cast<float>(xi[i]);
        float out = 0;
        int out_i = 0;
        if (racy)
            launch_racy_max({&out, x.data(), n});
        else
            launch_atomic_max({&out_i, xi.data(), n});
        if ((racy ? static_cast<int>(out) : out_i) != n - 1) ++wrong;
    }
    std::printf("kvscope_shim_race %s: %d of 8 runs wrong\n", argv[1], wrong);
    return wrong == 0 ? 0 : 1;
}
