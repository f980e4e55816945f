#include "dashboards/saved_objects.h"

#include <random>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace salttap::dashboards {
namespace {

std::string excerpt(std::string_view line) {
  constexpr std::size_t kMax = 80;
  return line.size() > kMax ? std::string(line.substr(0, kMax)) + "..." : std::string(line);
}

// One line, already parsed as an index pattern: its title with `prefix`, or an error.
std::string rewrite_title(rapidjson::Document& obj, std::string_view prefix, std::string& error) {
  const std::string id = obj.HasMember("id") && obj["id"].IsString() ? obj["id"].GetString() : "?";
  auto attributes = obj.FindMember("attributes");
  if (attributes == obj.MemberEnd() || !attributes->value.IsObject()) {
    error = fmt::format("index pattern {} has no attributes", id);
    return {};
  }
  auto title = attributes->value.FindMember("title");
  const std::string expected = std::string(kDefaultIndexPrefix) + "-";
  if (title == attributes->value.MemberEnd() || !title->value.IsString() ||
      !std::string_view(title->value.GetString(), title->value.GetStringLength()).starts_with(expected)) {
    error = fmt::format("index pattern {}: its title does not start with \"{}\", so the index prefix cannot be applied",
                        id, expected);
    return {};
  }
  const std::string renamed =
      std::string(prefix) + std::string(title->value.GetString() + kDefaultIndexPrefix.size(),
                                        title->value.GetStringLength() - kDefaultIndexPrefix.size());
  title->value.SetString(renamed.data(), static_cast<rapidjson::SizeType>(renamed.size()), obj.GetAllocator());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  obj.Accept(writer);
  return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace

SavedObjects prepare_saved_objects(std::string_view ndjson, std::string_view prefix) {
  SavedObjects out;
  const bool rename = prefix != kDefaultIndexPrefix;
  std::size_t number = 0;
  while (!ndjson.empty()) {
    const auto eol = ndjson.find('\n');
    std::string_view line = ndjson.substr(0, eol);
    ndjson.remove_prefix(eol == std::string_view::npos ? ndjson.size() : eol + 1);
    ++number;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    rapidjson::Document obj;
    obj.Parse(line.data(), line.size());
    if (obj.HasParseError()) {
      out.error = fmt::format("line {}: not JSON ({} at offset {}): {}", number,
                              rapidjson::GetParseError_En(obj.GetParseError()), obj.GetErrorOffset(), excerpt(line));
      return out;
    }
    if (!obj.IsObject()) {
      out.error = fmt::format("line {}: not a JSON object: {}", number, excerpt(line));
      return out;
    }
    const auto type = obj.FindMember("type");
    const bool typed = type != obj.MemberEnd() && type->value.IsString();
    out.objects += typed;
    const bool index_pattern = typed && std::string_view(type->value.GetString()) == "index-pattern";
    out.index_patterns += index_pattern;
    if (index_pattern && rename) {
      const std::string rewritten = rewrite_title(obj, prefix, out.error);
      if (!out.error.empty()) {
        out.error = fmt::format("line {}: {}", number, out.error);
        return out;
      }
      out.ndjson += rewritten;
    } else {
      out.ndjson += line;
    }
    out.ndjson += '\n';
  }
  if (out.objects == 0) out.error = "no saved objects in it (no line has a \"type\")";
  return out;
}

MultipartBody multipart_file(std::string_view field, std::string_view filename, std::string_view file_type,
                             std::string_view content) {
  // A boundary must not occur in the content; 128 random bits make a clash
  // unlikely, the check makes it impossible.
  std::mt19937_64 rng{std::random_device{}()};
  std::string boundary;
  do {
    boundary = fmt::format("salttap-{:016x}{:016x}", rng(), rng());
  } while (content.find(boundary) != std::string_view::npos);
  MultipartBody out;
  out.content_type = "multipart/form-data; boundary=" + boundary;
  out.body = fmt::format(
      "--{0}\r\nContent-Disposition: form-data; name=\"{1}\"; filename=\"{2}\"\r\nContent-Type: {3}\r\n\r\n", boundary,
      field, filename, file_type);
  out.body += content;
  out.body += fmt::format("\r\n--{}--\r\n", boundary);
  return out;
}

}  // namespace salttap::dashboards
