// The prefix cache's bookkeeping (vLLM's BlockPool): reference counts, a free queue taken least
// recently freed first, full blocks found by the hash of their prefix and forgotten when taken.
#include <catch2/catch.hpp>

#include <vector>

#include "core/serving/block_cache.h"
#include "core/util/error.h"

using namespace kvs;

TEST_CASE("the block cache hands out free blocks in order and takes them back at no holder",
          "[serving][block_cache]") {
    BlockCache c(4, 2);
    CHECK(c.free_blocks() == 4);
    const int a = c.take(), b = c.take();
    CHECK(a == 0);
    CHECK(b == 1);
    CHECK(c.used_blocks() == 2);
    c.hold(a);
    CHECK(c.refs(a) == 2);
    c.drop(a);
    CHECK(c.free_blocks() == 2);
    c.drop(a);
    c.drop(b);
    CHECK(c.free_blocks() == 4);
    CHECK_THROWS_AS(c.drop(a), Error);
    CHECK(c.take() == 2);  // the queue's front: blocks 2, 3, then 0 and 1 as they came back
    CHECK(c.take() == 3);
    CHECK(c.take() == 0);
    CHECK(c.take() == 1);
    CHECK(c.take() == -1);
}

TEST_CASE("a remembered block is found by its prefix after its holder lets it go",
          "[serving][block_cache]") {
    BlockCache c(6, 2);
    const std::vector<int> tokens{5, 6, 7, 8, 9};
    const int b0 = c.take(), b1 = c.take();
    c.remember(b0, tokens, 0);
    c.remember(b1, tokens, 1);
    CHECK(c.cached(b0));
    // Whole blocks only, and at most max_rows rows: 4 rows of 5 hold blocks 0 and 1.
    CHECK(c.find(tokens, 4) == std::vector<int>{b0, b1});
    CHECK(c.find(tokens, 3) == std::vector<int>{b0});
    // Another prefix: block 0 matches, block 1 does not (its hash chains the earlier tokens).
    CHECK(c.find(std::vector<int>{5, 6, 7, 1, 9}, 4) == std::vector<int>{b0});
    CHECK(c.find(std::vector<int>{4, 6, 7, 8}, 4).empty());
    // Let go: still cached, waiting in the queue.
    c.drop(b1);
    c.drop(b0);
    CHECK(c.free_blocks() == 6);
    CHECK(c.cached_free_blocks() == 2);
    CHECK(c.find(tokens, 4) == std::vector<int>{b0, b1});
    // Found again and held: out of the queue.
    c.hold(b0);
    CHECK(c.free_blocks() == 5);
    CHECK(c.cached_free_blocks() == 1);
    c.drop(b0);
    // The same prefix remembered by another block changes nothing: the first keeps it.
    const int other = c.take();
    c.remember(other, tokens, 0);
    CHECK_FALSE(c.cached(other));
    CHECK(c.find(tokens, 2) == std::vector<int>{b0});
    CHECK_THROWS_AS(c.remember(other, tokens, 2), Error);  // rows 4..5: token 5 unknown
}

TEST_CASE("cached blocks are evicted least recently freed first, only when the pool needs them",
          "[serving][block_cache]") {
    BlockCache c(3, 1);
    const std::vector<int> x{1, 2, 3}, y{7, 8, 9};
    const int x0 = c.take(), x1 = c.take();
    c.remember(x0, x, 0);
    c.remember(x1, x, 1);
    // A request lets its blocks go last block first: x1 joins the queue before x0.
    c.drop(x1);
    c.drop(x0);
    CHECK(c.evictions() == 0);
    // The queue: the never-used block 2, then x1, then x0.
    CHECK(c.take() == 2);
    CHECK(c.evictions() == 0);
    CHECK(c.find(x, 2) == std::vector<int>{x0, x1});
    CHECK(c.take() == x1);  // evicted: forgets its prefix
    CHECK(c.evictions() == 1);
    CHECK_FALSE(c.cached(x1));
    CHECK(c.find(x, 2) == std::vector<int>{x0});
    c.remember(x1, y, 0);
    CHECK(c.find(y, 1) == std::vector<int>{x1});
}
