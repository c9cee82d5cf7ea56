#include "lessonlib/metric_words.h"

#include <cctype>
#include <cmath>
#include <string_view>

#include "core/util/utf8.h"
#include "lessonlib/lesson_metrics.h"

namespace kvs {
namespace {

// Templates: {0}..{3} an argument in words; {Nl} a layer (-1: the last one); {Nr} a query named
// by its position (-1: the newest); {Nq} a key named by its position (-1: the last); {Np} a
// number counted from 1 (a rank); {Nk} "prefill" or "decode" as a word; {Nf} a field
// of @scale; {Ne} a figure of @serve; {Ng} a count and {Nt} a time of @gpu; {Nv} a K/V layout
// ("mha", "mqa", "model"); {s} the optional step argument (nothing for the latest step); {t} the
// same after a layer argument (its second).
struct Phrase {
    const char* name;
    const char* en;
    const char* zh;
};

const Phrase kPhrases[] = {
    {"token", "the chosen token{s}", "{s}选中的 token"},
    {"phase", "the phase{s}", "{s}所处的阶段"},
    {"rows", "the number of rows through the model{s}", "{s}通过模型的行数"},
    {"forward_calls", "the number of forward passes{s}", "{s}的前向计算次数"},
    {"attn_rows", "the number of attention rows kept{s}", "{s}保留的注意力行数"},
    {"keys", "the number of keys the last query row reads{s}", "{s}最后一行查询读到的键数"},
    {"kv_len", "the number of K/V rows in the cache{s}", "{s}之后缓存里的 K/V 行数"},
    {"kv_growth", "the number of K/V rows the cache grew by{s}", "{s}缓存新增的 K/V 行数"},
    {"kv_bytes", "the size of the cache in bytes{s}", "{s}之后缓存占的字节数"},
    {"time", "the measured time{s}", "{s}的实测时间"},
    {"flops", "the FLOP count{s}", "{s}的 FLOPs（按形状计数）"},
    {"matmul_flops", "the linear layers' FLOP count{s}", "{s}线性层的 FLOPs（计数）"},
    {"attn_flops", "attention's FLOP count{s}", "{s}注意力的 FLOPs（计数）"},
    {"bytes", "the count of bytes moved{s}", "{s}搬运的字节数（计数）"},
    {"steps", "the number of steps taken", "已走的步数"},
    {"prompt_len", "the prompt's length in tokens", "提示词的 token 数"},
    {"generated", "the number of tokens generated", "已生成的 token 数"},
    {"text", "the generated text", "生成的文本"},
    {"finish", "why generation stopped", "生成停止的原因"},
    {"total_rows", "the number of rows through the model over all steps",
     "所有步通过模型的行数之和"},
    {"total_time", "the measured time of all steps", "所有步的实测时间之和"},
    {"total_flops", "the FLOP count of all steps", "所有步的 FLOPs 之和（计数）"},
    {"decode_time", "the measured time of the decode steps", "解码各步的实测时间之和"},
    {"decode_flops", "the FLOP count of the decode steps", "解码各步的 FLOPs 之和（计数）"},
    {"decode_attn_flops", "the attention FLOP count of the decode steps",
     "解码各步注意力的 FLOPs 之和"},
    {"head", "the output of layer {0}, head {1} for {2r}", "{0l}头 {1} 对{2r}的输出"},
    {"weight", "the weight layer {0}, head {1} gives {2r} on {3q}",
     "{0l}头 {1} 的{2r}给{3q}的权重"},
    {"logit", "the logit of {0}", "{0} 的 logit"},
    {"prob", "the probability of {0}", "{0} 的概率"},
    {"top", "the token ranked {0p}", "概率排第 {0p} 的 token"},
    {"score", "the raw score q.k of layer {0}, head {1}, {2r} on {3q}",
     "{0l}头 {1} 的{2r}对{3q}的原始分数 q.k"},
    {"scaled_score", "the scaled score of layer {0}, head {1}, {2r} on {3q}",
     "{0l}头 {1} 的{2r}对{3q}缩放后的分数"},
    {"softmax_error",
     "the gap between softmax of the shown scores and the weights used (layer {0}, head {1}, {2r})",
     "按显示的分数重算 softmax 与模型所用权重之差（{0l}头 {1}，{2r}）"},
    {"output_error",
     "the gap between the sum of w.v and the attention output used (layer {0}, head {1}, {2r})",
     "w.v 之和与模型所用注意力输出之差（{0l}头 {1}，{2r}）"},
    {"query_rows_computed", "the number of Q rows computed{s}", "{s}算出的 Q 行数"},
    {"query_rows_used", "the number of Q rows a cached run needs{s}", "{s}用缓存时需要的 Q 行数"},
    {"kv_recomputed", "the number of cached K/V rows computed again{s}",
     "{s}缓存里已有、又重算的 K/V 行数"},
    {"kv_recomputed_delta", "the largest gap between recomputed and cached K/V{s}",
     "{s}重算的 K/V 与缓存里的最大差"},
    {"q_for_output", "the number of {0l}'s Q rows that lead to the next token{t}",
     "{t}{0l}通向下一个 token 的 Q 行数"},
    {"q_build_kv", "the number of {0l}'s Q rows that only build the next layer's K/V{t}",
     "{t}{0l}只用来构建下一层 K/V 的 Q 行数"},
    {"q_rebuild_kv",
     "the number of {0l}'s Q rows that only rebuild next-layer K/V an earlier step computed{t}",
     "{t}{0l}只为重建之前某一步已算过的下一层 K/V 的 Q 行数"},
    {"q_thrown_away", "the number of {0l}'s Q rows nothing reads{t}", "{t}{0l}没有谁读的 Q 行数"},
    {"kv_delta_k", "the largest move of {0l}'s earlier K rows after one token more{t}",
     "{t}多一个 token 后{0l}更早 K 行的最大变化"},
    {"kv_delta_v", "the largest move of {0l}'s earlier V rows after one token more{t}",
     "{t}多一个 token 后{0l}更早 V 行的最大变化"},
    {"inf", "infinity", "无穷大"},
    {"max_logit_diff", "the largest logit difference between cached and uncached",
     "用缓存与不用缓存的 logit 最大差"},
    {"same_tokens", "whether both runs chose the same tokens (1: yes)",
     "两边是否选了相同的 token（1 表示是）"},
    {"n_layers", "the number of layers", "层数"},
    {"n_heads", "the number of query heads", "查询头数"},
    {"n_kv_heads", "the number of K/V heads", "K/V 头数"},
    {"head_dim", "the head size", "每个头的维度"},
    {"dim", "the residual width", "残差宽度"},
    {"hidden_dim", "the SwiGLU width", "SwiGLU 宽度"},
    {"vocab", "the vocabulary size", "词表大小"},
    {"context", "the context length", "上下文长度"},
    {"params", "the number of parameters", "参数个数"},
    {"kv_kind", "the K/V layout", "K/V 的布局"},
    {"toy_projection", "the toy's projection weight of {0} for head {1}",
     "玩具模型投影中{0}对头 {1} 的权重"},
    {"kv_per_token", "the K/V size per token as {0v}, in bytes",
     "按{0v}算每个 token 的 K/V 字节数"},
    {"batch_time", "the measured time of a {0k} step at batch {1}",
     "批大小 {1} 时一个{0k}步的实测时间"},
    {"batch_rows", "the number of rows in a {0k} step at batch {1}",
     "批大小 {1} 时一个{0k}步的行数"},
    {"batch_rate", "the rate of {0k} at batch {1}, in rows per second",
     "批大小 {1} 时{0k}每秒处理的行数"},
    {"batch_flops", "the FLOP count of a {0k} step at batch {1}",
     "批大小 {1} 时一个{0k}步的 FLOPs（计数）"},
    {"scale", "{0f}", "{0f}"},
    {"gpu", "{0g}", "{0g}"},
    {"gpu_time", "{0t}", "{0t}"},
    {"serve", "{0e}", "{0e}"},
    {"serve_block", "the block holding position {1} of request {0}",
     "请求 {0} 中位置 {1} 所在的块"},
};

// The figures of @serve (lessonlib/lesson_serve.h) in words.
const Phrase kServeFields[] = {
    {"requests", "the number of requests served", "服务的请求数"},
    {"steps", "the number of scheduler steps", "调度器走的步数"},
    {"generated", "the number of tokens generated", "生成的 token 总数"},
    {"block_size", "the number of rows per block", "每块的行数"},
    {"pool_blocks", "the number of blocks in the pool", "池里的块数"},
    {"peak_blocks", "the most blocks held at once", "同时占用的最多块数"},
    {"peak_running", "the most requests running at once", "同时运行的最多请求数"},
    {"contiguous_blocks", "the number of blocks contiguous caches would reserve",
     "按请求连续预留缓存时要占的块数"},
    {"blocks_saved", "the number of blocks saved against contiguous caches",
     "比连续预留省下的块数"},
    {"capped_blocks",
     "the number of blocks contiguous caches sized to each prompt and its cap would reserve",
     "按各自提示词加新 token 上限连续预留时要占的块数"},
    {"context", "the model's context in rows", "模型上下文的行数"},
    {"fragmentation", "the internal fragmentation in percent", "内部碎片的百分比"},
    {"shared_blocks", "the number of blocks found in the prefix cache", "在前缀缓存中找到的块数"},
    {"cached_rows", "the number of rows found in the prefix cache", "在前缀缓存中找到的行数"},
    {"most_cached_free", "the most free blocks still in the prefix cache",
     "仍留在前缀缓存中的空闲块最多时的块数"},
    {"evictions", "the number of cached blocks taken for other rows", "被挪作他用的缓存块数"},
    {"prompt_rows", "the number of prompt rows of all requests", "所有请求的提示词行数"},
    {"prefill_rows", "the number of rows computed in prefill passes", "预填充计算的行数"},
    {"preemptions", "the number of preemptions", "抢占的次数"},
    {"queued", "the number of requests that waited", "排过队的请求数"},
    {"waits_places", "the number of steps waited for a place", "因为没有空位而等待的步数"},
    {"waits_budget", "the number of steps waited for the token budget",
     "因为 token 预算用完而等待的步数"},
    {"waits_blocks", "the number of steps waited for blocks", "因为块不够而等待的步数"},
    {"waits_preemption", "the number of steps waited because the step preempted",
     "因为该步有抢占而等待的步数"},
    {"mixed_steps", "the number of steps holding prefill and decode rows together",
     "一次计算里同时有预填充行和解码行的步数"},
    {"chunked_steps", "the number of steps that computed part of a prompt",
     "只算了某个提示词一部分的步数"},
    {"budget", "the token budget of a step", "每步的 token 预算"},
    {"same_as_alone", "the number of requests whose text equals their prompt served alone",
     "文本与单独服务时相同的请求数"},
    {"shown_tables", "the number of block tables shown", "列出的块表个数"},
    {"weight_passes", "the number of passes over the weights served together",
     "一起服务时读权重的遍数"},
    {"alone_weight_passes", "the number of passes over the weights one request at a time",
     "逐个服务时读权重的遍数"},
    {"tokens_per_second", "the measured tokens per second served together",
     "一起服务时测得的每秒 token 数"},
    {"alone_tokens_per_second", "the measured tokens per second one request at a time",
     "逐个服务时测得的每秒 token 数"},
    {"window_passes", "the number of passes compared against the full cache",
     "与完整缓存对比的计算次数"},
    {"window_same", "the number of passes with the full cache's most likely next token",
     "最可能的下一个 token 与完整缓存相同的计算次数"},
    {"window_max_logit_diff", "the largest logit difference against the full cache",
     "与完整缓存相比最大的 logit 差"},
    {"stream_tokens", "the number of tokens of the joined text", "连起来的文本的 token 数"},
    {"ppl_full", "the full cache's perplexity within the context", "完整缓存在上下文之内的困惑度"},
    {"ppl_sinks_cache", "the perplexity within the context with sinks at cache positions",
     "汇点按缓存位置编号时上下文之内的困惑度"},
    {"ppl_sinks_cache_past", "the perplexity past the context with sinks at cache positions",
     "汇点按缓存位置编号时超出上下文的困惑度"},
    {"ppl_sinks_original", "the perplexity within the context with sinks at original positions",
     "汇点保留原位置时上下文之内的困惑度"},
    {"ppl_sinks_original_past", "the perplexity past the context with sinks at original positions",
     "汇点保留原位置时超出上下文的困惑度"},
    {"ppl_no_sinks", "the perplexity within the context without sinks",
     "没有汇点时上下文之内的困惑度"},
    {"ppl_no_sinks_past", "the perplexity past the context without sinks",
     "没有汇点时超出上下文的困惑度"},
    {"row_bytes", "the bytes of one position's keys and values", "一个位置的键和值所占的字节数"},
    {"f32_row_bytes", "the bytes of one position's keys and values in float32",
     "按单精度浮点数存时一个位置的键和值所占的字节数"},
    {"cache_passes", "the number of passes compared against the float32 cache",
     "与单精度浮点缓存对比的计算次数"},
    {"cache_same", "the number of passes with the float32 cache's most likely next token",
     "最可能的下一个 token 与单精度浮点缓存相同的计算次数"},
    {"cache_max_logit_diff", "the largest logit difference against the float32 cache",
     "与单精度浮点缓存相比最大的 logit 差"},
};

// The counts of @gpu (core/session/gpu_step_view.h) and its measured times, in words.
const Phrase kGpuFields[] = {
    {"prefill_rows", "the prompt's rows at the prefill counted", "计数所用预填充的行数"},
    {"prefill_launches", "the number of kernel launches of the prefill (counted)",
     "预填充的内核启动次数（计数）"},
    {"decode_launches", "the number of kernel launches of a decode step (counted)",
     "一个解码步的内核启动次数（计数）"},
    {"decode_syncs", "the number of stream syncs of a decode step (counted)",
     "一个解码步的流同步次数（计数）"},
    {"decode_copies", "the number of host-device copies of a decode step (counted)",
     "一个解码步在主机与设备之间的拷贝次数（计数）"},
    {"graph_launches", "the number of graph launches of a decode step as a CUDA Graph (counted)",
     "把解码步录成 CUDA Graph 后的图启动次数（计数）"},
    {"graph_kernels", "the number of kernels that graph runs (counted)",
     "这个图里运行的内核数（计数）"},
    {"fused_kernels", "the number of kernels of a decode step fused (counted)",
     "融合之后一个解码步的内核数（计数）"},
    {"cpu", "the measured time of a decode step on the CPU", "CPU 上一个解码步的实测时间"},
    {"device", "the measured time of a decode step on the GPU, op by op",
     "GPU 上逐个算子执行一个解码步的实测时间"},
    {"graph", "the measured time of a decode step on the GPU as one graph",
     "GPU 上把解码步作为一个图执行的实测时间"},
    {"fused", "the measured time of a decode step on the GPU fused",
     "GPU 上用融合内核执行一个解码步的实测时间"},
};

// The figures of @scale (lessonlib/scale_accounting.h) in words.
const Phrase kScaleFields[] = {
    {"params", "the model's parameters", "模型的参数个数"},
    {"weight_bytes", "the size of the weights in bytes", "权重的字节数"},
    {"kv_bytes", "the size of the KV cache in bytes", "KV 缓存的字节数"},
    {"kv_bytes_per_token", "the KV cache's size per token in bytes", "每个 token 的 KV 缓存字节数"},
    {"ridge", "the GPU's ridge point (FLOP per byte)", "GPU 的拐点（每字节 FLOP）"},
    {"prefill_flops", "prefill's FLOP count", "预填充的 FLOPs"},
    {"prefill_attn_flops", "prefill's attention FLOP count", "预填充中注意力的 FLOPs"},
    {"prefill_bytes", "the count of bytes prefill moves", "预填充搬运的字节数"},
    {"prefill_intensity", "prefill's FLOP per byte", "预填充每字节的 FLOP"},
    {"prefill_seconds", "prefill's least time", "预填充至少要的时间"},
    {"prefill_bound", "what bounds prefill", "预填充的瓶颈"},
    {"decode_flops", "a decode step's FLOP count", "一个解码步的 FLOPs"},
    {"decode_attn_flops", "a decode step's attention FLOP count", "一个解码步中注意力的 FLOPs"},
    {"decode_bytes", "the count of bytes a decode step moves", "一个解码步搬运的字节数"},
    {"decode_intensity", "a decode step's FLOP per byte", "一个解码步每字节的 FLOP"},
    {"decode_seconds", "a decode step's least time", "一个解码步至少要的时间"},
    {"decode_bound", "what bounds a decode step", "一个解码步的瓶颈"},
    {"fits", "whether it fits in the GPU's memory (1: yes)", "显存是否放得下（1 表示是）"},
};

// A string argument as words_of quoted it: "..." or, in Chinese, “...”.
std::string unquoted(const std::string& s) {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
    const std::string open = "\xE2\x80\x9C", close = "\xE2\x80\x9D";
    if (s.size() >= 6 && s.compare(0, 3, open) == 0 && s.compare(s.size() - 3, 3, close) == 0)
        return s.substr(3, s.size() - 6);
    return s;
}

std::string number_text(double v) {
    return LessonValue::number(v).to_string();
}

// One placeholder's words: `which` is the argument, `kind` the letter after it (0 for none).
std::string fill(int which, char kind, const std::vector<std::string>& args,
                 const std::vector<const double*>& numbers, const Words& w) {
    if (which >= static_cast<int>(args.size())) return "?";
    const std::string& a = args[which];
    const double* v = numbers[which];
    switch (kind) {
        case 'l':
            if (v && *v == -1) return w("the last layer", "最后一层");
            if (v && *v < 0)
                return w("layer ", "倒数第 ") + number_text(-*v) + w(" from the end", " 层");
            return w("layer ", "第 ") + a + w("", " 层");
        case 'r':
            if (v && *v == -1) return w("the newest query", "最新的查询");
            if (v && *v < 0)
                return w("the query ", "倒数第 ") + number_text(-*v) +
                       w(" from the newest", " 个查询");
            return w("the query at position ", "位置 ") + a + w("", " 的查询");
        case 'q':
            if (v && *v == -1) return w("the last key", "最后一个键");
            if (v && *v < 0)
                return w("the key ", "倒数第 ") + number_text(-*v) + w(" from the last", " 个键");
            return w("the key at position ", "位置 ") + a + w("", " 的键");
        case 'p':
            return v ? number_text(*v + 1) : a + " + 1";
        case 'k': {
            const std::string p = unquoted(a);
            if (p == "prefill") return w("prefill", "预填充");
            if (p == "decode") return w("decode", "解码");
            return a;
        }
        case 'f': {
            const std::string field = unquoted(a);
            for (const auto& f : kScaleFields)
                if (field == f.name) return w(f.en, f.zh);
            return w("the figure ", "数值 ") + a;
        }
        case 'e': {
            const std::string field = unquoted(a);
            for (const auto& f : kServeFields)
                if (field == f.name) return w(f.en, f.zh);
            return w("the figure ", "数值 ") + a;
        }
        case 'v': {
            const std::string p = unquoted(a);
            if (p == "mha") return "MHA";
            if (p == "mqa") return "MQA";
            if (p == "model") return w("the model's own layout", "本模型自己的布局");
            return a;
        }
        case 'g':
        case 't': {
            const std::string field = unquoted(a);
            for (const auto& f : kGpuFields)
                if (field == f.name) return w(f.en, f.zh);
            return w("the figure ", "数值 ") + a;
        }
        default:
            return a;
    }
}

// {s}: the step argument of a step metric (the trace's step number, negative from the end).
std::string step_words(const std::vector<std::string>& args,
                       const std::vector<const double*>& numbers, const Words& w) {
    if (args.empty()) return w("", "这一步");
    const double* v = numbers[0];
    if (v && *v == -1) return w("", "这一步");
    // Appended, not `"..." + s`: GCC 12 warns (-Wrestrict) about that form here, wrongly.
    std::string out = w(v && *v < 0 ? " " : " at step ", v && *v < 0 ? "倒数第 " : "第 ");
    out.append(v && *v < 0 ? number_text(-*v) : args[0]);
    out.append(w(v && *v < 0 ? " steps from the end" : "", " 步"));
    return out;
}

// "查询行 3的输出" -> "查询行 3 的输出": a space between a Latin word or number and the Chinese
// character after it (a CJK ideograph, UTF-8 lead byte E4..E9), none before full-width
// punctuation ("查询行 3）").
std::string tidy_zh(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        out += s[i];
        if (c < 0x80 && std::isalnum(c) && i + 1 < s.size()) {
            const unsigned char next = static_cast<unsigned char>(s[i + 1]);
            if (next >= 0xE4 && next <= 0xE9) out += ' ';
        }
    }
    return out;
}

}  // namespace

std::string metric_phrase(const std::string& name, const std::vector<std::string>& args,
                          const std::vector<const double*>& numbers, ReportLang lang) {
    const Words w{lang};
    const MetricName n = split_metric_name(name);
    const std::string& base = n.base;
    // The twin: "... without the cache" in English, "不用缓存时..." in Chinese; the session
    // without the causal mask: "... without the causal mask", "去掉因果掩码时...".
    const bool bidirectional = n.twin == TwinPrefix::Bidirectional;
    const std::string twin_en = n.twin == TwinPrefix::None ? ""
                                : bidirectional            ? " without the causal mask"
                                                           : " without the cache";
    const std::string twin_zh = n.twin == TwinPrefix::None ? ""
                                : bidirectional            ? "去掉因果掩码时"
                                                           : "不用缓存时";
    for (const auto& p : kPhrases) {
        if (base != p.name) continue;
        const std::string_view t = w(p.en, p.zh);
        std::string out = w.zh() ? twin_zh : "";
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (t[i] != '{') {
                out += t[i];
                continue;
            }
            const std::size_t close = t.find('}', i);
            const std::string_view key = t.substr(i + 1, close - i - 1);
            if (key == "s")
                out += step_words(args, numbers, w);
            else if (key == "t")
                out += args.empty()
                           ? step_words({}, {}, w)
                           : step_words(
                                 std::vector<std::string>(args.begin() + 1, args.end()),
                                 std::vector<const double*>(numbers.begin() + 1, numbers.end()), w);
            else
                out += fill(key[0] - '0', key.size() > 1 ? key[1] : 0, args, numbers, w);
            i = close;
        }
        return w.zh() ? tidy_zh(out) : out + twin_en;
    }
    return {};
}

namespace {

struct NamedValue {
    const char* metric;  // the metric, or the @scale field's suffix
    const char* value;
    const char* en;
    const char* zh;
};
// The values a metric names (core's words for them), as a sentence in each language says them.
const NamedValue kNamedValues[] = {
    {"finish", "end token", "the end token", "遇到结束 token"},
    {"finish", "length limit", "the length limit", "达到长度上限"},
    {"finish", "context full", "a full context", "上下文已满"},
    {"finish", "running", "still running", "仍在生成"},
    {"phase", "prefill", "prefill", "预填充"},
    {"phase", "decode", "decode", "解码"},
    {"_bound", "memory", "memory bandwidth", "访存带宽"},
    {"_bound", "compute", "arithmetic", "算力"},
};

std::string named_value(const std::string& metric, const std::string& arg, const LessonValue& v,
                        const Words& w) {
    if (!v.is_string()) return {};
    const std::string base = split_metric_name(metric).base;
    const bool bound =
        base == "scale" && arg.size() > 6 && arg.compare(arg.size() - 6, 6, "_bound") == 0;
    for (const auto& n : kNamedValues)
        if ((bound ? std::string(n.metric) == "_bound" : base == n.metric) && v.str == n.value)
            return w(n.en, n.zh);
    return {};
}

}  // namespace

std::string value_words(const std::string& metric, const std::string& arg, const LessonValue& v,
                        ReportLang lang) {
    const Words w{lang};
    if (v.is_none()) return w("none", "无");
    if (v.is_number()) return v.to_string();
    const std::string named = named_value(metric, arg, v, w);
    if (!named.empty()) return named;
    if (w.zh()) return "\xE2\x80\x9C" + escape_for_one_line(v.str) + "\xE2\x80\x9D";
    return escape_for_one_line(v.to_string());
}

std::string check_in_words(const Expectation& e, ReportLang lang) {
    const Words w{lang};
    return e.in_words(
        [lang](const std::string& name, const std::vector<std::string>& args,
               const std::vector<const double*>& numbers) {
            const std::string p = metric_phrase(name, args, numbers, lang);
            return p.empty() ? name : p;
        },
        lang,
        [w](const std::string& metric, const std::string& arg, const LessonValue& v) {
            return named_value(metric, arg, v, w);
        });
}

std::string expr_in_words(const LessonExpr& e, ReportLang lang) {
    return e.in_words(
        [lang](const std::string& name, const std::vector<std::string>& args,
               const std::vector<const double*>& numbers) {
            const std::string p = metric_phrase(name, args, numbers, lang);
            return p.empty() ? name : p;
        },
        lang);
}

}  // namespace kvs
