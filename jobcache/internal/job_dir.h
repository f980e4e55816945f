#pragma once
// Where Salt's local_cache keeps one job (docs/salt-event-bus.md §8.1):
// <cachedir>/jobs/<H[0:2]>/<H[2:]>/, H the lowercase hex digest of the jid
// under the master's `hash_type` (md5 up to 2016.3, sha256 since; any
// hashlib name: sha1, sha224, sha384, sha512 ...). salt.utils.jid.jid_dir.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace salttap::jobcache {

// The hex digest of `jid` under `hash_type`; nullopt when OpenSSL does not
// know the name.
[[nodiscard]] std::optional<std::string> jid_digest(std::string_view jid, const std::string& hash_type);

// <jobs_dir>/<H[0:2]>/<H[2:]>; nullopt for an unknown hash_type.
[[nodiscard]] std::optional<std::filesystem::path> job_dir(const std::filesystem::path& jobs_dir, std::string_view jid,
                                                           const std::string& hash_type);

}  // namespace salttap::jobcache
