#pragma once
// The safetensors container, as Hugging Face writes it:
//   u64 N (little-endian), N bytes of a JSON object, then the tensors' bytes.
// The object maps each tensor's name to {"dtype": "F32" | "F16" | "BF16" | ..., "shape": [..],
// "data_offsets": [begin, end]} (offsets relative to the first byte after the header), and may
// hold a "__metadata__" object of strings. Shapes are row-major, outermost first: a Linear layer's
// weight is [out_features, in_features], the same bytes as llama2.c's [out, in] rows.
// SafetensorsFile::parse reads the bytes in place (usually a read-only mapping) and checks the
// header's length, its JSON, every dtype, shape and offset against the bytes there are (overflow
// safe) before anything is allocated for a tensor: a hostile file is refused with one line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/files/gguf_file.h"
#include "core/util/output_file.h"

namespace kvs {

struct SafeTensor {
    std::string name;
    GgmlType type = GgmlType::F32;     // F32, F16 or BF16; any other dtype is refused by name
    std::vector<std::uint64_t> shape;  // row-major, outermost first
    std::uint64_t elements = 0;
    const unsigned char* data = nullptr;  // checked: data + elements * size lies inside the file
};

class SafetensorsFile {
  public:
    // Throws kvs::Error naming `name` when the bytes are not a well-formed safetensors file of
    // F32/F16/BF16 tensors. The result points into `data`, which must outlive it.
    static SafetensorsFile parse(const unsigned char* data, std::size_t size,
                                 const std::string& name);

    const std::string& name() const { return name_; }
    const std::vector<SafeTensor>& tensors() const { return tensors_; }
    const SafeTensor* tensor(const std::string& name) const;  // nullptr when absent

  private:
    std::string name_;
    std::vector<SafeTensor> tensors_;  // sorted by name
};

// The header and data of a safetensors file holding `tensors` (name, type, shape, bytes), in the
// order given, each tensor's bytes at an 8-byte aligned offset. The one writer (core/hf_writer).
struct SafeTensorOut {
    std::string name;
    GgmlType type = GgmlType::F32;
    std::vector<std::uint64_t> shape;
    std::string bytes;
};
std::string safetensors_bytes(const std::vector<SafeTensorOut>& tensors);
// Those files as outputs: their header's metadata says "written_by": "kvscope" first, which an
// export over an earlier export checks before replacing it (any other safetensors file is kept).
OutputKind safetensors_output();

}  // namespace kvs
