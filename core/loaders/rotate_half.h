#pragma once
// HF stores q_proj and k_proj rows permuted for its rotate-half RoPE (the first half of each
// head's features rotates with the second half); llama2.c's RoPE rotates adjacent pairs. The
// loaders put the rows back, so the forward pass is the one run.c has; the writers put them out.
#include <cstddef>
#include <cstring>

namespace kvs {

// The HF row that holds llama2.c's row `r` of a q or k matrix (heads of `head_dim` rows): within
// a head, llama2.c's feature 2i + j is HF's j * head_dim/2 + i. The one statement of the layout.
inline std::size_t rotate_half_row(std::size_t r, std::size_t head_dim) {
    const std::size_t h = r / head_dim, w = r % head_dim;
    return h * head_dim + (w % 2) * (head_dim / 2) + w / 2;
}

// The rows of a q or k matrix (or the entries of its bias: rows of one value), `row_bytes` each,
// copied between the two orders: `to_llama2c`, a file's rotate-half order read back (dst row r =
// src row rotate_half_row(r)); else written out in it (dst row rotate_half_row(r) = src row r).
// The one place rows move by rotate_half_row; src and dst do not overlap.
inline void copy_rotate_half_rows(const void* src, void* dst, std::size_t rows,
                                  std::size_t row_bytes, std::size_t head_dim, bool to_llama2c) {
    const auto* from = static_cast<const unsigned char*>(src);
    auto* to = static_cast<unsigned char*>(dst);
    for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t hf = rotate_half_row(r, head_dim);
        std::memcpy(to + (to_llama2c ? r : hf) * row_bytes,
                    from + (to_llama2c ? hf : r) * row_bytes, row_bytes);
    }
}

}  // namespace kvs
