// SPDX-License-Identifier: GPL-2.0
/*
 * The parents that stop themselves to mirror a child memtrack held
 * (util/probe/stop-mirror.c): which are resumed, when, and how often, in a
 * world of fake processes.
 */
#include <stdbool.h>

#include "bpf/memtrack.h"
#include "check.h"
#include "util/probe/stop-mirror.h"
#include "util/util.h"

#define MAX_PID 64

static struct fake {
	char state;		/* 0: no such process */
	pid_t ppid;
	uint64_t self_stop;	/* when it stopped itself, 0: it did not */
	unsigned int resumed;
	bool stops_again;	/* a mirror whose child is over the watermark again */
} procs[MAX_PID];

static uint64_t self_stop(void *ctx, pid_t pid)
{
	(void)ctx;
	return procs[pid].self_stop ? procs[pid].self_stop | MT_THEIR_STOP_SELF : 0;
}

static bool state(pid_t pid, char *st, pid_t *ppid)
{
	if (pid <= 0 || pid >= MAX_PID || !procs[pid].state)
		return false;
	*st = procs[pid].state;
	*ppid = procs[pid].ppid;
	return true;
}

static void resume(pid_t pid)
{
	struct fake *p = &procs[pid];

	p->resumed++;
	if (!p->stops_again) {
		p->state = 'S';
		p->self_stop = 0;
	}
}

static const struct stop_mirror_ops ops = {
	.self_stop = self_stop, .state = state, .resume = resume,
};

static void set_proc(pid_t pid, char st, pid_t ppid, uint64_t stopped_self)
{
	procs[pid] = (struct fake){ .state = st, .ppid = ppid, .self_stop = stopped_self };
}

static struct stop_mirror *fresh_world(void)
{
	memset(procs, 0, sizeof(procs));
	return stop_mirror__new(&ops, NULL);
}

#define MS(n) ((uint64_t)(n) * NSEC_PER_MSEC)

/*
 * Three children of one parent released in turn, the parent stopped to
 * mirror them and stopping again at once when continued (its child is
 * over the ring's watermark again): one resume a tick, not one a child.
 */
static void test_one_resume_per_parent_per_tick(void)
{
	struct stop_mirror *m = fresh_world();
	pid_t child;

	for (child = 10; child <= 12; child++) {
		set_proc(child, 'R', 5, 0);
		stop_mirror__resumed(m, child, MS(100 + child), MS(100 + child));
	}
	set_proc(5, 'T', 1, MS(120));
	procs[5].stops_again = true;
	CHECK_U64(stop_mirror__tick(m, MS(130)), 1, "parents resumed in the tick");
	CHECK_U64(procs[5].resumed, 1, "the parent's resumes in one tick");
	/* a resume ends the watch: the next release of a child starts another */
	CHECK_U64(stop_mirror__tick(m, MS(132)), 0, "the next tick, its watch ended");
	stop_mirror__resumed(m, 10, MS(140), MS(141));
	procs[5].self_stop = MS(140);
	CHECK_U64(stop_mirror__tick(m, MS(143)), 1, "the tick after the next release");
	stop_mirror__resumed(m, 10, MS(143), MS(143));
	procs[5].self_stop = MS(143);
	CHECK_U64(stop_mirror__tick(m, MS(143) + 10), 0, "a tick within 1 ms of the last");
	CHECK_U64(procs[5].resumed, 2, "the parent's resumes in all");
	stop_mirror__delete(m);
}

/* a parent's watch spans the earliest hold of its children to the latest release */
static void test_watch_spans_every_child(void)
{
	struct stop_mirror *m = fresh_world();

	set_proc(10, 'R', 5, 0);
	set_proc(11, 'R', 5, 0);
	set_proc(5, 'S', 1, 0);
	stop_mirror__resumed(m, 10, MS(100), MS(101));
	stop_mirror__resumed(m, 11, MS(200), MS(201));
	/* stopped between the two holds: after the first, so memtrack's doing */
	set_proc(5, 'T', 1, MS(150));
	CHECK_U64(stop_mirror__tick(m, MS(202)), 1, "a stop after the first child's hold");
	CHECK(procs[5].state == 'S', "the parent runs again");
	stop_mirror__delete(m);

	/* watched, not stopped yet, until 500 ms after its children's latest release */
	m = fresh_world();
	set_proc(10, 'R', 5, 0);
	set_proc(11, 'R', 6, 0);
	set_proc(5, 'S', 1, 0);
	set_proc(6, 'S', 1, 0);
	stop_mirror__resumed(m, 10, MS(100), MS(101));
	stop_mirror__resumed(m, 10, MS(300), MS(301));
	stop_mirror__resumed(m, 11, MS(100), MS(101));
	CHECK_U64(stop_mirror__tick(m, MS(302)), 0, "parents that run");
	set_proc(5, 'T', 1, MS(700));
	set_proc(6, 'T', 1, MS(700));
	CHECK_U64(stop_mirror__tick(m, MS(750)), 1, "one stop within 500 ms of a release");
	CHECK(procs[5].resumed == 1 && procs[6].resumed == 0,
	      "5 resumed %u times, 6 (watch over at 601 ms) %u", procs[5].resumed, procs[6].resumed);
	stop_mirror__delete(m);
}

static void test_stops_of_their_own(void)
{
	struct stop_mirror *m = fresh_world();

	/* stopped itself before its child was held: not memtrack's */
	set_proc(10, 'R', 5, 0);
	set_proc(5, 'T', 1, MS(50));
	stop_mirror__resumed(m, 10, MS(100), MS(101));
	CHECK_U64(stop_mirror__tick(m, MS(102)), 0, "a stop from before the hold");
	/* stopped by someone else (no self-stop recorded) */
	set_proc(11, 'R', 6, 0);
	set_proc(6, 'T', 1, 0);
	stop_mirror__resumed(m, 11, MS(100), MS(101));
	CHECK_U64(stop_mirror__tick(m, MS(104)), 0, "a stop another process sent");
	/* stopped itself after the hold, but running again by the tick */
	set_proc(12, 'R', 7, 0);
	set_proc(7, 'S', 1, MS(110));
	stop_mirror__resumed(m, 12, MS(100), MS(101));
	CHECK_U64(stop_mirror__tick(m, MS(106)), 0, "a parent that is not stopped");
	CHECK(!procs[5].resumed && !procs[6].resumed && !procs[7].resumed, "none resumed");
	stop_mirror__delete(m);
}

/* init mirrors nothing, and a child already gone leaves nothing to watch */
static void test_no_watch(void)
{
	struct stop_mirror *m = fresh_world();

	set_proc(10, 'R', 1, 0);
	set_proc(1, 'T', 0, MS(200));
	stop_mirror__resumed(m, 10, MS(100), MS(101));
	stop_mirror__resumed(m, 20, MS(100), MS(101));
	CHECK_U64(stop_mirror__tick(m, MS(202)), 0, "init, a gone child");
	CHECK_U64(procs[1].resumed, 0, "init's resumes");
	stop_mirror__delete(m);
}

int main(void)
{
	test_one_resume_per_parent_per_tick();
	test_watch_spans_every_child();
	test_stops_of_their_own();
	test_no_watch();
	return test_done("test-stop-mirror");
}
