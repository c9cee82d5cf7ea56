#pragma once
// Which of a pool's blocks are held, by how many, and which still hold a prefix someone may ask
// for again: vLLM's automatic prefix caching (its BlockPool). A full block is known by its hash,
// made from its tokens and the hash of the block before it (so equal hashes mean an equal
// prefix up to the block's end); a request whose tokens begin with a known block's finds it at
// admission and holds it instead of computing its rows. A block whose last holder lets it go
// keeps its rows and its hash at the end of the free queue; blocks are taken from the front of
// that queue, least recently let go first, and a taken block forgets its hash (evicted). So a
// prefix outlives the requests that computed it until the pool needs its blocks.
//
// The alternative SGLang takes (RadixAttention) keys the cache by a radix tree of token
// sequences instead of block hashes, so a match can end anywhere, not only at a block's end.
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace kvs {

class BlockCache {
  public:
    // Blocks 0..n_blocks-1 of block_size rows, all free (block 0 first in the queue).
    BlockCache(int n_blocks, int block_size);
    int n_blocks() const { return static_cast<int>(refs_.size()); }
    int block_size() const { return block_size_; }
    // Blocks no request holds: free ones, cached or empty; any of them can be taken.
    int free_blocks() const { return free_count_; }
    int used_blocks() const { return n_blocks() - free_count_; }
    // Free blocks that still hold a known prefix block (waiting in the queue for reuse).
    int cached_free_blocks() const { return cached_free_; }
    int refs(int block) const { return refs_.at(block); }
    bool cached(int block) const { return key_.at(block).has_hash; }
    // Cached blocks taken for other rows, since the start.
    long long evictions() const { return evictions_; }

    // The free block at the front of the queue, now held once (a cached one forgets its prefix:
    // evicted); -1 when every block is held.
    int take();
    // One holder more; a free block found in the cache leaves the queue.
    void hold(int block);
    // One holder less; at none the block joins the back of the queue, its prefix kept.
    void drop(int block);
    // The blocks holding the longest prefix of `tokens` in whole blocks, at most `max_rows`
    // rows: block i of the result holds rows [i * block_size, (i + 1) * block_size).
    std::vector<int> find(std::span<const int> tokens, int max_rows) const;
    // Block `block` holds rows [index * block_size, (index + 1) * block_size) of `tokens` (a
    // sequence's tokens, at least that many) and the rows before them are those of its earlier
    // blocks: known from now on by that prefix, unless another block already is (then nothing
    // changes). Its rows need not be computed yet: they are by the end of the pass that computes
    // them, before any request could read them.
    void remember(int block, std::span<const int> tokens, int index);

  private:
    struct Key {
        bool has_hash = false;
        std::uint64_t hash = 0;
        std::vector<int> prefix;  // the tokens of every row up to the block's end: a hash
                                  // collision then misses instead of sharing wrong rows
    };
    std::uint64_t hash_of(std::span<const int> tokens, int index) const;
    void forget(int block);
    void unlink(int block);
    void push_back(int block);

    int block_size_;
    std::vector<int> refs_;
    std::vector<Key> key_;
    std::unordered_map<std::uint64_t, int> by_hash_;
    // The free queue, a doubly linked list through the free blocks: front first taken.
    std::vector<int> prev_, next_;
    int front_ = -1, back_ = -1, free_count_ = 0, cached_free_ = 0;
    long long evictions_ = 0;
};

}  // namespace kvs
