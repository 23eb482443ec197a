// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util/probe/kernel-check.h"

#define BTF_PATH	"/sys/kernel/btf/vmlinux"
#define UPROBE_PMU	"/sys/bus/event_source/devices/uprobe"
#define OSRELEASE	"/proc/sys/kernel/osrelease"
#define SELF_STATUS	"/proc/self/status"
#define SELF_USER_NS	"/proc/self/ns/user"
#define USER_NS_INIT	"user:[4026531837]"	/* PROC_USER_INIT_INO */
#define CAP_SYS_ADMIN	21
#define CAP_PERFMON	38
#define CAP_BPF		39

static void path_under(char *buf, size_t len, const char *root, const char *path)
{
	snprintf(buf, len, "%s%s", root ? root : "", path);
}

static void read_release(struct kernel_facts *f, const char *root)
{
	char path[4096];
	struct utsname u;
	FILE *file;

	path_under(path, sizeof(path), root, OSRELEASE);
	file = fopen(path, "re");
	if (file) {
		if (!fgets(f->release, sizeof(f->release), file))
			f->release[0] = 0;
		f->release[strcspn(f->release, "\n")] = 0;
		fclose(file);
	}
	if (!f->release[0] && (!root || !*root) && !uname(&u))
		snprintf(f->release, sizeof(f->release), "%s", u.release);
}

static void read_privileges(struct kernel_facts *f, const char *root)
{
	char path[4096], line[256];
	ssize_t n;
	FILE *file;

	path_under(path, sizeof(path), root, SELF_STATUS);
	file = fopen(path, "re");
	while (file && fgets(line, sizeof(line), file))
		if (sscanf(line, "CapEff: %llx", &f->caps) == 1)
			f->caps_known = true;
	if (file)
		fclose(file);
	path_under(path, sizeof(path), root, SELF_USER_NS);
	n = readlink(path, line, sizeof(line) - 1);
	if (n > 0) {
		line[n] = 0;
		f->user_ns_child = strcmp(line, USER_NS_INIT) != 0;
	}
}

void kernel_facts__read(struct kernel_facts *f, const char *root)
{
	char path[4096];

	memset(f, 0, sizeof(*f));
	path_under(path, sizeof(path), root, BTF_PATH);
	f->btf = !access(path, R_OK);
	path_under(path, sizeof(path), root, UPROBE_PMU);
	f->uprobes = !access(path, F_OK);
	read_release(f, root);
	read_privileges(f, root);
}

int kernel_release__parse(const char *release, unsigned int *major, unsigned int *minor)
{
	char *end;
	unsigned long v;

	if (release[0] < '0' || release[0] > '9')
		return -1;
	v = strtoul(release, &end, 10);
	if (*end != '.' || v > 1000 || end[1] < '0' || end[1] > '9')
		return -1;
	*major = v;
	v = strtoul(end + 1, &end, 10);
	if (v > 1000)
		return -1;
	*minor = v;
	return 0;
}

/* appends one missing thing to buf */
static void missing(char *buf, size_t len, int *n, const char *what)
{
	size_t used = strlen(buf);

	if (used < len)
		snprintf(buf + used, len - used, "%s%s", *n ? "; " : "", what);
	(*n)++;
}

int kernel_facts__missing(const struct kernel_facts *f, char *buf, size_t len)
{
	unsigned int major, minor;
	char what[256];
	int n = 0;

	if (len)
		buf[0] = 0;
	if (!f->btf)
		missing(buf, len, &n, "BTF (" BTF_PATH " is missing: a kernel built with "
			"CONFIG_DEBUG_INFO_BTF=y)");
	if (!f->uprobes)
		missing(buf, len, &n, "uprobes (" UPROBE_PMU " is missing: a kernel built "
			"with CONFIG_UPROBE_EVENTS=y)");
	if (kernel_release__parse(f->release, &major, &minor)) {
		snprintf(what, sizeof(what), "a known kernel version (uprobe_multi links need "
			 "Linux %d.%d or later; the release is '%.64s')", KERNEL_MIN_MAJOR,
			 KERNEL_MIN_MINOR, f->release);
		missing(buf, len, &n, what);
	} else if (major < KERNEL_MIN_MAJOR ||
		   (major == KERNEL_MIN_MAJOR && minor < KERNEL_MIN_MINOR)) {
		snprintf(what, sizeof(what), "uprobe_multi links (Linux %d.%d or later; this is "
			 "%.64s)", KERNEL_MIN_MAJOR, KERNEL_MIN_MINOR, f->release);
		missing(buf, len, &n, what);
	}
	return n;
}

static bool has_cap(const struct kernel_facts *f, int cap)
{
	return (f->caps >> cap) & 1 || (f->caps >> CAP_SYS_ADMIN) & 1;
}

int kernel_facts__missing_privileges(const struct kernel_facts *f, char *buf, size_t len)
{
	int n = 0;

	if (len)
		buf[0] = 0;
	/* capabilities there are not the kernel's to BPF, whatever CapEff says */
	if (f->user_ns_child) {
		missing(buf, len, &n, "the initial user namespace (memtrack runs in a user "
			"namespace of its own, as a rootless container or userns-remap makes it: "
			"its capabilities do not reach BPF; run the container rootful)");
		return n;
	}
	if (!f->caps_known)
		return 0;
	if (!has_cap(f, CAP_BPF))
		missing(buf, len, &n, "CAP_BPF (docker, podman: --cap-add BPF; Kubernetes: "
			"securityContext.capabilities.add: [BPF])");
	if (!has_cap(f, CAP_PERFMON))
		missing(buf, len, &n, "CAP_PERFMON (docker, podman: --cap-add PERFMON; "
			"Kubernetes: securityContext.capabilities.add: [PERFMON])");
	return n;
}

int kernel_check__privileges(char *buf, size_t len)
{
	struct kernel_facts f;

	kernel_facts__read(&f, getenv("MEMTRACK_TEST_KERNEL_ROOT"));
	return kernel_facts__missing_privileges(&f, buf, len);
}

int kernel_check__track(char *buf, size_t len)
{
	struct kernel_facts f;

	kernel_facts__read(&f, getenv("MEMTRACK_TEST_KERNEL_ROOT"));
	return kernel_facts__missing(&f, buf, len);
}
