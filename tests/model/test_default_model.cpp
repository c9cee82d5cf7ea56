// Our default model (assets/models/kvscope-tiny.*), checked on the committed files
// through the engine every view uses: it speaks the tutorials' sentences, one of its heads looks
// back at " France" as assets/models/README.md says, and cached and uncached agree on it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string_view>

#include "core/loaders/model_loader.h"
#include "core/session/sampler.h"
#include "core/session/session.h"
#include "kernels/cpu/cpu_backend.h"

using namespace kvs;

namespace {

const Model& tiny() {
    static auto m = open_model("default");
    return *m;
}

// The first step (prefill) of a greedy session: its logits and attention over the prompt.
StepRecord prefill(const std::string& prompt) {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 1;
    Session s(tiny(), be, cfg);
    s.set_prompt(prompt);
    return s.step();
}

int single_token(const std::string& word) {
    // "<s> X" encodes as BOS then the word's own tokens: a lesson word must be exactly one.
    const auto ids = tiny().tokenizer().encode(word.substr(1));
    REQUIRE(ids.size() == 2);
    REQUIRE(tiny().tokenizer().piece(ids[1]) == word);
    return ids[1];
}

// The greedy tokens a session generates after `prompt`, at most n (fewer at the end token).
std::vector<int> greedy_tokens(const std::string& prompt, int n) {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = n;
    Session s(tiny(), be, cfg);
    s.set_prompt(prompt);
    while (!s.finished()) s.step();
    return {s.tokens().begin() + s.prompt_len(), s.tokens().end()};
}

bool is_letter(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0;
}

// How many of `toks` are a single letter that spells part of a longer word: the token before
// or after it continues the same word with no space between them (" g" "i" "r" "l"). The word
// " a" alone is a word, not a spelling.
int letters_inside_words(const std::vector<int>& toks) {
    std::vector<std::string> p;
    for (int t : toks) p.push_back(tiny().tokenizer().piece(t));
    const auto joins = [&](std::size_t a, std::size_t b) {
        return !p[a].empty() && !p[b].empty() && is_letter(p[a].back()) && is_letter(p[b].front());
    };
    int n = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        std::string_view w = p[i];
        while (!w.empty() && w.front() == ' ') w.remove_prefix(1);
        if (w.size() != 1 || !is_letter(w[0])) continue;
        n += (i > 0 && joins(i - 1, i)) || (i + 1 < p.size() && joins(i, i + 1));
    }
    return n;
}

std::string greedy_text(const std::string& prompt, int n) {
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = n;
    Session s(tiny(), be, cfg);
    s.set_prompt(prompt);
    while (!s.finished()) s.step();
    return s.text();
}

}  // namespace

TEST_CASE("the default model is a GQA Llama with the lesson words as single tokens",
          "[default-model]") {
    const ModelConfig& c = tiny().config();
    CHECK(c.n_kv_heads < c.n_heads);
    CHECK(c.seq_len >= 256);
    // Small enough to ship in the repository and the web page: a few MiB of float32 weights.
    CHECK(tiny().parameter_count() * sizeof(float) < 4u * 1024 * 1024);
    for (const char* w : {" nice", " warm", " delicious", " Paris", " France", " capital",
                          " weather", " Today", " is", " so", " The", " of"})
        single_token(w);
}

TEST_CASE("after 'Today's weather is so' the model says nice or warm, hardly delicious",
          "[default-model]") {
    const StepRecord r = prefill("Today's weather is so");
    const int nice = single_token(" nice"), warm = single_token(" warm"),
              delicious = single_token(" delicious");
    CHECK((r.token_out == nice || r.token_out == warm));
    std::vector<float> p(r.logits.size());
    softmax(r.logits, p);
    INFO("P(nice) " << p[nice] << ", P(warm) " << p[warm] << ", P(delicious) " << p[delicious]);
    CHECK(p[delicious] < 0.01f);
    CHECK(p[nice] > 10 * p[delicious]);
    CHECK(p[warm] > 10 * p[delicious]);
    // docs/models.md: " nice", with " warm" next.
    CHECK(r.token_out == nice);
    CHECK(std::count_if(p.begin(), p.end(), [&](float x) { return x > p[warm]; }) == 1);
}

TEST_CASE("'The capital of X is' gives X's capital for at least 8 of 10 corpus countries",
          "[default-model]") {
    CHECK(greedy_text("The capital of France is", 1) == "The capital of France is Paris");
    // Ten of the forty pairs in tools/make_corpus.py's CAPITALS.
    const std::pair<const char*, const char*> pairs[] = {
        {"Japan", "Tokyo"},   {"Italy", "Rome"},    {"Germany", "Berlin"}, {"Egypt", "Cairo"},
        {"Canada", "Ottawa"}, {"Greece", "Athens"}, {"Norway", "Oslo"},    {"Kenya", "Nairobi"},
        {"Peru", "Lima"},     {"Poland", "Warsaw"}};
    int right = 0;
    for (const auto& [country, city] : pairs) {
        const std::string prompt = std::string("The capital of ") + country + " is";
        // A capital may take more than one token: compare the text that follows the prompt.
        const std::string text = greedy_text(prompt, 4);
        const bool ok = text.rfind(prompt + " " + city, 0) == 0;
        UNSCOPED_INFO(prompt << " ->" << text.substr(prompt.size()) << (ok ? "" : "  (wrong)"));
        right += ok;
    }
    CHECK(right >= 8);
}

TEST_CASE("at the last position of 'The capital of France is' a head looks back at France",
          "[default-model]") {
    const StepRecord r = prefill("The capital of France is");
    const auto& ids = r.new_tokens;  // <s> The capital of France is
    const int france =
        static_cast<int>(std::find(ids.begin(), ids.end(), single_token(" France")) - ids.begin());
    REQUIRE(france < static_cast<int>(ids.size()));
    const AttentionRows& a = r.attention;
    const int last = a.rows - 1;
    std::set<std::pair<int, int>> heads;  // (layer, head) whose largest weight is on " France"
    for (int l = 0; l < a.n_layers; ++l)
        for (int h = 0; h < a.n_heads; ++h) {
            const auto row = a.row(l, h, last);
            if (std::max_element(row.begin(), row.end()) - row.begin() == france)
                heads.insert({l, h});
        }
    CHECK(!heads.empty());
    // assets/models/README.md and the GQA lesson point at layer 1, heads 0-3 (kv head 0).
    for (int h = 0; h < 4; ++h) {
        INFO("layer 1, head " << h);
        CHECK(heads.count({1, h}) == 1);
        CHECK(a.row(1, h, last)[france] > 0.9f);
    }
}

TEST_CASE("on the window's default prompt the default model writes words, not letters",
          "[default-model]") {
    // gui/settings.h's prompt, greedy (temperature 0) as the window starts.
    const std::vector<int> toks = greedy_tokens("Once upon a time", 20);
    std::string shown;
    for (int t : toks) shown.append("[").append(tiny().tokenizer().piece(t)).append("]");
    INFO(shown);
    CHECK(toks.size() == 20);
    CHECK(letters_inside_words(toks) <= 2);
}

TEST_CASE("the default model's next-token choices leave sampling something to draw",
          "[default-model]") {
    // Along the window's default run, how many steps keep more than one token in the top-p 0.9
    // nucleus the sampler draws from (gui/state/settings.h: top-p 0.9).
    CpuBackend be;
    SessionConfig cfg;
    cfg.max_new_tokens = 20;
    cfg.capture.attention = false;
    Session s(tiny(), be, cfg);
    s.set_prompt("Once upon a time");
    int steps = 0, open = 0;
    while (!s.finished()) {
        const StepRecord& r = s.step();
        std::vector<float> p(r.logits.size());
        softmax(r.logits, p);
        std::sort(p.begin(), p.end(), std::greater<>());
        float mass = 0;
        int nucleus = 0;
        while (mass < 0.9f) mass += p[nucleus++];
        ++steps;
        open += nucleus > 1;
    }
    INFO(open << " of " << steps << " steps have more than one token in the top-p 0.9 nucleus");
    CHECK(steps == 20);
    CHECK(open >= 5);
}

TEST_CASE("cached and uncached generation agree on the default model", "[default-model]") {
    CpuBackend be;
    for (const std::string prompt :
         {"Today's weather is so", "The capital of France is", "Lily went to the park"}) {
        SessionConfig cfg;
        cfg.max_new_tokens = 100;
        cfg.stop_at_end_token = false;
        cfg.capture.attention = false;
        cfg.capture.kv_rows = false;
        Session cached(tiny(), be, cfg);
        cfg.mode = CacheMode::Uncached;
        Session uncached(tiny(), be, cfg);
        cached.set_prompt(prompt);
        uncached.set_prompt(prompt);
        double worst = 0;
        while (!cached.finished()) {
            const StepRecord& a = cached.step();
            const StepRecord& b = uncached.step();
            for (std::size_t i = 0; i < a.logits.size(); ++i)
                worst = std::max(worst, static_cast<double>(std::fabs(a.logits[i] - b.logits[i])));
        }
        INFO(prompt << ": largest logit difference " << worst);
        CHECK(cached.tokens() == uncached.tokens());
        CHECK(cached.generated() == 100);
        // On the CPU the same arithmetic in the same order: not close, equal (README: "0 on the
        // CPU").
        CHECK(worst == 0);
    }
}
