// Redactor: secrets in keys, kwargs, name=value strings and PEM blocks;
// sharing of unchanged subtrees; counts; config.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <new>
#include <regex>

#include "correlator/redactor.h"
#include "tap/event.h"
#include "tap/event_from_json.h"
#include "tap/event_to_json.h"
#include "tests/support/captures.h"
#include "tests/support/config_errors.h"
#include "tests/support/events.h"

// Heap allocations on this thread while `g_counting` is set (to prove that
// redact() allocates nothing when nothing changes). Not under AddressSanitizer,
// which owns operator new itself.
#define SALTTAP_COUNT_ALLOCATIONS 1
#if defined(__SANITIZE_ADDRESS__)
#undef SALTTAP_COUNT_ALLOCATIONS
#define SALTTAP_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#undef SALTTAP_COUNT_ALLOCATIONS
#define SALTTAP_COUNT_ALLOCATIONS 0
#endif
#endif
namespace {
thread_local bool g_counting = false;
thread_local std::size_t g_allocations = 0;
}  // namespace

#if SALTTAP_COUNT_ALLOCATIONS
void* operator new(std::size_t n) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// GCC cannot see that these pair with the malloc-based operator new above.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

namespace salttap::correlator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using salttap::testing::from_json;

std::string to_json(const msgpack::object& o) {
  std::string out;
  tap::append_msgpack_json(out, o);
  return out;
}

const Redactor& redactor() {
  static const Redactor r;
  return r;
}

// JSON in, JSON out, with the redaction count.
std::string redact_json(std::string_view json, std::size_t* count = nullptr, const Redactor& r = redactor()) {
  const auto in = from_json(json);
  msgpack::zone zone;
  return to_json(r.redact(in.get(), zone, count));
}

const std::string M = std::string(kRedactedMarker);
std::string q(const std::string& s) { return "\"" + s + "\""; }

// A msgpack map {key: value} with arbitrary key/value packers.
template <typename K, typename V>
msgpack::object_handle one_entry(K pack_key, V pack_val) {
  msgpack::sbuffer b;
  msgpack::packer<msgpack::sbuffer> pk(b);
  pk.pack_map(1);
  pack_key(pk);
  pack_val(pk);
  return msgpack::unpack(b.data(), b.size());
}

void pack_bin(msgpack::packer<msgpack::sbuffer>& pk, std::string_view s) {
  pk.pack_bin(static_cast<std::uint32_t>(s.size()));
  pk.pack_bin_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

const std::string kPem =
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----";

// --- keys ------------------------------------------------------------------------------

TEST(Redactor, KwargsMapInArgList) {
  std::size_t n = 0;
  EXPECT_EQ(redact_json(R"(["db.sls", {"__kwarg__": true, "password": "hunter2", "user": "bob"}])", &n),
            R"(["db.sls",{"__kwarg__":true,"password":")" + M + R"(","user":"bob"}])");
  EXPECT_EQ(n, 1u);
}

TEST(Redactor, NestedMapsAndArraysAnyValueType) {
  std::size_t n = 0;
  EXPECT_EQ(redact_json(R"({"a": {"b": [1, {"DB_Password": {"x": [1, 2]}, "ok": "y"}]}, "api-key": 12345,
                            "Token": null, "secrets": ["s1", "s2"], "list": [[{"client_secret": true}]]})",
                        &n),
            R"({"a":{"b":[1,{"DB_Password":")" + M + R"(","ok":"y"}]},"api-key":")" + M + R"(","Token":")" + M +
                R"(","secrets":")" + M + R"(","list":[[{"client_secret":")" + M + R"("}]]})");
  EXPECT_EQ(n, 5u);
}

TEST(Redactor, DefaultKeyPatterns) {
  for (const char* k : {"password",      "passwd",           "PASSWORD",
                        "db_password",   "passphrase",       "pass",
                        "smtp_pass",     "secret",           "aws_secret_access_key",
                        "token",         "X-Auth-Token",     "apikey",
                        "api_key",       "API-Key",          "private_key",
                        "privatekey",    "encryption_key",   "shared-key",
                        "key",           "credential",       "credentials",
                        "auth",          "http_auth",        "basic-auth",
                        "Authorization", "connection_string"})
    EXPECT_TRUE(redactor().is_secret_key(k)) << k;
  for (const char* k : {"user", "username", "bypass", "compass", "passive", "author", "authorized_keys", "keys",
                        "keyid", "pubkey", "monkey", "name", "comment", "__kwarg__", "fingerprint", "cmd", ""})
    EXPECT_FALSE(redactor().is_secret_key(k)) << k;
}

TEST(Redactor, NonStringKeysAreUntouched) {
  EXPECT_EQ(redact_json(R"({"1": "x"})"), R"({"1":"x"})");
  const auto h = one_entry([](auto& pk) { pk.pack(42); }, [](auto& pk) { pk.pack(std::string_view("secret")); });
  msgpack::zone zone;
  std::size_t n = 0;
  const msgpack::object out = redactor().redact(h.get(), zone, &n);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(out.via.map.ptr, h.get().via.map.ptr);
  // The value under a non-string key is still inspected.
  const auto h2 = one_entry([](auto& pk) { pk.pack_nil(); }, [](auto& pk) { pk.pack(std::string_view("password=x")); });
  EXPECT_EQ(to_json(redactor().redact(h2.get(), zone, &n)), R"({"null":"password=)" + M + "\"}");
  EXPECT_EQ(n, 1u);
}

TEST(Redactor, BinKeysAndValues) {
  msgpack::zone zone;
  std::size_t n = 0;
  // bin key "password", bin value: the value becomes the (str) marker.
  const auto h = one_entry([](auto& pk) { pack_bin(pk, "password"); }, [](auto& pk) { pack_bin(pk, "\xff\x00x"); });
  const msgpack::object out = redactor().redact(h.get(), zone, &n);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(out.via.map.ptr[0].val.type, msgpack::type::STR);
  EXPECT_EQ(*tap::as_string(out.via.map.ptr[0].val), kRedactedMarker);
  EXPECT_EQ(out.via.map.ptr[0].key.type, msgpack::type::BIN);
  // bin "name=value" and bin PEM stay bin.
  const auto h2 =
      one_entry([](auto& pk) { pk.pack(std::string_view("arg")); }, [](auto& pk) { pack_bin(pk, "token=abc"); });
  const msgpack::object out2 = redactor().redact(h2.get(), zone, &n);
  EXPECT_EQ(out2.via.map.ptr[0].val.type, msgpack::type::BIN);
  EXPECT_EQ(*tap::as_string(out2.via.map.ptr[0].val), "token=" + M);
  const auto h3 = one_entry([](auto& pk) { pk.pack(std::string_view("data")); },
                            [](auto& pk) { pack_bin(pk, "k: " + kPem + "\n"); });
  const msgpack::object out3 = redactor().redact(h3.get(), zone, &n);
  EXPECT_EQ(out3.via.map.ptr[0].val.type, msgpack::type::BIN);
  EXPECT_EQ(*tap::as_string(out3.via.map.ptr[0].val), "k: " + M + "\n");
  EXPECT_EQ(n, 3u);
}

// --- name=value strings -------------------------------------------------------------------

TEST(Redactor, NameValueStrings) {
  std::size_t n = 0;
  EXPECT_EQ(redact_json(R"(["password=hunter2", "PASSWORD=x", "db.api_key=1", "user=bob", "a==b",
                            "1password=x", "password", "--password=x", "x password=y", "secret="])",
                        &n),
            "[" + q("password=" + M) + "," + q("PASSWORD=" + M) + "," + q("db.api_key=" + M) +
                R"(,"user=bob","a==b","1password=x","password","--password=x","x password=y",)" + q("secret=" + M) +
                "]");
  EXPECT_EQ(n, 4u);
  // The whole value goes, newlines and all.
  EXPECT_EQ(redact_json(R"(["token=abc\ndef"])"), "[" + q("token=" + M) + "]");
}

// --- PEM ------------------------------------------------------------------------------------

TEST(Redactor, PemPrivateKeyBlocks) {
  std::size_t n = 0;
  msgpack::zone zone;
  auto redact_str = [&](const std::string& s) {
    msgpack::sbuffer b;
    msgpack::pack(b, s);
    const auto h = msgpack::unpack(b.data(), b.size());
    return std::string(*tap::as_string(redactor().redact(h.get(), zone, &n)));
  };
  EXPECT_EQ(redact_str("before\n" + kPem + "\nafter"), "before\n" + M + "\nafter");
  EXPECT_EQ(n, 1u);
  n = 0;
  // Several blocks, several labels; certificates and public keys stay.
  const std::string cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  const std::string pub = "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n";
  const std::string ssh = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----";
  const std::string enc = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIF\n-----END ENCRYPTED PRIVATE KEY-----";
  const std::string pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOY\n-----END PGP PRIVATE KEY BLOCK-----";
  EXPECT_EQ(redact_str(cert + kPem + "\n" + pub + ssh + "|" + enc + "|" + pgp + "!"),
            cert + M + "\n" + pub + M + "|" + M + "|" + M + "!");
  EXPECT_EQ(n, 4u);
  // Without its END line, the block runs to the end of the string.
  n = 0;
  EXPECT_EQ(redact_str("x: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI"), "x: " + M);
  EXPECT_EQ(n, 1u);
  // A mismatched END label does not end the block.
  EXPECT_EQ(redact_str("-----BEGIN RSA PRIVATE KEY-----\nA\n-----END EC PRIVATE KEY-----\ntail"), M);
  // Not PEM at all.
  n = 0;
  EXPECT_EQ(redact_str("-----BEGIN"), "-----BEGIN");
  EXPECT_EQ(redact_str("-----BEGIN nothing here"), "-----BEGIN nothing here");
  EXPECT_EQ(redact_str(cert), cert);
  EXPECT_EQ(n, 0u);
}

// --- sharing, allocation, counts ----------------------------------------------------------------

TEST(Redactor, UnchangedSubtreesAreShared) {
  const auto in = from_json(R"({"a": {"x": [1, 2, {"y": "z"}]}, "b": ["q", "r"], "password": "x", "c": "s"})");
  const msgpack::object& src = in.get();
  msgpack::zone zone;
  const msgpack::object out = redactor().redact(src, zone);
  ASSERT_EQ(out.type, msgpack::type::MAP);
  EXPECT_NE(out.via.map.ptr, src.via.map.ptr);                                        // this map changed: a new node
  EXPECT_EQ(src.via.map.ptr[2].val.via.str.size, 1u);                                 // the input is untouched
  EXPECT_EQ(out.via.map.ptr[0].val.via.map.ptr, src.via.map.ptr[0].val.via.map.ptr);  // "a" shared
  EXPECT_EQ(out.via.map.ptr[1].val.via.array.ptr, src.via.map.ptr[1].val.via.array.ptr);  // "b" shared
  EXPECT_EQ(out.via.map.ptr[3].val.via.str.ptr, src.via.map.ptr[3].val.via.str.ptr);      // "c" shared
  EXPECT_EQ(out.via.map.ptr[2].key.via.str.ptr, src.via.map.ptr[2].key.via.str.ptr);      // keys shared

  // Only the path to the change is copied.
  const auto deep = from_json(R"([{"k": [1, 2]}, {"l": [{"token": 1}], "m": {"n": 1}}])");
  const msgpack::object out2 = redactor().redact(deep.get(), zone);
  const msgpack::object& d = deep.get();
  EXPECT_NE(out2.via.array.ptr, d.via.array.ptr);
  EXPECT_EQ(out2.via.array.ptr[0].via.map.ptr, d.via.array.ptr[0].via.map.ptr);
  EXPECT_NE(out2.via.array.ptr[1].via.map.ptr, d.via.array.ptr[1].via.map.ptr);
  EXPECT_EQ(out2.via.array.ptr[1].via.map.ptr[1].val.via.map.ptr, d.via.array.ptr[1].via.map.ptr[1].val.via.map.ptr);
}

TEST(Redactor, NothingToRedactAllocatesNothing) {
  const auto in = from_json(R"({"a": {"x": [1, 2, {"y": "z", "key_size": 2048}]}, "b": ["user=bob", "q"],
                                "cert": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"})");
  const Redactor& r = redactor();  // built (regexes compiled) before counting
  msgpack::zone zone;
  const char* before = static_cast<const char*>(zone.allocate_no_align(1));
  std::size_t n = 0;
  g_allocations = 0;
  g_counting = true;
  const msgpack::object out = r.redact(in.get(), zone, &n);
  g_counting = false;
  if (SALTTAP_COUNT_ALLOCATIONS) {
    EXPECT_EQ(g_allocations, 0u);
  }
  EXPECT_EQ(static_cast<const char*>(zone.allocate_no_align(1)), before + 1);  // the zone did not move
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(out.via.map.ptr, in.get().via.map.ptr);
  EXPECT_TRUE(out == in.get());
}

TEST(Redactor, CountsAccumulate) {
  std::size_t n = 10;
  redact_json(R"({"password": 1, "x": ["secret=1", "token=2"]})", &n);
  EXPECT_EQ(n, 13u);
  redact_json(R"({"password": 1})");  // a null count is fine
}

TEST(Redactor, TooDeepIsRedactedWhole) {
  msgpack::sbuffer b;
  msgpack::packer<msgpack::sbuffer> pk(b);
  for (int i = 0; i < 600; ++i) pk.pack_array(1);
  pk.pack(std::string_view("harmless"));
  const auto h = msgpack::unpack(b.data(), b.size());
  msgpack::zone zone;
  std::size_t n = 0;
  msgpack::object o = redactor().redact(h.get(), zone, &n);
  EXPECT_EQ(n, 1u);
  for (std::size_t depth = 0; depth < kMaxRedactDepth; ++depth) {
    ASSERT_EQ(o.type, msgpack::type::ARRAY) << depth;
    o = o.via.array.ptr[0];
  }
  EXPECT_EQ(*tap::as_string(o), kRedactedMarker);
}

TEST(Redactor, Marker) {
  const msgpack::object m = Redactor::marker();
  EXPECT_EQ(m.type, msgpack::type::STR);
  EXPECT_EQ(*tap::as_string(m), "<redacted by salttap>");
  EXPECT_EQ(m.via.str.ptr, Redactor::marker().via.str.ptr);
}

// --- whole returns ---------------------------------------------------------------------------------

TEST(Redactor, WholeReturnFunctions) {
  for (const char* f : {"pillar.items", "pillar.get", "pillar.raw", "config.get", "config.option", "sdb.get",
                        "vault.read_secret", "environ.items", "runner.pillar.show_pillar"})
    EXPECT_TRUE(redactor().redacts_whole_return(f)) << f;
  for (const char* f : {"grains.items", "cmd.run", "state.apply", "test.ping", "config.valid_fileproto", "pillar"})
    EXPECT_FALSE(redactor().redacts_whole_return(f)) << f;
  const Redactor custom({.key_patterns = {}, .redact_return_funs = {"cp.get_file_str", "x?.*"}});
  EXPECT_TRUE(custom.redacts_whole_return("cp.get_file_str"));
  EXPECT_TRUE(custom.redacts_whole_return("x1.y"));
  EXPECT_FALSE(custom.redacts_whole_return("pillar.items"));
  EXPECT_FALSE(custom.is_secret_key("password"));  // no key patterns at all
}

// --- real captures ------------------------------------------------------------------------------------

// `data.return` of the first ret event of a JSON-lines capture.
msgpack::object_handle first_return(const std::string& name) {
  std::ifstream in(salttap::testing::captures_dir() / name);
  std::string line;
  while (std::getline(in, line))
    if (line.find("/ret/") != std::string::npos) return from_json(line);
  ADD_FAILURE() << "no ret in " << name;
  return from_json("{}");
}

TEST(Redactor, RealGrainsReturnIsUntouched) {
  const auto ev = first_return("salt-3006.25/grains_items.jsonl");
  const msgpack::object& ret = *tap::map_find(*tap::map_find(ev.get(), "data"), "return");
  ASSERT_EQ(ret.type, msgpack::type::MAP);
  msgpack::zone zone;
  std::size_t n = 0;
  const msgpack::object out = redactor().redact(ret, zone, &n);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(out.via.map.ptr, ret.via.map.ptr);
}

TEST(Redactor, RealKwargsArg) {
  // test_arg_compound: [1, "two", {"__kwarg__": true, "kw": 3, "nested": {"a": [1, 2]}}] - nothing secret.
  std::ifstream in(salttap::testing::captures_dir() / "salt-3006.25/test_arg_compound.jsonl");
  std::string line;
  while (std::getline(in, line) && line.find("/new\"") == std::string::npos) {
  }
  const auto ev = from_json(line);
  const msgpack::object& arg = *tap::map_find(*tap::map_find(ev.get(), "data"), "arg");
  msgpack::zone zone;
  std::size_t n = 0;
  EXPECT_EQ(redactor().redact(arg, zone, &n).via.array.ptr, arg.via.array.ptr);
  EXPECT_EQ(n, 0u);
}

// --- key pattern engine: same answers as std::regex_search --------------------------------------------

TEST(RedactorPatterns, RequiredLiteral) {
  using detail::required_literal;
  EXPECT_EQ(required_literal("secret").literal, "secret");
  EXPECT_TRUE(required_literal("Secret").pure);
  EXPECT_EQ(required_literal("Secret").literal, "secret");
  EXPECT_EQ(required_literal("api[_-]?key").literal, "api");
  EXPECT_FALSE(required_literal("api[_-]?key").pure);
  EXPECT_EQ(required_literal("passw(or)?d").literal, "passw");
  EXPECT_EQ(required_literal("colou?r").literal, "colo");
  EXPECT_EQ(required_literal("ab+cd").literal, "ab");
  EXPECT_EQ(required_literal("a\\.b").literal, "a.b");
  EXPECT_TRUE(required_literal("a\\.b").pure);
  EXPECT_EQ(required_literal("\\x41bcd").literal, "bcd");
  EXPECT_EQ(required_literal("x{2,3}yz").literal, "yz");
  EXPECT_EQ(required_literal("^key$").literal, "key");
  EXPECT_TRUE(required_literal("^key$").pure);
  EXPECT_TRUE(required_literal("^key$").at_start);
  EXPECT_TRUE(required_literal("^key$").at_end);
  EXPECT_TRUE(required_literal("^Key").at_start);
  EXPECT_FALSE(required_literal("^Key").at_end);
  EXPECT_FALSE(required_literal("^k.y$").pure);
  EXPECT_EQ(required_literal("^k.y$").literal, "k");
  EXPECT_EQ(required_literal("foo|bar").literal, "");
  EXPECT_EQ(required_literal("(foo|bar)baz").literal, "baz");
  EXPECT_EQ(required_literal(".*").literal, "");
  EXPECT_EQ(required_literal("").literal, "");
}

TEST(RedactorPatterns, SameAnswersAsStdRegex) {
  std::vector<std::string> patterns = default_key_patterns();
  for (const char* p :
       {"a\\.b",      "x+y",     "ab?c",    "^id$",         "(foo|bar)baz", "foo|bar",   "\\x41bc",
        "[ab]cd",     "a{2}b",   "colou?r", "q\\d+z",       "(?:ab)+cd",    "tok.n",     "^$",
        "\\bword\\b", "(a)\\1b", "[^x]yz",  "s[e3]cr[e3]t", "^.{3}$",       "z*",        "K",
        "^ab",        "cd$",     "a\\$",    "\\^a",         "^a\\.b$",      "^(ab|cd)$", "(^|[_-])pass$"})
    patterns.emplace_back(p);
  const std::vector<std::string> keys = {"",           "a.b",
                                         "axb",        "xy",
                                         "xxxy",       "y",
                                         "ac",         "abc",
                                         "abbc",       "id",
                                         "ID",         "xid",
                                         "foobaz",     "barbaz",
                                         "baz",        "FOO",
                                         "abc",        "Abc",
                                         "acd",        "bcd",
                                         "ccd",        "aab",
                                         "ab",         "color",
                                         "COLOUR",     "colouur",
                                         "q1z",        "qz",
                                         "q12z",       "ababcd",
                                         "cd",         "token",
                                         "tokXn",      "word",
                                         "a word.",    "swordfish",
                                         "aab",        "aaB",
                                         "xyz",        "yz",
                                         "s3cr3t",     "sEcret",
                                         "key",        "KEY",
                                         "a_key",      "pass",
                                         "x-pass",     "bypass",
                                         "pass_x",     "auth",
                                         "x_auth",     "author",
                                         "passwd",     "PassWord",
                                         "k",          "kk",
                                         "passphrase", "connection-string",
                                         "shared_key", "signingkey",
                                         "abcd",       "zz",
                                         "a$",         "^a",
                                         "x^a",        "ab$",
                                         "abab",       "cdcd",
                                         "xcd",        "a.b.c"};
  for (const std::string& p : patterns) {
    const std::regex re(p, std::regex::ECMAScript | std::regex::icase);
    const Redactor r({.key_patterns = {p}, .redact_return_funs = {}});
    for (const std::string& k : keys)
      EXPECT_EQ(r.is_secret_key(k), std::regex_search(k, re)) << "pattern " << p << " key " << k;
  }
}

TEST(RedactorPatterns, LongKeysAreSearchedInWindows) {
  std::string key(20000, 'x');
  const Redactor r({.key_patterns = {"^x+secret$", "tail"}, .redact_return_funs = {}});
  EXPECT_FALSE(r.is_secret_key(key));
  EXPECT_TRUE(r.is_secret_key(key + "tail"));
  EXPECT_TRUE(r.is_secret_key(key.substr(0, 100) + "secret"));
  EXPECT_TRUE(redactor().is_secret_key(std::string(10000, 'y') + "_password_" + std::string(10000, 'y')));
  EXPECT_TRUE(redactor().is_secret_key(std::string(10000, 'y') + "_api-key_" + std::string(10000, 'y')));
  EXPECT_FALSE(redactor().is_secret_key(std::string(10000, 'y') + "_api-kez_" + std::string(10000, 'y')));
}

// --- config ---------------------------------------------------------------------------------------------

TEST(RedactorConfig, Yaml) {
  const RedactionConfig d = parse_redaction_config(YAML::Load(""));
  EXPECT_EQ(d.key_patterns, default_key_patterns());
  EXPECT_EQ(d.redact_return_funs, default_redact_return_funs());
  const RedactionConfig c = parse_redaction_config(YAML::Load(R"(
key_patterns: ['^pin$', 'vault_']
redact_return_funs: [cp.get_file_str]
)"));
  EXPECT_THAT(c.key_patterns, ElementsAre("^pin$", "vault_"));
  EXPECT_THAT(c.redact_return_funs, ElementsAre("cp.get_file_str"));
  const Redactor r(c);
  EXPECT_TRUE(r.is_secret_key("PIN"));
  EXPECT_FALSE(r.is_secret_key("password"));  // the list replaces the defaults
  const RedactionConfig only_funs = parse_redaction_config(YAML::Load("redact_return_funs: []"));
  EXPECT_EQ(only_funs.key_patterns, default_key_patterns());
  EXPECT_TRUE(only_funs.redact_return_funs.empty());
}

void expect_config_error(const std::string& yaml, const std::vector<std::string>& parts) {
  salttap::testing::expect_config_error([](const YAML::Node& node) { return parse_redaction_config(node); }, yaml,
                                        parts);
}

TEST(RedactorConfig, OneStringIsAListOfOne) {
  EXPECT_EQ(parse_redaction_config(YAML::Load("key_patterns: password")).key_patterns,
            std::vector<std::string>{"password"});
}

TEST(RedactorConfig, Errors) {
  expect_config_error("key_pattern: [x]", {"unknown key", "key_pattern"});
  expect_config_error("key_patterns: {a: 1}", {"key_patterns", "list"});
  expect_config_error("key_patterns: ['(bad']", {"key_patterns[0]", "(bad"});
  expect_config_error("key_patterns: ['ok', '']", {"key_patterns[1]", "non-empty"});
  expect_config_error("redact_return_funs: [[a]]", {"redact_return_funs[0]"});
  expect_config_error("[a, b]", {"mapping"});
  EXPECT_THROW(Redactor({.key_patterns = {"[unclosed"}, .redact_return_funs = {}}), std::invalid_argument);
}

}  // namespace
}  // namespace salttap::correlator
