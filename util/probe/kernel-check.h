/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_KERNEL_CHECK_H
#define MEMTRACK_KERNEL_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/*
 * What `memtrack track` needs of the kernel, checked before anything else
 * so that a kernel without it gets one clear message rather than a BPF
 * error: BTF (/sys/kernel/btf/vmlinux, for the struct offsets and the BPF
 * programs), uprobes (the uprobe PMU), and Linux 6.6 or later (uprobe_multi
 * links).
 */

#define KERNEL_MIN_MAJOR	6
#define KERNEL_MIN_MINOR	6

struct kernel_facts {
	bool btf;			/* /sys/kernel/btf/vmlinux can be read */
	bool uprobes;			/* /sys/bus/event_source/devices/uprobe */
	char release[128];		/* "6.1.0-18-amd64"; "" when unknown */
	bool caps_known;		/* /proc/self/status had CapEff */
	unsigned long long caps;	/* CapEff: the effective capabilities */
	bool user_ns_child;		/* /proc/self/ns/user is not the initial namespace */
};

/*
 * Reads the facts of the running kernel, or of a tree that mimics /sys and
 * /proc under root (for tests; NULL or "" for /).
 */
void kernel_facts__read(struct kernel_facts *f, const char *root);

/* "6.1.0-18-amd64" -> 6, 1; -1 when it does not begin with <major>.<minor> */
int kernel_release__parse(const char *release, unsigned int *major, unsigned int *minor);

/*
 * What the facts lack, in words for a message, "; " between them; returns
 * how many things are missing (0: none, buf is "").
 */
int kernel_facts__missing(const struct kernel_facts *f, char *buf, size_t len);

/*
 * What memtrack lacks to load its programs, as a container may leave it:
 * CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), in the initial user
 * namespace.  In words naming what to add, "; " between them; how many.
 * Facts not known are not held against it.
 */
int kernel_facts__missing_privileges(const struct kernel_facts *f, char *buf, size_t len);

/* track's check of its privileges, as kernel_check__track() reads the facts */
int kernel_check__privileges(char *buf, size_t len);

/*
 * The check of `track`: the running kernel's facts, or those under
 * $MEMTRACK_TEST_KERNEL_ROOT (memtrack's tests); as kernel_facts__missing().
 */
int kernel_check__track(char *buf, size_t len);

#endif
