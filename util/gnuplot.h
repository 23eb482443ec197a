/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_GNUPLOT_H
#define MEMTRACK_GNUPLOT_H

/*
 * The one place that runs gnuplot, for `stats --plot` and `report
 * --timeline`.  A script is built in memory; nothing from a file becomes
 * gnuplot code (strings go through quote_gnuplot(), data blocks hold
 * numbers only).  gnuplot reads the script from a memfd and writes the
 * PNG to a pipe; the PNG file is created only once gnuplot has succeeded,
 * so a failed plot leaves no partial file and an older one as it was.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct run_as;

/* a script being written: out is an open_memstream() */
struct gnuplot_script {
	FILE *out;
	char *text;
	size_t len;
};

int gnuplot_script__init(struct gnuplot_script *gs);
/* closes out; 0, or -ENOMEM when a write to it failed */
int gnuplot_script__finish(struct gnuplot_script *gs);
void gnuplot_script__exit(struct gnuplot_script *gs);

/*
 * The PNG terminal (pngcairo, else png), noenhanced; with output, a
 * `set output` line for a script kept to be rendered later, without one
 * the PNG goes to gnuplot's standard output.
 */
void gnuplot__set_png(FILE *out, unsigned int width, unsigned int height,
		      const char *output);

/* what --gnuplot <script> alone renders to: <script> less .gp, plus .png (malloc'd) */
char *gnuplot__png_for(const char *script);

bool gnuplot__available(void);

/*
 * Runs gnuplot on the script (finished) and writes its PNG to png, created
 * by the rules of util/out-file.h (as the invoking user under sudo, whom
 * gnuplot also runs as).  0, or -1 after an error message.
 */
int gnuplot__render(const struct gnuplot_script *gs, const char *png,
		    const struct run_as *as);

/* writes the script to path (util/out-file.h rules); 0, or -1 after an error message */
int gnuplot__save(const struct gnuplot_script *gs, const char *path,
		  const struct run_as *as);

#endif
