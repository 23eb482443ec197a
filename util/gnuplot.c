// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/gnuplot.h"
#include "util/out-file.h"
#include "util/quote.h"
#include "util/spawn.h"
#include "util/usage.h"
#include "util/util.h"

#define MAX_PNG		(512ULL << 20)
#define PNG_MAGIC	"\x89PNG\r\n\x1a\n"

struct script {
	char *text;
	size_t len;
};

/* write()'s script in memory; 0, or -1 after an error message */
static int script__make(struct script *sc, gnuplot_write_fn *write, void *arg,
			const char *output)
{
	FILE *out;
	int ret;

	sc->text = NULL;
	sc->len = 0;
	out = open_memstream(&sc->text, &sc->len);
	if (!out)
		return error("out of memory");
	ret = write(out, output, arg);
	if (ferror(out) && !ret)
		ret = error("out of memory writing the gnuplot script");
	if (fclose(out) && !ret)
		ret = error("out of memory writing the gnuplot script");
	if (ret) {
		free(sc->text);
		sc->text = NULL;
	}
	return ret;
}

void gnuplot__set_png(FILE *out, unsigned int width, unsigned int height,
		      const char *output)
{
	fprintf(out, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		"\tset terminal pngcairo size %u,%u noenhanced font ',9'\n"
		"} else {\n"
		"\tset terminal png size %u,%u noenhanced\n"
		"}\n", width, height, width, height);
	if (output) {
		fputs("set output ", out);
		quote_gnuplot(out, output);
		fputc('\n', out);
	}
}

/* what --gnuplot <script> alone renders to: <script> less .gp, plus .png */
static char *png_for(const char *script)
{
	size_t len = strlen(script);
	char *png;

	if (len > 3 && !strcmp(script + len - 3, ".gp"))
		len -= 3;
	png = malloc(len + 5);
	if (png) {
		memcpy(png, script, len);
		strcpy(png + len, ".png");
	}
	return png;
}

static bool available(void)
{
	char buf[4096];
	int fd = open_program("gnuplot", buf, sizeof(buf));

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int gnuplot__check(void)
{
	if (available())
		return 0;
	return error("cannot plot: gnuplot is not installed (install the 'gnuplot-nox' package); "
		     "--gnuplot <file> writes the script without it");
}

static int script_memfd(const struct script *gs)
{
	int fd = memfd_create("memtrack-plot", MFD_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = write_all(fd, gs->text, gs->len);
	if (!err && lseek(fd, 0, SEEK_SET))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* gnuplot reads the script from its stdin as a file (so that it stops at an error) */
static void __attribute__((noreturn)) run_gnuplot(int script, int png,
						    const struct run_as *as)
{
	if (dup2(script, STDIN_FILENO) < 0 || dup2(png, STDOUT_FILENO) < 0)
		_exit(127);
	if (as->set && run_as__drop(as)) {
		fprintf(stderr, "error: cannot run gnuplot as uid %u: %s\n",
			(unsigned int)as->uid, strerror(errno));
		_exit(127);
	}
	execlp("gnuplot", "gnuplot", "/dev/stdin", (char *)NULL);
	fprintf(stderr, "error: cannot run gnuplot: %s\n", strerror(errno));
	_exit(127);
}

struct png {
	char *data;
	size_t len, alloc;
};

static int read_png(int fd, struct png *png)
{
	for (;;) {
		ssize_t n;

		if (png->len == png->alloc) {
			size_t alloc = png->alloc ? png->alloc * 2 : 1 << 16;
			char *p;

			if (alloc > MAX_PNG)
				return -EFBIG;
			p = realloc(png->data, alloc);
			if (!p)
				return -ENOMEM;
			png->data = p;
			png->alloc = alloc;
		}
		n = read(fd, png->data + png->len, png->alloc - png->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		png->len += n;
	}
}

/* runs gnuplot, its output in png; 0 or -1 after an error */
static int run(const struct script *gs, struct png *png, const struct run_as *as)
{
	int script, pipefd[2], err, status;
	pid_t pid;

	script = script_memfd(gs);
	if (script < 0)
		return error("cannot hand the script to gnuplot: %s", strerror(-script));
	if (pipe2(pipefd, O_CLOEXEC)) {
		close(script);
		return error_errno("cannot run gnuplot");
	}
	fflush(NULL);
	pid = fork();
	if (!pid)
		run_gnuplot(script, pipefd[1], as);
	err = pid < 0 ? -errno : 0;
	close(script);
	close(pipefd[1]);
	if (!err)
		err = read_png(pipefd[0], png);
	close(pipefd[0]);
	if (pid < 0)
		return error("cannot run gnuplot: %s", strerror(-err));
	if (err)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return error_errno("cannot wait for gnuplot");
	if (err)
		return error("cannot read the PNG from gnuplot: %s", strerror(-err));
	if (WIFSIGNALED(status))
		return error("gnuplot was killed by signal %d", WTERMSIG(status));
	if (WEXITSTATUS(status) == 127)
		return -1;	/* it said why */
	if (WEXITSTATUS(status))
		return error("gnuplot failed (exit status %d)", WEXITSTATUS(status));
	if (png->len < 8 || memcmp(png->data, PNG_MAGIC, 8))
		return error("gnuplot wrote no PNG");
	return 0;
}

static int write_file(const struct run_as *as, int dirfd, const char *name,
		      const char *path, const char *what, const char *data, size_t len)
{
	char why[OUT_WHY_MAX];
	int fd, err;

	fd = out_file__create(as, dirfd, name, OUT_REPLACE, why);
	if (fd < 0)
		return error("cannot create %s '%s': %s", what, path, why);
	err = write_all(fd, data, len);
	if (close(fd) && !err)
		err = -errno;
	if (err)
		return error("cannot write %s '%s': %s", what, path, strerror(-err));
	return 0;
}

/* the directory first: no gnuplot run for a file that cannot be made */
static int open_parent(const struct run_as *as, const char *path, const char *what,
		       const char **name)
{
	char why[OUT_WHY_MAX];
	int dirfd = out_dir__open_parent(as, path, name, why);

	if (dirfd < 0)
		return error("cannot create %s '%s': %s", what, path, why);
	return dirfd;
}

static int render(const struct script *sc, const char *png, const struct run_as *as)
{
	struct png image = { 0 };
	const char *name;
	int dirfd, ret;

	dirfd = open_parent(as, png, "plot", &name);
	if (dirfd < 0)
		return -1;
	ret = run(sc, &image, as);
	if (ret)
		error("no plot written to '%s'", png);
	else
		ret = write_file(as, dirfd, name, png, "plot", image.data, image.len);
	close(dirfd);
	free(image.data);
	return ret;
}

static int save(const struct script *sc, const char *path, const struct run_as *as)
{
	const char *name;
	int dirfd, ret;

	dirfd = open_parent(as, path, "gnuplot script", &name);
	if (dirfd < 0)
		return -1;
	ret = write_file(as, dirfd, name, path, "gnuplot script", sc->text, sc->len);
	close(dirfd);
	return ret;
}

/* --gnuplot: the script alone, naming the PNG it renders to */
static int save_script(const char *png, const char *script, gnuplot_write_fn *write,
		       void *arg, const struct run_as *as)
{
	char *own_png = NULL;
	struct script sc;
	int ret;

	if (!png) {
		png = own_png = png_for(script);
		if (!png)
			return error("out of memory");
	}
	ret = script__make(&sc, write, arg, png);
	if (!ret)
		ret = save(&sc, script, as);
	free(sc.text);
	free(own_png);
	return ret;
}

int gnuplot__plot(const char *png, const char *script, gnuplot_write_fn *write, void *arg)
{
	struct run_as as;
	struct script sc;
	int ret = 0;

	run_as__from_sudo(&as);
	if (script)
		ret = save_script(png, script, write, arg, &as);
	if (ret || !png)
		return ret;
	if (gnuplot__check())
		return -1;
	ret = script__make(&sc, write, arg, NULL);
	if (!ret)
		ret = render(&sc, png, &as);
	free(sc.text);
	return ret;
}
