#include "lessonlib/engine_messages.h"

#include <string_view>

namespace kvs {

const std::vector<MessageForm>& engine_message_forms() {
    // Longer forms first where one form starts another's text ("CPU backend (asked for)").
    static const std::vector<MessageForm> forms = {
        // kernels/backend_factory.cpp: which backend runs and why.
        {"CPU backend: no usable CUDA device (%s)", "CPU 后端：没有可用的 CUDA 设备（%s）"},
        {"no NVIDIA GPU found: running on the CPU", "没有找到 NVIDIA GPU：在 CPU 上运行"},
        {"CPU backend: the CUDA device could not be set up (%s)",
         "CPU 后端：CUDA 设备无法初始化（%s）"},
        {"this build has no CUDA backend (nvcc was not found when it was configured)",
         "这个版本没有 CUDA 后端（配置时没有找到 nvcc）"},
        {"CUDA backend (a CUDA device answered)", "CUDA 后端（找到了 CUDA 设备）"},
        {"CUDA kernels emulated on the CPU (asked for)", "在 CPU 上模拟运行的 CUDA 内核（按设置）"},
        {"CPU backend (asked for)", "CPU 后端（按设置）"},
        {"CPU backend (a web page has no CUDA)", "CPU 后端（网页里没有 CUDA）"},
        {"CUDA backend (asked for)", "CUDA 后端（按设置）"},
        {"%s; --threads %s applies to the CPU backend only", "%s；--threads %s 只对 CPU 后端有效"},
        {"--backend cuda: no usable CUDA device (%s)",
         "--backend cuda：没有可用的 CUDA 设备（%s）"},
        // gui/engine/sessions.cpp: opening a model, a fallback, a failure.
        {"%s; showing %s instead", "%s；改为显示 %s"},
        {"%s (still showing the recorded run)", "%s（仍显示录制的运行）"},
        {"%s (still showing %s)", "%s（仍显示 %s）"},
        // gui/engine/replay.cpp: a recorded run (a replay) cannot run.
        {"a recorded run shows the cache mode it was recorded in (open a model to switch it)",
         "录制的运行只显示录制时的缓存模式（要切换，请打开一个模型）"},
        {"a recorded run keeps its prompt (open a model to try another)",
         "录制的运行保留它自己的提示词（要换提示词，请打开一个模型）"},
        {"a recorded run cannot be run again: it shows what was recorded (open a model to run "
         "one)",
         "录制的运行不能重新运行：它只显示录下的内容（要运行，请打开一个模型）"},
        {"a recorded run cannot run a step: it shows what was recorded (open a model to run one)",
         "录制的运行不能再走一步：它只显示录下的内容（要运行，请打开一个模型）"},
        {"nothing to export: no model is open", "没有可导出的内容：还没有打开模型"},
        {"no model is open", "没有打开的模型"},
        {"no model loaded yet (@model comes first)", "还没有加载模型（要先有 @model）"},
        {"out of memory", "内存不足"},
        {"internal error: %s", "内部错误：%s"},
        {"@decode needs @prefill first", "@decode 之前要先 @prefill"},
        // core/util/file_bytes.cpp: a file that cannot be read.
        {"%s: cannot open: %s", "%s：无法打开：%s"},
        {"%s: read error: %s", "%s：读取出错：%s"},
        {"%s: is a folder; give the path of a file in it",
         "%s：这是一个文件夹，请给出其中某个文件的路径"},
        {"%s: not a regular file (a device, pipe or socket); give a file",
         "%s：不是普通文件（而是设备、管道或套接字），请给出一个文件"},
        {"No such file or directory", "没有这个文件或目录"},
        {"Permission denied", "权限不够"},
        // kernels/cpu/cpu_backend.cpp: what measured a time.
        {"CPU, %s threads", "CPU（%s 个线程）"},
        {"CPU, %s thread", "CPU（%s 个线程）"},
        {"CUDA driver version is insufficient for CUDA runtime version",
         "CUDA 驱动的版本低于 CUDA 运行时的要求"},
        // gui/fonts.cpp
        {"font file refused (%s)", "字体文件被拒绝（%s）"},
    };
    return forms;
}

namespace {

// Matches `text` against `form`'s literal pieces in order; the slots take what lies between
// (the last piece must end the text). The slots' texts land in `slots`.
bool match(std::string_view text, std::string_view form, std::vector<std::string>& slots) {
    slots.clear();
    std::size_t t = 0, f = 0;
    bool slot_open = false;
    while (f <= form.size()) {
        const std::size_t next = form.find("%s", f);
        const std::string_view piece =
            form.substr(f, next == std::string_view::npos ? form.size() - f : next - f);
        const bool last = next == std::string_view::npos;
        std::size_t at;
        if (!slot_open)
            at = text.compare(t, piece.size(), piece) == 0 ? t : std::string_view::npos;
        else if (last)
            at = text.size() >= piece.size() && text.size() - piece.size() >= t &&
                         text.substr(text.size() - piece.size()) == piece
                     ? text.size() - piece.size()
                     : std::string_view::npos;
        else
            at = piece.empty() ? std::string_view::npos : text.find(piece, t);
        if (at == std::string_view::npos) return false;
        if (slot_open) slots.emplace_back(text.substr(t, at - t));
        t = at + piece.size();
        if (last) return t == text.size();
        slot_open = true;
        f = next + 2;
    }
    return false;
}

}  // namespace

std::string engine_message(const std::string& message, ReportLang l) {
    if (l == ReportLang::En || message.empty()) return message;
    std::vector<std::string> slots;
    for (const MessageForm& m : engine_message_forms()) {
        if (!match(message, m.en, slots)) continue;
        std::string out;
        std::size_t k = 0;
        for (std::string_view z = m.zh;;) {
            const std::size_t at = z.find("%s");
            out += z.substr(0, at);
            if (at == std::string_view::npos) break;
            if (k < slots.size()) out += engine_message(slots[k++], l);
            z.remove_prefix(at + 2);
        }
        return out;
    }
    return message;
}

}  // namespace kvs
