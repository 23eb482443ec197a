#!/bin/sh
# Installs what `make bench` compares memtrack against and plots with: heaptrack
# and bcc's tools (memleak) from Debian.  Idempotent: does nothing
# when everything is there already.  Build dependencies come from `make deps`.
set -e
PACKAGES="heaptrack bpfcc-tools gnuplot-nox bc jq"

# bcc compiles memleak's BPF C against kernel headers: this kernel's if Debian
# has them, else Debian's current ones (run.sh points bcc at them)
rel=$(uname -r)
if [ ! -e "/lib/modules/$rel/build/include/linux/kconfig.h" ] &&
   [ ! -e /sys/kernel/kheaders.tar.xz ] && [ "$(uname -m)" = x86_64 ]; then
	if apt-cache show "linux-headers-$rel" >/dev/null 2>&1; then
		PACKAGES="$PACKAGES linux-headers-$rel"
	else
		PACKAGES="$PACKAGES linux-headers-amd64"
	fi
fi

# shellcheck disable=SC2086
exec "$(dirname "$0")/../scripts/install-deps.sh" $PACKAGES
