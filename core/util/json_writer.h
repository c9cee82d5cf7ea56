#pragma once
// A small streaming JSON writer: enough for traces, without a dependency in core.
#include <cstdint>
#include <ostream>
#include <span>
#include <string_view>
#include <vector>

namespace kvs {

// How a number JSON cannot hold (NaN, an infinity) is written: null, or as text ("NaN",
// "Infinity", "-Infinity": JavaScript's spellings), which a reader can give back as that value.
enum class NonFinite { null, text };

class JsonWriter {
  public:
    explicit JsonWriter(std::ostream& os, NonFinite non_finite = NonFinite::null)
        : os_(os), non_finite_(non_finite) {}
    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(std::string_view k);
    JsonWriter& value(std::string_view s);
    JsonWriter& value(const char* s) { return value(std::string_view(s)); }
    JsonWriter& value(double v);
    JsonWriter& value(std::int64_t v);
    JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
    JsonWriter& value(std::size_t v) { return value(static_cast<std::int64_t>(v)); }
    JsonWriter& value(bool b);
    JsonWriter& null();
    JsonWriter& floats(std::span<const float> v);
    JsonWriter& ints(std::span<const int> v);
    template <class T>
    JsonWriter& field(std::string_view k, const T& v) {
        key(k);
        return value(v);
    }

  private:
    void separate();
    std::ostream& os_;
    NonFinite non_finite_;
    std::vector<bool> first_;  // per open container: nothing written yet
    bool after_key_ = false;
};

// JSON string escaping of arbitrary bytes; invalid UTF-8 bytes become \u00XX.
std::string json_escape(std::string_view s);

}  // namespace kvs
