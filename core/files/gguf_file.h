#pragma once
// The GGUF container (versions 2 and 3, little-endian), as llama.cpp writes it:
//   "GGUF", u32 version, u64 n_tensors, u64 n_kv,
//   n_kv x (string key, u32 value type, value),
//   n_tensors x (string name, u32 n_dims, u64 dims[n_dims], u32 ggml type, u64 offset),
//   padding to `general.alignment` (default 32), then the tensor data; each offset is relative
//   to the data start and aligned. A string is u64 length + bytes, an array u32 element type +
//   u64 count + elements.
// GgufFile::parse reads the bytes in place (they are usually a read-only mapping) and checks every
// count, length, dimension and offset against the bytes there are, with overflow-safe arithmetic,
// before anything is allocated for it: a hostile file is refused with one line, never read past
// its end, and never makes us allocate more than a small multiple of its own size.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvs {

enum class GgufValueType : std::uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    BOOL = 7,
    STRING = 8,
    ARRAY = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};

// The tensor types kvscope reads (ggml's numbering); every other number is refused by name.
// Q2_K .. Q8_K: super-blocks of 256 values (core/files/kquant_blocks.h).
enum class GgmlType : std::uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q5_0 = 6,  // read and kept, multiplied on the float path; never written
    Q5_1 = 7,
    Q8_0 = 8,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    BF16 = 30
};
const char* ggml_type_name(GgmlType t);
// "Q4_K x 61, Q6_K x 24": each type among `types` with how many times it occurs, the most
// frequent first (ties in the order met); "" for none. How info and export name a mix of types.
std::string ggml_type_counts(const std::vector<GgmlType>& types);

// One metadata value, as a view into the file's bytes.
struct GgufValue {
    GgufValueType type = GgufValueType::U8;
    const unsigned char* at = nullptr;       // scalar: its bytes; array: the first element
    std::string_view str;                    // STRING
    GgufValueType elem = GgufValueType::U8;  // ARRAY: element type (never ARRAY)
    std::uint64_t count = 0;                 // ARRAY: elements
};

struct GgufTensorInfo {
    std::string_view name;
    std::vector<std::uint64_t> dims;  // GGUF order: dims[0] is the fastest-varying (a row's length)
    GgmlType type = GgmlType::F32;
    std::uint64_t elements = 0;
    std::uint64_t bytes = 0;              // of its data in the file
    const unsigned char* data = nullptr;  // checked: data + bytes lies inside the file
};

class GgufFile {
  public:
    // Throws kvs::Error naming `name` when the bytes are not a well-formed GGUF v2/v3 file.
    // The result points into `data`, which must outlive it.
    static GgufFile parse(const unsigned char* data, std::size_t size, const std::string& name);

    std::uint32_t version() const { return version_; }
    std::uint32_t alignment() const { return alignment_; }
    const std::string& name() const { return name_; }
    const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
    const GgufTensorInfo* tensor(std::string_view name) const;  // nullptr when absent
    const GgufValue* find(std::string_view key) const;          // nullptr when absent

    // Typed reads of metadata; each throws kvs::Error naming the key when it is present with
    // another type (or a negative / out-of-range integer), and returns nullopt when absent.
    std::optional<std::uint64_t> get_uint(std::string_view key) const;  // any integer type >= 0
    std::optional<double> get_float(std::string_view key) const;        // F32 or F64
    std::optional<bool> get_bool(std::string_view key) const;
    std::optional<std::string_view> get_string(std::string_view key) const;
    // Arrays: the element type must be the one asked for (strings; F32; any integer type).
    std::vector<std::string_view> get_strings(std::string_view key) const;
    std::vector<float> get_floats(std::string_view key) const;
    std::vector<std::int64_t> get_ints(std::string_view key) const;

  private:
    struct Kv {
        std::string_view key;
        GgufValue value;
    };
    const Kv* find_kv(std::string_view key) const;
    [[noreturn]] void fail_type(std::string_view key, const char* wanted) const;

    std::string name_;
    std::uint32_t version_ = 0;
    std::uint32_t alignment_ = 32;
    std::vector<Kv> kvs_;
    std::vector<GgufTensorInfo> tensors_;
};

// Bytes of one block / elements per block of a tensor type (F32: 4 / 1, Q8_0: 34 / 32, Q4_K:
// 144 / 256, ...).
std::size_t ggml_block_bytes(GgmlType t);
std::size_t ggml_block_elements(GgmlType t);

// IEEE half and bfloat16 to float (exact; subnormals, inf and NaN included), and float to half
// (round to nearest even), as ggml converts them.
float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);
inline float bf16_to_float(std::uint16_t h) {
    return std::bit_cast<float>(std::uint32_t(h) << 16);  // bfloat16 is float's top half
}

// One Q8_0 block as ggml stores it: 32 values x[j] = d * q[j], d an IEEE half. The one
// definition of the layout: the loader, the writer and the CPU matmul (kernels/cpu) read it.
struct BlockQ8_0 {
    std::uint16_t d;
    std::int8_t q[32];
};
static_assert(sizeof(BlockQ8_0) == 34, "ggml's Q8_0 block is 34 bytes");

// Bytes of one row of n values in `t` (n whole blocks of the type).
inline std::size_t ggml_row_bytes(GgmlType t, std::size_t n) {
    return n / ggml_block_elements(t) * ggml_block_bytes(t);
}

// n values (whole blocks of `type`) of type `type` at `p` as float32 into `out`: the one decoder
// of every type (the K-quants' in core/files/kquant_blocks.cpp), the same floats as ggml's.
void dequantize_values(GgmlType type, const unsigned char* p, std::size_t n, float* out);
// The tensor's `elements` values as float32 into `out` (sized by the caller).
void dequantize(const GgufTensorInfo& t, float* out);

// n float32 values (whole blocks of `type`) as `type` into out (ggml_row_bytes(type, n) bytes):
// ggml's reference rounding (F16, BF16: to nearest even; Q8_0: d = max|x| / 127, q = round(x /
// d); Q4_0 likewise); K-quants through kquant_blocks.h's plain quantiser. The one quantiser:
// the GGUF writer and compact weights use it.
void encode_values(GgmlType type, const float* data, std::size_t n, unsigned char* out);

// The type named "f32", "f16", "bf16", "q8_0", "q4_0", "q2_k" .. "q6_k" (any case); throws
// kvs::Error otherwise.
GgmlType ggml_type_from_name(const std::string& name);
// Those names, in that order: what encode_values writes (--weights, export --type).
const std::vector<std::string>& encodable_type_names();

}  // namespace kvs
