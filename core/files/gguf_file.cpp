#include "core/files/gguf_file.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "core/files/kquant_blocks.h"
#include "core/util/checked.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {
namespace {

constexpr std::uint64_t kMaxDims = 4;                // GGML_MAX_DIMS
constexpr std::uint64_t kMaxElements = 1ull << 40;   // far above any model kvscope can hold
constexpr std::size_t kHeaderBytes = 4 + 4 + 8 + 8;  // magic, version, n_tensors, n_kv

// A cursor over the file's bytes: every read checks what is left first.
struct Reader {
    const unsigned char* data;
    std::size_t size;
    std::size_t at = 0;
    const std::string& name;

    // "NAME: not a usable GGUF file (at byte N)": where a number read here was.
    std::string where() const {
        return name + ": not a usable GGUF file (at byte " + std::to_string(at) + ")";
    }
    [[noreturn]] void fail(const std::string& why) const {
        throw Error(name + ": not a usable GGUF file: " + why + " (at byte " + std::to_string(at) +
                    ")");
    }
    std::size_t left() const { return size - at; }
    template <class T>
    T get(const char* what) {
        if (left() < sizeof(T)) fail(std::string("truncated in ") + what);
        T v;
        std::memcpy(&v, data + at, sizeof v);
        at += sizeof v;
        return v;
    }
    std::string_view string(const char* what) {
        const auto len = get<std::uint64_t>(what);
        if (len > left())
            fail(std::string(what) + " of " + std::to_string(len) + " bytes runs past the end");
        std::string_view s(reinterpret_cast<const char*>(data + at), static_cast<std::size_t>(len));
        at += static_cast<std::size_t>(len);
        return s;
    }
};

// Bytes of a scalar value type; 0 for STRING and ARRAY (variable) and unknown types.
std::size_t scalar_bytes(GgufValueType t) {
    switch (t) {
        case GgufValueType::U8:
        case GgufValueType::I8:
        case GgufValueType::BOOL:
            return 1;
        case GgufValueType::U16:
        case GgufValueType::I16:
            return 2;
        case GgufValueType::U32:
        case GgufValueType::I32:
        case GgufValueType::F32:
            return 4;
        case GgufValueType::U64:
        case GgufValueType::I64:
        case GgufValueType::F64:
            return 8;
        default:
            return 0;
    }
}

bool is_integer(GgufValueType t) {
    return t == GgufValueType::U8 || t == GgufValueType::I8 || t == GgufValueType::U16 ||
           t == GgufValueType::I16 || t == GgufValueType::U32 || t == GgufValueType::I32 ||
           t == GgufValueType::U64 || t == GgufValueType::I64;
}

// An integer element at `p` of type `t`, widened; U64 values above INT64_MAX come back as -1
// (callers refuse negatives).
std::int64_t read_int(const unsigned char* p, GgufValueType t) {
    auto rd = [p](auto v) {
        std::memcpy(&v, p, sizeof v);
        return v;
    };
    switch (t) {
        case GgufValueType::U8:
            return rd(std::uint8_t{});
        case GgufValueType::I8:
            return rd(std::int8_t{});
        case GgufValueType::U16:
            return rd(std::uint16_t{});
        case GgufValueType::I16:
            return rd(std::int16_t{});
        case GgufValueType::U32:
            return rd(std::uint32_t{});
        case GgufValueType::I32:
            return rd(std::int32_t{});
        case GgufValueType::I64:
            return rd(std::int64_t{});
        case GgufValueType::U64: {
            const auto v = rd(std::uint64_t{});
            return v > static_cast<std::uint64_t>(INT64_MAX) ? -1 : static_cast<std::int64_t>(v);
        }
        default:
            return -1;
    }
}

const char* known_type_name(std::uint32_t t) {
    switch (t) {
        case 0:
            return "F32";
        case 1:
            return "F16";
        case 2:
            return "Q4_0";
        case 3:
            return "Q4_1";
        case 6:
            return "Q5_0";
        case 7:
            return "Q5_1";
        case 8:
            return "Q8_0";
        case 10:
            return "Q2_K";
        case 11:
            return "Q3_K";
        case 12:
            return "Q4_K";
        case 13:
            return "Q5_K";
        case 14:
            return "Q6_K";
        case 15:
            return "Q8_K";
        case 30:
            return "BF16";
        default:
            return nullptr;
    }
}

bool supported(std::uint32_t t) {
    return t == 0 || t == 1 || t == 2 || t == 6 || t == 7 || t == 8 || (t >= 10 && t <= 15) ||
           t == 30;
}

// The value at the reader's cursor, of type `t`, checked and skipped.
GgufValue read_value(Reader& r, GgufValueType t, std::string_view key) {
    GgufValue v;
    v.type = t;
    const std::string k(key);
    if (t == GgufValueType::STRING) {
        v.str = r.string(("value of " + k).c_str());
        return v;
    }
    if (t == GgufValueType::ARRAY) {
        v.elem = static_cast<GgufValueType>(r.get<std::uint32_t>("array type"));
        v.count = r.get<std::uint64_t>("array length");
        v.at = r.data + r.at;
        if (v.elem == GgufValueType::STRING) {
            // Each string is at least its 8-byte length: a count the bytes cannot hold is
            // refused before the walk, which is then linear in the file's size.
            if (v.count > r.left() / 8)
                r.fail(k + ": " + std::to_string(v.count) + " strings cannot fit in the " +
                       std::to_string(r.left()) + " bytes left");
            for (std::uint64_t i = 0; i < v.count; ++i) r.string(("an element of " + k).c_str());
            return v;
        }
        const std::size_t eb = scalar_bytes(v.elem);
        if (eb == 0)
            r.fail(k + ": array of value type " +
                   std::to_string(static_cast<std::uint32_t>(v.elem)) +
                   (v.elem == GgufValueType::ARRAY ? " (nested arrays are not supported)" : ""));
        if (v.count > r.left() / eb)
            r.fail(k + ": array of " + std::to_string(v.count) + " elements runs past the end");
        r.at += static_cast<std::size_t>(v.count) * eb;
        return v;
    }
    const std::size_t n = scalar_bytes(t);
    if (n == 0) r.fail(k + ": unknown value type " + std::to_string(static_cast<std::uint32_t>(t)));
    if (r.left() < n) r.fail("truncated in the value of " + k);
    v.at = r.data + r.at;
    r.at += n;
    return v;
}

}  // namespace

const char* ggml_type_name(GgmlType t) {
    const char* n = known_type_name(static_cast<std::uint32_t>(t));
    return n ? n : "?";
}

std::string ggml_type_counts(const std::vector<GgmlType>& types) {
    std::vector<std::pair<GgmlType, int>> counts;
    for (const GgmlType t : types) {
        auto it = std::find_if(counts.begin(), counts.end(), [&](auto& p) { return p.first == t; });
        if (it == counts.end())
            counts.push_back({t, 1});
        else
            ++it->second;
    }
    std::stable_sort(counts.begin(), counts.end(),
                     [](auto& a, auto& b) { return a.second > b.second; });
    std::string s;
    for (const auto& [t, n] : counts)
        s += (s.empty() ? "" : ", ") + std::string(ggml_type_name(t)) + " x " + std::to_string(n);
    return s;
}

std::size_t ggml_block_bytes(GgmlType t) {
    switch (t) {
        case GgmlType::F32:
            return 4;
        case GgmlType::F16:
        case GgmlType::BF16:
            return 2;
        case GgmlType::Q8_0:
            return 2 + 32;  // f16 scale, 32 x int8
        case GgmlType::Q4_0:
            return 2 + 16;  // f16 scale, 32 x 4 bits
        case GgmlType::Q5_0:
            return 2 + 4 + 16;  // f16 d, the 32 fifth bits, 32 x 4 bits
        case GgmlType::Q5_1:
            return 2 + 2 + 4 + 16;  // f16 d and m, then as Q5_0
        case GgmlType::Q2_K:
            return sizeof(BlockQ2K);
        case GgmlType::Q3_K:
            return sizeof(BlockQ3K);
        case GgmlType::Q4_K:
            return sizeof(BlockQ4K);
        case GgmlType::Q5_K:
            return sizeof(BlockQ5K);
        case GgmlType::Q6_K:
            return sizeof(BlockQ6K);
        case GgmlType::Q8_K:
            return sizeof(BlockQ8K);
    }
    return 0;
}

std::size_t ggml_block_elements(GgmlType t) {
    if (is_kquant(t)) return kSuperBlock;
    return t == GgmlType::Q8_0 || t == GgmlType::Q4_0 || t == GgmlType::Q5_0 || t == GgmlType::Q5_1
               ? 32
               : 1;
}

GgufFile GgufFile::parse(const unsigned char* data, std::size_t size, const std::string& name) {
    GgufFile f;
    f.name_ = name;
    Reader r{data, size, 0, name};
    if (size < 4 || std::memcmp(data, "GGUF", 4) != 0) r.fail("no \"GGUF\" magic");
    r.at = 4;
    if (size < kHeaderBytes) refuse_too_short(name, size, "a GGUF header", kHeaderBytes);
    f.version_ = r.get<std::uint32_t>("version");
    if (f.version_ == 1) r.fail("version 1 (32-bit counts) is not supported; convert to v3");
    if (f.version_ != 2 && f.version_ != 3)
        r.fail("version " + std::to_string(f.version_) +
               (__builtin_bswap32(f.version_) <= 3 ? " (a big-endian file?)" : "") +
               ", kvscope reads versions 2 and 3");
    const auto n_tensors = r.get<std::uint64_t>("tensor count");
    const auto n_kv = r.get<std::uint64_t>("metadata count");
    // The smallest key/value is 13 bytes (length, type, a one-byte value), the smallest tensor
    // info 24 (name length, n_dims, type, offset): counts the bytes cannot hold are refused
    // before anything is reserved for them.
    if (n_kv > r.left() / 13)
        r.fail(std::to_string(n_kv) + " metadata entries cannot fit in " + std::to_string(size) +
               " bytes");
    f.kvs_.reserve(static_cast<std::size_t>(n_kv));
    std::unordered_set<std::string_view> seen;
    for (std::uint64_t i = 0; i < n_kv; ++i) {
        Kv kv;
        kv.key = r.string("a metadata key");
        if (!seen.insert(kv.key).second) r.fail("metadata key '" + std::string(kv.key) + "' twice");
        const auto t = static_cast<GgufValueType>(r.get<std::uint32_t>("a value type"));
        kv.value = read_value(r, t, kv.key);
        f.kvs_.push_back(kv);
    }
    if (const GgufValue* a = f.find("general.alignment")) {
        if (a->type != GgufValueType::U32) f.fail_type("general.alignment", "u32");
        std::uint32_t al;
        std::memcpy(&al, a->at, 4);
        if (al == 0 || (al & (al - 1)) != 0)
            r.fail("general.alignment = " + std::to_string(al) + " is not a power of two");
        f.alignment_ = al;
    }

    if (n_tensors > r.left() / 24)
        r.fail(std::to_string(n_tensors) + " tensor infos cannot fit in " + std::to_string(size) +
               " bytes");
    f.tensors_.reserve(static_cast<std::size_t>(n_tensors));
    std::vector<std::uint64_t> offsets;
    offsets.reserve(static_cast<std::size_t>(n_tensors));
    seen.clear();
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
        GgufTensorInfo t;
        t.name = r.string("a tensor name");
        const std::string tn(t.name);
        if (!seen.insert(t.name).second) r.fail("tensor '" + tn + "' twice");
        const auto nd = r.get<std::uint32_t>("a tensor's dimension count");
        if (nd == 0 || nd > kMaxDims)
            r.fail("tensor '" + tn + "' has " + std::to_string(nd) + " dimensions (1..4)");
        t.elements = 1;
        for (std::uint32_t d = 0; d < nd; ++d) {
            const auto n = r.get<std::uint64_t>("a tensor's dimensions");
            const FileField dim{r.where(), "tensor '" + tn + "' dimension " + std::to_string(d)};
            if (n == 0 || n > kMaxElements)
                refuse_number(dim, std::to_string(n), "a dimension", 1, kMaxElements);
            t.elements = checked_mul(t.elements, n, dim, kMaxElements);
            t.dims.push_back(n);
        }
        const auto ty = r.get<std::uint32_t>("a tensor's type");
        if (!supported(ty)) {
            const char* known = known_type_name(ty);
            r.fail("tensor '" + tn + "' has type " + std::to_string(ty) +
                   (known ? std::string(" (") + known + ")" : std::string()) +
                   "; kvscope reads F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q5_1 and Q2_K to Q6_K (and "
                   "Q8_K)");
        }
        t.type = static_cast<GgmlType>(ty);
        const std::size_t be = ggml_block_elements(t.type);
        if (t.dims[0] % be != 0)
            r.fail("tensor '" + tn + "' rows of " + std::to_string(t.dims[0]) + " are not whole " +
                   ggml_type_name(t.type) + " blocks of " + std::to_string(be));
        t.bytes = t.elements / be * ggml_block_bytes(t.type);  // <= 2^40 * 4: no overflow
        offsets.push_back(r.get<std::uint64_t>("a tensor's offset"));
        f.tensors_.push_back(std::move(t));
    }
    // The data starts at the next multiple of the alignment (r.at <= size < 2^63: no overflow).
    const std::uint64_t start =
        (std::uint64_t(r.at) + f.alignment_ - 1) / f.alignment_ * f.alignment_;
    if (n_tensors > 0 && start > size) r.fail("tensor data starts past the end of the file");
    const std::uint64_t data_bytes = start > size ? 0 : size - start;
    for (std::size_t i = 0; i < f.tensors_.size(); ++i) {
        auto& t = f.tensors_[i];
        const std::uint64_t off = offsets[i];
        if (off % f.alignment_ != 0)
            r.fail("tensor '" + std::string(t.name) + "' offset " + std::to_string(off) +
                   " is not a multiple of the alignment " + std::to_string(f.alignment_));
        if (off > data_bytes || t.bytes > data_bytes - off)
            r.fail("tensor '" + std::string(t.name) + "' (" + std::to_string(t.bytes) +
                   " bytes at data offset " + std::to_string(off) + ") runs past the end of the " +
                   std::to_string(size) + "-byte file");
        t.data = data + start + off;
    }
    return f;
}

const GgufFile::Kv* GgufFile::find_kv(std::string_view key) const {
    for (const auto& kv : kvs_)
        if (kv.key == key) return &kv;
    return nullptr;
}

const GgufValue* GgufFile::find(std::string_view key) const {
    const Kv* kv = find_kv(key);
    return kv ? &kv->value : nullptr;
}

const GgufTensorInfo* GgufFile::tensor(std::string_view n) const {
    for (const auto& t : tensors_)
        if (t.name == n) return &t;
    return nullptr;
}

void GgufFile::fail_type(std::string_view key, const char* wanted) const {
    throw Error(name_ + ": not a usable GGUF file: metadata '" + std::string(key) + "' is not " +
                wanted);
}

std::optional<std::uint64_t> GgufFile::get_uint(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::nullopt;
    if (!is_integer(v->type)) fail_type(key, "an integer");
    const std::int64_t x = read_int(v->at, v->type);
    if (x < 0) fail_type(key, "a non-negative integer");
    return static_cast<std::uint64_t>(x);
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::nullopt;
    if (v->type == GgufValueType::F32) {
        float x;
        std::memcpy(&x, v->at, 4);
        return x;
    }
    if (v->type == GgufValueType::F64) {
        double x;
        std::memcpy(&x, v->at, 8);
        return x;
    }
    fail_type(key, "a float");
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::nullopt;
    if (v->type != GgufValueType::BOOL) fail_type(key, "a bool");
    return *v->at != 0;
}

std::optional<std::string_view> GgufFile::get_string(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::nullopt;
    if (v->type != GgufValueType::STRING) fail_type(key, "a string");
    return v->str;
}

std::vector<std::string_view> GgufFile::get_strings(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return {};
    if (v->type != GgufValueType::ARRAY || v->elem != GgufValueType::STRING)
        fail_type(key, "an array of strings");
    std::vector<std::string_view> out;
    // count <= bytes / 8 (checked at parse): at most 2 x the array's bytes
    check_allocation(v->count * sizeof(std::string_view), {name_, std::string(key)});
    out.reserve(static_cast<std::size_t>(v->count));
    const unsigned char* p = v->at;
    for (std::uint64_t i = 0; i < v->count; ++i) {  // lengths were checked when parsed
        std::uint64_t len;
        std::memcpy(&len, p, 8);
        out.emplace_back(reinterpret_cast<const char*>(p + 8), static_cast<std::size_t>(len));
        p += 8 + len;
    }
    return out;
}

std::vector<float> GgufFile::get_floats(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return {};
    if (v->type != GgufValueType::ARRAY || v->elem != GgufValueType::F32)
        fail_type(key, "an array of f32");
    check_allocation(v->count * sizeof(float), {name_, std::string(key)});  // count <= bytes / 4
    std::vector<float> out(static_cast<std::size_t>(v->count));
    if (!out.empty()) std::memcpy(out.data(), v->at, out.size() * 4);
    return out;
}

std::vector<std::int64_t> GgufFile::get_ints(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return {};
    if (v->type != GgufValueType::ARRAY || !is_integer(v->elem))
        fail_type(key, "an array of integers");
    // Up to 8 x the array's bytes (u8 elements widened): checked before it is made.
    check_allocation(v->count * sizeof(std::int64_t), {name_, std::string(key)});
    std::vector<std::int64_t> out(static_cast<std::size_t>(v->count));
    const std::size_t eb = scalar_bytes(v->elem);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = read_int(v->at + i * eb, v->elem);
    return out;
}

float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = std::uint32_t(h & 0x8000) << 16;
    const int exp = (h >> 10) & 0x1f;
    const std::uint32_t mant = h & 0x3ff;
    float v;
    if (exp == 0) {
        v = std::ldexp(static_cast<float>(mant), -24);  // zero or subnormal: mant x 2^-24
    } else if (exp == 31) {
        v = mant ? std::nanf("") : INFINITY;
    } else {
        return std::bit_cast<float>(sign | (std::uint32_t(exp + 112) << 23) | (mant << 13));
    }
    return sign ? -v : v;
}

std::uint16_t float_to_half(float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
    const std::uint32_t ax = x & 0x7fffffff;
    if (ax > 0x7f800000) return sign | 0x7e00;   // NaN
    if (ax >= 0x477ff000) return sign | 0x7c00;  // rounds to >= 65520: inf
    if (ax < 0x38800000) {                       // below 2^-14: a subnormal half (or zero)
        const float a = std::bit_cast<float>(ax);
        return sign | static_cast<std::uint16_t>(std::nearbyint(a * 16777216.0f));  // / 2^-24
    }
    // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
    const std::uint32_t m = ax + 0xfff + ((ax >> 13) & 1);
    return sign | static_cast<std::uint16_t>((m - (std::uint32_t(112) << 23)) >> 13);
}

void dequantize_values(GgmlType type, const unsigned char* p, std::size_t n, float* out) {
    auto u16 = [](const unsigned char* q) {
        std::uint16_t v;
        std::memcpy(&v, q, 2);
        return v;
    };
    switch (type) {
        case GgmlType::F32:
            std::memcpy(out, p, n * 4);
            return;
        case GgmlType::F16:
            for (std::size_t i = 0; i < n; ++i) out[i] = half_to_float(u16(p + 2 * i));
            return;
        case GgmlType::BF16:
            for (std::size_t i = 0; i < n; ++i) out[i] = bf16_to_float(u16(p + 2 * i));
            return;
        case GgmlType::Q8_0:  // x = d * q (BlockQ8_0)
            for (std::size_t b = 0; b < n / 32; ++b, p += sizeof(BlockQ8_0)) {
                BlockQ8_0 blk;
                std::memcpy(&blk, p, sizeof blk);
                const float d = half_to_float(blk.d);
                for (int j = 0; j < 32; ++j) out[b * 32 + j] = d * static_cast<float>(blk.q[j]);
            }
            return;
        case GgmlType::Q4_0:  // block: f16 d, 16 bytes; low nibbles are x[0..15], high x[16..31]
            for (std::size_t b = 0; b < n / 32; ++b, p += 18) {
                const float d = half_to_float(u16(p));
                for (int j = 0; j < 16; ++j) {
                    out[b * 32 + j] = d * static_cast<float>((p[2 + j] & 0x0f) - 8);
                    out[b * 32 + j + 16] = d * static_cast<float>((p[2 + j] >> 4) - 8);
                }
            }
            return;
        case GgmlType::Q5_0:  // f16 d, u32 qh, 16 bytes: x = d * (q - 16), q 5 bits
        case GgmlType::Q5_1:  // f16 d, f16 m, u32 qh, 16 bytes: x = d * q + m
        {
            // As ggml's dequantize_row_q5_0 / _q5_1: low nibbles are x[0..15], high x[16..31];
            // bit j of qh is the fifth bit of x[j]. Products and sums rounded one at a time
            // (this file is built without fused multiply-adds), so the floats are ggml's.
            const bool q51 = type == GgmlType::Q5_1;
            const std::size_t bytes = ggml_block_bytes(type);
            for (std::size_t b = 0; b < n / 32; ++b, p += bytes) {
                const float d = half_to_float(u16(p));
                const float m = q51 ? half_to_float(u16(p + 2)) : 0.0f;
                const unsigned char* h = p + (q51 ? 4 : 2);
                std::uint32_t qh;
                std::memcpy(&qh, h, 4);
                const unsigned char* qs = h + 4;
                for (int j = 0; j < 16; ++j) {
                    const int x0 = (qs[j] & 0x0f) | (((qh >> j) << 4) & 0x10);
                    const int x1 = (qs[j] >> 4) | ((qh >> (j + 12)) & 0x10);
                    if (q51) {
                        out[b * 32 + j] = static_cast<float>(x0) * d + m;
                        out[b * 32 + j + 16] = static_cast<float>(x1) * d + m;
                    } else {
                        out[b * 32 + j] = static_cast<float>(x0 - 16) * d;
                        out[b * 32 + j + 16] = static_cast<float>(x1 - 16) * d;
                    }
                }
            }
            return;
        }
        case GgmlType::Q2_K:
        case GgmlType::Q3_K:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K:
        case GgmlType::Q8_K:
            return dequantize_kquant(type, p, n, out);
    }
}

void dequantize(const GgufTensorInfo& t, float* out) {
    dequantize_values(t.type, t.data, static_cast<std::size_t>(t.elements), out);
}

void encode_values(GgmlType type, const float* data, std::size_t n, unsigned char* p) {
    auto put16 = [](unsigned char* q, std::uint16_t v) { std::memcpy(q, &v, 2); };
    switch (type) {
        case GgmlType::F32:
            std::memcpy(p, data, n * 4);
            return;
        case GgmlType::F16:
            for (std::size_t i = 0; i < n; ++i) put16(p + 2 * i, float_to_half(data[i]));
            return;
        case GgmlType::BF16:
            for (std::size_t i = 0; i < n; ++i) {  // round to nearest even
                const std::uint32_t x = std::bit_cast<std::uint32_t>(data[i]);
                put16(p + 2 * i, static_cast<std::uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16));
            }
            return;
        case GgmlType::Q8_0:  // d = max|x| / 127, q = round(x / d)
            for (std::size_t b = 0; b < n / 32; ++b, p += sizeof(BlockQ8_0)) {
                const float* x = data + b * 32;
                float amax = 0;
                for (int j = 0; j < 32; ++j) amax = std::max(amax, std::abs(x[j]));
                const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
                put16(p, float_to_half(d));
                for (int j = 0; j < 32; ++j)
                    p[2 + j] =
                        static_cast<unsigned char>(static_cast<std::int8_t>(std::round(x[j] * id)));
            }
            return;
        case GgmlType::Q4_0:  // d = (the value of largest magnitude) / -8, q = x / d + 8.5 in 0..15
            for (std::size_t b = 0; b < n / 32; ++b, p += 18) {
                const float* x = data + b * 32;
                float amax = 0, mx = 0;
                for (int j = 0; j < 32; ++j)
                    if (std::abs(x[j]) > amax) amax = std::abs(x[j]), mx = x[j];
                const float d = mx / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
                put16(p, float_to_half(d));
                for (int j = 0; j < 16; ++j) {
                    const int lo = std::min(15, static_cast<int>(x[j] * id + 8.5f));
                    const int hi = std::min(15, static_cast<int>(x[j + 16] * id + 8.5f));
                    p[2 + j] = static_cast<unsigned char>(lo | (hi << 4));
                }
            }
            return;
        case GgmlType::Q2_K:
        case GgmlType::Q3_K:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K:
        case GgmlType::Q8_K:
            return encode_kquant(type, data, n, p);
        case GgmlType::Q5_0:
        case GgmlType::Q5_1:
            break;
    }
    throw Error(std::string("kvscope reads ") + ggml_type_name(type) +
                " tensors but does not write them");
}

const std::vector<std::string>& encodable_type_names() {
    static const std::vector<std::string> names = {"f32",  "f16",  "bf16", "q8_0", "q4_0",
                                                   "q2_k", "q3_k", "q4_k", "q5_k", "q6_k"};
    return names;
}

GgmlType ggml_type_from_name(const std::string& name) {
    static const GgmlType types[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q8_0,
                                     GgmlType::Q4_0, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K,
                                     GgmlType::Q5_K, GgmlType::Q6_K};
    std::string n;
    for (char ch : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const auto& names = encodable_type_names();
    std::string list;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (n == names[i]) return types[i];
        list += (i ? ", " : "") + names[i];
    }
    throw Error("GGUF type '" + name + "' is not one of " + list);
}

}  // namespace kvs
