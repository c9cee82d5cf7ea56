#pragma once
// What the fuzz targets share: a check that turns a broken invariant into a crash libFuzzer
// reports (and keeps the input of), and a llama2.c tokenizer built in memory.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/loaders/checkpoint_writer.h"

#define FUZZ_CHECK(cond)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                                 \
        }                                                                                 \
    } while (0)

namespace kvs::fuzz {

// Bytes of a llama2.c tokenizer of exactly `vocab` entries (see core/loaders/checkpoint_writer.h).
inline std::vector<unsigned char> tokenizer_bytes(int vocab,
                                                  const std::vector<std::string>& pieces) {
    return tokenizer_file_bytes(pieces, vocab);
}

}  // namespace kvs::fuzz
