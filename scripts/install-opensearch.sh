#!/usr/bin/env bash
# Installs a local OpenSearch 2.19.1 with the k-NN plugin, from Maven Central only, into
# bench/.engines/opensearch-2.19.1 (ignored). Used by the engine-backend tests and benches.
#
# Maven Central carries OpenSearch's integration-test distribution (core + transport-netty4)
# and the k-NN plugin zip, but the modules k-NN and the `english` analyzer need
# (lang-painless, analysis-common) only as jars. This script assembles those module folders:
# the jars and their dependencies, plus a descriptor and security policy written here.
# Idempotent; prints the install folder on stdout when done.
set -euo pipefail

VERSION=2.19.1
KNN_VERSION=2.19.1.0
MAVEN=${MAVEN_CENTRAL:-https://repo1.maven.org/maven2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=$ROOT/bench/.engines
CACHE=$BASE/cache
HOME_DIR=$BASE/opensearch-$VERSION

if [[ -f $HOME_DIR/.installed ]]; then
  echo "$HOME_DIR"
  exit 0
fi
command -v java >/dev/null || {
  echo "install-opensearch: no java on PATH; install a JDK 17 or 21 (apt install openjdk-17-jdk-headless)" >&2
  exit 2
}
# The integration-test distribution has no bundled JDK: point it at the machine's.
if [[ -z ${OPENSEARCH_JAVA_HOME:-} ]]; then
  OPENSEARCH_JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
  export OPENSEARCH_JAVA_HOME
fi
mkdir -p "$CACHE"

fetch() { # group-path artifact version ext
  local url=$MAVEN/$1/$2/$3/$2-$3.$4 out=$CACHE/$2-$3.$4
  if [[ ! -s $out ]]; then
    echo "install-opensearch: downloading $2-$3.$4" >&2
    curl -fsSL --retry 3 -o "$out.part" "$url"
    mv "$out.part" "$out"
  fi
  echo "$out"
}

rm -rf "$HOME_DIR.part"
mkdir -p "$HOME_DIR.part"
core_zip=$(fetch org/opensearch/distribution/integ-test-zip opensearch $VERSION zip)
unzip -q "$core_zip" -d "$HOME_DIR.part"
mv "$HOME_DIR.part/opensearch-$VERSION"/* "$HOME_DIR.part/"
rmdir "$HOME_DIR.part/opensearch-$VERSION"

module() { # name classname extended-plugins jar...
  local name=$1 class=$2 extended=$3
  shift 3
  local dir=$HOME_DIR.part/modules/$name
  mkdir -p "$dir"
  for jar in "$@"; do cp "$jar" "$dir/"; done
  cat >"$dir/plugin-descriptor.properties" <<PROPS
description=$name module, assembled from Maven Central jars
version=$VERSION
name=$name
classname=$class
java.version=11
opensearch.version=$VERSION
extended.plugins=$extended
has.native.controller=false
PROPS
}

# Each download is its own assignment, so that `set -e` stops on a failed one.
painless_jars=()
for spec in "org/opensearch/plugin lang-painless $VERSION" \
  "org/opensearch/plugin opensearch-scripting-painless-spi $VERSION" \
  "org/antlr antlr4-runtime 4.13.1" "org/ow2/asm asm 9.7" "org/ow2/asm asm-util 9.7" \
  "org/ow2/asm asm-tree 9.7" "org/ow2/asm asm-commons 9.7" "org/ow2/asm asm-analysis 9.7"; do
  # shellcheck disable=SC2086 # spec is three words on purpose
  jar=$(fetch $spec jar)
  painless_jars+=("$jar")
done
module lang-painless org.opensearch.painless.PainlessPlugin "" "${painless_jars[@]}"
# Painless compiles scripts into classes at run time.
cat >"$HOME_DIR.part/modules/lang-painless/plugin-security.policy" <<'POLICY'
grant {
  permission java.lang.RuntimePermission "createClassLoader";
  permission java.lang.RuntimePermission "getClassLoader";
};
POLICY

common_jar=$(fetch org/opensearch/plugin analysis-common $VERSION jar)
module analysis-common org.opensearch.analysis.common.CommonAnalysisPlugin lang-painless "$common_jar"

knn_zip=$(fetch org/opensearch/plugin opensearch-knn $KNN_VERSION zip)
"$HOME_DIR.part/bin/opensearch-plugin" install --batch "file://$knn_zip" >&2

touch "$HOME_DIR.part/.installed"
rm -rf "$HOME_DIR"
mv "$HOME_DIR.part" "$HOME_DIR"
echo "$HOME_DIR"
