#pragma once
// Redactor: secrets never leave the process. Every arg list, kwargs map and
// return goes through redact() before it is logged, alerted on or indexed.
//
// What is redacted (each counts as one redaction):
//   1. A map entry whose key (str or bin) matches a key pattern: the value,
//      whatever its type (string, number, nested map...), becomes the marker.
//      This covers kwargs maps in arg lists ({"__kwarg__": true, "password": ...}),
//      pillar-like dicts inside returns, and state kwargs.
//   2. A string (str or bin) of the form `name=value` whose name matches a key
//      pattern (a positional CLI-style kwarg, as `salt '*' mod.fun password=x`
//      sends it through salt-api): becomes "name=<redacted by salttap>".
//      The name follows Salt's own kwarg syntax (salt/utils/args.py
//      KWARG_REGEX: `^([^\d\W][\w.-]*)=(?!=)`), so "a==b" is not a kwarg.
//   3. Each PEM private key block inside any string (str or bin): from
//      "-----BEGIN <label>-----" to "-----END <label>-----" where the label
//      contains "PRIVATE KEY" (RSA/EC/DSA/OPENSSH/ENCRYPTED/PGP ... BLOCK),
//      or to the end of the string when the END line is missing (a trimmed
//      return). Certificates and public keys are left alone.
//   Map keys themselves, non-string keys and their values' types are untouched
//   except as above; nesting deeper than kMaxRedactDepth is replaced whole.
//
// Default key patterns (case-insensitive ECMAScript regexes, searched anywhere
// in the key unless anchored):
//   passw(or)?d                  password, passwd, db_password, PASSWORD
//   passphrase                   ssh / gpg passphrases
//   (^|[_-])pass$                pass, db_pass, smtp-pass (not "bypass", "compass")
//   secret                       secret, client_secret, secret_key, aws_secret_access_key
//   token                        token, api_token, auth_token, X-Auth-Token
//   api[_-]?key                  apikey, api_key, api-key
//   private[_-]?key              private_key, privatekey (the PEM scan catches the key text too)
//   encryption[_-]?key, signing[_-]?key, shared[_-]?key
//   ^key$                        boto/boto3 modules' `key` kwarg (the AWS secret key)
//   credential                   credential, credentials
//   (^|[_-])auth$                auth, http_auth, basic-auth (not "author", "authorized_keys")
//   authorization                HTTP Authorization headers
//   connection[_-]?string        DSNs with embedded passwords
// Default whole-return functions (globs over `fun`):
//   pillar.* (pillar.items/get/raw/data...), config.get, config.option,
//   config.items, config.merge, config.dot_vals (all fall through to pillar
//   and master opts), sdb.get, vault.* (secret back ends), gpg.decrypt,
//   environ.get, environ.items (process environments carry credentials),
//   runner.pillar.* (salt-run pillar.show_pillar).
//
// Not redacted: secrets inside free text, e.g. "mysql --password=x" in a
// cmd.run argument or a state ID (only whole `name=value` strings are).
//
// Cost: map keys go through a literal pre-scan (pattern_set.h) and std::regex
// runs only when a key contains the required literal of a non-literal pattern
// (none of the grains.items keys do); strings are checked for a `name=`
// prefix and scanned for "-----BEGIN". Nothing is allocated when nothing
// changes (except inside std::regex, when it has to run); unchanged subtrees
// are shared. Measured (RelWithDebInfo): grains.items return, 191 nodes,
// ~2.4 us, i.e. ~12 ns per node; a 1.5 MB state.apply-like return with 60k
// keys ~1.5 ms; a 0.9 MB string ~55 us. A single std::regex of every default
// pattern run on every key was ~80x slower on grains.items.
// Redactor is immutable after construction: redact() is safe from any thread.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <msgpack.hpp>

#include "common/config_error.h"
#include "common/glob_list.h"
#include "correlator/pattern_set.h"

namespace salttap::correlator {

std::vector<std::string> default_key_patterns();
std::vector<std::string> default_redact_return_funs();

struct RedactionConfig {
  std::vector<std::string> key_patterns = default_key_patterns();
  std::vector<std::string> redact_return_funs = default_redact_return_funs();
};

inline constexpr std::string_view kRedactedMarker = "<redacted by salttap>";
inline constexpr std::size_t kMaxRedactDepth = 512;

class Redactor {
 public:
  // Throws std::invalid_argument on a bad regex (naming the pattern).
  explicit Redactor(RedactionConfig config = {});

  // `value` with secrets replaced (see the top of this file). Unchanged
  // subtrees are shared with `value`, not copied; new nodes live in `zone`.
  // When nothing is redacted the result is `value` itself (same pointers) and
  // nothing is allocated. `*count` += the number of redactions.
  msgpack::object redact(const msgpack::object& value, msgpack::zone& zone, std::size_t* count = nullptr) const;

  // True when `fun` matches a redact_return_funs glob: replace the whole
  // return with marker().
  bool redacts_whole_return(std::string_view fun) const;

  // True when a map key / kwarg name matches a key pattern.
  bool is_secret_key(std::string_view key) const { return keys_.search(key); }

  // The marker as a msgpack STR object (static storage).
  static msgpack::object marker();

  const RedactionConfig& config() const { return config_; }

 private:
  bool redact_node(const msgpack::object& in, msgpack::object& out, msgpack::zone& zone, std::size_t& count,
                   std::size_t depth) const;
  bool redact_string(const msgpack::object& in, msgpack::object& out, msgpack::zone& zone, std::size_t& count) const;

  RedactionConfig config_;
  detail::PatternSet keys_;
  GlobList whole_return_funs_;  // redact_return_funs
};

// From YAML: a map with optional keys `key_patterns` and `redact_return_funs`
// (sequences of strings; each replaces its default list). A null node gives
// the defaults. Unknown keys, wrong types, empty or bad patterns ->
// ConfigError naming the key.
RedactionConfig parse_redaction_config(const YAML::Node& node);

}  // namespace salttap::correlator
