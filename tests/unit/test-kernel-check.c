// SPDX-License-Identifier: GPL-2.0
/*
 * What track needs of the kernel: release strings read as versions, what a
 * kernel lacks in words, and the facts read from a tree that mimics /sys
 * and /proc.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/probe/kernel-check.h"
#include "test-artifact.h"

static void test_release(void)
{
	unsigned int major = 0, minor = 0;

	CHECK(!kernel_release__parse("6.6.0", &major, &minor) && major == 6 && minor == 6);
	CHECK(!kernel_release__parse("6.18.0-rc1+", &major, &minor) && major == 6 && minor == 18);
	CHECK(!kernel_release__parse("5.10.0-21-amd64", &major, &minor) && major == 5 &&
	      minor == 10);
	CHECK(!kernel_release__parse("4.19", &major, &minor) && major == 4 && minor == 19);
	CHECK(kernel_release__parse("", &major, &minor) == -1);
	CHECK(kernel_release__parse("6", &major, &minor) == -1);
	CHECK(kernel_release__parse("6.", &major, &minor) == -1);
	CHECK(kernel_release__parse("v6.6", &major, &minor) == -1);
}

static void test_missing(void)
{
	struct kernel_facts f = { .btf = true, .uprobes = true, .release = "6.6.0" };
	char why[512];

	CHECK(kernel_facts__missing(&f, why, sizeof(why)) == 0);
	CHECK_STR(why, "", "nothing missing");
	snprintf(f.release, sizeof(f.release), "7.0.1");
	CHECK(kernel_facts__missing(&f, why, sizeof(why)) == 0, "a later major");

	snprintf(f.release, sizeof(f.release), "6.5.13-arch1");
	CHECK(kernel_facts__missing(&f, why, sizeof(why)) == 1);
	CHECK_STR(why, "uprobe_multi links (Linux 6.6 or later; this is 6.5.13-arch1)",
		  "too old");

	f.btf = false;
	f.uprobes = false;
	snprintf(f.release, sizeof(f.release), "6.8.0");
	CHECK(kernel_facts__missing(&f, why, sizeof(why)) == 2);
	CHECK_STR(why, "BTF (/sys/kernel/btf/vmlinux is missing: a kernel built with "
		  "CONFIG_DEBUG_INFO_BTF=y); uprobes (/sys/bus/event_source/devices/uprobe is "
		  "missing: a kernel built with CONFIG_UPROBE_EVENTS=y)", "no BTF, no uprobes");

	f.btf = f.uprobes = true;
	f.release[0] = 0;
	CHECK(kernel_facts__missing(&f, why, sizeof(why)) == 1);
	CHECK(strstr(why, "a known kernel version"), "%s", why);
	CHECK(kernel_facts__missing(&f, why, 8) == 1, "a short buffer still counts");
	CHECK(strlen(why) == 7);
}

static void test_privileges(void)
{
	struct kernel_facts f = { .caps_known = true, .caps = 1ULL << 21 };
	char why[1024];

	CHECK(kernel_facts__missing_privileges(&f, why, sizeof(why)) == 0, "CAP_SYS_ADMIN");
	f.caps = 3ULL << 38;
	CHECK(kernel_facts__missing_privileges(&f, why, sizeof(why)) == 0, "CAP_BPF, CAP_PERFMON");
	f.caps = 1ULL << 38;
	CHECK(kernel_facts__missing_privileges(&f, why, sizeof(why)) == 1);
	CHECK_STR(why, "CAP_BPF (docker, podman: --cap-add BPF; Kubernetes: "
		  "securityContext.capabilities.add: [BPF])", "no CAP_BPF");
	f.caps = 0x7fffffffffULL & ~(1ULL << 21);	/* all up to CAP_PERFMON but CAP_SYS_ADMIN */
	CHECK(kernel_facts__missing_privileges(&f, why, sizeof(why)) == 1);
	CHECK(!strncmp(why, "CAP_BPF", 7), "%s", why);
	f.caps = 0;
	CHECK(kernel_facts__missing_privileges(&f, why, sizeof(why)) == 2);
	CHECK(strstr(why, "; CAP_PERFMON (docker, podman: --cap-add PERFMON;"), "%s", why);
	f.caps_known = false;
	CHECK(kernel_facts__missing_privileges(&f, why, sizeof(why)) == 0, "unknown: not held");
	f.user_ns_child = true;
	CHECK(kernel_facts__missing_privileges(&f, why, sizeof(why)) == 1);
	CHECK(strstr(why, "the initial user namespace"), "%s", why);
}

/* touch <root>/<path> (and its directories) */
static void make_file(const char *root, const char *path, const char *text)
{
	char cmd[1024];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s%s')\"", root, path);
	CHECK(!system(cmd), "%s", cmd);
	snprintf(cmd, sizeof(cmd), "%s%s", root, path);
	f = fopen(cmd, "w");
	CHECK(f != NULL, "%s", cmd);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_read(void)
{
	const char *root = test_tmpdir();
	struct kernel_facts f;

	kernel_facts__read(&f, root);
	CHECK(!f.btf && !f.uprobes && !f.release[0], "an empty tree has nothing");
	make_file(root, "/sys/kernel/btf/vmlinux", "");
	make_file(root, "/sys/bus/event_source/devices/uprobe/type", "7\n");
	make_file(root, "/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
	kernel_facts__read(&f, root);
	CHECK(f.btf && f.uprobes, "the files are found");
	CHECK_STR(f.release, "6.1.0-18-amd64", "the release, without its newline");
	CHECK(!f.caps_known && !f.user_ns_child, "no status, no namespace link: unknown");
	make_file(root, "/proc/self/status", "Name:\tx\nCapEff:\t000000c000000000\n");
	{
		char link[4096];

		snprintf(link, sizeof(link), "%s/proc/self/ns", root);
		CHECK(!mkdir(link, 0755));
		snprintf(link, sizeof(link), "%s/proc/self/ns/user", root);
		CHECK(!symlink("user:[4026532000]", link));
	}
	kernel_facts__read(&f, root);
	CHECK(f.caps_known && f.caps == 3ULL << 38, "CapEff %llx", f.caps);
	CHECK(f.user_ns_child, "a user namespace of its own");
	test_tmpdir_remove();
}

int main(void)
{
	test_release();
	test_missing();
	test_privileges();
	test_read();
	return test_done("test-kernel-check");
}
