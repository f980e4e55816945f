#pragma once
// SharedPool<T>: values kept once however many holders share them, counted
// by reference. A burst of 200,000 jobs of one command shares one copy of its
// load (function, target, arguments, risk) instead of 200,000.
//
// T needs operator==, an AbslHashValue overload and memory_bytes() (heap
// bytes it holds). Ref 0 is "none"; intern() and share() add a reference,
// release() drops one and frees the value with its last holder.

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include <absl/hash/hash.h>

namespace salttap::correlator {

template <typename T>
class SharedPool {
 public:
  using Ref = std::uint32_t;
  static constexpr Ref kNone = 0;

  Ref intern(T&& value) {
    const std::size_t hash = absl::HashOf(value);
    auto [first, last] = by_hash_.equal_range(hash);
    for (auto it = first; it != last; ++it)
      if (entries_[it->second].value == value) return share(it->second);
    Ref ref;
    if (!free_.empty()) {
      ref = free_.back();
      free_.pop_back();
    } else {
      if (entries_.empty()) entries_.emplace_back();  // [0] is kNone
      ref = static_cast<Ref>(entries_.size());
      entries_.emplace_back();
    }
    Entry& e = entries_[ref];
    e.value = std::move(value);
    e.refs = 1;
    e.hash = hash;
    e.bytes = e.value.memory_bytes();
    bytes_ += e.bytes;
    by_hash_.emplace(hash, ref);
    ++live_;
    return ref;
  }
  Ref share(Ref ref) {
    if (ref != kNone) ++entries_[ref].refs;
    return ref;
  }
  void release(Ref ref) {
    if (ref == kNone) return;
    Entry& e = entries_[ref];
    if (--e.refs > 0) return;
    auto [first, last] = by_hash_.equal_range(e.hash);
    for (auto it = first; it != last; ++it)
      if (it->second == ref) {
        by_hash_.erase(it);
        break;
      }
    bytes_ -= e.bytes;
    e.value = T{};
    free_.push_back(ref);
    --live_;
  }
  const T& get(Ref ref) const { return entries_[ref].value; }
  std::uint32_t refs(Ref ref) const { return entries_[ref].refs; }
  std::size_t size() const { return live_; }

  // Every byte the pool holds: its tables and its values' heap.
  std::size_t memory_bytes() const {
    constexpr std::size_t kHashNode = sizeof(std::pair<const std::size_t, Ref>) + 2 * sizeof(void*);
    return entries_.capacity() * sizeof(Entry) + free_.capacity() * sizeof(Ref) + by_hash_.size() * kHashNode +
           by_hash_.bucket_count() * sizeof(void*) + bytes_;
  }

 private:
  struct Entry {
    T value{};
    std::uint32_t refs = 0;
    std::size_t hash = 0;
    std::size_t bytes = 0;
  };
  std::vector<Entry> entries_;
  std::vector<Ref> free_;
  std::unordered_multimap<std::size_t, Ref> by_hash_;  // collisions compare the values
  std::size_t bytes_ = 0;
  std::size_t live_ = 0;
};

}  // namespace salttap::correlator
