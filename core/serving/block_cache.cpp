#include "core/serving/block_cache.h"

#include <algorithm>
#include <string>

#include "core/util/error.h"
#include "core/util/splitmix64.h"

namespace kvs {
namespace {

// Block i's hash from the hash of the blocks before it and its own tokens.
std::uint64_t chain(std::uint64_t parent, std::span<const int> block) {
    std::uint64_t h = parent ^ 0x6A09E667F3BCC908ull;
    for (int t : block) {
        std::uint64_t s = h ^ static_cast<std::uint32_t>(t);
        h = splitmix64_next(s);
    }
    return h;
}

}  // namespace

BlockCache::BlockCache(int n_blocks, int block_size)
    : block_size_(block_size),
      refs_(n_blocks, 0),
      key_(n_blocks),
      prev_(n_blocks, -1),
      next_(n_blocks, -1) {
    if (n_blocks < 1 || block_size < 1)
        throw Error("a block cache of " + std::to_string(n_blocks) + " blocks of " +
                    std::to_string(block_size) + " rows");
    for (int b = 0; b < n_blocks; ++b) push_back(b);
}

std::uint64_t BlockCache::hash_of(std::span<const int> tokens, int index) const {
    std::uint64_t h = 0;
    for (int i = 0; i <= index; ++i)
        h = chain(h, tokens.subspan(std::size_t(i) * block_size_, block_size_));
    return h;
}

void BlockCache::unlink(int b) {
    (prev_[b] >= 0 ? next_[prev_[b]] : front_) = next_[b];
    (next_[b] >= 0 ? prev_[next_[b]] : back_) = prev_[b];
    prev_[b] = next_[b] = -1;
    --free_count_;
    if (key_[b].has_hash) --cached_free_;
}

void BlockCache::push_back(int b) {
    prev_[b] = back_;
    next_[b] = -1;
    (back_ >= 0 ? next_[back_] : front_) = b;
    back_ = b;
    ++free_count_;
    if (key_[b].has_hash) ++cached_free_;
}

void BlockCache::forget(int b) {
    Key& k = key_[b];
    if (!k.has_hash) return;
    const auto it = by_hash_.find(k.hash);
    if (it != by_hash_.end() && it->second == b) by_hash_.erase(it);
    k = Key{};
}

int BlockCache::take() {
    if (front_ < 0) return -1;
    const int b = front_;
    unlink(b);
    if (key_[b].has_hash) {
        forget(b);
        ++evictions_;
    }
    refs_[b] = 1;
    return b;
}

void BlockCache::hold(int b) {
    if (refs_.at(b) == 0) unlink(b);
    ++refs_[b];
}

void BlockCache::drop(int b) {
    if (refs_.at(b) < 1) throw Error("letting go of a free KV block");
    if (--refs_[b] == 0) push_back(b);
}

std::vector<int> BlockCache::find(std::span<const int> tokens, int max_rows) const {
    std::vector<int> found;
    const int whole = std::min<int>(max_rows, static_cast<int>(tokens.size())) / block_size_;
    std::uint64_t h = 0;
    for (int i = 0; i < whole; ++i) {
        const std::size_t end = std::size_t(i + 1) * block_size_;
        h = chain(h, tokens.subspan(end - block_size_, block_size_));
        const auto it = by_hash_.find(h);
        if (it == by_hash_.end()) break;
        const std::vector<int>& prefix = key_[it->second].prefix;
        if (!std::equal(prefix.begin(), prefix.end(), tokens.begin(), tokens.begin() + end)) break;
        found.push_back(it->second);
    }
    return found;
}

void BlockCache::remember(int b, std::span<const int> tokens, int index) {
    const std::size_t end = std::size_t(index + 1) * block_size_;
    if (tokens.size() < end) throw Error("a KV block remembered before its tokens are known");
    Key& k = key_.at(b);
    if (k.has_hash) return;  // found in the cache: known already
    const std::uint64_t h = hash_of(tokens, index);
    if (by_hash_.count(h)) return;  // another block holds this prefix (or a colliding one)
    by_hash_.emplace(h, b);
    k.has_hash = true;
    k.hash = h;
    k.prefix.assign(tokens.begin(), tokens.begin() + end);
    if (refs_[b] == 0) ++cached_free_;
}

}  // namespace kvs
