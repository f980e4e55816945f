#pragma once
// One document on its way to the engine: the bulk action line and the source
// line, NDJSON, each ending in '\n', exactly as they will be shipped. The
// spool stores these bytes; the shipper concatenates them into `_bulk` bodies.
// The document contract (indices, _ids, fields) is docs/documents.md.

#include <cstdint>
#include <string>
#include <string_view>

namespace salttap::indexer {

// The full-spool policy drops by class: events first, then states; jobs,
// returns, alerts and entities are never dropped by policy (docs/spool.md).
enum class DocClass : std::uint8_t { job = 0, ret = 1, state = 2, event = 3, alert = 4, entity = 5 };
inline constexpr std::size_t kDocClasses = 6;

constexpr std::string_view to_string(DocClass c) {
  switch (c) {
    case DocClass::job:
      return "job";
    case DocClass::ret:
      return "return";
    case DocClass::state:
      return "state";
    case DocClass::event:
      return "event";
    case DocClass::alert:
      return "alert";
    case DocClass::entity:
      return "entity";
  }
  return "unknown";
}

struct BulkDoc {
  DocClass cls = DocClass::event;
  std::string ndjson;  // "<action>\n<source>\n"
};

}  // namespace salttap::indexer
