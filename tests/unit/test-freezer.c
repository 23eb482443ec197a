// SPDX-License-Identifier: GPL-2.0
/*
 * The freezer's parsers (util/probe/freezer.c): which mountinfo line is the
 * cgroup2 mount or the v1 freezer's, with mount paths unescaped, and
 * which /proc/self/cgroup line names memtrack's cgroup in each.
 */
#include <limits.h>
#include <stdbool.h>

#include "check.h"
#include "util/probe/freezer.h"

struct mount_case {
	const char *line;
	bool v2;
	const char *mnt, *root;		/* NULL: not the hierarchy's */
};

static const struct mount_case mounts[] = {
	{ "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
	  true, "/sys/fs/cgroup/unified", "/" },
	{ "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
	  false, NULL, NULL },
	/* optional fields before the separator */
	{ "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 master:1 - cgroup2 cgroup2 rw,nsdelegate\n",
	  true, "/sys/fs/cgroup", "/" },
	{ "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n",
	  false, "/sys/fs/cgroup/freezer", "/" },
	{ "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n",
	  true, NULL, NULL },
	/* another v1 controller, and one whose name only contains the word */
	{ "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n",
	  false, NULL, NULL },
	{ "32 31 0:29 / /sys/fs/cgroup/x rw,relatime - cgroup cgroup rw,nofreezer\n",
	  false, NULL, NULL },
	/* a container's: the mount's root is a subtree; a space in the path */
	{ "900 800 0:26 /docker/abc /sys/fs/my\\040cgroup ro - cgroup2 cgroup2 rw\n",
	  true, "/sys/fs/my cgroup", "/docker/abc" },
	{ "22 1 8:1 / / rw,relatime - ext4 /dev/vda1 rw\n", true, NULL, NULL },
	{ "garbage\n", true, NULL, NULL },
	{ "", true, NULL, NULL },
};

struct cgroup_case {
	const char *line;
	bool v2;
	const char *path;		/* NULL: not the hierarchy's */
};

static const struct cgroup_case cgroups[] = {
	{ "0::/\n", true, "/" },
	{ "0::/user.slice/user-1000.slice/session-3.scope\n", true,
	  "/user.slice/user-1000.slice/session-3.scope" },
	{ "0::/\n", false, NULL },
	{ "6:freezer:/\n", false, "/" },
	{ "6:freezer:/x\n", true, NULL },
	{ "4:cpu,freezer,memory:/a/b\n", false, "/a/b" },
	{ "4:memory:/process_api/5c4b\n", false, NULL },
	{ "1:name=systemd:/\n", true, NULL },
	{ "9:name=systemd:/\n", false, NULL },
	{ "no colon here\n", true, NULL },
	{ "0:only one\n", true, NULL },
};

static void test_mounts(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		const struct mount_case *c = &mounts[i];
		char line[512], mnt[PATH_MAX] = "", root[PATH_MAX] = "";
		bool found;

		snprintf(line, sizeof(line), "%s", c->line);
		found = freezer__parse_mount(line, c->v2, mnt, sizeof(mnt), root, sizeof(root));
		CHECK(found == (c->mnt != NULL), "mount line %u (%s)", i, c->v2 ? "v2" : "v1");
		if (found && c->mnt) {
			CHECK_STR(mnt, c->mnt, "mount point");
			CHECK_STR(root, c->root, "mount root");
		}
	}
}

static void test_cgroups(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(cgroups) / sizeof(cgroups[0]); i++) {
		const struct cgroup_case *c = &cgroups[i];
		char line[512], path[PATH_MAX] = "";
		bool found;

		snprintf(line, sizeof(line), "%s", c->line);
		found = freezer__parse_cgroup(line, c->v2, path, sizeof(path));
		CHECK(found == (c->path != NULL), "cgroup line %u (%s)", i, c->v2 ? "v2" : "v1");
		if (found && c->path)
			CHECK_STR(path, c->path, "cgroup path");
	}
}

int main(void)
{
	test_mounts();
	test_cgroups();
	return test_done("test-freezer");
}
