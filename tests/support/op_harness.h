#pragma once
// The op harness, after ggml's test-backend-ops: one table of ops with shapes (op_table()), each
// run on every backend a test binary has against the reference (the CPU backend running the
// plain run.c-order ops of reference_ops.h) with a stated tolerance, and, where two results must
// be the same bits, compared bit for bit: a fused kernel against the same backend's op-by-op
// kernels it is built from (core/model/fused_ops.h), the CPU shim against the emulator (the same
// kernel code). Each binary runs the backends it links: kvscope_tests the reference and every
// SIMD path of the CPU backend, kvscope_emulated_tests cuda-emulated, kvscope_shim_tests
// cuda-shim beside cuda-emulated, kvscope_gpu_tests cuda on a device (skipped, with the reason,
// without one). Shapes are odd so that blocks, tiles and warps are left partly filled.
#include <functional>
#include <string>
#include <vector>

#include "core/model/backend.h"

namespace kvs::test {

struct OpCase {
    std::string op, shape;
    std::vector<std::size_t> sizes;  // every buffer, filled with random values in [-1, 1]
    std::vector<int> outputs;        // the buffers compared after the run
    double tolerance;                // relative_difference against the reference
    bool fused = false;              // needs Backend::fused()
    // The op on a backend. `run` is what is tested; `reference` computes the same outputs from
    // the ops of the Backend interface (for most cases the same call): on the reference backend it
    // is the reference, and for a fused op on the tested backend itself its outputs must be the
    // fused op's bit for bit.
    std::function<void(Backend&, std::vector<DeviceSpan>&)> run, reference;
};

std::vector<OpCase> op_table();

struct OpImpl {
    std::string name;
    Backend* backend;
    std::string same_bits_as;  // another OpImpl's name whose outputs must be these bits, or ""
    std::function<void(bool)> around = nullptr;  // called with true before its runs, false after
};

struct OpVerdict {
    std::string op, shape, impl;
    double difference = 0;  // relative_difference against the reference
    double tolerance = 0;
    std::string bits;  // "", or what the bit-for-bit comparison found
    bool ok = false;
};

// Runs every case of op_table() on the reference and on each of `impls` (a fused case only where
// the backend has fused kernels); prints one line per case and implementation.
std::vector<OpVerdict> run_op_harness(const std::vector<OpImpl>& impls);

}  // namespace kvs::test
