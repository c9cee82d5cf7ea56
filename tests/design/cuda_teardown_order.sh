#!/usr/bin/env bash
# The cuda backend's destructor lets go of what uses its stream before the stream: cuBLAS's handle
# (bound to the stream at each call) is closed, and every buffer, event and graph freed, before
# cudaStreamDestroy, the destructor's last CUDA call. Read from the source: no device here runs it.
#   tests/design/cuda_teardown_order.sh SOURCE_DIR
set -uo pipefail
src="$1/kernels/cuda/cuda_backend.cu"
body="$(sed -n '/~CudaBackend() override {/,/^    }$/p' "$src")"
[ -n "$body" ] || { echo "cuda_teardown_order: no ~CudaBackend() in $src"; exit 1; }
fail=0
close_at=$(grep -n 'cublas_\.close()' <<<"$body" | head -n 1 | cut -d: -f1)
stream_at=$(grep -n 'cudaStreamDestroy(stream_)' <<<"$body" | head -n 1 | cut -d: -f1)
last_call=$(grep -nE 'cuda[A-Z][A-Za-z]*\(|\.close\(\)' <<<"$body" | tail -n 1 | cut -d: -f1)
if [ -z "$close_at" ] || [ -z "$stream_at" ] || [ "$close_at" -gt "$stream_at" ]; then
    echo "cuda_teardown_order: cuBLAS's handle is not closed (cublas_.close()) before cudaStreamDestroy"
    fail=1
fi
if [ -n "$stream_at" ] && [ "$last_call" != "$stream_at" ]; then
    echo "cuda_teardown_order: a CUDA call after cudaStreamDestroy(stream_) in ~CudaBackend()"
    fail=1
fi
[ "$fail" = 0 ] && echo "cuda_teardown_order: cuBLAS, buffers, events and graphs go before the stream"
exit "$fail"
