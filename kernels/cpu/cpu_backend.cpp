#include "kernels/cpu/cpu_backend.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

namespace kvs {
namespace {

// Adds the wall time of one op call to the backend's per-op totals.
class OpTimer {
public:
    OpTimer(OpTimes& t, Op op, bool on) : t_(t), op_(op), on_(on) {
        if (on_) start_ = std::chrono::steady_clock::now();
    }
    ~OpTimer() {
        if (!on_) return;
        const auto i = static_cast<int>(op_);
        t_.seconds[i] +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        t_.calls[i] += 1;
    }

private:
    OpTimes& t_;
    Op op_;
    bool on_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::string CpuBackend::device() const { return "CPU, 1 thread"; }

DeviceSpan CpuBackend::alloc(std::size_t n) { return {new float[n](), n}; }
void CpuBackend::release(DeviceSpan s) { delete[] s.data; }

void CpuBackend::upload(DeviceSpan dst, const float* src, std::size_t n) {
    OpTimer timer(times_, Op::Transfer, time_ops_);
    std::memcpy(dst.data, src, n * sizeof(float));
}

void CpuBackend::download(float* dst, DeviceSpan src, std::size_t n) {
    OpTimer timer(times_, Op::Transfer, time_ops_);
    std::memcpy(dst, src.data, n * sizeof(float));
}

void CpuBackend::embed(DeviceSpan x, DeviceSpan table, const int* tokens, int T, int dim) {
    OpTimer timer(times_, Op::Embed, time_ops_);
    for (int t = 0; t < T; ++t)
        std::memcpy(x.data + std::size_t(t) * dim, table.data + std::size_t(tokens[t]) * dim,
                    dim * sizeof(float));
}

void CpuBackend::rmsnorm(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int dim) {
    OpTimer timer(times_, Op::RmsNorm, time_ops_);
    for (int t = 0; t < T; ++t) {
        const float* xr = x.data + std::size_t(t) * dim;
        float* o = out.data + std::size_t(t) * dim;
        float ss = 0.0f;
        for (int j = 0; j < dim; ++j) ss += xr[j] * xr[j];
        ss /= dim;
        ss += 1e-5f;
        ss = 1.0f / std::sqrt(ss);
        for (int j = 0; j < dim; ++j) o[j] = w.data[j] * (ss * xr[j]);
    }
}

void CpuBackend::matmul(DeviceSpan out, DeviceSpan x, DeviceSpan w, int T, int n, int d) {
    OpTimer timer(times_, Op::Matmul, time_ops_);
    // Weight row outside, token inside: each row of w is read once per call and reused for all
    // T tokens, which is what makes a batched prefill cheaper per token than T single steps.
    for (int i = 0; i < d; ++i) {
        const float* wr = w.data + std::size_t(i) * n;
        for (int t = 0; t < T; ++t) {
            const float* xr = x.data + std::size_t(t) * n;
            float val = 0.0f;
            for (int j = 0; j < n; ++j) val += wr[j] * xr[j];
            out.data[std::size_t(t) * d + i] = val;
        }
    }
}

void CpuBackend::rope(DeviceSpan q, DeviceSpan k, int T, int pos0, int dim, int kv_dim,
                      int head_dim) {
    OpTimer timer(times_, Op::Rope, time_ops_);
    for (int t = 0; t < T; ++t) {
        const int pos = pos0 + t;
        float* qr = q.data + std::size_t(t) * dim;
        float* kr = k.data + std::size_t(t) * kv_dim;
        for (int i = 0; i < dim; i += 2) {
            const int hd = i % head_dim;
            const float freq = 1.0f / std::pow(10000.0f, hd / static_cast<float>(head_dim));
            const float angle = pos * freq;
            const float c = std::cos(angle), s = std::sin(angle);
            const int rotations = i < kv_dim ? 2 : 1;  // k is narrower than q under GQA
            for (int r = 0; r < rotations; ++r) {
                float* v = r == 0 ? qr : kr;
                const float v0 = v[i], v1 = v[i + 1];
                v[i] = v0 * c - v1 * s;
                v[i + 1] = v0 * s + v1 * c;
            }
        }
    }
}

void CpuBackend::kv_append(DeviceSpan cache_k, DeviceSpan cache_v, DeviceSpan k, DeviceSpan v,
                           int pos0, int T, int kv_dim) {
    OpTimer timer(times_, Op::KvAppend, time_ops_);
    const std::size_t row = std::size_t(pos0) * kv_dim, n = std::size_t(T) * kv_dim;
    std::memcpy(cache_k.data + row, k.data, n * sizeof(float));
    std::memcpy(cache_v.data + row, v.data, n * sizeof(float));
}

void CpuBackend::attention(DeviceSpan out, DeviceSpan q, DeviceSpan cache_k, DeviceSpan cache_v,
                           DeviceSpan probs, int T, int pos0, int n_heads, int n_kv_heads,
                           int head_dim) {
    OpTimer timer(times_, Op::Attention, time_ops_);
    const int dim = n_heads * head_dim, kv_dim = n_kv_heads * head_dim;
    const int kv_mul = n_heads / n_kv_heads, n_keys = pos0 + T;
    const float scale = std::sqrt(static_cast<float>(head_dim));
    scores_.resize(n_keys);
    for (int t = 0; t < T; ++t) {
        const int pos = pos0 + t;  // this query sees keys 0..pos
        for (int h = 0; h < n_heads; ++h) {
            const float* qh = q.data + std::size_t(t) * dim + h * head_dim;
            const int kvh = h / kv_mul;
            float* att = scores_.data();
            for (int s = 0; s <= pos; ++s) {
                const float* kh = cache_k.data + std::size_t(s) * kv_dim + kvh * head_dim;
                float score = 0.0f;
                for (int i = 0; i < head_dim; ++i) score += qh[i] * kh[i];
                att[s] = score / scale;
            }
            // softmax over the visible keys, max-subtracted for stability
            float mx = att[0];
            for (int s = 1; s <= pos; ++s) mx = att[s] > mx ? att[s] : mx;
            float sum = 0.0f;
            for (int s = 0; s <= pos; ++s) {
                att[s] = std::exp(att[s] - mx);
                sum += att[s];
            }
            for (int s = 0; s <= pos; ++s) att[s] /= sum;

            float* o = out.data + std::size_t(t) * dim + h * head_dim;
            std::memset(o, 0, head_dim * sizeof(float));
            for (int s = 0; s <= pos; ++s) {
                const float* vh = cache_v.data + std::size_t(s) * kv_dim + kvh * head_dim;
                for (int i = 0; i < head_dim; ++i) o[i] += att[s] * vh[i];
            }
            if (!probs.empty()) {
                float* p = probs.data + (std::size_t(h) * T + t) * n_keys;
                std::memcpy(p, att, (pos + 1) * sizeof(float));
                std::memset(p + pos + 1, 0, (n_keys - pos - 1) * sizeof(float));
            }
        }
    }
}

void CpuBackend::swiglu(DeviceSpan h1, DeviceSpan h3, std::size_t n) {
    OpTimer timer(times_, Op::SwiGLU, time_ops_);
    for (std::size_t i = 0; i < n; ++i) {
        float v = h1.data[i];
        v *= 1.0f / (1.0f + std::exp(-v));  // silu
        h1.data[i] = v * h3.data[i];
    }
}

void CpuBackend::add(DeviceSpan x, DeviceSpan y, std::size_t n) {
    OpTimer timer(times_, Op::Add, time_ops_);
    for (std::size_t i = 0; i < n; ++i) x.data[i] += y.data[i];
}

}  // namespace kvs
