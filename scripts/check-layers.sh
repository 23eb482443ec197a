#!/bin/sh
# Fails when a folder of util/ includes a header of a folder above it: the
# subsystems depend on each other one way (README.md, "Layout"), lower ranks
# first.  A folder may include its own headers and those of lower ranks.
#   scripts/check-layers.sh [<root>]
cd "${1:-.}" || exit 1

rank() {
	case $1 in
	util) echo 0 ;;
	artifact | symbol | stats) echo 1 ;;
	probe | report) echo 2 ;;
	track) echo 3 ;;
	*) echo "check-layers: folder util/$1 has no rank in $0" >&2; echo 9 ;;
	esac
}

# folder_of <path>: util for util/x.h, the subfolder for util/<folder>/x.h
folder_of() {
	case $1 in
	util/*/*) d=${1#util/}; echo "${d%%/*}" ;;
	*) echo util ;;
	esac
}

bad=0
for src in util/*.[ch] util/*/*.[ch]; do
	from=$(folder_of "$src")
	from_rank=$(rank "$from")
	for inc in $(sed -n 's/^#include "\(util\/[^"]*\)"/\1/p' "$src"); do
		to=$(folder_of "$inc")
		[ "$to" = "$from" ] && continue
		to_rank=$(rank "$to")
		if [ "$to_rank" -ge "$from_rank" ]; then
			echo "$src: includes $inc: util/$to is not below util/$from" >&2
			bad=1
		fi
	done
done
exit $bad
