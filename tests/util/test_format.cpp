// One formatting rule for every view (core/util/format.h) and the names of the cache view.
#include <catch2/catch.hpp>
#include <limits>

#include "core/session/cache_view.h"
#include "core/util/format.h"

using namespace kvs;

TEST_CASE("numbers print with three significant digits and a unit", "[format]") {
    CHECK(format_bytes(512) == "512 B");
    CHECK(format_bytes(4096) == "4.00 KiB");
    CHECK(format_bytes(3.5 * 1024) == "3.50 KiB");
    CHECK(format_bytes(41.25 * 1024 * 1024) == "41.2 MiB");
    CHECK(format_bytes(2.0 * (1 << 30)) == "2.00 GiB");
    CHECK(format_flops(950) == "950 FLOP");
    CHECK(format_flops(1.2e6) == "1.20 MFLOP");
    CHECK(format_flops(345e9) == "345 GFLOP");
    CHECK(format_si(13.5e9) == "13.5 G");
    CHECK(format_seconds(29e-9) == "29 ns");
    CHECK(format_seconds(5e-6) == "5.00 µs");
    CHECK(format_seconds(830e-6) == "830 µs");
    CHECK(format_seconds(3.2e-3) == "3.20 ms");
    CHECK(format_seconds(12.44e-3) == "12.4 ms");
    CHECK(format_seconds(412.3e-3) == "412 ms");
    CHECK(format_seconds(1.25) == "1.25 s");
    CHECK(format_seconds(std::numeric_limits<double>::infinity()) == "n/a");
}

TEST_CASE("cache views are named and read in one place", "[format]") {
    for (CacheView v : {CacheView::On, CacheView::Off, CacheView::Compare})
        CHECK(parse_cache_view(cache_view_name(v)) == v);
    CHECK(!parse_cache_view("On"));
    CHECK(!parse_cache_view(""));
    CHECK(modes_for(CacheView::Compare) ==
          std::vector<CacheMode>{CacheMode::Cached, CacheMode::Uncached});
}
