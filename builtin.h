/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_BUILTIN_H
#define MEMTRACK_BUILTIN_H

/*
 * Adding a command:
 *  - a row in commands[] in memtrack.c, and cmd_<name>() declared here;
 *  - builtin-<name>.c (the Makefile picks it up by its name);
 *  - Documentation/memtrack-<name>.txt and a line in command-list.txt;
 *  - tests/shell/<name>_<feature>.sh.
 */

#include "util/version.h"

int cmd_track(int argc, const char **argv);
int cmd_stats(int argc, const char **argv);
int cmd_report(int argc, const char **argv);
int cmd_help(int argc, const char **argv);

#endif
