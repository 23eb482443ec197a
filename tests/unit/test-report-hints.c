// SPDX-License-Identifier: GPL-2.0
/*
 * The hints of memtrack report: Python told by a process's executable or by
 * a frame in libpython, and nothing said of other programs.
 */
#include <stdlib.h>

#include "util/report/report-hints.h"
#include "util/report/report-sites.h"
#include "check.h"

static void test_names(void)
{
	CHECK(python_exe_name("/usr/bin/python3"));
	CHECK(python_exe_name("/usr/bin/python3.11"));
	CHECK(python_exe_name("python"));
	CHECK(!python_exe_name("/usr/bin/python3-config"));
	CHECK(!python_exe_name("/usr/bin/pythonista"));
	CHECK(!python_exe_name("/usr/bin/cpython3"));
}

static void add_process(struct report_summary *s, int32_t pid, const char *comm,
			const char *exe)
{
	struct artifact_record r = { .type = ARTIFACT_PROCESS };

	artifact_record__set_pid(&r, pid);
	artifact_record__set_comm(&r, comm);
	if (exe)
		artifact_record__set_exe(&r, exe);
	CHECK(!report_summary__add(s, &r));
}

/* a malloc by pid whose stack has one frame in module */
static void add_alloc_in(struct report_summary *s, int32_t pid, const char *module)
{
	static const uint64_t frames[] = { 7 };
	struct artifact_record ev = { .type = ARTIFACT_EVENT, .kind = MT_MALLOC };
	struct artifact_record fr = { .type = ARTIFACT_FRAME };
	struct artifact_record st = { .type = ARTIFACT_STACK };

	artifact_record__set_pid(&ev, pid);
	artifact_record__set_tid(&ev, pid);
	artifact_record__set_timestamp(&ev, 1000);
	artifact_record__set_addr(&ev, 0x1000);
	artifact_record__set_size(&ev, 64);
	artifact_record__set_stack(&ev, 3);
	artifact_record__set_id(&fr, 7);
	artifact_record__set_module(&fr, module);
	artifact_record__set_symbol(&fr, "PyMem_RawMalloc");
	artifact_record__set_id(&st, 3);
	artifact_record__set_frames(&st, (struct artifact_ids){ frames, 1 });
	CHECK(!report_summary__add(s, &ev));
	CHECK(!report_summary__add(s, &fr));
	CHECK(!report_summary__add(s, &st));
}

static void summary(struct report_summary *s)
{
	CHECK(!report_summary__init(s, NULL));
	s->sites = report_sites__new();
	CHECK(s->sites != NULL);
}

static void test_python(void)
{
	struct report_summary s;
	struct python_hint h;

	summary(&s);
	add_process(&s, 20, "make", "/usr/bin/make");
	add_process(&s, 21, "python3", "/usr/bin/python3.11");
	add_process(&s, 22, "cc", "/usr/bin/cc");
	report_summary__finish(&s);
	report_hint__python(&s, &h);
	CHECK(h.found && h.proc && h.proc->pid == 21, "by its executable");
	report_summary__exit(&s);

	summary(&s);
	add_process(&s, 30, "app", "/usr/bin/app");
	add_alloc_in(&s, 30, "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0");
	report_summary__finish(&s);
	report_hint__python(&s, &h);
	CHECK(h.found && !h.proc, "embedded: by a frame");
	CHECK_STR(h.module, "libpython3.11.so.1.0", "the module");
	report_summary__exit(&s);

	summary(&s);
	add_process(&s, 40, "app", "/usr/bin/app");
	add_alloc_in(&s, 40, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	report_summary__finish(&s);
	report_hint__python(&s, &h);
	CHECK(!h.found, "no Python, no hint");
	report_summary__exit(&s);
}

int main(void)
{
	test_names();
	test_python();
	return test_done("test-report-hints");
}
