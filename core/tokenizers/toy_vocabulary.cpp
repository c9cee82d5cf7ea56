#include "core/tokenizers/toy_vocabulary.h"

namespace kvs {

// Values: Today, weather, is, so are the tutorial's (10, 20, 1, 5); the rest are ours. Function
// words carry little ("and" 2, "." 0), like "is" and "so" in the tutorial.
//
// Projection columns: [even, last, first, all] head outputs.
//  - "last" says where in the phrase we are (the value of the word just seen): after "so" (5)
//    an adjective, after "nice" (8) "and", after "and" (2) another adjective, after "warm" (14)
//    the end. The words that compete there have last-weights 0 < 1 < 2 < 3 (warm, nice, and, .),
//    so each wins a band of that value: warm below 4, nice 4..7, "and" 7..(11 + 0.2 x even),
//    "." above (with Today first: the "first" column then adds 10 x its weight).
//  - "first" (the sentence's opening word, Today = 10) sets where those bands lie.
//  - "even" carries the weather (weather = 20 sits at an even position): weather words get
//    +0.2, "delicious" -0.2, which is what puts "delicious" far below "nice" and "warm".
//  - "all" (the mean of the sentence) nudges the continuation words equally.
// With "Today weather is so" the context is [12.5, 5, 10, 9]: nice 14.4, warm 13.4, and 12.4,
// delicious -1.5; greedy decoding then gives "nice and warm ." and stops at ".".
constexpr ToyWord kWords[] = {
    //  text       value   even  last  first   all
    {"Today", 10.0f, {0.0f, -0.2f, 0.0f, 0.0f}},     {"weather", 20.0f, {0.0f, -0.2f, 0.2f, 0.0f}},
    {"is", 1.0f, {0.0f, 0.2f, 0.2f, 0.0f}},          {"so", 5.0f, {0.0f, 0.2f, 0.2f, 0.0f}},
    {"nice", 8.0f, {0.2f, 1.0f, 0.6f, 0.1f}},        {"warm", 14.0f, {0.2f, 0.0f, 1.0f, 0.1f}},
    {"and", 2.0f, {0.2f, 2.0f, -0.1f, 0.1f}},        {"cold", 15.0f, {0.2f, 0.0f, 0.5f, 0.1f}},
    {"delicious", 12.0f, {-0.2f, 0.2f, 0.0f, 0.0f}}, {".", 0.0f, {0.0f, 3.0f, -1.2f, 0.1f}},
};

std::span<const ToyWord> toy_vocabulary() {
    return kWords;
}

}  // namespace kvs
