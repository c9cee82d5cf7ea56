// kvscope-cli mask: why a decoder-only model can cache K and V at all. The same model runs with
// its causal mask and without it (an encoder's attention, as BERT and T5 have), both recomputing
// every token at every step (core/session/cache_view.h, bidirectional), the bidirectional run on
// the causal one's tokens; each decode step measures, per layer, how far the earlier tokens' K and
// V rows moved when one token was appended (core/session/session.h). Causal: 0 in every layer, so a
// cache of them is exact. Bidirectional: 0 in layer 0, whose K/V come from the token embeddings
// alone, and above 0 from layer 1 on, so a cache of them would be stale.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/session/workbench.h"
#include "core/util/error.h"
#include "core/util/json_writer.h"
#include "core/util/utf8.h"

namespace kvs::cli {

std::vector<OptionSpec> mask_options() {
    auto specs = model_options();
    specs.push_back(timing_option());
    specs.insert(specs.end(),
                 {prompt_option("prompt text (default empty: BOS only)"),
                  cmdline::new_tokens_option(
                      "tokens to generate: the prefill's, then one per decode step;\nthe last "
                      "step's move is shown (default 2)"),
                  // The older spelling: N decode steps after the prefill, -n N+1.
                  OptionSpec{.name = "steps",
                             .value_name = "N",
                             .help = "",
                             .hidden = true,
                             .value = cmdline::whole_in(1, 1 << 20)},
                  {"json", "", "print JSON instead of text"}});
    return specs;
}

int cmd_mask(int argc, char** argv) {
    const Args a = model_args("mask", mask_options(), argc, argv);
    if (a.help()) {
        std::fputs(
            "Causal against bidirectional attention on the same model, both without the KV "
            "cache: per layer, how far the earlier tokens' K and V rows move when one token is "
            "appended (measured max |dK| and |dV|).\n",
            stdout);
        std::fputs(a.usage().c_str(), stdout);
        return 0;
    }
    Opened o = open_from(a);
    const std::shared_ptr<const Model> model = std::move(o.model);
    const Model& m = *model;
    if (m.is_toy())
        throw Error(
            "mask: the toy's heads are rules with no K vectors to unmask; use a model "
            "with q and K vectors (the default model)");
    const std::string prompt = a.str("prompt");
    const auto ids = m.tokenizer().encode(prompt);
    if (a.has("steps") && a.has("max-new-tokens"))
        a.fail("--steps N and --max-new-tokens N+1 say the same: give one");
    const int room = std::max(1, m.config().seq_len - int(ids.size()));
    const int steps = a.has("steps") ? a.integer_within("steps", 1, 1, room,
                                                        "the decode steps "
                                                        "the context leaves after the prompt")
                                     : std::max(2, max_new_from(a, m, ids, 2)) - 1;
    if (a.has("max-new-tokens") && a.integer("max-new-tokens", 2) < 2)
        a.fail(
            "--max-new-tokens 1 is the prefill alone: the move is measured at a decode step "
            "(-n 2 or more)");
    SessionConfig cfg;
    cfg.timing = timing_from(a);
    cfg.max_new_tokens = steps + 1;
    cfg.stop_at_end_token = false;  // the steps asked for are taken even past an end token
    cfg.capture.attention = false;
    cfg.capture.vectors = false;
    cfg.capture.op_log = false;
    Workbench bench(*o.backend.backend, cfg);
    bench.set_view(CacheView::Bidirectional);
    bench.open(model, {});
    bench.set_prompt(prompt);  // empty: BOS alone
    for (int k = 0; k <= steps; ++k) bench.step();
    const StepRecord& c = bench.session(0).trace().back();
    const StepRecord& b = bench.session(1).trace().back();
    const int L = m.config().n_layers;
    if (a.has("json")) {
        JsonWriter j(std::cout);
        j.begin_object();
        j.field("kvscope_mask", 1).field("model", m.name());
        j.field("step", c.index).field("keys", c.kv.len);
        j.field("token_appended", m.tokenizer().piece(c.new_tokens.back()));
        for (const auto* r : {&c, &b}) {
            j.key(mask_name(r->mask)).begin_object();
            j.key("max_delta_k")
                .floats(std::vector<float>(r->kv_delta_k.begin(), r->kv_delta_k.end()));
            j.key("max_delta_v")
                .floats(std::vector<float>(r->kv_delta_v.begin(), r->kv_delta_v.end()));
            j.field("forward_s", r->forward_seconds).field("flops", r->counts.flops);
            j.end_object();
        }
        j.end_object();
        std::cout << '\n';
        return 0;
    }
    std::printf(
        "mask: %s on %s, step %d: the earlier %d tokens' K/V rows after \"%s\" was "
        "appended, both without the KV cache (measured)\n",
        escape_for_one_line(m.name()).c_str(), o.backend.backend->device().c_str(), c.index,
        c.kv.len - 1, escape_for_one_line(m.tokenizer().piece(c.new_tokens.back())).c_str());
    std::printf("  %5s %14s %14s %14s %14s\n", "layer", "causal |dK|", "causal |dV|", "bidir. |dK|",
                "bidir. |dV|");
    for (int l = 0; l < L; ++l)
        std::printf("  %5d %14.4g %14.4g %14.4g %14.4g\n", l, c.kv_delta_k.at(l),
                    c.kv_delta_v.at(l), b.kv_delta_k.at(l), b.kv_delta_v.at(l));
    std::printf(
        "  causal: no earlier row moves, so a cache of them is exact. Bidirectional: layer 0's "
        "K/V come from the token embeddings alone and do not move; from layer 1 on every row "
        "takes in the new token through attention, so a cache of them would be stale.\n");
    return 0;
}

}  // namespace kvs::cli
