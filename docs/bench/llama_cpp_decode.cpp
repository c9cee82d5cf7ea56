// llama.cpp's decode speed on a GGUF file, measured the way docs/bench/cpu-perf-quiet-2cpu.txt
// measures kvscope-cli generate and run.c: one thread, F32 KV cache, greedy, the prompt in one
// llama_decode call, then one llama_decode call per new token. llama.cpp is the prebuilt library
// of npm's node-llama-cpp (scripts/peer.sh installs it under build/peer and clones the source
// bundle inside the package for llama.h); this program is ours, not part of the build.
//
//   P=build/peer; B=$P/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
//   g++ -O2 -std=c++20 -I$P/llama-src/include -I$P/llama-src/ggml/include \
//       docs/bench/llama_cpp_decode.cpp $B/libllama.v0.5.0.so $B/libggml.v0.5.0.so \
//       $B/libggml-base.so -Wl,-rpath,$B -o /tmp/llama_cpp_decode
//   /tmp/llama_cpp_decode $B model.gguf "Once upon a time" 252
//
// Prints one line: prompt tokens, the prompt's decode (time to the first new token's logits),
// decode tok/s over the new tokens after the first (each a one-token llama_decode plus the argmax,
// as kvscope's decode figure counts its cached steps), and a hash of the token ids, so a run can
// be matched against kvscope's greedy text.
#include <ggml-backend.h>
#include <llama.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void quiet_log(ggml_log_level, const char*, void*) {}

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: llama_cpp_decode BINS_DIR MODEL.gguf PROMPT N_NEW\n");
        return 2;
    }
    const std::string prompt = argv[3];
    const int n_new = std::atoi(argv[4]);
    llama_log_set(quiet_log, nullptr);
    ggml_backend_load_all_from_path(argv[1]);  // the CPU backend is a separately loaded library
    llama_backend_init();
    const double t_load = now_s();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model* model = llama_model_load_from_file(argv[2], mp);
    if (!model) {
        std::fprintf(stderr, "llama_cpp_decode: cannot load %s\n", argv[2]);
        return 1;
    }
    const llama_vocab* vocab = llama_model_get_vocab(model);
    std::vector<llama_token> toks(prompt.size() + 8);
    const int n_prompt = llama_tokenize(vocab, prompt.data(), static_cast<int>(prompt.size()),
                                        toks.data(), static_cast<int>(toks.size()), true, false);
    if (n_prompt <= 0) return 1;
    toks.resize(n_prompt);
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = static_cast<std::uint32_t>(n_prompt + n_new + 1);
    cp.n_batch = cp.n_ubatch = cp.n_ctx;
    cp.n_threads = cp.n_threads_batch = 1;
    cp.type_k = cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;
    llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) return 1;
    const double load_s = now_s() - t_load;
    const int V = llama_vocab_n_tokens(vocab);
    auto argmax = [&] {
        const float* lg = llama_get_logits_ith(ctx, -1);
        return static_cast<llama_token>(std::max_element(lg, lg + V) - lg);
    };
    // The prompt: one call, as kvscope's prefill.
    const double t0 = now_s();
    if (llama_decode(ctx, llama_batch_get_one(toks.data(), n_prompt))) return 1;
    llama_token next = argmax();
    const double prefill_s = now_s() - t0;
    std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over the ids
    auto mix = [&](llama_token t) { hash = (hash ^ std::uint64_t(t)) * 1099511628211ull; };
    mix(next);
    int made = 1;
    const double t1 = now_s();
    while (made < n_new && !llama_vocab_is_eog(vocab, next)) {
        if (llama_decode(ctx, llama_batch_get_one(&next, 1))) return 1;
        next = argmax();
        mix(next);
        ++made;
    }
    const double decode_s = now_s() - t1;
    std::printf(
        "llama.cpp: %d prompt tokens, %d new; load %.3f s; prefill %.3f ms; decode %.1f "
        "tok/s over %d steps; ids hash %016llx\n",
        n_prompt, made, load_s, prefill_s * 1e3, made > 1 ? (made - 1) / decode_s : 0.0, made - 1,
        static_cast<unsigned long long>(hash));
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
