#!/bin/sh
# Installs the Debian packages memtrack builds, tests and plots with, or with
# arguments, those packages instead.  Idempotent: does nothing when
# everything is there already.
#   scripts/install-deps.sh [<package>...]
set -e
PACKAGES="make gcc g++ clang llvm libbpf-dev bpftool libelf-dev libdw-dev libzstd-dev
libmsgpack-dev libcjson-dev gnuplot-nox zstd jq bc file procps util-linux time libcap2-bin podman
libjemalloc-dev libmimalloc-dev libgoogle-perftools-dev shellcheck
zlib1g-dev libiberty-dev libcapstone-dev libdebuginfod-dev debuginfod elfutils binutils iproute2 sudo
asciidoc-base xmlto man-db python3-jsonschema"
# report --pprof (protobuf-c) and the decoder of its test; the browser of report --html's
PACKAGES="$PACKAGES libprotobuf-c-dev protobuf-c-compiler protobuf-compiler python3-protobuf
chromium fonts-dejavu-core"
# the compat corpus (tests/compat): what it runs under memtrack (node, java:
# Debian's unless some are there already; clang is above)
PACKAGES="$PACKAGES valgrind gdb strace fakeroot sqlite3 openssl openssh-client git xz-utils
perl python3 libasan8"
command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 ||
	PACKAGES="$PACKAGES default-jdk-headless"
# node and npm run the browser test (tests/html); Debian's unless some are there already
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs npm"
HTML_TESTS=$(cd "$(dirname "$0")/../tests/html" && pwd)
if [ $# -gt 0 ]; then
	PACKAGES="$*"
	HTML_TESTS=
fi

# the browser test's npm packages, as tests/html/package-lock.json pins them
npm_ci() {
	[ -z "$HTML_TESTS" ] || [ -d "$HTML_TESTS/node_modules/ws" ] ||
		npm ci --prefix "$HTML_TESTS" --no-audit --no-fund
}

missing=
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	npm_ci
	exit 0
fi

echo "installing:$missing"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
npm_ci
