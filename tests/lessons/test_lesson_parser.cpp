// The lesson format: what a good file parses to, and that every mistake is reported with the
// file and line it is on.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "core/util/error.h"
#include "lessonlib/lesson_parser.h"
#include "tests/support/test_helpers.h"

using namespace kvs;

namespace {

const char* kGood = R"(# Attention by hand

Some intro text.

## Four tokens
The prompt has four words.
@model toy
@prompt Today weather is so

```
@prefill   <- inside a code block: prose, not a directive
```
\@ at the start of prose, escaped.

## Prefill
@prefill
@decode 3
@decode all
@decode
@cache compare
@highlight layer=0 head=3
@show attention
@expect head(0, 3, 2) == 31/3 within 1e-6
@batch sizes=1,2,8 decode=4 repeats=2 prompts="The capital of France is" | "It is sunny"
@scale model=llama2-7b context=4096 gpu=h100-sxm batch=2 dtype=bf16
@limit 5
@whatif
@reset
)";

// The error message `text` (named lessons/en/03-decode.md) produces.
std::string error_of(const std::string& text) {
    try {
        parse_lesson(text, "lessons/en/03-decode.md");
    } catch (const Error& e) {
        return e.what();
    }
    return "(parsed without error)";
}

std::string step_with(const std::string& directive_line) {
    return "# T\n\n## S\nprose\n" + directive_line + "\n";  // the directive is on line 5
}

}  // namespace

TEST_CASE("a lesson parses into title, intro, steps and directives", "[lesson]") {
    const Lesson l = parse_lesson(kGood, "good.md");
    CHECK(l.title == "Attention by hand");
    CHECK(l.intro == "Some intro text.");
    REQUIRE(l.steps.size() == 2);
    CHECK(l.steps[0].title == "Four tokens");
    CHECK(l.steps[0].line == 5);
    // Directives are taken out of the prose; code blocks and escaped '@' stay prose.
    CHECK(l.steps[0].prose.find("The prompt has four words.") != std::string::npos);
    CHECK(l.steps[0].prose.find("@model") == std::string::npos);
    CHECK(l.steps[0].prose.find("@prefill   <- inside a code block") != std::string::npos);
    CHECK(l.steps[0].prose.find("\n@ at the start of prose, escaped.") != std::string::npos);
    REQUIRE(l.steps[0].directives.size() == 2);
    CHECK(l.steps[0].directives[0].kind == DirectiveKind::Model);
    CHECK(l.steps[0].directives[0].arg == "toy");
    CHECK(l.steps[0].directives[0].line == 7);
    CHECK(l.steps[0].directives[1].arg == "Today weather is so");

    const auto& d = l.steps[1].directives;
    REQUIRE(d.size() == 13);
    CHECK(d[0].kind == DirectiveKind::Prefill);
    CHECK((d[1].kind == DirectiveKind::Decode && d[1].n == 3));
    CHECK(d[2].n == -1);  // all
    CHECK(d[3].n == 1);   // bare @decode is one step
    CHECK(d[4].cache == CacheView::Compare);
    CHECK((d[5].n == 0 && d[5].head == 3));
    CHECK(d[6].arg == "attention");
    CHECK(d[7].kind == DirectiveKind::Expect);
    CHECK(d[7].text == "expect head(0, 3, 2) == 31/3 within 1e-6");
    CHECK(d[8].batch.sizes == std::vector<int>{1, 2, 8});
    CHECK(d[8].batch.decode_steps == 4);
    CHECK(d[8].batch.repeats == 2);
    CHECK(d[8].batch.prompts ==
          std::vector<std::string>{"The capital of France is", "It is sunny"});
    CHECK(d[9].scale.model == "llama2-7b");
    CHECK(d[9].scale.gpu == "h100-sxm");
    CHECK(d[9].scale.context == 4096);
    CHECK(d[9].scale.batch == 2);
    CHECK(d[9].scale.bytes_per_value == 2);
    CHECK((d[10].kind == DirectiveKind::Limit && d[10].n == 5));
    CHECK(d[11].kind == DirectiveKind::WhatIf);
    CHECK(d[12].kind == DirectiveKind::Reset);
}

TEST_CASE("a quoted prompt keeps its spaces, CRLF files parse", "[lesson]") {
    const Lesson l = parse_lesson("# T\r\n## S\r\n@prompt \" Paris\"\r\n@decode 2\r\n", "crlf.md");
    REQUIRE(l.steps.size() == 1);
    CHECK(l.steps[0].directives[0].arg == " Paris");
    CHECK(l.steps[0].directives[1].n == 2);
}

TEST_CASE("lesson errors name the file and the line", "[lesson]") {
    // The example from the issue, with a suggestion.
    CHECK(error_of(step_with("@decod 3")) ==
          "lessons/en/03-decode.md:5: unknown directive '@decod' (did you mean @decode?)");
    CHECK(error_of(step_with("@frobnicate")) ==
          "lessons/en/03-decode.md:5: unknown directive '@frobnicate'");
    CHECK(error_of(step_with("@decode three")) ==
          "lessons/en/03-decode.md:5: @decode takes a number of steps (1 or more) or 'all', not "
          "'three'");
    CHECK(error_of(step_with("@decode 0")).starts_with("lessons/en/03-decode.md:5: @decode"));
    CHECK(error_of(step_with("@cache maybe")) ==
          "lessons/en/03-decode.md:5: @cache takes on, off, compare or bidirectional, not 'maybe'");
    CHECK(error_of(step_with("@prefill now")) ==
          "lessons/en/03-decode.md:5: @prefill takes no arguments");
    CHECK(error_of(step_with("@model")).starts_with("lessons/en/03-decode.md:5: @model needs"));
    CHECK(error_of(step_with("@prompt")) == "lessons/en/03-decode.md:5: @prompt needs text");
    CHECK(error_of(step_with("@limit -2")).starts_with("lessons/en/03-decode.md:5: @limit"));
    CHECK(error_of(step_with("@highlight layer=0")) == "lessons/en/03-decode.md:5: missing head=N");
    CHECK(error_of(step_with("@highlight layer=x head=1")) ==
          "lessons/en/03-decode.md:5: layer=x is not a whole number in 0..1024");
    CHECK(error_of(step_with("@highlight layer=0 head=1 row=2")) ==
          "lessons/en/03-decode.md:5: unknown key 'row' (known: layer, head)");
    CHECK(error_of(step_with("@explain 0 0")) ==
          "lessons/en/03-decode.md:5: @explain takes LAYER HEAD POSITION: whole numbers, the "
          "query's POSITION from 1 or 'last' (e.g. @explain 0 0 4)");
    // Positions count from 1: 0 names no query.
    CHECK(error_of(step_with("@explain 0 0 0"))
              .starts_with("lessons/en/03-decode.md:5: @explain takes LAYER HEAD POSITION"));
    CHECK(error_of(step_with("@explain 0 zero 3"))
              .starts_with("lessons/en/03-decode.md:5: @explain takes LAYER HEAD POSITION"));
    CHECK(error_of(step_with("@explain 0 0 first"))
              .starts_with("lessons/en/03-decode.md:5: @explain takes LAYER HEAD POSITION"));
    CHECK(error_of(step_with("@explain 0 0 1 2"))
              .starts_with("lessons/en/03-decode.md:5: @explain takes LAYER HEAD POSITION"));
    CHECK(error_of(step_with("@show heatmap"))
              .starts_with("lessons/en/03-decode.md:5: @show: unknown panel 'heatmap' (panels: "
                           "prompt, tokens"));
    CHECK(error_of(step_with("@batch sizes=1,16 prompts=\"a\"")) ==
          "lessons/en/03-decode.md:5: sizes=1,16: each size is a whole number in 1..8");
    CHECK(error_of(step_with("@batch sizes=1,2")) ==
          "lessons/en/03-decode.md:5: @batch needs prompts=\"...\" | \"...\"");
    CHECK(error_of(step_with("@batch sizes=1 prompts=\"a\" \"b\"")) ==
          "lessons/en/03-decode.md:5: expected | between prompts");
    CHECK(error_of(step_with("@scale model=gpt5 gpu=h100-sxm"))
              .starts_with("lessons/en/03-decode.md:5: @scale: unknown model 'gpt5' (known: "
                           "loaded, llama2-7b"));
    CHECK(
        error_of(step_with("@scale model=llama2-7b gpu=tpu"))
            .starts_with("lessons/en/03-decode.md:5: @scale: unknown gpu 'tpu' (known: h100-sxm"));
    CHECK(error_of(step_with("@scale model=llama2-7b gpu=h100-sxm context=131072")) ==
          "lessons/en/03-decode.md:5: Llama 2 7B has a context of 4096 tokens, not 131072");
    CHECK(error_of(step_with("@scale model=llama2-7b gpu=h100-sxm dtype=fp32"))
              .starts_with("lessons/en/03-decode.md:5: @scale dtype is bf16 or fp16"));
}

TEST_CASE("@expect lines are parsed when the lesson is loaded", "[lesson]") {
    CHECK(error_of(step_with("@expect tokn == \"nice\"")) ==
          "lessons/en/03-decode.md:5: unknown metric 'tokn'");
    CHECK(error_of(step_with("@expect head(0, 1) == 3")) ==
          "lessons/en/03-decode.md:5: head takes (layer, head, position)");
    CHECK(error_of(step_with("@expect steps(2) == 3")) ==
          "lessons/en/03-decode.md:5: steps takes no arguments");
    CHECK(error_of(step_with("@expect token")) ==
          "lessons/en/03-decode.md:5: expected a comparison (== != < <= > >=) at the end");
    CHECK(error_of(step_with("@expect rows < 3 within 1")) ==
          "lessons/en/03-decode.md:5: 'within' goes with == or != only");
    CHECK(error_of(step_with("@expect token == \"nice")) ==
          "lessons/en/03-decode.md:5: unterminated string");
    CHECK(error_of(step_with("@expect rows == 3 3")) ==
          "lessons/en/03-decode.md:5: unexpected '3'");
    CHECK(error_of(step_with("@expect rows == (3")) ==
          "lessons/en/03-decode.md:5: expected ')' at the end");
    CHECK(error_of(step_with("@expect rows == 3 ; 4")) ==
          "lessons/en/03-decode.md:5: unexpected character ';'");
    CHECK(error_of(step_with("@expect")) ==
          "lessons/en/03-decode.md:5: @expect needs a comparison, e.g. token == \"nice\"");
    // The twin's metrics exist for session metrics only.
    CHECK(error_of(step_with("@expect uncached_rows == 3")) == "(parsed without error)");
    CHECK(error_of(step_with("@expect uncached_n_heads == 3")) ==
          "lessons/en/03-decode.md:5: unknown metric 'uncached_n_heads'");
    // The session without the causal mask, named so: the same metrics.
    CHECK(error_of(step_with("@expect bidirectional_kv_delta_k(1) > 0")) ==
          "(parsed without error)");
    CHECK(error_of(step_with("@expect bidirectional_n_heads == 3")) ==
          "lessons/en/03-decode.md:5: unknown metric 'bidirectional_n_heads'");
    CHECK(error_of(step_with("@expect bidirectional_ == 3")) ==
          "lessons/en/03-decode.md:5: unknown metric 'bidirectional_'");
}

TEST_CASE("the shape of a lesson file is checked", "[lesson]") {
    CHECK(error_of("") ==
          "lessons/en/03-decode.md:1: a lesson starts with a '# Title' line (the file is empty)");
    CHECK(error_of("\n\nIntro first\n# T\n") ==
          "lessons/en/03-decode.md:3: a lesson starts with a '# Title' line");
    CHECK(error_of("# T\nintro\n@prefill\n## S\n") ==
          "lessons/en/03-decode.md:3: directives belong in a step: put a '## Step title' line "
          "above it");
    CHECK(error_of("# T\nintro only\n") ==
          "lessons/en/03-decode.md:2: no steps: each step starts with a '## ' heading");
    CHECK(error_of("# T\n## S\n```\n@prefill\n") ==
          "lessons/en/03-decode.md:4: a ``` code block is not closed");
    CHECK(error_of("# T\n##   \n") == "lessons/en/03-decode.md:2: a step heading needs a title");
}

TEST_CASE("load_lesson reads a file and names it in errors", "[lesson]") {
    const auto dir = test::temp_dir("lesson-file");
    const std::string good = (dir / "01-good.md").string();
    test::write_file(dir / "01-good.md",
                     std::vector<unsigned char>(kGood, kGood + std::strlen(kGood)));
    CHECK(load_lesson(good).steps.size() == 2);

    const std::string bad_text = "# T\n\n## S\n@prefil\n";
    test::write_file(dir / "02-bad.md",
                     std::vector<unsigned char>(bad_text.begin(), bad_text.end()));
    const std::string bad = (dir / "02-bad.md").string();
    CHECK_THROWS_WITH(load_lesson(bad),
                      bad + ":4: unknown directive '@prefil' (did you mean @prefill?)");
    CHECK_THROWS_AS(load_lesson((dir / "missing.md").string()), Error);
}

TEST_CASE("@show names one or more panels and how large", "[lesson][parser]") {
    const auto d = [](const std::string& line) {
        return parse_lesson("# T\n\n## S\n\n" + line + "\n", "x.md").steps[0].directives[0];
    };
    CHECK(d("@show attention").arg == "attention");
    CHECK(d("@show batch size=full").arg == "batch size=full");
    CHECK(d("@show attention   kv size=large").arg == "attention kv size=large");
    CHECK_THROWS_WITH(d("@show attention size=huge"),
                      Catch::Contains("@show: size must be large or full, not 'huge'"));
    CHECK_THROWS_WITH(d("@show size=full"), Catch::Contains("@show: which panel?"));
    CHECK_THROWS_WITH(d("@show attention heatmap"), Catch::Contains("unknown panel 'heatmap'"));
}

TEST_CASE("@ask: its answer, choices and words parse, the prose splits where it stands",
          "[lesson][parser][ask]") {
    const Lesson l = parse_lesson(R"(# T

## S

Before the question.

@model toy
@prompt Today weather is so
@prefill
@ask rows choices=1 | 4 | 16
@question How many rows?
@why All four at once.

After the question.

@expect rows == 4

## Typed
@ask head(0, 3, 2) within=0.01
@question All head at "is"?
@why (10 + 20 + 1) / 3.
@expect head(0, 3, 2) == 31/3 within 1e-6

## Words
@ask finish choices="end token" | "length limit"
@why It chose ".".
@question Why did it stop?
@expect finish == "end token"

## Yes or no
@ask flops(0) > rows choices=yes | no
@question More FLOPs than rows?
@why Many FLOPs a row.
@expect flops(0) > rows
)",
                                  "x.md");
    REQUIRE(l.steps.size() == 4);
    const LessonStep& s = l.steps[0];
    REQUIRE(s.ask());
    const AskSpec& a = s.ask()->ask;
    CHECK(a.answer.text() == "rows");
    REQUIRE(a.choices.size() == 3);
    CHECK(a.choices[2].num == 16);
    CHECK(a.question == "How many rows?");
    CHECK(a.why == "All four at once.");
    // The prose before the @ask, then after it; @question and @why are not prose.
    REQUIRE(s.ask_at > 0);
    CHECK(s.prose.substr(0, s.ask_at).find("Before the question.") == 0);
    CHECK(s.prose.substr(0, s.ask_at).find("After") == std::string::npos);
    CHECK(s.prose.substr(s.ask_at).find("After the question.") != std::string::npos);
    CHECK(s.prose.find("How many rows?") == std::string::npos);
    // The directives are the same in every language: the words are not part of them.
    CHECK(s.ask()->text == "ask rows choices=1 | 4 | 16");
    CHECK(l.steps[1].ask()->ask.choices.empty());
    CHECK(l.steps[1].ask()->ask.within == 0.01);
    CHECK(l.steps[2].ask()->ask.choices[0].str == "end token");
    CHECK(l.steps[3].ask()->ask.yes_no);
    CHECK(l.steps[3].ask()->ask.answer.is_comparison());
    CHECK_FALSE(l.steps[0].ask()->ask.answer.is_comparison());
}

TEST_CASE("@ask mistakes are errors with the file and line", "[lesson][parser][ask]") {
    const auto ask = [](const std::string& lines) {
        return error_of("# T\n\n## S\nprose\n" + lines + "\n");
    };
    const std::string words = "\n@question Q?\n@why W.\n@expect rows == 1";
    CHECK(ask("@ask" + words) ==
          "lessons/en/03-decode.md:5: @ask needs the engine's answer as an expression, e.g. @ask "
          "rows choices=1 | 4 | 5");
    CHECK(ask("@ask rowz" + words) == "lessons/en/03-decode.md:5: unknown metric 'rowz'");
    CHECK(ask("@ask rows choices=1" + words) ==
          "lessons/en/03-decode.md:5: @ask: choices= takes 2 to 4 choices separated by | (keys "
          "1-4)");
    CHECK(ask("@ask rows choices=1|2|3|4|5" + words).find("2 to 4 choices") != std::string::npos);
    CHECK(ask("@ask rows choices=1 | one" + words) ==
          "lessons/en/03-decode.md:5: @ask: choice 'one' is not a number, a \"string\", yes or no");
    CHECK(ask("@ask rows choices=1 | 1" + words) ==
          "lessons/en/03-decode.md:5: @ask: choice '1' is given twice");
    CHECK(ask("@ask rows choices=yes | 2" + words) ==
          "lessons/en/03-decode.md:5: @ask: yes and no are the only choices when one is");
    CHECK(ask("@ask rows within=-1" + words) ==
          "lessons/en/03-decode.md:5: @ask: within=-1 is not a number of 0 or more");
    CHECK(ask("@ask rows choices=1 | 2 within=1" + words) ==
          "lessons/en/03-decode.md:5: @ask: within= goes with a typed number, not choices");
    CHECK(ask("@ask rows > 1" + words) ==
          "lessons/en/03-decode.md:5: @ask: a comparison's answer is yes or no: add choices=yes "
          "| no");
    // Its words, and an @expect on its answer after it in the step.
    CHECK(ask("@ask rows\n@why W.\n@expect rows == 1") ==
          "lessons/en/03-decode.md:5: @ask needs an @question line under it");
    CHECK(ask("@ask rows\n@question Q?\n@expect rows == 1") ==
          "lessons/en/03-decode.md:5: @ask needs a @why line under it");
    CHECK(ask("@ask rows\n@question Q?\n@why W.") ==
          "lessons/en/03-decode.md:5: @ask rows: add an @expect on it after the @ask (e.g. "
          "@expect rows == ...) so the answer it reveals is checked");
    CHECK(ask("@expect rows == 1\n@ask rows\n@question Q?\n@why W.")
              .find("add an @expect on it after the @ask") != std::string::npos);
    CHECK(ask("@ask rows\n@question Q?\n@why W.\n@expect rows(0) == 1").find("add an @expect") !=
          std::string::npos);
    CHECK(ask("@ask rows" + words + "\n@ask kv_len\n@question Q?\n@why W.\n@expect kv_len == 1") ==
          "lessons/en/03-decode.md:9: one @ask per step: this step has one already");
    CHECK(ask("@question Q?") ==
          "lessons/en/03-decode.md:5: @question belongs under an @ask in the same step");
    CHECK(ask("@ask rows\n@question Q?\n@question R?\n@why W.\n@expect rows == 1") ==
          "lessons/en/03-decode.md:7: @question given twice for one @ask");
    CHECK(ask("@ask rows\n@question\n@why W.\n@expect rows == 1") ==
          "lessons/en/03-decode.md:6: @question needs text");
    CHECK(ask("@questoin Q?") ==
          "lessons/en/03-decode.md:5: unknown directive '@questoin' (did you mean @question?)");
}

TEST_CASE("@serve: its options parse, its mistakes are errors with the file and line",
          "[lesson][parser]") {
    const Lesson l = parse_lesson(
        step_with("@serve new=12 block=4 pool=30 batch=3 sharing=off window=16 sinks=4 "
                  "positions=original budget=8 arrive=0,5 prompts=\"a b\" | \"c\""),
        "x.md");
    const ServePlan& p = l.steps.at(0).directives.at(0).serve;
    CHECK(p.prompts == std::vector<std::string>{"a b", "c"});
    CHECK(p.new_tokens == 12);
    CHECK(p.block_size == 4);
    CHECK(p.pool_blocks == 30);
    CHECK(p.max_num_seqs == 3);
    CHECK_FALSE(p.prefix_caching);
    CHECK(p.window == 16);
    CHECK(p.sinks == 4);
    CHECK(p.positions == "original");
    CHECK(p.budget == 8);
    CHECK(p.arrivals == std::vector<int>{0, 5});
    CHECK(p.shown);  // the step's only @serve: the one its Serving view shows
    const ServePlan d =
        parse_lesson(step_with("@serve prompts=\"a\""), "x.md").steps.at(0).directives.at(0).serve;
    CHECK(d.new_tokens == 32);
    CHECK(d.block_size == 16);
    CHECK(d.pool_blocks == 0);  // the scheduler's default: max_num_seqs contexts
    CHECK(d.prefix_caching);
    CHECK(d.window == 0);
    CHECK(d.budget == 0);
    CHECK(d.positions == "cache");
    CHECK(d.scales == "token");
    CHECK(d.arrivals.empty());
    // Of several, the one marked view=on, else the last.
    const Lesson two = parse_lesson(
        step_with("@serve view=on prompts=\"a\"\n@serve prompts=\"b\"\n@serve prompts=\"c\""),
        "x.md");
    const auto& ds = two.steps.at(0).directives;
    CHECK(ds.at(0).serve.shown);
    CHECK_FALSE(ds.at(1).serve.shown);
    CHECK_FALSE(ds.at(2).serve.shown);
    const Lesson last =
        parse_lesson(step_with("@serve prompts=\"a\"\n@serve prompts=\"b\""), "x.md");
    CHECK_FALSE(last.steps.at(0).directives.at(0).serve.shown);
    CHECK(last.steps.at(0).directives.at(1).serve.shown);
    const std::string at = "lessons/en/03-decode.md:5: ";
    CHECK(error_of(step_with("@serve new=4")) ==
          at + "@serve needs prompts=\"...\" | \"...\" (1 to 16 of them)");
    CHECK(error_of(step_with("@serve block=0 prompts=\"a\"")) ==
          at + "block=0 is not a whole number in 1..65536");
    CHECK(error_of(step_with("@serve window=0 prompts=\"a\"")) ==
          at + "window=0 is not a whole number in 1..65536");
    CHECK(error_of(step_with("@serve sinks=4 prompts=\"a\"")) ==
          at + "@serve: sinks= needs window=");
    CHECK(error_of(step_with("@serve sharing=maybe prompts=\"a\"")) ==
          at + "@serve: sharing is on or off, not 'maybe'");
    CHECK(error_of(step_with("@serve new=3000 prompts=\"a\"")) ==
          at + "new=3000 is not a whole number in 1..2048");
    CHECK(error_of(step_with("@serve arrive=0 prompts=\"a\" | \"b\"")) ==
          at + "@serve: arrive= gives 1 steps for 2 prompts");
    CHECK(error_of(step_with("@serve positions=cache prompts=\"a\"")) ==
          at + "@serve: positions= needs window=");
    CHECK(error_of(step_with("@serve window=8 positions=mid prompts=\"a\"")) ==
          at + "@serve: positions is one of cache, original, not 'mid'");
    CHECK(error_of(step_with("@serve scales=tensor prompts=\"a\"")) ==
          at + "@serve: scales= needs cache=int8 or cache=fp8");
    CHECK(error_of(step_with("@serve view=on prompts=\"a\"\n@serve view=on prompts=\"b\"")) ==
          "lessons/en/03-decode.md:6: @serve: one view=on per step (the run its Serving view "
          "shows)");
    CHECK(error_of(step_with("@serve prompts=\"\"")) == at + "@serve: a prompt is empty");
    CHECK(error_of(step_with("@serve tokens=3 prompts=\"a\""))
              .starts_with(at + "unknown key 'tokens' (known: "));
    std::string many = "@serve prompts=\"a\"";
    for (int i = 0; i < 16; ++i) many += " | \"a\"";
    CHECK(error_of(step_with(many)) ==
          at + "@serve needs prompts=\"...\" | \"...\" (1 to 16 of them)");
}
