// llama.cpp's own quantizer on a GGUF file (its C API, llama_model_quantize, in the prebuilt
// library of npm's node-llama-cpp that scripts/peer.sh installs): how docs/bench/kquants.sh makes
// the Q8_0, Q4_K_M, Q5_K_M and Q6_K files it compares kvscope and llama.cpp on, from an F32 GGUF
// that `kvscope-cli export --gguf` wrote. Ours, not part of the build; how to build and run it
// (an absolute rpath, so it runs from any folder) is in docs/kquants.md, "Making a K-quant file",
// which the docs test runs in the peer step.
//
// Types: q8_0 (ftype 7), q4_k_m (15), q5_k_m (17), q6_k (18), q2_k (10), q3_k_m (12). Rows must
// be whole 256-value super-blocks for the K-quants (an 85M-shaped model's are); for other rows
// llama.cpp's quantizer falls back, Q4_K to Q5_0, Q5_K to Q5_1 and Q6_K to Q8_0 (all three read
// by kvscope), Q2_K and Q3_K to IQ4_NL (which kvscope does not read), and to F16 where the rows
// are not whole blocks of those either.
#include <ggml-backend.h>
#include <llama.h>

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: llama_cpp_quantize BINS_DIR IN.gguf OUT.gguf TYPE\n");
        return 2;
    }
    const std::string type = argv[4];
    const struct {
        const char* name;
        llama_ftype ftype;
    } kTypes[] = {{"q8_0", LLAMA_FTYPE_MOSTLY_Q8_0},     {"q4_k_m", LLAMA_FTYPE_MOSTLY_Q4_K_M},
                  {"q5_k_m", LLAMA_FTYPE_MOSTLY_Q5_K_M}, {"q6_k", LLAMA_FTYPE_MOSTLY_Q6_K},
                  {"q2_k", LLAMA_FTYPE_MOSTLY_Q2_K},     {"q3_k_m", LLAMA_FTYPE_MOSTLY_Q3_K_M}};
    llama_model_quantize_params qp = llama_model_quantize_default_params();
    bool known = false;
    for (const auto& t : kTypes)
        if (type == t.name) qp.ftype = t.ftype, known = true;
    if (!known) {
        std::fprintf(stderr, "llama_cpp_quantize: unknown type %s\n", type.c_str());
        return 2;
    }
    qp.nthread = 2;
    ggml_backend_load_all_from_path(argv[1]);
    llama_backend_init();
    if (llama_model_quantize(argv[2], argv[3], &qp) != 0) {
        std::fprintf(stderr, "llama_cpp_quantize: llama_model_quantize failed\n");
        return 1;
    }
    std::printf("%s: %s from %s\n", argv[3], type.c_str(), argv[2]);
    return 0;
}
