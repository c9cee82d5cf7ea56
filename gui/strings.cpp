#include "gui/strings.h"

#include <string_view>
#include <unordered_map>

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
        {"1 to 7", "1 到 7"},
        {"value (V)", "值（V）"},
        {"Lesson: what this step measured", "课程：这一步测到的结果"},
        {"(key 3: maximise for the bytes plot and the what-if table)",
         "（按 3 放大，可看字节曲线和 K/V 头数对比表）"},
        {"context vector = the last row (position %d): logit(word) = projection(word) . context",
         "上下文向量 = 最后一行（位置 %d）：logit(词) = 投影(词) · 上下文"},
        {"probability", "概率"},
        {"logit", "logit"},
        {"position %d: \"%s\"", "位置 %d：“%s”"},
        {"maximise a panel: 1 tokens, 2 attention, 3 KV cache, 4 time, 5 next token, 6 toy table, "
         "7 lesson (again, 0 or Esc: restore)",
         "放大一个面板：1 token，2 注意力，3 KV 缓存，4 时间，5 下一个 token，6 玩具表格，7 课程"
         "（再按一次、0 或 Esc：还原）"},
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
        {"hand-made weights", "手工设定的权重"},
        {"of weights", "的权重"},
        {"%s: %d layers, %d heads (%d K/V), head size %d, dim %d, vocab %d, context %d, %s",
         "%s：%d 层，%d 个头（%d 个 K/V），头大小 %d，维度 %d，词表 %d，上下文 %d，%s"},
        {".bin, .gguf or folder", ".bin、.gguf 或文件夹"},
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
        {"step", "步"},
        {"setting the trace budget", "正在设置记录的内存预算"},
        {"could not set the trace budget", "无法设置记录的内存预算"},
        {"The ops of a step appear here after the prefill.",
         "预填充之后，这里会显示一步中的各个运算。"},
        {"This model's steps have no op log (the toy's heads follow rules, not these ops).",
         "这个模型的步骤没有运算记录（玩具模型的头按规则计算，不走这些运算）。"},
        {"step %d (%s, %s): %d ops, %s counted, %s measured (sum of the ops' own times);  , and . "
         "walk the ops",
         "第 %d 步（%s，%s）：%d 个运算，计算值 %s，实测 %s（各运算自身时间之和）；  , 和 . "
         "逐个查看运算"},
        {"op", "运算"},
        {"layer", "层"},
        {"input [rows, features]", "输入 [行, 特征]"},
        {"output [rows, features]", "输出 [行, 特征]"},
        {"FLOPs (counted)", "FLOPs（计算值）"},
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
        {"Q [%d, %d] · Kᵀ [%d, %d] → scores [%d, %d]; shown: row %d (position %d)",
         "Q [%d, %d] · Kᵀ [%d, %d] → 分数 [%d, %d]；这里显示第 %d 行（位置 %d）"},
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
        {"%s channel %d: %s", "%s 通道 %d：%s"},
        {"(rule)", "（规则）"},
        {"output", "输出"},
        {"key", "键"},
        {"scaled score", "缩放后的分数"},
        {"mask", "掩码"},
        {"weight", "权重"},
        {"keys 0..%d not drawn (no room)", "键 0..%d 未画出（空间不够）"},
        {"Nothing computed yet: step the model (Space), then pick a row.",
         "还没有计算任何东西：先让模型走一步（空格键），再选一行。"},
        {"layer %d, head %s, query %d \"%s\": step %d (%s, %s)   Up/Down: row, I: close",
         "第 %d 层，头 %s，查询 %d \"%s\"：第 %d 步（%s，%s）   上/下：换行，I：关闭"},
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
