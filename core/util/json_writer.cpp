#include "core/util/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/util/utf8.h"

namespace kvs {

std::string json_escape(std::string_view s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = utf8_sequence_length(s, i);
        char buf[8];
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c < 0x20 || c == 0x7f || n == 0) {
            std::snprintf(buf, sizeof buf, "\\u%04x", c);  // control or stray byte
            out += buf;
            i += 1;
            continue;
        } else {
            out.append(s.substr(i, n));
            i += n;
            continue;
        }
        i += 1;
    }
    return out + "\"";
}

void JsonWriter::separate() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) os_.put(',');
        first_.back() = false;
    }
}

JsonWriter& JsonWriter::begin_object() {
    separate();
    os_ << '{';
    first_.push_back(true);
    return *this;
}
JsonWriter& JsonWriter::end_object() {
    os_ << '}';
    first_.pop_back();
    return *this;
}
JsonWriter& JsonWriter::begin_array() {
    separate();
    os_ << '[';
    first_.push_back(true);
    return *this;
}
JsonWriter& JsonWriter::end_array() {
    os_ << ']';
    first_.pop_back();
    return *this;
}
JsonWriter& JsonWriter::key(std::string_view k) {
    separate();
    os_ << json_escape(k) << ':';
    after_key_ = true;
    return *this;
}
JsonWriter& JsonWriter::value(std::string_view s) {
    separate();
    os_ << json_escape(s);
    return *this;
}
JsonWriter& JsonWriter::value(double v) {
    separate();
    if (!std::isfinite(v)) {
        if (non_finite_ == NonFinite::null)
            os_ << "null";
        else
            os_ << (std::isnan(v) ? "\"NaN\"" : v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    } else {
        // printf's %.9g (to_chars with a precision is specified as printf in the C locale),
        // without printf's and ostream's per-call costs: a trace holds millions of floats.
        char buf[32];
#if defined(__cpp_lib_to_chars)
        const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 9);
        os_.write(buf, r.ptr - buf);
#else  // a libc++ without floating-point to_chars (Emscripten 3.1.6's, the web build)
        os_.write(buf, std::snprintf(buf, sizeof buf, "%.9g", v));
#endif
    }
    return *this;
}
JsonWriter& JsonWriter::value(std::int64_t v) {
    separate();
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    os_.write(buf, r.ptr - buf);
    return *this;
}
JsonWriter& JsonWriter::value(bool b) {
    separate();
    os_ << (b ? "true" : "false");
    return *this;
}
JsonWriter& JsonWriter::null() {
    separate();
    os_ << "null";
    return *this;
}
JsonWriter& JsonWriter::floats(std::span<const float> v) {
    begin_array();
    for (float f : v) value(static_cast<double>(f));
    return end_array();
}
JsonWriter& JsonWriter::ints(std::span<const int> v) {
    begin_array();
    for (int i : v) value(i);
    return end_array();
}

}  // namespace kvs
