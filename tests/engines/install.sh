#!/usr/bin/env bash
# Fetches what the test engines need and builds their launchers:
#   - Java 17 and Maven (Debian packages) when missing
#   - the OpenSearch 2.19 / OpenSearch 3.9 / Elasticsearch 7.17 jars from Maven Central into .cache/engines/m2
#     (OpenSearch 3 needs Java 21 or newer, which Debian 12 does not package: a JDK under
#     /usr/lib/jvm, $JAVA_HOME or $SALTTAP_JAVA; tests/harness/engine.py picks it)
#   - the launcher jars + classpaths into .cache/engines/<flavor>/build
# Idempotent (a cached build is reused while pom.xml, its sources and launcher-common/ are unchanged) and quiet
# when everything is present. Needs root (or sudo) only when packages are missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
if [ ${#missing[@]} -gt 0 ]; then
  readarray -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "engines/install.sh: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi

exec python3 "$here/../harness/engine.py" build --flavor all
