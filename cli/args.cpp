#include "cli/args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/error.h"

namespace kvs::cli {

Args::Args(std::string command, std::vector<OptionSpec> specs, int argc, char** argv, int first)
    : command_(std::move(command)), specs_(std::move(specs)) {
    for (int i = first; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            help_ = true;
            continue;
        }
        if (a.rfind("--", 0) != 0)
            throw Error(command_ + ": unexpected argument '" + a + "' (see --help)");
        const auto eq = a.find('=');
        const bool inline_value = eq != std::string::npos;
        std::string name(a, 2, inline_value ? eq - 2 : std::string::npos);
        std::string value = inline_value ? std::string(a, eq + 1) : std::string();
        const OptionSpec* spec = nullptr;
        for (const auto& s : specs_)
            if (s.name == name) spec = &s;
        if (!spec) throw Error(command_ + ": unknown option '--" + name + "' (see --help)");
        if (spec->value_name.empty()) {
            if (inline_value) throw Error(command_ + ": --" + name + " takes no value");
            values_.insert_or_assign(name, std::string(1, '1'));  // flag present
        } else {
            if (!inline_value) {
                if (i + 1 >= argc) throw Error(command_ + ": --" + name + " needs a value");
                value = argv[++i];
            }
            // `--model ""` (an unset shell variable) names no file: say which option, not what
            // the empty name failed as later. Only a prompt may be empty.
            if (value.empty() && name != "prompt")
                throw Error(command_ + ": --" + name + " needs a value, not an empty string");
            values_[name] = value;
        }
    }
}

std::string Args::usage() const {
    std::ostringstream s;
    s << "usage: kvscope-cli " << command_ << " [options]\n";
    for (const auto& o : specs_) {
        std::string left = "--" + o.name + (o.value_name.empty() ? "" : " " + o.value_name);
        s << "  " << left << std::string(left.size() < 26 ? 26 - left.size() : 1, ' ') << o.help
          << "\n";
    }
    s << "  --help                    this text\n";
    return s.str();
}

std::string Args::str(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
}

int Args::integer(const std::string& name, int fallback, int lo, int hi) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    const std::string& v = it->second;
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno == ERANGE)
        throw Error(command_ + ": --" + name + ": '" + v + "' is not a whole number");
    if (x < lo || x > hi)
        throw Error(command_ + ": --" + name + ": " + v + " is out of range (" +
                    std::to_string(lo) + ".." + std::to_string(hi) + ")");
    return static_cast<int>(x);
}

std::uint64_t Args::unsigned_integer(const std::string& name, std::uint64_t fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    const std::string& v = it->second;
    // Digits only: strtoull would take "-1" as 2^64-1, strtod "1.5" as a number.
    const bool digits =
        !v.empty() && v.size() <= 20 && v.find_first_not_of("0123456789") == std::string::npos;
    char* end = nullptr;
    errno = 0;
    const unsigned long long x = digits ? std::strtoull(v.c_str(), &end, 10) : 0;
    if (!digits || errno == ERANGE)
        throw Error(command_ + ": --" + name + ": '" + v +
                    "' is not a whole number from 0 to 18446744073709551615");
    return x;
}

double Args::number(const std::string& name, double fallback, double lo, double hi) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    const std::string& v = it->second;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x))
        throw Error(command_ + ": --" + name + ": '" + v + "' is not a number");
    if (x < lo || x > hi) {
        std::ostringstream s;
        s << command_ << ": --" << name << ": " << v << " is out of range (" << lo << ".." << hi
          << ")";
        throw Error(s.str());
    }
    return x;
}

std::vector<int> Args::int_list(const std::string& name, std::vector<int> fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    std::vector<int> out;
    std::stringstream ss(it->second);
    std::string item;
    while (std::getline(ss, item, ',')) {
        char* end = nullptr;
        const long x = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || x <= 0 || x > (1 << 20))
            throw Error(command_ + ": --" + name + ": '" + item +
                        "' is not a positive whole number");
        out.push_back(static_cast<int>(x));
    }
    if (out.empty()) throw Error(command_ + ": --" + name + " is empty");
    return out;
}

}  // namespace kvs::cli
