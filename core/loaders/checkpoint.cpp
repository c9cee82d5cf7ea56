#include "core/loaders/checkpoint.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/files/mapped_file.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {
namespace {

constexpr std::size_t kHeaderBytes = 7 * sizeof(std::int32_t);
constexpr std::size_t kMaxCheckpointBytes = std::size_t(2) << 30;  // 2 GiB: far above our models
constexpr std::uint32_t kMagicV1 = 0x616b3432;                     // "ak42", llama2.c export v1+

std::int32_t read_i32(const unsigned char* p) {
    std::int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// The shapes in the 28-byte header at `data`, checked against the file's size: everything that
// can be refused is refused here, before a byte of weights is read or allocated.
ModelConfig config_from_header(const unsigned char* data, std::size_t avail, std::uintmax_t size,
                               const std::string& name) {
    if (avail < kHeaderBytes)
        refuse_too_short(name, size, "a llama2.c checkpoint's header", kHeaderBytes);
    if (static_cast<std::uint32_t>(read_i32(data)) == kMagicV1)
        throw Error(name + ": llama2.c export version 1+ (magic \"ak42\") is not supported; " +
                    "export the legacy version 0 format");
    std::int32_t h[7];
    for (int i = 0; i < 7; ++i) h[i] = read_i32(data + 4 * i);

    ModelConfig c;
    c.dim = h[0];
    c.hidden_dim = h[1];
    c.n_layers = h[2];
    c.n_heads = h[3];
    c.n_kv_heads = h[4];
    // llama2.c convention: a negative vocab size means a separate classifier follows.
    c.shared_classifier = h[5] > 0;
    // INT_MIN has no positive twin: it is kept as it is, so the range check names its real value.
    c.vocab_size = (h[5] == INT_MIN || h[5] >= 0) ? h[5] : -h[5];
    c.seq_len = h[6];
    c.validate(name);

    const std::uintmax_t expect = kHeaderBytes + std::uintmax_t(c.stored_floats()) * sizeof(float);
    if (size != expect)
        throw Error(name + ": size " + std::to_string(size) + " bytes, but its header (" +
                    c.describe() + ") implies " + std::to_string(expect) + " bytes" +
                    (size < expect ? " (truncated?)" : " (trailing data?)"));
    return c;
}

}  // namespace

Checkpoint parse_checkpoint(const unsigned char* data, std::size_t size, const std::string& name) {
    Checkpoint ck;
    ck.config = config_from_header(data, size, size, name);
    auto copy = std::make_shared<std::vector<float>>(ck.config.stored_floats());
    std::memcpy(copy->data(), data + kHeaderBytes, copy->size() * sizeof(float));
    point_llama_weights(ck.weights, copy->data(), ck.config, true);
    ck.weights.owner = std::move(copy);
    return ck;
}

Checkpoint load_checkpoint(const std::string& path, GgmlType weights,
                           const std::function<void(Checkpoint&)>& before_read) {
    // Header first: a foreign or lying file is refused before it is mapped.
    const auto head = read_file_head(path, kHeaderBytes);
    config_from_header(head.data(), head.size(), regular_file_size(path), path);
    auto map = MappedFile::open(path, kMaxCheckpointBytes);
    Checkpoint ck;
    // Checked again on the mapping itself: the file may have changed since the header read.
    ck.config = config_from_header(map->data(), map->size(), map->size(), path);
    // The mapping is page-aligned and the header 28 bytes, so the floats are 4-byte aligned.
    point_llama_weights(ck.weights, reinterpret_cast<const float*>(map->data() + kHeaderBytes),
                        ck.config, true);
    if (before_read) before_read(ck);
    ck.compact =
        compact_from_floats(ck.config, ck.weights, weights,
                            [&map](const unsigned char* p, std::size_t n) { map->release(p, n); });
    ck.weights.owner = std::move(map);
    return ck;
}

}  // namespace kvs
