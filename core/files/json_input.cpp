#include "core/files/json_input.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/util/error.h"
#include "core/util/text_file.h"
#include "core/util/utf8.h"

namespace kvs {
namespace {

void excerpt_into(std::string& out, const nlohmann::json& v, int depth, std::size_t max_chars) {
    if (out.size() > max_chars) return;
    if (v.is_array() || v.is_object()) {
        const bool array = v.is_array();
        out += array ? '[' : '{';
        if (depth >= 3) {
            if (!v.empty()) out += "...";
        } else {
            bool first = true;
            for (auto it = v.begin(); it != v.end(); ++it) {
                if (out.size() > max_chars) break;
                if (!first) out += ',';
                first = false;
                if (!array) {
                    excerpt_into(out, nlohmann::json(it.key()), depth + 1, max_chars);
                    out += ':';
                }
                excerpt_into(out, *it, depth + 1, max_chars);
            }
        }
        out += array ? ']' : '}';
    } else if (v.is_string()) {
        // A scalar's dump() does not recurse; a long string is cut first.
        constexpr auto replace = nlohmann::json::error_handler_t::replace;
        const std::string& s = v.get_ref<const std::string&>();
        if (s.size() <= 40) {
            out += v.dump(-1, ' ', false, replace);
        } else {
            out += nlohmann::json(s.substr(0, 40)).dump(-1, ' ', false, replace);
            out += "...";
        }
    } else {
        out += v.dump();
    }
}

}  // namespace

std::size_t json_too_deep_at(std::string_view text, int limit) {
    int depth = 0;
    bool in_string = false, escaped = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit) return i;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return std::string_view::npos;
}

std::string_view json_text(std::string_view whole, const std::string& name) {
    const std::string_view text = utf8_text(whole, name);
    if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos)
        throw Error(name + ": a NUL byte at byte " +
                    std::to_string(nul + whole.size() - text.size()) +
                    ": not JSON text (JSON holds none; what follows it would not be read)");
    return text;
}

nlohmann::json parse_json_input(std::string_view whole, const std::string& name) {
    const std::string_view text = json_text(whole, name);
    if (const std::size_t at = json_too_deep_at(text, kMaxJsonDepth); at != std::string_view::npos)
        throw Error(name + ": JSON nested more than " + std::to_string(kMaxJsonDepth) +
                    " levels deep (at byte " + std::to_string(at + whole.size() - text.size()) +
                    "); kvscope reads at most " + std::to_string(kMaxJsonDepth));
    try {
        return nlohmann::json::parse(text.begin(), text.end(), DuplicateKeyCheck(name));
    } catch (const nlohmann::json::exception& e) {
        throw Error(name + ": " + json_syntax_problem(whole, e, whole.size() - text.size()));
    }
}

std::string json_syntax_problem(std::string_view text, const nlohmann::json::exception& e,
                                std::size_t skipped) {
    // nlohmann's what(): "[json.exception.parse_error.101] parse error at line 1, column 8:
    // syntax error while parsing object - unexpected end of input; expected '}'" and, after a
    // bad token, "; last read: 'TOKEN'" (any length: a whole string), which the excerpt replaces.
    std::string_view what = e.what();
    if (const auto b = what.find("] "); b != std::string_view::npos) what.remove_prefix(b + 2);
    const auto* pe = dynamic_cast<const nlohmann::json::parse_error*>(&e);
    if (!pe) {  // out_of_range 406: "number overflow parsing '1e999'", the number at any length
        std::string_view num = what.substr(std::min(what.find('\''), what.size()));
        if (num.starts_with('\'')) num.remove_prefix(1);
        if (num.ends_with('\'')) num.remove_suffix(1);
        return "not valid JSON: a number beyond a double's range ('" +
               escape_for_one_line(num.substr(0, 40)) + (num.size() > 40 ? "...')" : "')");
    }
    if (const auto c = what.find(": "); c != std::string_view::npos) what.remove_prefix(c + 2);
    if (const auto l = what.find("; last read"); l != std::string_view::npos)
        what = what.substr(0, l);
    if (const auto d = what.find(" - "); what.starts_with("syntax error") && d != what.npos)
        what.remove_prefix(d + 3);  // "syntax error while parsing value - " says nothing more
    what = what.substr(0, 120);
    // pe->byte is 1-based, one past the end at the end of the input.
    const std::size_t at =
        std::min<std::size_t>(skipped + (pe->byte > 0 ? pe->byte - 1 : 0), text.size());
    std::size_t line = 1, line_start = 0;
    for (std::size_t i = 0; i < at; ++i)
        if (text[i] == '\n') ++line, line_start = i + 1;
    const std::size_t from = std::max(line_start, at >= 40 ? at - 39 : std::size_t(0));
    // Up to and with the byte at fault, within its line.
    const std::size_t end = at < text.size() && text[at] != '\n' ? at + 1 : at;
    const std::string_view near = text.substr(from, end - from);
    return "not valid JSON at byte " + std::to_string(at) + " (line " + std::to_string(line) +
           ", column " + std::to_string(at - line_start + 1) + "): " + escape_for_one_line(what) +
           (near.empty() ? std::string("; the input is empty")
                         : "; near '" + std::string(from > line_start ? "..." : "") +
                               escape_for_one_line(near) + "'");
}

DuplicateKeyCheck::DuplicateKeyCheck(std::string name) : name_(std::move(name)) {}

bool DuplicateKeyCheck::operator()(int, nlohmann::json::parse_event_t e, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (e == E::object_start || e == E::array_start) {
        open_.emplace_back();
    } else if ((e == E::object_end || e == E::array_end) && !open_.empty()) {
        open_.pop_back();
    } else if (e == E::key && !open_.empty() &&
               !open_.back().insert(parsed.get_ref<const std::string&>()).second) {
        throw Error(name_ + ": the key " + json_excerpt(parsed, 40) +
                    " is given twice in one object (which value is meant is not known)");
    }
    return true;
}

std::string json_excerpt(const nlohmann::json& v, std::size_t max_chars) {
    std::string out;
    excerpt_into(out, v, 0, max_chars);
    if (out.size() > max_chars) out = out.substr(0, max_chars) + "...";
    return out;
}

const nlohmann::json* json_member(const nlohmann::json& obj, std::string_view key) {
    if (!obj.is_object()) return nullptr;
    const auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::int64_t json_int(const nlohmann::json& v, std::int64_t lo, std::int64_t hi, const FileField& f,
                      std::string_view what) {
    if (v.is_number_unsigned()) {
        const std::uint64_t u = v.get<std::uint64_t>();
        if (hi >= 0 && u <= std::uint64_t(hi) && std::int64_t(u) >= lo) return std::int64_t(u);
    } else if (v.is_number_integer()) {
        const std::int64_t i = v.get<std::int64_t>();
        if (i >= lo && i <= hi) return i;
    }
    // A float (288.0, 1e3, 1.5e300), a string, a list: refused as written, nothing cast.
    refuse_number(f, json_excerpt(v, 40), what, lo, std::uint64_t(hi));
}

const std::string& json_string(const nlohmann::json& v, const FileField& f) {
    if (!v.is_string()) throw Error(f.where() + " = " + json_excerpt(v, 40) + " is not a string");
    return v.get_ref<const std::string&>();
}

}  // namespace kvs
