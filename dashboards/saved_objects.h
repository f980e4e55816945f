#pragma once
// salttap's saved-objects exports (deploy/kibana, deploy/opensearch-dashboards)
// as `salttap setup --dashboards` sends them: checked line by line, with a
// non-default index prefix applied, wrapped in the multipart/form-data body
// the saved-objects import API takes. Pure: no I/O.
//
// The index prefix rule (docs/dashboards.md, scripts/dashboards.py): the only
// strings that name indices are the `attributes.title` of the
// `index-pattern` objects, each "salt-<kind>*"; its leading "salt" becomes
// the prefix. Ids, references, queries and the summary line stay as they are,
// so a re-import with any prefix replaces the same objects.

#include <cstddef>
#include <string>
#include <string_view>

namespace salttap::dashboards {

inline constexpr std::string_view kDefaultIndexPrefix = "salt";

struct SavedObjects {
  std::string ndjson;              // what to send: one JSON object a line
  std::size_t objects = 0;         // lines with a "type" (the export's summary line has none)
  std::size_t index_patterns = 0;  // of which index patterns
  std::string error;               // set when the text is not an export this can send
};

// Checks `ndjson` (every non-empty line a JSON object) and, for a prefix
// other than "salt", rewrites each index pattern's title. Lines other than
// index patterns are kept byte for byte. An error names the line and why: not
// JSON, not an object, or (with a prefix to apply) an index pattern whose
// title does not start with "salt-".
SavedObjects prepare_saved_objects(std::string_view ndjson, std::string_view prefix);

struct MultipartBody {
  std::string content_type;  // "multipart/form-data; boundary=..."
  std::string body;
};

// One form field holding a file: Content-Disposition: form-data;
// name="<field>"; filename="<filename>". The boundary is random and checked
// not to occur in `content`.
MultipartBody multipart_file(std::string_view field, std::string_view filename, std::string_view file_type,
                             std::string_view content);

}  // namespace salttap::dashboards
