// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>

#include "builtin.h"
#include "util/parse-options.h"
#include "util/usage.h"

int cmd_report(int argc, const char **argv)
{
	const char *const usage[] = { "memtrack report [<options>] <file>", NULL };
	struct option options[] = {
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, usage, 0);
	if (argc < 1)
		usage_with_options(usage, options);
	return error("not implemented yet");
}
