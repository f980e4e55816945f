#pragma once
// Dead letters: a document the engine rejected (mapping error, malformed) is
// not retried and not dropped. The shipper indexes a dead-letter document
// into <prefix>-deadletter-YYYY.MM.DD (fields: docs/documents.md) and, if
// even that is refused, writes it as a line to
// <spool>/dead/deadletter-YYYY.MM.DD.ndjson. Pure rendering, tested on its own.

#include <string>
#include <string_view>

#include "common/clock.h"
#include "indexer/internal/bulk_result.h"

namespace salttap::indexer {

struct DeadLetter {
  std::string index;       // the original _index ("" when the action line had none or did not parse)
  std::string doc_id;      // the original _id ("" likewise)
  int status = 0;          // the HTTP status the engine gave the item (or the request)
  std::string error_type;  // e.g. mapper_parsing_exception
  std::string reason;      // the engine's reason, as classified
  std::string document;    // the original source line without '\n' (the whole payload if it had none)
  Micros rejected_at = 0;  // names the dead-letter index's day
};

// `payload` is the rejected record ("<action>\n<source>\n").
DeadLetter make_dead_letter(std::string_view payload, const ItemResult& result, Micros now);

// "<action>\n<source>\n" indexing `d` into `dead_letter_index` with
// _id "<index>/<doc_id>" (no _id when the original had none).
std::string dead_letter_ndjson(const DeadLetter& d, std::string_view dead_letter_index);

// One NDJSON line (with '\n') for the local file: the same fields plus
// `refused`, why the dead-letter index did not take it.
std::string dead_letter_file_line(const DeadLetter& d, std::string_view refused);

// "deadletter-YYYY.MM.DD.ndjson" for the UTC day of `t`.
std::string dead_letter_file_name(Micros t);

}  // namespace salttap::indexer
