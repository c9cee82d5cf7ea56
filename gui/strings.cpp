#include "gui/strings.h"

#include <cstdio>
#include <string_view>

#include <unordered_map>
#include "core/util/numbering.h"

namespace kvs::gui {
namespace {

Lang g_lang = Lang::En;  // the window's thread sets and reads it

}  // namespace

const std::vector<UiString>& ui_strings() {
    // English, then Simplified Chinese. The same printf conversions in the same order.
    static const std::vector<UiString> table = {
        {"Generation ended: the context of %d tokens is full.",
         "生成结束：%d 个 token 的上下文已满。"},
        {"Generation ended: the model chose its end token.", "生成结束：模型选择了结束 token。"},
        {"Generation ended: the limit of new tokens was reached.",
         "生成结束：新 token 数达到了上限。"},
        {"Generation ended.", "生成结束。"},
        {"Prompt and tokens", "提示词与 token"},
        {"Toy example: each head's output per token", "玩具示例：每个头在每个 token 上的输出"},
        {"Attention", "注意力"},
        {"KV cache", "KV 缓存"},
        {"Time", "时间"},
        {"Next token", "下一个 token"},
        {"Lesson", "课程"},
        {"saved", "已保存"},
        {"with KV cache", "使用 KV 缓存"},
        {"without KV cache", "不用 KV 缓存"},
        {"opening %s", "正在打开 %s"},
        {"could not open the model", "无法打开模型"},
        {"opening the recorded run %s", "正在打开录制的运行 %s"},
        {"recorded run", "录制的运行"},
        {"recorded: our default model, with KV cache", "录制的运行：我们的默认模型，使用 KV 缓存"},
        {"recorded: our default model, with and without KV cache",
         "录制的运行：我们的默认模型，使用与不用 KV 缓存对比"},
        {".bin, .gguf, folder or trace .json", ".bin、.gguf、文件夹或追踪 .json"},
        {"recorded run of %s on %s (an older trace: no date)",
         "录制的运行：%s，运行于 %s（较早格式的追踪，没有记录日期）"},
        {"recorded run of %s on %s, %s; %s by %s %s",
         "录制的运行：%s，运行于 %s，%s；录制时间 %s，由 %s %s 录制"},
        {"Export", "导出"},
        {"attention of the head shown (CSV)", "当前注意力头的注意力矩阵（CSV）"},
        {"every step's numbers (CSV)", "每一步的数据（CSV）"},
        {"the whole run (trace JSON, to replay)", "整次运行（追踪 JSON，可回放）"},
        {"trace events (Perfetto, chrome://tracing)", "追踪事件（Perfetto、chrome://tracing）"},
        {"all four (Ctrl+E)", "以上四种（Ctrl+E）"},
        {"export the run: attention and steps as CSV, trace JSON, trace events (current folder)",
         "导出这次运行：注意力和每一步的 CSV、追踪 JSON、追踪事件（保存在当前文件夹）"},
        {"could not open the recorded run", "无法打开录制的运行"},
        {"exporting the run", "正在导出这次运行"},
        {"could not export the run", "无法导出这次运行"},
        {"switching the backend to %s", "正在切换后端到 %s"},
        {"could not switch the backend", "无法切换后端"},
        {"switching the cache mode", "正在切换缓存模式"},
        {"could not switch the cache mode", "无法切换缓存模式"},
        {"setting the prompt", "正在设置提示词"},
        {"the prompt was not used", "提示词未被采用"},
        {"setting the sampler", "正在设置采样器"},
        {"could not set the sampler", "无法设置采样器"},
        {"reset", "重置"},
        {"could not reset", "无法重置"},
        {"prefill", "预填充"},
        {"the prefill did not run", "预填充没有运行"},
        {"decode step", "解码步"},
        {"decoding %d steps", "正在解码 %d 步"},
        {"the step did not run", "这一步没有运行"},
        {"lesson %d, step %d", "第 %d 课，第 %d 步"},
        {"the lesson step did not run", "课程的这一步没有运行"},
        {"%s scale", "%s 刻度"},
        {"masked", "被掩码"},
        {"none", "无"},
        {"new this step", "本步新增"},
        {"%s: layer %d, head %d", "%s：层 %d，头 %d"},
        {" (K/V head %d)", "（K/V 头 %d）"},
        {"Roofline of %s (datasheet): FLOP/s against FLOP per byte",
         "%s 的屋顶线（数据手册）：FLOP/s 与每字节 FLOP"},
        {"counted from shapes; each point's FLOP/s is its least time at the GPU's peak",
         "按形状计数；每个点的 FLOP/s 按 GPU 峰值下的最短时间算出"},
        {"FLOP per byte (counted)", "每字节 FLOP（计数）"},
        {"ridge %.0f FLOP/B (datasheet)", "拐点 %.0f FLOP/B（数据手册）"},
        {"prefill, batch %d x %d tokens: %.0f FLOP/B",
         "预填充，批大小 %d x %d 个 token：%.0f FLOP/B"},
        {"decode step, batch %d at %d keys: %.1f FLOP/B",
         "解码一步，批大小 %d，%d 个键：%.1f FLOP/B"},
        {"  (zoom: positions %d..%d)", "  （放大：位置 %d..%d）"},
        {"query at position %d \"%s\"  ->  key at position %d \"%s\"",
         "位置 %d 的查询 \"%s\"  ->  位置 %d 的键 \"%s\""},
        {"weight %.4f", "权重 %.4f"},
        {"masked: a query never sees tokens after it", "被掩码：查询永远看不到它之后的 token"},
        {"no key this head may attend to: output none", "这个头没有可以关注的键：输出为无"},
        {"not in the trace any more (dropped to save memory)", "已不在记录中（为节省内存而丢弃）"},
        {"row computed at step %d (%s)", "这一行在第 %d 步算出（%s）"},
        {"decode", "解码"},
        {"mouse wheel: zoom into the newest tokens; double-click: all",
         "鼠标滚轮：放大最新的 token；双击：显示全部"},
        {"All heads (click one)", "所有头（点击一个）"},
        {"layer %d, head %d", "层 %d，头 %d"},
        {"No model open.", "没有打开的模型。"},
        {"Layer", "层"},
        {"Head", "头"},
        {"Colours", "颜色"},
        {"linear", "线性"},
        {"sqrt", "平方根"},
        {"log", "对数"},
        {"Nothing computed yet. Prefill (Space) runs the whole prompt through the model at once: "
         "its attention appears here as a triangle, one row per prompt token.",
         "还没有计算任何东西。预填充（空格键）让整个提示词一次性通过模型：它的注意力会在这里显示为"
         "一个三角形，每个提示词 token 一行。"},
        {"prefill: %d rows at once", "预填充：一次 %d 行"},
        {"decode: 1 new row (%d keys)", "解码：新增 1 行（%d 个键）"},
        {"the context is full", "上下文已满"},
        {"end token", "结束 token"},
        {"length limit", "长度上限"},
        {"Keys", "按键"},
        {"Space or Right", "空格或右方向键"},
        {"step: prefill first, then one decode token",
         "前进一步：先预填充，之后每次解码一个 token"},
        {"play / pause (speed slider in the toolbar)", "播放 / 暂停（速度滑块在工具栏里）"},
        {"reset to the prompt", "重置到提示词"},
        {"cache mode: on, off, compare both", "缓存模式：开、关、两者对比"},
        {"[ and ]  or Shift+Left/Right", "[ 和 ]  或 Shift+左/右"},
        {"scrub back / forward through the steps", "在各步之间后退 / 前进"},
        {"first step / newest step", "第一步 / 最新一步"},
        {"+ and -", "+ 和 -"},
        {"text size", "文字大小"},
        {"light / dark theme", "浅色 / 深色主题"},
        {"full screen", "全屏"},
        {"1 to 9", "1 到 9"},
        {"S / Shift+S", "S / Shift+S"},
        {"inside attention: the next / previous stage of the row (q and K, q·k, ×1/√d_k, mask, "
         "softmax, ×V, output; then all)",
         "注意力内部：这一行的下一步 / 上一步（q 和 "
         "K、q·k、×1/√d_k、掩码、softmax、×V、输出；然后全部）"},
        {"inside attention: play the stages one after another", "注意力内部：逐步播放各个步骤"},
        {"causal vs bidirectional: the same model without its causal mask beside it",
         "因果与双向对比：同一个模型去掉因果掩码，放在旁边"},
        {"value (V)", "值（V）"},
        {"Lesson: what this step measured", "课程：这一步测到的结果"},
        {"(key 3: maximise for the bytes plot and the what-if table)",
         "（按 3 放大，可看字节曲线和 K/V 头数对比表）"},
        {"context vector = the last row (position %d): logit(word) = projection(word) . context",
         "上下文向量 = 最后一行（位置 %d）：logit(词) = 投影(词) · 上下文"},
        {"probability", "概率"},
        {"logit", "logit"},
        {"position %d: \"%s\"", "位置 %d：“%s”"},
        {"a panel alone in the window: 1 tokens, 2 attention, 3 KV cache, 4 time, 5 next token, 6 "
         "toy table, 7 lesson, 8 inside attention, 9 op strip (again, 0 or Esc: back)",
         "单独显示一个面板，占满窗口：1 token，2 注意力，3 KV 缓存，4 时间，5 下一个 token，6 "
         "玩具表格，"
         "7 课程，8 注意力内部，9 算子条（再按一次、0 或 Esc：返回）"},
        {"double-click a title", "双击标题栏"},
        {"maximise that panel / restore", "放大该面板 / 还原"},
        {"presenter mode: hide the toolbar and the titles (F5 or Esc: back)",
         "演示模式：隐藏工具栏和标题栏（F5 或 Esc 返回）"},
        {"save a PNG of the window (current folder)", "把窗口保存为 PNG（当前文件夹）"},
        {"show / hide the lesson", "显示 / 隐藏课程"},
        {"N or Page Down", "N 或 Page Down"},
        {"lesson: next step (runs its actions)", "课程：下一步（执行它的操作）"},
        {"B or Page Up", "B 或 Page Up"},
        {"lesson: step back (replays the steps before it)", "课程：上一步（重放它之前的各步）"},
        {"F1 or Esc", "F1 或 Esc"},
        {"this help", "本帮助"},
        {"Keys are ignored while a text field has the focus.", "文本框获得焦点时，按键不起作用。"},
        {"Numbering: positions count from 1 (the first prompt token is at position 1); layers, "
         "heads, K/V heads and steps count from 0 (step 0 is the prefill).",
         "编号约定：位置从 1 数起（提示词的第一个 token 在位置 1）；层、头、K/V 头和步从 0 数起"
         "（第 0 步是预填充）。"},
        {"%s: the prefill wrote %d columns; its last query read %d",
         "%s：预填充写入了 %d 列；它的最后一个查询读取了 %d 列"},
        {"%s: step %d wrote position %d, its query read %d",
         "%s：第 %d 步写入了位置 %d，它的查询读取了 %d 列"},
        {"%s: step %d rebuilt all %d columns, read %d",
         "%s：第 %d 步重建了全部 %d 列，读取了 %d 列"},
        {"position %d, %s, kv head %d, channel %d", "位置 %d，%s，KV 头 %d，通道 %d"},
        {"value %.4f", "值 %.4f"},
        {"not in the trace any more", "已不在记录中"},
        {"colour scale: +-%.3g", "颜色刻度：±%.3g"},
        {"%d (as attention)", "%d（同注意力面板）"},
        {"as the attention panel", "同注意力面板"},
        {"written", "已写入"},
        {"read by the query", "被查询读取"},
        {"K and V, each layer: [B=1, T=%d, n_kv_heads=%d, head_dim=%d] float32 = %s each. All: %s; "
         "full context (%d): %s",
         "每层的 K 和 V：[B=1, T=%d, n_kv_heads=%d, head_dim=%d] float32，各 "
         "%s。全部：%s；完整上下文（%d）：%s"},
        {"The cache is empty: the prefill writes one column per prompt token.",
         "缓存是空的：预填充会为每个提示词 token 写入一列。"},
        {"KV bytes vs tokens", "KV 字节数与 token 数"},
        {"tokens", "token 数"},
        {"this", "本模型"},
        {"Same model, other K/V head counts", "同一模型，其他 K/V 头数"},
        {"layout", "结构"},
        {"per token", "每个 token"},
        {" (this)", "（本模型）"},
        {"Choose a lesson", "选择一课"},
        {"Close", "关闭"},
        {"Time per step against batch size", "每步时间与批量大小"},
        {"measured on %s, the fastest of %d runs", "在 %s 上测得，取 %d 次运行中最快的一次"},
        {"batch", "批量"},
        {"rows per step", "每步行数"},
        {"time per step", "每步时间"},
        {"rows per second", "每秒行数"},
        {"The KV caches after the last run (batch %d, layer %d): one per prompt, "
         "%d to %d rows (prompt + new tokens)",
         "最后一轮之后的 KV 缓存（批量 %d，第 %d 层）：每个提示词一份，"
         "%d 到 %d 行（提示词 + 新 token）"},
        {"outlined: the row the last decode step wrote (a prompt that stopped earlier wrote "
         "none); bar: the rows its query read",
         "描边：最后一个解码步写入的那一行（更早停下的提示词没有写入）；横条：它的查询读取的行"},
        {"prompt %d", "提示词 %d"},
        {"%s on %s (counted from shapes, not measured)", "%s 在 %s 上（按形状计数，并非实测）"},
        {"%d layers, %d heads, %d K/V heads of %d, dim %d",
         "%d 层，%d 个头，%d 个 K/V 头（每个 %d），维度 %d"},
        {"model", "模型"},
        {"%d tokens, batch %d, %d bytes per value", "%d 个 token，批量 %d，每个数值 %d 字节"},
        {"context", "上下文"},
        {"weights", "权重"},
        {"KV cache per token", "每个 token 的 KV 缓存"},
        {"KV cache in all", "KV 缓存总量"},
        {"fits", "装得下"},
        {"does not fit", "装不下"},
        {"memory", "显存"},
        {"%.0f FLOP per byte", "每字节 %.0f FLOP"},
        {"ridge point", "拐点"},
        {"FLOPs", "FLOPs"},
        {"bytes", "字节数"},
        {"FLOP per byte", "每字节 FLOP"},
        {"compute time", "计算时间"},
        {"memory time", "访存时间"},
        {"bound by", "瓶颈"},
        {"compute", "计算"},
        {"Choose a lesson above.", "请在上方选择一课。"},
        {"this lesson has no steps", "这一课没有步骤"},
        {"step %d of %d", "第 %d 步，共 %d 步"},
        {"stopped", "已停止"},
        {"the engine is playing this step", "引擎正在执行这一步"},
        {"%d of %d checks hold", "%d / %d 项检查成立"},
        {"What the engine did (numbers)", "引擎做了什么（数字）"},
        {"< Back (B)", "< 上一步 (B)"},
        {"Next (N) >", "下一步 (N) >"},
        {"temperature", "温度"},
        {"0 (greedy)", "0（贪心）"},
        {"top-k (0 off)", "top-k（0 为关闭）"},
        {"seed", "种子"},
        {"sampler set (its random stream restarts from the seed)",
         "采样器已设置（随机数序列从种子重新开始）"},
        {"The next-token distribution appears after the prefill.",
         "预填充之后，这里会显示下一个 token 的分布。"},
        {"Step %d chose \"%s\" (id %d)", "第 %d 步选择了 \"%s\"（编号 %d）"},
        {"random draw %.4f (temperature %.2f, top-k %d, top-p %.2f, seed %llu)",
         "随机数 %.4f（温度 %.2f，top-k %d，top-p %.2f，种子 %llu）"},
        {"greedy: the most likely token", "贪心：选择概率最大的 token"},
        {"without cache: \"%s\"; largest |logit difference| %s",
         "不用缓存：\"%s\"；最大 |logit 差| %s"},
        {"without cache: still replaying...", "不用缓存：仍在重放……"},
        {"most likely next tokens (softmax of the logits, temperature 1):",
         "最可能的下一个 token（logits 的 softmax，温度 1）："},
        {"softmax of the logits, temperature 1:", "logits 的 softmax，温度 1："},
        {"first token", "首个 token"},
        {"total", "合计"},
        {"measured on", "测量设备"},
        {"step %d ran fused: %s, %d kernel launches", "第 %d 步以融合内核运行：%s，启动 %d 个内核"},
        {"step %d ran as one CUDA graph: %s, %d kernel launches",
         "第 %d 步作为一个 CUDA 图运行：%s，启动 %d 个内核"},
        {"step %d ran op by op, every op timed: %s, %d kernel launches",
         "第 %d 步逐个算子运行，每个算子都计时：%s，启动 %d 个内核"},
        {"the same step as one CUDA graph: %s, %d kernel launches",
         "同一步作为一个 CUDA 图：%s，启动 %d 个内核"},
        {"the same step fused: %s, %d kernel launches", "同一步用融合内核：%s，启动 %d 个内核"},
        {"without cache (counted)", "不用缓存（按形状计数）"},
        {"with cache (counted)", "使用缓存（按形状计数）"},
        {"log scale", "对数刻度"},
        {"time so far", "累计时间"},
        {"FLOPs per step (counted)", "每步 FLOPs（按形状计数）"},
        {"Prompt", "提示词"},
        {"Use prompt", "使用提示词"},
        {"prompt (prefill)", "提示词（预填充）"},
        {"generated", "已生成"},
        {"going in at this step", "本步输入"},
        {"chosen at this step", "本步选出"},
        {"Enter uses the edited prompt (and resets)", "按回车使用修改后的提示词（并重置）"},
        {"finished: the context of %d tokens is full", "已结束：%d 个 token 的上下文已满"},
        {"finished: %s", "已结束：%s"},
        {"prompt token: not processed yet (press Prefill)", "提示词 token：尚未处理（按“预填充”）"},
        {"prompt token: processed at the prefill (step 0)",
         "提示词 token：在预填充（第 0 步）中处理"},
        {"chosen at step %d, fed in at step %d", "在第 %d 步选出，在第 %d 步输入"},
        {"chosen at this step (%d); goes in at the next step", "在本步（%d）选出；下一步输入"},
        {"(going in now)", "（正在输入）"},
        {"position %d, token id %d", "位置 %d，token 编号 %d"},
        {"piece: \"%s\"", "片段：\"%s\""},
        {"toy example", "玩具示例"},
        {"our default model", "我们的默认模型"},
        {"(none)", "（无）"},
        {"generation has finished (%s): press R to reset", "生成已经结束（%s）：按 R 重置"},
        {"Model", "模型"},
        {"Open file...", "打开文件……"},
        // The web page's open button, in the bar under the window (web/web_loop.cpp).
        {"Open a checkpoint or trace…", "打开模型文件或录制的运行……"},
        {"a llama2.c checkpoint and its tokenizer (e.g. stories260K.bin and tok512.bin), a GGUF "
         "file, or a recorded run (a trace .json from kvscope-cli generate --trace-json or the "
         "window's Export); or drop them on the page",
         "llama2.c 模型文件及其分词器（例如 stories260K.bin 和 tok512.bin）、GGUF "
         "文件，或录制的运行"
         "（由 kvscope-cli generate --trace-json 或窗口的“导出”写出的 JSON 文件）；"
         "也可以把它们直接拖到页面上"},
        {"hand-made weights", "手工设定的权重"},
        {"of weights", "的权重"},
        {"%s of weights kept as %s; a decode token reads %s",
         "权重 %s，按 %s 保存；每个解码 token 读取 %s"},
        {"Weight types", "权重类型"},
        {"This panel needs a Llama-style model (the toy and GPT-2 have no weights to keep in "
         "other types).",
         "此面板需要 Llama 结构的模型（玩具示例和 GPT-2 没有可以换成其他类型保存的权重）。"},
        {"Each decode token reads every weight once. The same model with its matrices in each "
         "type, measured on this CPU (1 thread, median of 8 decode steps):",
         "每个解码 token 都要把每个权重读一遍。下面是同一个模型的矩阵以各种类型保存时，在这台 CPU "
         "上测得的结果（1 个线程，8 个解码步的中位数）："},
        {"Measure", "测量"},
        {"as stored", "按文件保存"},
        {"Measure again", "重新测量"},
        {"measuring...", "正在测量……"},
        {"asked", "要求的类型"},
        {"kept as", "实际保存为"},
        {"bytes per token", "每个 token 读取的字节"},
        {"decode tok/s", "解码 token/秒"},
        {"read rate", "读取速率"},
        {"of bandwidth", "占带宽"},
        {"not run: ", "未运行："},
        {"read bandwidth of this machine: %.1f GB/s (1 thread, best of 3 runs, as kvscope-cli "
         "bench --limits measures it)",
         "本机读取带宽：%.1f GB/s（1 个线程，3 次运行中最好的一次，与 kvscope-cli bench --limits "
         "的测法相同）"},
        {"weight types: bytes per token and decode speed in f32, f16, q8_0 and q4_K, measured",
         "权重类型：f32、f16、q8_0 和 q4_K 下每个 token 读取的字节与解码速度（实测）"},
        {"%s: %d layers, %d heads (%d K/V), head size %d, dim %d, vocab %d, context %d, %s",
         "%s：%d 层，%d 个头（%d 个 K/V），头大小 %d，维度 %d，词表 %d，上下文 %d，%s"},
        {"Open", "打开"},
        {"Backend", "后端"},
        {"on", "开"},
        {"off", "关"},
        {"compare both", "两者对比"},
        {"Light", "浅色"},
        {"Dark", "深色"},
        {"Keys (F1)", "按键 (F1)"},
        {"Hide lesson (L)", "隐藏课程 (L)"},
        {"Lessons (L)", "课程 (L)"},
        {"Reset", "重置"},
        {"Prefill", "预填充"},
        {"Step", "单步"},
        {"Pause", "暂停"},
        {"Play", "播放"},
        {"%.1f steps/s", "每秒 %.1f 步"},
        {"step %%d of %d", "第 %%d 步，共 %d 步"},
        {"no steps yet", "还没有步骤"},
        {"latest", "最新"},
        {"More", "更多"},
        {"Less", "收起"},
        {"to latest", "回到最新"},
        {"%s (%slayers: %d, heads: %d, K/V heads: %d)", "%s（%s层数：%d，头数：%d，K/V 头数：%d）"},
        {"opening a model...", "正在打开模型……"},
        {"no model open", "没有打开的模型"},
        {"runs on", "运行在"},
        {"the backend chosen is not used", "所选后端未被使用"},
        {"Each head's output per token appears here after the prefill.",
         "预填充之后，这里会显示每个头在每个 token 上的输出。"},
        {"position", "位置"},
        {"token", "token"},
        {"L%d head %d", "层 %d 头 %d"},
        {"head %d", "头 %d"},
        {"setting the trace budget", "正在设置记录的内存预算"},
        {"could not set the trace budget", "无法设置记录的内存预算"},
        {"The ops of a step appear here after the prefill.",
         "预填充之后，这里会显示一步中的各个运算。"},
        {"This model's steps have no op log (the toy's heads follow rules, not these ops).",
         "这个模型的步骤没有运算记录（玩具模型的头按规则计算，不走这些运算）。"},
        {"step %d (%s, %s): %d ops, %s counted, %s measured (sum of the ops' own times);  , and . "
         "walk the ops",
         "第 %d 步（%s，%s）：%d 个运算，计数 %s，实测 %s（各运算自身时间之和）；  , 和 . "
         "逐个查看运算"},
        {"op", "运算"},
        {"layer", "层"},
        {"input [rows, features]", "输入 [行, 特征]"},
        {"output [rows, features]", "输出 [行, 特征]"},
        {"FLOPs (counted)", "FLOPs（计数）"},
        // The op strip's op names (core/counts.h op_kind_name), drawn inside Chinese text.
        {"embedding", "词嵌入"},
        {"rmsnorm", "RMS 归一化"},
        {"q projection", "q 投影"},
        {"k projection", "k 投影"},
        {"v projection", "v 投影"},
        {"q bias", "q 偏置"},
        {"k bias", "k 偏置"},
        {"v bias", "v 偏置"},
        {"rope", "RoPE 旋转"},
        {"kv append", "追加 K/V"},
        {"scores q.k", "分数 q.k"},
        {"softmax", "softmax"},
        {"x V", "乘以 V"},
        {"output projection", "输出投影"},
        {"residual", "残差相加"},
        {"mlp rmsnorm", "MLP 前的 RMS 归一化"},
        {"mlp gate (w1)", "MLP 门控（w1）"},
        {"mlp up (w3)", "MLP 升维（w3）"},
        {"mlp swiglu", "MLP 的 SwiGLU"},
        {"mlp down (w2)", "MLP 降维（w2）"},
        {"mlp residual", "MLP 残差相加"},
        {"final rmsnorm", "最后的 RMS 归一化"},
        {"classifier", "输出层（logits）"},
        {"sampling", "采样"},
        {"position embedding", "位置嵌入"},
        {"token + position", "词嵌入加位置嵌入"},
        {"layernorm", "层归一化"},
        {"output bias", "输出偏置"},
        {"mlp layernorm", "MLP 前的层归一化"},
        {"mlp up (c_fc)", "MLP 升维（c_fc）"},
        {"mlp up bias", "MLP 升维偏置"},
        {"mlp gelu", "MLP 的 GELU"},
        {"mlp down (c_proj)", "MLP 降维（c_proj）"},
        {"mlp down bias", "MLP 降维偏置"},
        {"final layernorm", "最后的层归一化"},
        {"time (measured)", "时间（实测）"},
        {"in #%d's call", "计入 #%d 的调用"},
        {"not timed", "未计时"},
        {"in the step's graph", "计入这一步的图"},
        {"this step ran fused: %d kernels, each op listed in the kernel it ran in; with the strip "
         "open the next steps run op by op, every op timed",
         "这一步以融合内核运行：共 %d "
         "个内核，每个运算列在它所在的内核中；打开此栏后，后面的步骤逐个运算"
         "运行，每个运算都计时"},
        {"this step ran as one CUDA graph: no time per op; with the strip open the next steps run "
         "op by op, every op timed",
         "这一步作为一个 CUDA "
         "图运行，没有逐个运算的时间；打开此栏后，后面的步骤逐个运算运行，每个运算都"
         "计时"},
        {"times: CUDA events between the kernels, the stream held until the step's ops were "
         "queued, then released: the device's own time",
         "时间：内核之间的 CUDA "
         "事件；先让流等待，直到这一步的运算都已排队，再放行，所以是设备本身的"
         "时间"},
        {"times: CUDA events around each launch (they include the host's issue time when "
         "launches are slower than the kernels)",
         "时间：每次启动前后的 CUDA 事件（启动比内核慢时，其中包含主机发出启动的时间）"},
        {"times: the emulator's wall clock (the CPU running the kernels, not a GPU)",
         "时间：模拟器的挂钟时间（是 CPU 在运行内核，不是 GPU）"},
        {"Inside attention", "注意力内部"},
        {"Ops of this step", "这一步的各个运算"},
        {"recomputed", "重新计算"},
        {"click: this row's arithmetic (Inside attention)",
         "单击：查看这一行的计算过程（注意力内部）"},
        {"q [1, %d] · Kᵀ [%d, %d] → scores [1, %d]", "q [1, %d] · Kᵀ [%d, %d] → 分数 [1, %d]"},
        {"row %d (position %d)", "第 %d 行（位置 %d）"},
        {"Predict: ", "先预测："},
        {"Keys 1-4 answer, Enter alone skips; then the step runs.",
         "按 1-4 作答，只按 Enter 就跳过；然后这一步运行。"},
        {"Type a number and Enter, Enter alone skips; then the step runs.",
         "输入一个数再按 Enter，只按 Enter 就跳过；然后这一步运行。"},
        {"Your answer: %s", "你的答案：%s"},
        {"none given", "没有作答"},
        {"The engine: ", "引擎的答案："},
        {"you predicted it", "你猜对了"},
        {"not what you predicted", "和你的预测不同"},
        {"Why: %s", "原因：%s"},
        {"kernel launches per decode step (counted)", "每个解码步的内核启动次数（计数）"},
        {"%d for %d tokens", "%d 次，对应 %d 个 token"},
        {"kernel launches of the prefill (counted)", "预填充的内核启动次数（计数）"},
        {"%d graph launch, %d kernels inside", "%d 次图启动，图里有 %d 个内核"},
        {"as a CUDA Graph (counted)", "录成 CUDA Graph（计数）"},
        {"%s (median of %d steps)", "%s（%d 步的中位数）"},
        {"decode step on this CPU (measured)", "本机 CPU 上的一个解码步（实测）"},
        {"decode step on a GPU (measured)", "GPU 上的一个解码步（实测）"},
        {"not measured: no GPU answered", "没有实测：没有 GPU 响应"},
        {"%s op by op, %s as one graph (%s)", "逐个算子 %s，作为一个图 %s（%s）"},
        {"1 to 4, digits, Enter", "1 到 4、数字、Enter"},
        {"lesson: answer the step's question before it runs (then see the engine's answer)",
         "课程：在这一步运行之前回答它的问题（然后看引擎的答案）"},
        {"Q [%d, %d] · Kᵀ [%d, %d] → scores [%d, %d]; shown: %s",
         "Q [%d, %d] · Kᵀ [%d, %d] → 分数 [%d, %d]；这里显示%s"},
        {"weights [1, %d] · V [%d, %d] → output [1, %d]",
         "权重 [1, %d] · V [%d, %d] → 输出 [1, %d]"},
        {"grouped-query attention: K/V head %d is read by query heads %s",
         "分组查询注意力：K/V 头 %d 由查询头 %s 共用"},
        {"scores by the head's rule: 0 where it selects the key, −∞ where not",
         "分数来自这个头的规则：选中的键为 0，其余为 −∞"},
        {"×1/√d_k = 1/√%d = %s", "×1/√d_k = 1/√%d = %s"},
        {"+ mask", "+ 掩码"},
        {"softmax w", "softmax 权重"},
        {"cached: read from the KV cache", "缓存：从 KV 缓存读出"},
        {"new: written to the cache by this step", "新增：这一步写入缓存"},
        {"recomputed: no cache, computed again from the tokens",
         "重算：没有缓存，从 token 重新算出"},
        {"%s row %d, channel %d: %s", "%s 第 %d 行，通道 %d：%s"},
        {"(rule)", "（规则）"},
        {"output", "输出"},
        {"key", "键"},
        {"scaled score", "缩放后的分数"},
        {"mask", "掩码"},
        {"weight", "权重"},
        {"keys 0..%d not drawn (no room)", "键 0..%d 未画出（空间不够）"},
        {"Nothing computed yet: step the model (Space), then pick a row.",
         "还没有计算任何东西：先让模型走一步（空格键），再选一行。"},
        {"layer %d, head %s, %s: query \"%s\": step %d (%s, %s)",
         "第 %d 层，头 %s，%s的查询“%s”：第 %d 步（%s，%s）"},
        {"S: stage, A: play, Up/Down: row, I: close", "S：分步，A：播放，上/下：换行，I：关闭"},
        {"every stage at once", "所有步骤一起显示"},
        {"stage %d of %d", "第 %d 步，共 %d 步"},
        {"q and the K rows", "q 和各行 K"},
        {"the scores q·k_j", "分数 q·k_j"},
        {"scaled by 1/√d_k", "乘以 1/√d_k"},
        {"the causal mask", "因果掩码"},
        {"softmax: the weights", "softmax：得到权重"},
        {"the weights times V", "权重乘以 V"},
        {"the output", "输出"},
        {"(−∞ above the diagonal)", "（对角线以上为 −∞）"},
        {"earlier q rows", "更早的 q 行"},
        {"bidirectional", "双向"},
        {"query ↓", "查询 ↓"},
        {"key →", "键 →"},
        {"K/V read and written, %s", "K/V 读写（%s）"},
        {"input", "输入"},
        {"time", "时间"},
        {"weights read", "读取权重"},
        {"bytes per step (counted)", "每步的字节数（按形状计数）"},
        {"step %d reads %s of weights and %s of K/V (counted); K/V reads pass the weights' at "
         "position %.0f%s",
         "第 %d 步读取 %s 权重和 %s K/V（按形状计数）；读取的 K/V 在位置 %.0f 超过权重%s"},
        {", beyond this model's context", "，超出了这个模型的上下文"},
        {"causal, without KV cache", "因果，不用 KV 缓存"},
        {"bidirectional (no causal mask)", "双向（没有因果掩码）"},
        {"After a decode step, each side measures how far the earlier tokens' K/V rows moved "
         "when one token was appended (Space: step).",
         "每个解码步之后，两边都会测出：追加一个 token 后，更早 token 的 K/V "
         "行变了多少（空格键：走一步）。"},
        {"max |ΔK| per layer, the earlier tokens' K rows after one token more (measured):",
         "逐层最大 |ΔK|：多一个 token 之后，更早 token 的 K 行（实测）："},
        {"Causal: no earlier row moves, so a cache of K and V is exact. Bidirectional: layer 0's "
         "K/V come from the token embeddings alone and do not move; from layer 1 on each row "
         "takes in the new token through attention, so a cache of them would be stale.",
         "因果：更早的行一行都不变，所以缓存 K 和 V 是精确的。双向：第 0 层的 K/V 只来自各 token "
         "的嵌入，"
         "不会变；从第 1 层起，每一行都通过注意力吸收了新 token，所以缓存它们就会过时。"},
        {"bidirectional: its own most likely token \"%s\" (it takes the causal one's); largest "
         "|logit difference| %s",
         "双向：它自己最可能的 token 是 “%s”（它沿用因果那边的 token）；logit 最大差 %s"},
        {"computed at this step", "在这一步算出"},
        {"never kept: no later step reads it", "从不保存：之后没有哪一步会读它"},
        {"recomputed, only to rebuild the next layer's K/V", "重新算出，只为重建下一层的 K/V"},
        {"recomputed and thrown away: nothing reads it", "重新算出后被丢弃：没有谁读它"},
        {"inside attention: q·Kᵀ, √d_k, mask, softmax, ×V for one row (click a heatmap row)",
         "注意力内部：一行的 q·Kᵀ、√d_k、掩码、softmax、×V（也可单击热力图的一行）"},
        {"Up / Down", "上 / 下"},
        {"inside attention: the query row above / below", "注意力内部：上一个 / 下一个查询行"},
        {"op strip: every op of the step with shapes, FLOPs, time",
         "运算条：这一步的每个运算，含形状、FLOPs 和时间"},
        {", and .", ", 和 ."},
        {"op strip: previous / next op (the panel follows its layer)",
         "运算条：上一个 / 下一个运算（注意力内部跟随它所在的层）"},
        {"setting how steps are timed", "正在设置每步的计时方式"},
        {"%s; each step the median of %d runs", "%s；每步取 %d 次运行的中位数"},
        {"step %d: median %s of %d runs, fastest %s, slowest %s",
         "第 %d 步：%s（%d 次运行的中位数），最快 %s，最慢 %s"},
        {"could not set how steps are timed", "无法设置每步的计时方式"},
    };
    return table;
}

const char* lang_code(Lang l) {
    return l == Lang::Zh ? "zh" : "en";
}

Lang lang_from_code(const std::string& code) {
    return code == "zh" ? Lang::Zh : Lang::En;
}

void set_language(Lang l) {
    g_lang = l;
}

Lang language() {
    return g_lang;
}

const char* tr(const char* en, Lang l) {
    if (l == Lang::En) return en;
    static const auto index = [] {
        std::unordered_map<std::string_view, const char*> m;
        for (const auto& s : ui_strings()) m.emplace(s.en, s.zh);
        return m;
    }();
    const auto it = index.find(en);
    return it == index.end() ? en : it->second;
}

const char* tr(const char* en) {
    return tr(en, g_lang);
}

std::string query_row_label(int row, int token_index) {
    char b[96];
    std::snprintf(b, sizeof b, tr("row %d (position %d)"), row, position_of_index(token_index));
    return b;
}

std::string printf_conversions(const char* fmt) {
    std::string out;
    for (const char* p = fmt; *p; ++p) {
        if (*p != '%') continue;
        ++p;
        if (*p == '%') continue;  // a literal percent sign
        // Flags, width, precision and length, then the conversion letter.
        while (*p &&
               std::string_view("-+ #0123456789.*hlLqjzt").find(*p) != std::string_view::npos) {
            if (*p == '*' || *p == 'h' || *p == 'l' || *p == 'L' || *p == 'j' || *p == 'z' ||
                *p == 't' || *p == 'q')
                out += *p;
            ++p;
        }
        if (!*p) break;
        out += *p;
    }
    return out;
}

}  // namespace kvs::gui
