#include "tests/support/hostile_files.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tests/support/test_helpers.h"

namespace fs = std::filesystem;

namespace kvs::test {

const fs::path& good_hf_folder() {
    static const fs::path folder = [] {
        const fs::path dir = temp_dir("hostile-good-hf");
        const std::string model = write_tiny_model(dir);
        const RunResult r = run_cli({"export", "--model", model, "--hf", (dir / "hf").string()});
        if (r.exit_code != 0) {
            std::fprintf(stderr, "export --hf failed: %s\n", r.err.c_str());
            std::abort();
        }
        return dir / "hf";
    }();
    return folder;
}

fs::path hf_folder_with(const fs::path& dir, const std::string& name,
                        const std::map<std::string, std::string>& files) {
    const fs::path out = dir / name;
    fs::create_directories(out);
    for (const auto& e : fs::directory_iterator(good_hf_folder()))
        fs::copy_file(e.path(), out / e.path().filename(), fs::copy_options::overwrite_existing);
    for (const auto& [file, text] : files) {
        if (text.empty())
            fs::remove(out / file);
        else
            write_file(out / file, {text.begin(), text.end()});
    }
    return out;
}

std::string config_with(const std::string& key, const std::string& raw) {
    auto j = nlohmann::json::parse(slurp(good_hf_folder() / "config.json"));
    j.erase(key);
    std::string text = j.dump();
    text.pop_back();  // the closing brace
    return text + ",\"" + key + "\":" + raw + "}";
}

std::string nested_json(int levels) {
    return std::string(std::size_t(levels), '[') + std::string(std::size_t(levels), ']');
}

std::string tokenizer_json_with_added_id(const std::string& id) {
    return "{\"model\":{\"vocab\":{\"a\":0,\"b\":1,\"c\":2}},\"pre_tokenizer\":{\"type\":"
           "\"ByteLevel\"},\"added_tokens\":[{\"id\":" +
           id + ",\"content\":\"x\"}]}";
}

std::string index_naming(const std::string& shard) {
    return "{\"weight_map\":{\"model.embed_tokens.weight\":\"" + shard + "\"}}";
}

}  // namespace kvs::test
