#pragma once
// Command-line options: --name VALUE, --name=VALUE, and flags. Anything unknown or malformed is a
// kvs::Error with a one-line message; the CLI turns it into exit code 2.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvs::cli {

struct OptionSpec {
    std::string name;        // without the leading "--"
    std::string value_name;  // empty for a flag
    std::string help;
};

class Args {
  public:
    Args(std::string command, std::vector<OptionSpec> specs, int argc, char** argv, int first);
    bool help() const { return help_; }
    std::string usage() const;
    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::string str(const std::string& name, const std::string& fallback = {}) const;
    int integer(const std::string& name, int fallback, int lo, int hi) const;
    std::uint64_t unsigned_integer(const std::string& name, std::uint64_t fallback) const;
    double number(const std::string& name, double fallback, double lo, double hi) const;
    std::vector<int> int_list(const std::string& name, std::vector<int> fallback) const;

  private:
    std::string command_;
    std::vector<OptionSpec> specs_;
    std::map<std::string, std::string> values_;
    bool help_ = false;
};

}  // namespace kvs::cli
