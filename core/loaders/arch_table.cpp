#include "core/loaders/arch_table.h"

#include "core/util/error.h"

namespace kvs {

void Refuse::operator()(const std::string& why) const {
    throw Error(label + ": " + why);
}

std::uint64_t side_length(Side s, const ModelConfig& c) {
    switch (s) {
        case Side::one:
            return 1;
        case Side::dim:
            return std::uint64_t(c.dim);
        case Side::dim3:
            return 3 * std::uint64_t(c.dim);
        case Side::kv_dim:
            return std::uint64_t(c.kv_dim());
        case Side::hidden:
            return std::uint64_t(c.hidden_dim);
        case Side::vocab:
            return std::uint64_t(c.vocab_size);
        case Side::positions:
            return std::uint64_t(c.n_positions);
    }
    return 0;
}

std::span<const ArchTable* const> all_archs() {
    static const ArchTable* const kAll[] = {&llama_arch(), &qwen2_arch(), &gpt2_arch()};
    return kAll;
}

const ArchTable* arch_of_gguf(std::string_view name) {
    for (const ArchTable* t : all_archs())
        if (name == t->gguf_name) return t;
    return nullptr;
}

const ArchTable* arch_of_hf(std::string_view hf_class, std::string_view model_type) {
    for (const ArchTable* t : all_archs())
        if (hf_class == t->hf_class ||
            (hf_class == "?" && t->hf_type_names_it && model_type == t->hf_model_type))
            return t;
    return nullptr;
}

const ArchTable& arch_of(const ModelConfig& c) {
    if (c.gpt2()) return gpt2_arch();
    return c.qkv_bias ? qwen2_arch() : llama_arch();
}

namespace {

std::string listed(const char* ArchTable::*name, const char* quote) {
    std::string s;
    const auto all = all_archs();
    for (std::size_t i = 0; i < all.size(); ++i)
        s.append(i == 0                ? ""
                 : i + 1 == all.size() ? " and "
                                       : ", ")
            .append(quote)
            .append(all[i]->*name)
            .append(quote);
    return s;
}

}  // namespace

std::string gguf_arch_names() {
    return listed(&ArchTable::gguf_name, "'");
}
std::string hf_arch_names() {
    return listed(&ArchTable::hf_class, "");
}

}  // namespace kvs
