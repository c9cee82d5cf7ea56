#pragma once
// The rows of a projection matrix that make one head's numbers, as a view draws them: W_q's rows
// h·d_k .. (h+1)·d_k for query head h, W_k's and W_v's rows of its K/V head (q = x_norm · W_qᵀ, so
// q's element i is x_norm · row i). A heat strip of [rows, cols]: each cell one weight where a row
// fits in max_cols, else the mean of `block` adjacent weights, so a strip is bounded whatever the
// model's size. Read from the model's weights (compact types decoded by the one decoder); a model
// without weights (the toy, a replay) has none.
#include <optional>
#include <string>
#include <vector>

#include "core/model/compact_weights.h"
#include "core/model/model.h"

namespace kvs {

struct WeightStrip {
    MatrixKind kind = MatrixKind::wq;
    int layer = 0;
    int head = 0;              // the query head asked for
    int first_row = 0;         // the matrix's first row this head's numbers come from
    int rows = 0;              // head_dim rows
    int row_len = 0;           // dim: the length of each row (x_norm's)
    int cols = 0;              // cells per row in the strip: row_len when block is 1
    int block = 1;             // adjacent weights averaged into one cell (1: each cell one weight)
    std::vector<float> cells;  // [rows, cols]
    float abs_max = 0;         // the largest |w| of the rows themselves (the colour scale)
};

// kind: wq, wk or wv. nullopt, with *why set, when the model keeps no weights or the layer or
// head does not exist.
std::optional<WeightStrip> weight_strip(const Model& m, MatrixKind kind, int layer, int head,
                                        int max_cols, std::string* why);

// Rows first..first+n-1 of layer `layer`'s matrix `kind` as float32: [n, row_len]. False when the
// model keeps no weights (the toy, a replay). The rows a test checks a captured projection with.
bool matrix_rows(const Model& m, MatrixKind kind, int layer, int first, int n,
                 std::vector<float>& out);

}  // namespace kvs
