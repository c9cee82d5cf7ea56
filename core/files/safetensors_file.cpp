#include "core/files/safetensors_file.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/files/json_input.h"
#include "core/util/checked.h"
#include "core/util/error.h"
#include "core/util/file_bytes.h"

namespace kvs {
namespace {

constexpr std::uint64_t kMaxHeader = std::uint64_t(100) << 20;  // the format's own bound
constexpr std::uint64_t kMaxDims = 8;
constexpr std::uint64_t kMaxElements = 1ull << 40;

const char* dtype_name(GgmlType t) {
    switch (t) {
        case GgmlType::F16:
            return "F16";
        case GgmlType::BF16:
            return "BF16";
        default:
            return "F32";
    }
}

}  // namespace

SafetensorsFile SafetensorsFile::parse(const unsigned char* data, std::size_t size,
                                       const std::string& name) {
    auto fail = [&](const std::string& why) -> void {
        throw Error(name + ": not a usable safetensors file: " + why);
    };
    if (size < 8) refuse_too_short(name, size, "a safetensors header's length", 8);
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
    if (n > kMaxHeader || n > size - 8)
        fail("header length " + std::to_string(n) + " does not fit the file's " +
             std::to_string(size) + " bytes");
    const auto j = parse_json_input(
        std::string_view(reinterpret_cast<const char*>(data + 8), static_cast<std::size_t>(n)),
        name + ": not a usable safetensors file: header");
    if (!j.is_object()) fail("the header is not a JSON object");
    const unsigned char* base = data + 8 + n;
    const std::uint64_t room = size - 8 - n;

    SafetensorsFile f;
    f.name_ = name;
    const std::string where = name + ": not a usable safetensors file";
    for (const auto& [key, v] : j.items()) {
        if (key == "__metadata__") continue;
        const std::string tensor = "tensor '" + key.substr(0, 80) + "'";
        const std::string at = tensor + ": ";
        if (!v.is_object()) fail(at + "not an object");
        const nlohmann::json* dt = json_member(v, "dtype");
        if (!dt || !dt->is_string()) fail(at + "no dtype");
        SafeTensor t;
        t.name = key;
        const std::string& d = dt->get_ref<const std::string&>();
        if (d == "F32")
            t.type = GgmlType::F32;
        else if (d == "F16")
            t.type = GgmlType::F16;
        else if (d == "BF16")
            t.type = GgmlType::BF16;
        else
            fail(at + "dtype " + d.substr(0, 40) +
                 " is not supported (kvscope reads F32, F16 and BF16)");
        const nlohmann::json* sh = json_member(v, "shape");
        if (!sh || !sh->is_array() || sh->size() > kMaxDims)
            fail(at + "no shape of at most " + std::to_string(kMaxDims) + " dimensions");
        t.elements = 1;
        for (std::size_t i = 0; i < sh->size(); ++i) {
            const FileField dim{where, tensor + " shape[" + std::to_string(i) + "]"};
            const auto x = static_cast<std::uint64_t>(json_int((*sh)[i], 0, kMaxElements, dim));
            t.elements = checked_mul(t.elements, x, dim, kMaxElements);
            t.shape.push_back(x);
        }
        const nlohmann::json* off = json_member(v, "data_offsets");
        if (!off || !off->is_array() || off->size() != 2)
            fail(at + "data_offsets is not [begin, end]");
        const auto b = static_cast<std::uint64_t>(
            json_int((*off)[0], 0, INT64_MAX, {where, tensor + " data_offsets[0]"}, "an offset"));
        const auto e = static_cast<std::uint64_t>(
            json_int((*off)[1], 0, INT64_MAX, {where, tensor + " data_offsets[1]"}, "an offset"));
        const std::uint64_t bytes = ggml_row_bytes(t.type, t.elements);
        if (b > e || e > room)
            fail(at + "data_offsets [" + std::to_string(b) + ", " + std::to_string(e) +
                 "] lie outside the " + std::to_string(room) + " data bytes");
        if (e - b != bytes)
            fail(at + "holds " + std::to_string(e - b) + " bytes, its dtype and shape need " +
                 std::to_string(bytes));
        t.data = base + b;
        f.tensors_.push_back(std::move(t));
    }
    std::sort(f.tensors_.begin(), f.tensors_.end(),
              [](const SafeTensor& a, const SafeTensor& b) { return a.name < b.name; });
    return f;
}

const SafeTensor* SafetensorsFile::tensor(const std::string& n) const {
    const auto it =
        std::lower_bound(tensors_.begin(), tensors_.end(), n,
                         [](const SafeTensor& t, const std::string& k) { return t.name < k; });
    return it != tensors_.end() && it->name == n ? &*it : nullptr;
}

OutputKind safetensors_output() {
    return {"safetensors file", [](std::string_view head) {
                return head.size() > 8 &&
                       head.substr(8).starts_with(
                           R"({"__metadata__":{"format":"pt","written_by":"kvscope"})");
            }};
}

std::string safetensors_bytes(const std::vector<SafeTensorOut>& tensors) {
    nlohmann::ordered_json h = nlohmann::ordered_json::object();
    h["__metadata__"] = {{"format", "pt"}, {"written_by", "kvscope"}};
    std::uint64_t at = 0;
    std::vector<std::uint64_t> begins;
    for (const auto& t : tensors) {
        at = (at + 7) / 8 * 8;
        begins.push_back(at);
        h[t.name] = {{"dtype", dtype_name(t.type)},
                     {"shape", t.shape},
                     {"data_offsets", {at, at + t.bytes.size()}}};
        at += t.bytes.size();
    }
    std::string head = h.dump();
    head.append((8 - (8 + head.size()) % 8) % 8, ' ');  // data starts 8-byte aligned
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[i] = char((std::uint64_t(head.size()) >> (8 * i)) & 0xff);
    out += head;
    const std::size_t data0 = out.size();
    out.resize(data0 + at, '\0');
    for (std::size_t i = 0; i < tensors.size(); ++i)
        std::memcpy(out.data() + data0 + begins[i], tensors[i].bytes.data(),
                    tensors[i].bytes.size());
    return out;
}

}  // namespace kvs
