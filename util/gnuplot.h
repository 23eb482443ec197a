/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_GNUPLOT_H
#define MEMTRACK_GNUPLOT_H

/*
 * The one place that runs gnuplot, for `stats --plot/--gnuplot` and `report
 * --timeline/--gnuplot`.  A script is built in memory; nothing from a file
 * becomes gnuplot code (strings go through quote_gnuplot(), data blocks
 * hold numbers only).  gnuplot reads the script from a memfd and writes the
 * PNG to a pipe; the PNG file is created only once gnuplot has succeeded,
 * so a failed plot leaves no partial file and an older one as it was.
 * Files are created by the rules of util/out-file.h; under sudo they, and
 * gnuplot, are the invoking user's.
 */

#include <stdbool.h>
#include <stdio.h>

/*
 * Writes a script to out that renders into the PNG output, or into
 * gnuplot's standard output when output is NULL; 0, or -1 after an error
 * message.
 */
typedef int gnuplot_write_fn(FILE *out, const char *output, void *arg);

/*
 * What --plot <png> and --gnuplot <script> ask for, either or both: the
 * script that write() makes, saved to script (naming png, or <script>
 * with .gp replaced by .png), and rendered into png.  0, or -1 after an
 * error message.
 */
int gnuplot__plot(const char *png, const char *script, gnuplot_write_fn *write, void *arg);

/*
 * The PNG terminal (pngcairo, else png), noenhanced, and `set output` when
 * output is not NULL.
 */
void gnuplot__set_png(FILE *out, unsigned int width, unsigned int height,
		      const char *output);

/* 0 when gnuplot is on the PATH, else -1 after saying how to get it */
int gnuplot__check(void);

#endif
