// What a reader sees of a lesson's checks and its engine: every @expect as a sentence in English
// and Chinese (lessonlib/metric_words.h), the engine's English messages in Chinese
// (lessonlib/engine_messages.h), and `kvscope-cli lesson --lang zh` reporting in Chinese.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "core/loaders/model_loader.h"
#include "core/session/session.h"
#include "kernels/cpu/cpu_backend.h"
#include "lessonlib/attention_row_words.h"
#include "lessonlib/engine_messages.h"
#include "lessonlib/finish_words.h"
#include "lessonlib/lesson_expr.h"
#include "lessonlib/lesson_files.h"
#include "lessonlib/lesson_metrics.h"
#include "lessonlib/lesson_parser.h"
#include "lessonlib/lesson_serve.h"
#include "lessonlib/metric_words.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

Expectation parse_check(const std::string& text) {
    return Expectation::parse(text, validate_lesson_metric);
}

std::string words(const std::string& check, ReportLang l) {
    return check_in_words(parse_check(check), l);
}

// The @scale fields, as lesson_metrics' help lists them after "fits" is the last.
std::vector<std::string> scale_fields() {
    for (const auto& m : lesson_metrics()) {
        if (std::string(m.name) != "scale") continue;
        std::string help = m.help;
        help = help.substr(help.find(": ") + 2);
        std::vector<std::string> out;
        std::size_t at = 0;
        while (at < help.size()) {
            const std::size_t sp = help.find(' ', at);
            out.push_back(help.substr(at, sp == std::string::npos ? std::string::npos : sp - at));
            if (sp == std::string::npos) break;
            at = sp + 1;
        }
        return out;
    }
    return {};
}

}  // namespace

TEST_CASE("every metric an @expect can read has words in English and Chinese", "[lesson][words]") {
    for (const auto& m : lesson_metrics()) {
        INFO(m.name);
        std::vector<std::string> args(static_cast<std::size_t>(m.min_args), "1");
        std::vector<const double*> nums(args.size(), nullptr);
        for (ReportLang l : {ReportLang::En, ReportLang::Zh})
            CHECK_FALSE(metric_phrase(m.name, args, nums, l).empty());
        if (m.session)
            for (const char* twin : {"uncached_", "bidirectional_"})
                CHECK_FALSE(
                    metric_phrase(std::string(twin) + m.name, args, nums, ReportLang::Zh).empty());
    }
    const auto fields = scale_fields();
    REQUIRE(fields.size() > 10);
    for (const auto& f : fields) {
        INFO(f);
        const std::vector<std::string> args = {"\"" + f + "\""};
        const std::vector<const double*> nums = {nullptr};
        CHECK(metric_phrase("scale", args, nums, ReportLang::En).find("the figure") ==
              std::string::npos);
        CHECK(metric_phrase("scale", args, nums, ReportLang::Zh).find("数值") == std::string::npos);
    }
}

TEST_CASE("every figure of @serve has words in both languages and a value", "[lesson][words]") {
    LessonServe none;  // a run of nothing: every figure still reads (0, the block size aside)
    none.run.stats.block_size = 16;
    REQUIRE(serve_fields().size() > 20);
    for (const ServeField& f : serve_fields()) {
        INFO(f.name);
        // Built by appending: GCC 12's -Wrestrict misreads `"\"" + std::string(...)` here.
        std::string quoted(1, '"');
        quoted.append(f.name).push_back('"');
        const std::vector<std::string> args = {quoted};
        const std::vector<const double*> nums = {nullptr};
        CHECK(metric_phrase("serve", args, nums, ReportLang::En).find("the figure") ==
              std::string::npos);
        CHECK(metric_phrase("serve", args, nums, ReportLang::Zh).find("数值") == std::string::npos);
        CHECK(serve_field(none, f.name) == (std::string(f.name) == "block_size" ? 16 : 0));
    }
    CHECK_THROWS_AS(serve_field(none, "colour"), Error);
}

TEST_CASE("a check reads as a sentence: operators, brackets, rows and positions",
          "[lesson][words]") {
    CHECK(words("token == \"nice\"", ReportLang::En) == "The chosen token is \"nice\"");
    // Chinese: a word is 是 a value, in Chinese quotation marks.
    CHECK(words("token == \"nice\"", ReportLang::Zh) == "这一步选中的 token 是“nice”");
    CHECK(words("logit(\"warm\") - logit(\"delicious\") == 14.9 within 1e-4", ReportLang::En) ==
          "The logit of \"warm\" minus the logit of \"delicious\" is 14.9, to within 0.0001");
    CHECK(words("logit(\"warm\") - logit(\"delicious\") == 14.9 within 1e-4", ReportLang::Zh) ==
          "“warm”的 logit 减“delicious”的 logit 等于 14.9（误差不超过 0.0001）");
    // Queries and keys are named by their positions, as written (from 1); -1 the newest / last.
    CHECK(words("weight(0, 3, 2, 1) == 0.5", ReportLang::En) ==
          "The weight layer 0, head 3 gives the query at position 2 on the key at position 1 is "
          "0.5");
    CHECK(words("weight(0, 3, 2, 1) == 0.5", ReportLang::Zh) ==
          "第 0 层头 3 的位置 2 的查询给位置 1 的键的权重等于 0.5");
    CHECK(words("head(0, 2, -1) == 10", ReportLang::Zh) == "第 0 层头 2 对最新的查询的输出等于 10");
    // A sum inside a product keeps its brackets; the twin of @cache compare is named.
    CHECK(words("uncached_attn_flops == attn_flops * (kv_len + 1) / 2", ReportLang::En) ==
          "Attention's FLOP count without the cache is attention's FLOP count times (the number "
          "of K/V rows in the cache plus 1) divided by 2");
    // The session without the causal mask (@cache bidirectional) is named for what it is.
    CHECK(words("bidirectional_kv_delta_k(1) > 0", ReportLang::En) ==
          "The largest move of layer 1's earlier K rows after one token more without the causal "
          "mask is more than 0");
    CHECK(words("bidirectional_kv_delta_k(1) > 0", ReportLang::Zh) ==
          "去掉因果掩码时这一步多一个 token 后第 1 层更早 K 行的最大变化大于 0");
    // Chinese: no space between Chinese words, one next to a number; × for a product.
    CHECK(words("time(0) < 2 * uncached_time(0)", ReportLang::Zh) ==
          "第 0 步的实测时间小于 2 × 不用缓存时第 0 步的实测时间");
    CHECK(words("kv_bytes == n_layers * dim + prompt_len", ReportLang::Zh) ==
          "这一步之后缓存占的字节数等于层数 × 残差宽度加提示词的 token 数");
    CHECK(words("head(0, 3, 3) == 31/3 within 1e-6", ReportLang::En) ==
          "The output of layer 0, head 3 for the query at position 3 is 31/3, to within 1e-06");
    // Named values in the reader's words, never English quoted inside Chinese.
    CHECK(words("scale(\"decode_bound\") == \"memory\"", ReportLang::Zh) ==
          "一个解码步的瓶颈是访存带宽");
    CHECK(words("finish == \"end token\"", ReportLang::Zh) == "生成停止的原因是遇到结束 token");
    CHECK(words("\"decode\" == phase(1)", ReportLang::Zh) == "解码是第 1 步所处的阶段");
    CHECK(words("finish == \"end token\"", ReportLang::En) ==
          "Why generation stopped is the end token");
}

TEST_CASE("every shipped check has words in its lesson's language, every metric named",
          "[lesson][words]") {
    for (const std::string lang : {"en", "zh"})
        for (const auto& f : list_lessons(lang)) {
            const Lesson l = load_lesson(f.path);
            CHECK(l.lang == report_lang_from_code(lang));
            for (const auto& st : l.steps)
                for (const auto& d : st.directives) {
                    if (d.kind != DirectiveKind::Expect) continue;
                    const std::string s = check_in_words(d.expect, l.lang);
                    INFO(f.path << ": " << d.text << " -> " << s);
                    CHECK_FALSE(s.empty());
                    CHECK(s.find('?') == std::string::npos);
                    CHECK(s.find('_') == std::string::npos);  // no metric left as its name
                }
        }
}

TEST_CASE("why a generation stopped: one table of words, both languages, every reason",
          "[lesson][words]") {
    for (FinishReason r : {FinishReason::None, FinishReason::EndToken, FinishReason::ContextFull,
                           FinishReason::LengthLimit}) {
        INFO(finish_reason_name(r));
        // The English label is the trace's word; each form has its Chinese, none left English.
        CHECK(std::string(finish_words(r, ReportLang::En)) == finish_reason_name(r));
        for (const char* zh :
             {finish_words(r, ReportLang::Zh), finish_value_words(r, ReportLang::Zh),
              finish_sentence(r, ReportLang::Zh)}) {
            const std::string t = zh;
            CHECK(std::any_of(t.begin(), t.end(), [](char c) { return (c & 0x80) != 0; }));
            CHECK(std::string(zh) != finish_words(r, ReportLang::En));
        }
        // The sentence takes the context's length exactly where the context is why, in both.
        const bool takes = r == FinishReason::ContextFull;
        for (ReportLang l : {ReportLang::En, ReportLang::Zh})
            CHECK((std::string(finish_sentence(r, l)).find("%d") != std::string::npos) == takes);
        // A check's value in words reads the same table: finish == "length limit".
        FinishReason back = FinishReason::None;
        REQUIRE(finish_reason_named(finish_reason_name(r), back));
        CHECK(back == r);
        CHECK(value_words("finish", "", LessonValue::string(finish_reason_name(r)),
                          ReportLang::Zh) == finish_value_words(r, ReportLang::Zh));
    }
    FinishReason none = FinishReason::None;
    CHECK(!finish_reason_named("the end", none));
}

TEST_CASE("one key of an attention row as text: the CLI's explain table writes its cells",
          "[lesson][words][explain]") {
    CHECK(attention_number(0.123456f) == "0.1235");
    CHECK(attention_number(-0.0f) == "0");
    CHECK(attention_number(-INFINITY) == "-inf");
    CHECK(attention_number(NAN) == "none");
    const float v[] = {1, 2.5f};
    CHECK(attention_numbers(v, 2) == "[1, 2.5]");
    CHECK(std::string(key_source_words(KvSource::Recomputed, ReportLang::En)) == "recomputed");

    // The last query of a prefill, layer 0 head 1: each key's row of `kvscope-cli explain`
    // holds key_cells' words, in order (the lesson log and the window take the same cells).
    const auto m = open_model("default");
    CpuBackend be;
    Session s(*m, be, SessionConfig{});
    s.set_prompt("The cat sat");
    s.step();
    const auto e = explain_query(s.trace(), m->config(), 0, 0, 1, -1, nullptr);
    REQUIRE(e);
    const auto r = test::run_cli({"explain", "--model", "default", "--backend", "cpu", "--prompt",
                                  "The cat sat", "--layer", "0", "--head", "1"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> rows;
    for (std::size_t a = 0, b; a < r.out.size(); a = b + 1) {
        b = std::min(r.out.find('\n', a), r.out.size());
        const std::string line = r.out.substr(a, b - a);
        if (line.size() > 8 && line.find('"') == 7)
            rows.push_back(line);  // a key's row: '     1 "<s>" ...'
    }
    REQUIRE(static_cast<int>(rows.size()) == e->n_keys);
    for (int j = 0; j < e->n_keys; ++j) {
        const KeyCells c = key_cells(*e, j, ReportLang::En);
        INFO(rows[j]);
        std::istringstream words(rows[j].substr(rows[j].rfind('"') + 1));
        std::string source, raw, scaled, weight;
        words >> source >> raw >> scaled;
        if (c.masked) words >> weight;  // the mask column's -inf
        words >> weight;
        CHECK(std::stoi(rows[j]) == c.position);
        CHECK(source == c.source);
        CHECK(raw == c.raw);
        CHECK(scaled == c.scaled);
        CHECK(weight == c.weight);
    }
}

TEST_CASE("the engine's messages in Chinese, slots translated in turn", "[lesson][words]") {
    for (const auto& m : engine_message_forms()) {
        INFO(m.en);
        const auto count = [](std::string_view s) {
            int n = 0;
            for (std::size_t at = s.find("%s"); at != std::string_view::npos;
                 at = s.find("%s", at + 2))
                ++n;
            return n;
        };
        CHECK(count(m.en) == count(m.zh));
    }
    const std::string note =
        "CPU backend: no usable CUDA device (this build has no CUDA backend (nvcc was not found "
        "when it was configured))";
    CHECK(engine_message(note, ReportLang::En) == note);
    CHECK(engine_message(note, ReportLang::Zh) ==
          "CPU 后端：没有可用的 CUDA 设备（这个版本没有 CUDA 后端（配置时没有找到 nvcc））");
    CHECK(engine_message("/x/m.bin: cannot open: No such file or directory; showing toy instead",
                         ReportLang::Zh) == "/x/m.bin：无法打开：没有这个文件或目录；改为显示 toy");
    CHECK(engine_message("something new", ReportLang::Zh) == "something new");
}

TEST_CASE("kvscope-cli lesson --lang zh reports in Chinese, a lesson in lessons/zh does by itself",
          "[lesson][cli][words]") {
    const auto dir = test::temp_dir("lesson-zh");
    const std::string text =
        "# Good\n## Prefill\n@model toy\n@prompt Today weather is so\n"
        "@prefill\n@expect token == \"nice\"\n@expect rows == 5\n";
    test::write_file(dir / "good.md", std::vector<unsigned char>(text.begin(), text.end()));
    auto r = test::run_cli({"lesson", (dir / "good.md").string(), "--backend", "cpu"});
    CHECK(r.out.find("The chosen token is \"nice\"") != std::string::npos);
    CHECK(r.out.find("result: 2 checks, 1 passed, 1 failed") != std::string::npos);
    r = test::run_cli({"lesson", (dir / "good.md").string(), "--backend", "cpu", "--lang", "zh"});
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("通过  @expect token == \"nice\"") != std::string::npos);
    CHECK(r.out.find("这一步选中的 token 是“nice”") != std::string::npos);
    CHECK(r.out.find("失败  @expect rows == 5") != std::string::npos);
    CHECK(r.out.find("实际是 4，对照的是 5") != std::string::npos);
    CHECK(r.out.find("第 0 步，预填充（用缓存）：4 个提示词 token") != std::string::npos);
    CHECK(r.out.find("CPU 后端（按设置）") != std::string::npos);
    CHECK(r.out.find("结果：共 2 项检查，1 项通过，1 项失败") != std::string::npos);

    const auto zh = list_lessons("zh");
    REQUIRE_FALSE(zh.empty());
    r = test::run_cli({"lesson", zh[0].path, "--backend", "cpu", "--quiet"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("结果：") != std::string::npos);
    CHECK(r.out.find("result:") == std::string::npos);
}
