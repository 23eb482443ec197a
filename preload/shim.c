// SPDX-License-Identifier: GPL-2.0
/*
 * The preload shim's process and thread state: the connection to memtrack,
 * the per-thread rings, and writing records into them.
 *
 * Nothing here allocates through the traced allocator: memory comes from
 * mmap, strings are read with read(2), messages written with write(2).
 *
 * Fork.  The process state lives in a page mapped MADV_WIPEONFORK, so a
 * child (however it forked: fork(), clone(), a raw syscall) finds it zeroed
 * and starts afresh with a connection and rings of its own; the parent's
 * rings are MADV_DONTFORK and absent from the child.  A vfork child shares
 * the parent's memory and thread state: its calls land in the parent's ring
 * and count as the parent's, whose memory they are.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "shim.h"
#include "util/fd-pass.h"
#include "util/prefetch.h"

#define INERT_EPOCH		(~0ULL)
#define UNSET_EPOCH		(~0ULL - 1)	/* a thread's, until it joins: no process's */
#define WAIT_SLICE_NS		(100 * 1000 * 1000)
#define DEFAULT_RING_SIZE	(1U << 20)
#define RING_SIZE_MAX		(1ULL << 30)
#define POPULATE_FIRST		4096U
#define POPULATE_CHUNK		(64U << 10)
#define PREFETCH_AHEAD		512	/* bytes: within the second mapping of the data */
#define RINGS_CHECKED		8	/* rings whose thread is looked for, at each new ring */
#define FD_CEILING		1024	/* the shim's descriptor lies below this, and the limit */
#define FD_TRIES		16

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

enum proc_state { PROC_NEW, PROC_ACTIVE, PROC_INERT };

/* a ring of this incarnation, as the shim mapped it */
struct ring_ref {
	struct shim_ring_hdr *hdr;
	uint64_t size;		/* ours: the header's lies in memory anyone here may write */
	uint32_t tid;
	uint32_t pad;
};

#define FIRST_RINGS	8	/* most processes have fewer threads: no mapping for the list */

/* in a MADV_WIPEONFORK page: all zero in a forked child */
struct shim_proc {
	uint64_t epoch;
	uint32_t state;
	uint32_t lock;
	int sock;
	int32_t pid;		/* whose page this is: a vfork child shares it */
	uint64_t sock_ino;	/* to tell our socket from a reused fd number */
	const struct shim_control *ctl;
	struct shim_rule_slot *cfi_rules;	/* shared with the run's other shims, or NULL */
	struct ring_ref *rings;		/* this incarnation's, for unmapping when their thread ends */
	uint32_t nrings, rings_cap;
	uint32_t next_check;		/* the next ring whose thread is looked for */
	struct ring_ref first_rings[FIRST_RINGS];	/* rings[] until it outgrows them */
	struct spare_ring {		/* made while memtrack answers the hello */
		uint8_t *base;
		uint64_t size;
		int fd;
	} spare;
};

/*
 * A fork child's process page is zero, and so is the epoch of a thread that
 * never joined: were the TLS zero too, a thread that forked before its first
 * call would find its state current in the child, with no ring.
 */
__thread struct shim_thread shim_self __attribute__((tls_model("initial-exec"))) = {
	.epoch = UNSET_EPOCH,
};
uint64_t *shim_epoch;
uint32_t shim_call_graph;

static struct shim_proc *proc;
static uint64_t epochs;			/* counts incarnations, across forks */
static char sock_name[SHIM_NAME_MAX];	/* survives fork: the child reconnects */
static int sock_name_len = -1;
static long page_size;
static int last_sock = -1;		/* survives fork: a child closes its parent's */
static uint64_t last_sock_ino;

/* a + b as a warning's text: cut to its longest, and nothing but printable ASCII */
static uint32_t warn_text(struct shim_warn *w, const char *a, const char *b)
{
	const char *parts[2] = { a, b ? b : "" };
	uint32_t len = 0;
	int i;

	for (i = 0; i < 2; i++)
		for (const char *c = parts[i]; *c && len < SHIM_WARN_MAX; c++)
			w->text[len++] = *c >= 0x20 && *c < 0x7f ? *c : '?';
	return len;
}

static bool try_lock(uint32_t *l);
static void unlock(uint32_t *l);
static int proc_socket(struct shim_proc *p);

/* to memtrack, on the connection; false when there is none */
static bool warn_memtrack(const struct shim_warn *w, uint32_t len)
{
	struct shim_proc *p = __atomic_load_n(&proc, __ATOMIC_ACQUIRE);
	size_t size = offsetof(struct shim_warn, text) + len;
	bool sent = false;
	int sock;

	/* held by a thread this one interrupted, maybe: no waiting for it */
	if (!p || __atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != PROC_ACTIVE || !try_lock(&p->lock))
		return false;
	sock = proc_socket(p);
	if (sock >= 0)
		sent = send(sock, w, size, MSG_NOSIGNAL) == (ssize_t)size;
	unlock(&p->lock);
	return sent;
}

static void warn_stderr(const struct shim_warn *w)
{
	struct iovec iov[3] = {
		{ (void *)"memtrack preload: ", 18 },
		{ (void *)w->text, w->len },
		{ (void *)"\n", 1 },
	};

	if (writev(STDERR_FILENO, iov, 3) < 0)
		return;	/* nowhere left to say it */
}

/*
 * A warning: memtrack prints it, naming the process (or not, under -q).
 * Only a process that memtrack does not track (no connection at all) has
 * it on its stderr.  Nothing here allocates.
 */
void shim_warn(const char *a, const char *b)
{
	struct shim_warn w = { .msg = SHIM_WARN };
	int saved_errno = errno;


	w.len = warn_text(&w, a, b);
	if (!warn_memtrack(&w, w.len))
		warn_stderr(&w);
	errno = saved_errno;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

static void lock(uint32_t *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* the lock, unless it stays held for a while */
static bool try_lock(uint32_t *l)
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		if (!__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
			return true;
		sched_yield();
	}
	return false;
}

static void unlock(uint32_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

_Static_assert(sizeof(struct shim_proc) <= 4096, "the process page holds it");

static struct shim_proc *proc_page(void)
{
	struct shim_proc *p = __atomic_load_n(&proc, __ATOMIC_ACQUIRE), *expected = NULL;

	if (p)
		return p;
	page_size = sysconf(_SC_PAGESIZE);
	p = shim_mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (madvise(p, page_size, MADV_WIPEONFORK)) {
		shim_munmap(p, page_size);
		return NULL;	/* without it a child would write into its parent's rings */
	}
	if (!__atomic_compare_exchange_n(&proc, &expected, p, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		shim_munmap(p, page_size);
		return expected;
	}
	shim_epoch = &p->epoch;
	return p;
}

struct shim_rule_slot *shim_cfi_rules(void)
{
	struct shim_proc *p = __atomic_load_n(&proc, __ATOMIC_ACQUIRE);

	return p ? __atomic_load_n(&p->cfi_rules, __ATOMIC_ACQUIRE) : NULL;
}

/* MEMTRACK_SHIM in environ, as the process has it now; -1 when it is not there */
static int find_sock_name(void)
{
	static const char key[] = MEMTRACK_SHIM_ENV "=";
	size_t keylen = sizeof(key) - 1, vlen;
	char **e;

	for (e = environ; e && *e; e++) {
		if (strncmp(*e, key, keylen))
			continue;
		vlen = strlen(*e + keylen);
		if (!vlen || vlen >= sizeof(sock_name))
			return -1;
		memcpy(sock_name, *e + keylen, vlen);
		return vlen;
	}
	return -1;
}

/* MEMTRACK_SHIM from the environment the process started with (unsetenv cannot hide it) */
static int read_sock_name(void)
{
	static const char key[] = MEMTRACK_SHIM_ENV "=";
	char buf[4096];
	size_t have = 0, keylen = sizeof(key) - 1;
	bool skipping = false;
	int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC), len = -1;
	ssize_t n;

	if (fd < 0)
		return -1;
	while (len < 0 && (n = read(fd, buf + have, sizeof(buf) - have)) > 0) {
		char *end, *s = buf;

		have += n;
		while (len < 0 && (end = memchr(s, 0, buf + have - s))) {
			size_t vlen = end - s - keylen;

			if (!skipping && end - s > (long)keylen && !memcmp(s, key, keylen) &&
			    vlen < sizeof(sock_name)) {
				memcpy(sock_name, s + keylen, vlen);
				len = vlen;
			}
			skipping = false;
			s = end + 1;
		}
		/* keep the unfinished entry; one longer than the buffer is not ours, to its end */
		have = buf + have - s;
		memmove(buf, s, have);
		if (have == sizeof(buf)) {
			have = 0;
			skipping = true;
		}
	}
	close(fd);
	return len;
}

static uint64_t fd_ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/*
 * The socket, out of the program's way: programs take the lowest free
 * numbers, and some count on them (Python's os.pipe() gave 4 and 5 after
 * the shim's socket on 3).  It goes as high as it can below the soft limit
 * of descriptors, and below 1024: the kernel's table grows to the highest
 * number open, and every fork copies it.  A program that lowers its limit
 * later keeps the socket (the kernel closes nothing); one that dup2()s
 * onto its number is noticed by fd_ino().  When no high number is free,
 * it stays where it is.
 */
static int move_high(int fd)
{
	struct rlimit lim;
	int top, base, moved;

	if (getrlimit(RLIMIT_NOFILE, &lim))
		return fd;
	top = lim.rlim_cur < FD_CEILING ? (int)lim.rlim_cur : FD_CEILING;
	/* F_DUPFD gives the lowest free number from base on, which may be top or past it */
	for (base = top - 1; base > fd && base >= top - FD_TRIES; base--) {
		moved = fcntl(fd, F_DUPFD_CLOEXEC, base);
		if (moved >= 0 && moved < top) {
			close(fd);
			return moved;
		}
		if (moved >= 0)
			close(moved);
		else if (errno != EMFILE)
			break;
	}
	return fd;
}

static int connect_to_memtrack(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	/*
	 * environ first, with no system call: the constructor looks before
	 * main() could change it; else what the process started with
	 */
	if (sock_name_len < 0 && (sock_name_len = find_sock_name()) < 0)
		sock_name_len = read_sock_name();
	if (sock_name_len <= 0)
		return -1;
	memcpy(addr.sun_path + 1, sock_name, sock_name_len);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	fd = move_high(fd);
	if (connect(fd, (struct sockaddr *)&addr,
		    offsetof(struct sockaddr_un, sun_path) + 1 + sock_name_len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The reply: one byte, and with SHIM_ACCEPT the control page's fd and,
 * with dwarf stacks, the CFI rules' (fds[1], else -1)
 */
static char receive_reply(int sock, int fds[2])
{
	char byte = SHIM_REJECT;
	int nfds;

	fds[0] = fds[1] = -1;
	/*
	 * However long memtrack takes, as a full ring does: a process that gave
	 * up would run on untracked with memtrack counting it as served.  If
	 * memtrack is gone, its end is closed, and the read ends as a refusal.
	 */
	if (recv_fds(sock, &byte, 1, fds, 2, &nfds) != 1)
		return SHIM_REJECT;
	return byte;
}

static const struct shim_control *map_control(int fd)
{
	const struct shim_control *ctl;

	if (fd < 0)
		return NULL;
	ctl = shim_mmap(NULL, page_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (ctl == MAP_FAILED || ctl->magic != SHIM_MAGIC)
		return NULL;
	madvise((void *)ctl, page_size, MADV_DONTFORK);	/* a child gets its own */
	return ctl;
}

/* the run's shared CFI rules, NULL without: stacks are then computed here alone */
static struct shim_rule_slot *map_cfi_rules(int fd)
{
	struct shim_rule_slot *rules;
	struct stat st;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || (uint64_t)st.st_size != SHIM_RULES_MAP_SIZE) {
		close(fd);
		return NULL;
	}
	rules = shim_mmap(NULL, SHIM_RULES_MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (rules == MAP_FAILED)
		return NULL;
	madvise(rules, SHIM_RULES_MAP_SIZE, MADV_DONTFORK);
	return rules;
}

static void close_reply_fds(const int fds[2])
{
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
}

extern uint32_t shim_hello_flags(void) SHIM_HIDDEN;

#define NOT_REACHED	(-2)

static void unmap_ring(struct shim_ring_hdr *h, uint64_t size)
{
	shim_munmap(h, SHIM_HDR_SIZE + 2 * size);
}

/*
 * Header page, then the data area twice: a record never wraps.  The file
 * is mapped for the whole length, past its end too; the second view of the
 * data area replaces that part.
 */
static void *map_ring(int fd, uint64_t size)
{
	uint8_t *base = shim_mmap(NULL, SHIM_HDR_SIZE + 2 * size, PROT_READ | PROT_WRITE,
				  MAP_SHARED, fd, 0);

	if (base == MAP_FAILED)
		return NULL;
	if (shim_mmap(base + SHIM_HDR_SIZE + size, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, SHIM_HDR_SIZE) == MAP_FAILED ||
	    madvise(base, SHIM_HDR_SIZE + 2 * size, MADV_DONTFORK)) {
		shim_munmap(base, SHIM_HDR_SIZE + 2 * size);
		return NULL;
	}
	return base;
}

static int create_ring_fd(uint64_t size)
{
	int fd = memfd_create("memtrack-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	/* sealed: memtrack maps it too, and a shrink would fault memtrack */
	if (ftruncate(fd, SHIM_HDR_SIZE + size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* a ring of size, made and mapped with its header written: its base and memfd, or NULL */
static uint8_t *new_ring(uint64_t size, int *fd)
{
	struct shim_ring_hdr *h;
	uint8_t *base;
	int err;

	*fd = create_ring_fd(size);
	if (*fd < 0)
		return NULL;
	base = map_ring(*fd, size);
	if (!base) {
		err = errno;
		close(*fd);
		errno = err;
		return NULL;
	}
	h = (struct shim_ring_hdr *)base;
	h->magic = SHIM_MAGIC;
	h->version = SHIM_VERSION;
	h->size = size;
	return base;
}

/* memtrack's default size: the control page, which may ask another, comes with its answer */
static void make_spare_ring(struct shim_proc *p)
{
	p->spare.size = DEFAULT_RING_SIZE;
	p->spare.base = new_ring(p->spare.size, &p->spare.fd);
}

static void drop_spare_ring(struct shim_proc *p)
{
	if (!p->spare.base)
		return;
	unmap_ring((struct shim_ring_hdr *)p->spare.base, p->spare.size);
	close(p->spare.fd);
	p->spare.base = NULL;
}

/* a ring of size for a new thread: the spare if it fits, else a new one */
static uint8_t *take_ring(struct shim_proc *p, uint64_t size, int *fd)
{
	uint8_t *base;

	lock(&p->lock);
	if (p->spare.base && p->spare.size != size)
		drop_spare_ring(p);
	base = p->spare.base;
	*fd = p->spare.fd;
	p->spare.base = NULL;
	unlock(&p->lock);
	return base ? base : new_ring(size, fd);
}

/* a new connection, introduced; NOT_REACHED: no memtrack to say it to */
static int say_hello(uint32_t tid)
{
	struct shim_hello hello = {
		.msg = SHIM_HELLO, .magic = SHIM_MAGIC, .version = SHIM_VERSION,
		.flags = shim_hello_flags(), .tid = tid,
	};
	int sock = connect_to_memtrack();

	if (sock < 0)
		return NOT_REACHED;
	if (send(sock, &hello, sizeof(hello), MSG_NOSIGNAL) != sizeof(hello)) {
		close(sock);
		return -1;
	}
	return sock;
}

/* memtrack takes no ring on a connection whose hello it did not accept: closed then */
static int await_answer(int sock, int fds[2])
{
	if (receive_reply(sock, fds) != SHIM_ACCEPT) {
		close_reply_fds(fds);
		close(sock);
		return -1;
	}
	return sock;
}

static int connect_and_hello(uint32_t tid, int fds[2])
{
	int sock = say_hello(tid);

	fds[0] = fds[1] = -1;
	return sock < 0 ? sock : await_answer(sock, fds);
}

/* says hello; 0 when memtrack takes this process's records, else -1 or NOT_REACHED */
static int join_memtrack(struct shim_proc *p, uint32_t tid)
{
	int fds[2] = { -1, -1 }, sock = say_hello(tid);

	if (sock < 0)
		return sock;
	/* while memtrack decides, on another CPU: ours is made by then */
	make_spare_ring(p);
	sock = await_answer(sock, fds);
	if (sock < 0) {
		drop_spare_ring(p);
		return sock;
	}
	if (!(p->ctl = map_control(fds[0]))) {
		if (fds[1] >= 0)
			close(fds[1]);
		close(sock);
		drop_spare_ring(p);
		return -1;
	}
	__atomic_store_n(&p->cfi_rules, map_cfi_rules(fds[1]), __ATOMIC_RELEASE);
	p->sock = sock;
	p->sock_ino = fd_ino(sock);
	last_sock = sock;
	last_sock_ino = p->sock_ino;
	shim_call_graph = p->ctl->call_graph;
	return 0;
}

/*
 * To BPF, which sees the shim's mappings: a process memtrack tracks stops
 * there until its probes are attached, and runs on traced by them.  Outside
 * a run, a mapping made and unmapped.
 */
static void say_not_reached(void)
{
	void *m = shim_mmap(NULL, MT_SHIM_UNREACHED_LEN, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m != MAP_FAILED)
		shim_munmap(m, MT_SHIM_UNREACHED_LEN);
}

static void go_inert(struct shim_proc *p)
{
	p->state = PROC_INERT;
	__atomic_store_n(&p->epoch, INERT_EPOCH, __ATOMIC_RELEASE);
}

static void proc_init(struct shim_proc *p, uint32_t tid)
{
	int err;

	lock(&p->lock);
	if (p->state == PROC_NEW) {
		/* a forked child holds its parent's connection: not ours to use */
		if (last_sock >= 0 && fd_ino(last_sock) == last_sock_ino)
			close(last_sock);
		last_sock = -1;
		err = join_memtrack(p, tid);
		if (!err) {
			p->pid = getpid();
			p->state = PROC_ACTIVE;
			__atomic_store_n(&p->epoch, ++epochs, __ATOMIC_RELEASE);
		} else {
			if (err == NOT_REACHED)
				say_not_reached();
			go_inert(p);
		}
	}
	unlock(&p->lock);
}

/*
 * The connection, checked: the program may have closed our fd and reused
 * its number.  A new one says hello again (the control page and rules we have).
 */
static int proc_socket(struct shim_proc *p)
{
	int fds[2];

	if (p->sock > 0 && fd_ino(p->sock) == p->sock_ino)
		return p->sock;
	p->sock = connect_and_hello(syscall(SYS_gettid), fds);
	close_reply_fds(fds);
	p->sock_ino = p->sock >= 0 ? fd_ino(p->sock) : 0;
	last_sock = p->sock;
	last_sock_ino = p->sock_ino;
	return p->sock;
}

/*
 * The rings of threads that have ended are unmapped here, a few at each new
 * ring: memtrack maps each ring itself and reads it to the end whatever
 * the process does with its own mapping.  A ring is unmapped only when no
 * thread has its tid any more (a tid taken again keeps it mapped, which
 * costs memory, never a fault); not on memtrack's word, which the process
 * can write too, and which memtrack gives while a dropped process's
 * threads still write.  The incarnation's first ring stays: it counts the
 * threads that memtrack could not be told of (no_ring()).  Under p->lock.
 */
static void unmap_ended(struct shim_proc *p)
{
	pid_t pid = getpid();
	uint32_t checked;

	for (checked = 0; checked < RINGS_CHECKED && p->nrings > 1; checked++) {
		struct ring_ref *r;

		if (p->next_check < 1 || p->next_check >= p->nrings)
			p->next_check = 1;
		r = &p->rings[p->next_check];
		if (syscall(SYS_tgkill, pid, r->tid, 0) && errno == ESRCH) {
			unmap_ring(r->hdr, r->size);
			*r = p->rings[--p->nrings];
		} else {
			p->next_check++;
		}
	}
}

/* the list of rings twice as long, in a mapping of its own past the first ones */
static bool grow_rings(struct shim_proc *p)
{
	size_t old = p->rings_cap * sizeof(*p->rings), size = 2 * old;
	struct ring_ref *a;

	if (p->rings == p->first_rings) {
		a = shim_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a != MAP_FAILED)
			memcpy(a, p->rings, old);
	} else {
		a = shim_mremap(p->rings, old, size, MREMAP_MAYMOVE);
	}
	if (a == MAP_FAILED || madvise(a, size, MADV_DONTFORK))
		return false;
	p->rings = a;
	p->rings_cap = size / sizeof(*p->rings);
	return true;
}

/* the new ring h of thread tid takes a place in the list.  Under p->lock. */
static bool remember_ring(struct shim_proc *p, struct shim_ring_hdr *h, uint64_t size,
			  uint32_t tid)
{
	unmap_ended(p);
	if (!p->rings_cap) {
		p->rings = p->first_rings;
		p->rings_cap = FIRST_RINGS;
	}
	if (p->nrings == p->rings_cap && !grow_rings(p))
		return false;
	p->rings[p->nrings++] = (struct ring_ref){ .hdr = h, .size = size, .tid = tid };
	return true;
}

static bool send_ring(int sock, int fd, uint32_t tid, uint64_t size)
{
	struct shim_register reg = { .msg = SHIM_REGISTER, .tid = tid, .size = size };

	return send_fds(sock, &reg, sizeof(reg), &fd, 1, 0) == sizeof(reg);
}

/* the new ring h of fd, kept and sent to memtrack: 0, or an errno */
static int register_ring(struct shim_proc *p, struct shim_ring_hdr *h, uint64_t size, int fd,
			 uint32_t tid)
{
	int sock, err = 0;

	lock(&p->lock);
	sock = proc_socket(p);
	if (sock < 0)
		err = ENOTCONN;
	else if (!remember_ring(p, h, size, tid))
		err = ENOMEM;
	else if (!send_ring(sock, fd, tid, size)) {
		p->nrings--;
		err = errno ? errno : EPIPE;
	}
	unlock(&p->lock);
	return err;
}

/* memtrack's word, as a power of two the records fit in, or ours */
static uint64_t ring_size(const struct shim_control *ctl)
{
	uint64_t size = __atomic_load_n(&ctl->ring_size, __ATOMIC_RELAXED);

	if (size < SHIM_HDR_SIZE || size > RING_SIZE_MAX || (size & (size - 1)))
		return DEFAULT_RING_SIZE;
	return size;
}

/* the thread's ring, made and handed to memtrack: 0, or an errno */
static int thread_init(struct shim_proc *p, struct shim_thread *t, uint32_t tid)
{
	uint64_t size = ring_size(p->ctl);
	uint8_t *base;
	int fd, err;

	base = take_ring(p, size, &fd);
	if (!base)
		return errno ? errno : ENOMEM;
	err = register_ring(p, (struct shim_ring_hdr *)base, size, fd, tid);
	close(fd);
	if (err) {
		unmap_ring((struct shim_ring_hdr *)base, size);
		return err;
	}
	shim_stack_reset(t);
	t->hdr = (struct shim_ring_hdr *)base;
	t->data = base + SHIM_HDR_SIZE;
	t->size = size;
	t->cons_seen = 0;
	t->populated = 0;
	t->tid = tid;
	t->epoch = p->epoch;
	return 0;
}

/*
 * Once per thread and incarnation: memtrack learns that the run misses
 * this thread's calls.  On the connection if it can (memtrack names the
 * thread and says why); else, with no connection and maybe no descriptor
 * left to make one, in the process's first ring, which memtrack maps and
 * reads at the end; else, with no ring either, on stderr.
 */
static void no_ring(struct shim_proc *p, struct shim_thread *t, uint32_t tid, int err)
{
	struct shim_no_ring m = { .msg = SHIM_NO_RING, .tid = tid, .err = err };
	bool told = false;
	const char *desc;
	int sock;

	t->no_ring_epoch = p->epoch;
	lock(&p->lock);
	sock = proc_socket(p);
	if (sock >= 0)
		told = send(sock, &m, sizeof(m), MSG_NOSIGNAL) == sizeof(m);
	if (!told && p->nrings) {
		__atomic_add_fetch(&p->rings[0].hdr->unserved, 1, __ATOMIC_RELEASE);
		told = true;
	}
	unlock(&p->lock);
	if (told)
		return;
	desc = strerrordesc_np(err);	/* strerror() may translate, and allocate */
	shim_warn("cannot create this thread's ring: its allocations are not tracked: ",
		  desc ? desc : "unknown error");
}

struct shim_thread *shim_thread_slow(struct shim_thread *t)
{
	struct shim_thread *ret = NULL;
	struct shim_proc *p = proc;
	uint32_t tid;
	int err, saved_errno;

	/* the common way here once memtrack is gone: as cheap as can be */
	if (t->depth || (p && p->state == PROC_INERT))
		return NULL;
	t->depth++;
	saved_errno = errno;	/* what the shim's calls set is not the program's */
	p = proc_page();
	if (!p)
		goto out;
	tid = syscall(SYS_gettid);
	if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) == PROC_NEW)
		proc_init(p, tid);
	if (p->state != PROC_ACTIVE)
		goto out;
	if (t->epoch != p->epoch) {
		if (t->no_ring_epoch == p->epoch)
			goto out;
		err = thread_init(p, t, tid);
		if (err) {
			no_ring(p, t, tid, err);
			goto out;
		}
	}
	ret = t;
out:
	errno = saved_errno;
	t->depth--;
	return ret;
}

static bool memtrack_gone(struct shim_proc *p)
{
	struct pollfd pfd = { .fd = p->sock, .events = POLLIN | POLLRDHUP };

	if (p->sock <= 0 || fd_ino(p->sock) != p->sock_ino)
		return proc_socket(p) < 0;
	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

/* a sleeping poller is woken by a message on our connection, if it is still ours */
static void kick_poller(void)
{
	static const uint32_t kick = SHIM_KICK;
	struct shim_proc *p = proc;

	if (!__atomic_load_n(&p->ctl->poller_asleep, __ATOMIC_RELAXED))
		return;
	if (p->sock > 0 && fd_ino(p->sock) == p->sock_ino)
		send(p->sock, &kick, sizeof(kick), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * The ring cannot take [.., end): wait until the poller has freed half of
 * it (a wake-up per half ring, not per stride it frees).  False when
 * memtrack is gone: the process runs on untracked.
 */
static bool wait_for_room(struct shim_thread *t, uint64_t end)
{
	struct shim_ring_hdr *h = t->hdr;
	struct timespec slice = { .tv_nsec = WAIT_SLICE_NS };
	bool ok = true;

	/* no depth++ here: a signal handler's call while we wait is still recorded */
	__atomic_store_n(&h->wait_start, now_ns(), __ATOMIC_RELAXED);
	for (;;) {
		uint32_t gen = __atomic_load_n(&h->cons_gen, __ATOMIC_ACQUIRE);

		__atomic_store_n(&h->waiting, 1, __ATOMIC_SEQ_CST);
		t->cons_seen = __atomic_load_n(&h->cons, __ATOMIC_SEQ_CST);
		/* until half the ring is free: the poller wakes us no sooner */
		if (end - t->cons_seen <= t->size / 2)
			break;
		kick_poller();
		if (futex(&h->cons_gen, FUTEX_WAIT, gen, &slice) && errno == ETIMEDOUT &&
		    memtrack_gone(proc)) {
			go_inert(proc);
			ok = false;
			break;
		}
	}
	__atomic_store_n(&h->waiting, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->wait_start, 0, __ATOMIC_RELAXED);
	return ok;
}

/*
 * The first lap through a ring would take a page fault per page, a trap
 * each (the dearer under a paravirtualised kernel): one madvise maps a
 * chunk of them instead.  The chunks start at a page and double up to
 * POPULATE_CHUNK: a thread that writes a few records costs a page of the
 * process's memory, not a chunk.
 */
static void populate_ahead(struct shim_thread *t, uint64_t end)
{
	uint64_t step = t->populated < POPULATE_FIRST ? POPULATE_FIRST :
			t->populated < POPULATE_CHUNK ? t->populated : POPULATE_CHUNK;
	uint64_t to = (end + step - 1) & ~(step - 1);

	if (to > t->size)
		to = t->size;
	if (to <= t->populated ||
	    madvise(t->data + t->populated, to - t->populated, MADV_POPULATE_WRITE) ||
	    to == t->size) {
		t->populated = UINT64_MAX;	/* done, or the kernel cannot: faults it is */
		return;
	}
	t->populated = to;
}

/*
 * A slot of len bytes.  The add is atomic against signal handlers of this
 * thread, which may reserve in between: the consumer stops at a slot not
 * yet committed, so records stay in the order of their reservations.
 */
static void *reserve(struct shim_thread *t, uint32_t len, uint64_t *pos)
{
	struct shim_ring_hdr *h = t->hdr;
	uint64_t p = __atomic_fetch_add(&h->prod, len, __ATOMIC_RELAXED), half = t->size / 2;
	bool full = unlikely(p + len - t->cons_seen > t->size),
	     unpopulated = unlikely(p + len > t->populated),
	     crossed = unlikely((p & (half - 1)) + len > half);

	/* the system calls below set errno, which free() must leave as it was */
	if (unlikely(full || unpopulated || crossed)) {
		int saved_errno = errno;

		if (full) {
			t->cons_seen = __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE);
			if (p + len - t->cons_seen > t->size && !wait_for_room(t, p + len)) {
				errno = saved_errno;
				return NULL;
			}
		}
		if (unpopulated)
			populate_ahead(t, p + len);
		if (crossed)
			kick_poller();	/* crossed a half: the poller may be asleep */
		errno = saved_errno;
	}
	*pos = p;
	/* the line a few records on was last read by memtrack's core: ask for it early */
	prefetch_for_write(t->data + (p & (t->size - 1)) + PREFETCH_AHEAD);
	return t->data + (p & (t->size - 1));
}

static void commit(void *rec, uint64_t pos, uint32_t len, uint32_t kind)
{
	__atomic_store_n((uint64_t *)rec, SHIM_REC_WORD(pos, len, kind), __ATOMIC_RELEASE);
}

void shim_record_alloc(struct shim_thread *t, uint32_t kind, void *p, size_t size,
		       uint32_t stack)
{
	struct shim_alloc_rec *r;
	uint64_t pos;

	r = reserve(t, sizeof(*r), &pos);
	if (!r)
		return;
	r->ts = now_ns();
	r->addr = (uintptr_t)p;
	r->size = size;
	r->kind = kind;
	r->stack = stack;
	commit(r, pos, sizeof(*r), SHIM_REC_ALLOC);
}

void shim_record_free(struct shim_thread *t, void *p)
{
	struct shim_free_rec *r;
	uint64_t pos;

	r = reserve(t, sizeof(*r), &pos);
	if (!r)
		return;
	r->ts = now_ns();
	r->addr = (uintptr_t)p;
	commit(r, pos, sizeof(*r), unlikely(t->freeres) ? SHIM_REC_FREERES : SHIM_REC_FREE);
}

/*
 * realloc frees the old block inside the call, where another thread may
 * get it at once: the event's time, and its place in the ring, must come
 * before the call.  A failed realloc commits a record that makes no event.
 */
bool shim_realloc_begin(struct shim_thread *t, struct shim_pending *pend, void *old,
			uint32_t stack)
{
	struct shim_realloc_rec *r = reserve(t, sizeof(*r), &pend->pos);

	pend->rec = r;
	if (!r)
		return false;
	r->ts = now_ns();
	r->old_addr = (uintptr_t)old;
	r->stack = stack;
	r->pad = 0;
	return true;
}

void shim_realloc_end(struct shim_pending *pend, void *ret, size_t size)
{
	struct shim_realloc_rec *r = pend->rec;

	if (!r)
		return;
	r->addr = (uintptr_t)ret;
	r->size = size;
	if (!ret && size)
		r->old_addr = 0;	/* failed: the old block is still there */
	commit(r, pend->pos, sizeof(*r), SHIM_REC_REALLOC);
}

bool shim_write_stack(struct shim_thread *t, uint32_t id, const uint64_t *ips, uint32_t nr)
{
	uint32_t len = sizeof(struct shim_stack_rec) + nr * sizeof(uint64_t);
	struct shim_stack_rec *r;
	uint64_t pos;

	r = reserve(t, len, &pos);
	if (!r)
		return false;
	r->id = id;
	r->nr = nr;
	memcpy(r->ips, ips, nr * sizeof(uint64_t));
	commit(r, pos, len, SHIM_REC_STACK);
	return true;
}

/* ---- at exit: what glibc keeps for the whole run ---------------------------- */

extern void __libc_freeres(void) __attribute__((weak));
extern char __libc_single_threaded __attribute__((weak));
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

/* this process's, recorded, and asked for; not a vfork child in its parent's memory */
static bool freeres_wanted(const struct shim_proc *p)
{
	return p && __atomic_load_n(&p->state, __ATOMIC_ACQUIRE) == PROC_ACTIVE && p->ctl &&
	       (p->ctl->flags & SHIM_CTL_FREERES) && &__libc_freeres &&
	       &__libc_single_threaded && p->pid == getpid();
}

/*
 * glibc frees its stdio buffers, locale and NSS tables only in
 * __libc_freeres(), which valgrind calls at exit: without it every program
 * that uses stdio leaks them.  It frees what another thread may still use:
 * only in a process that never made a thread.  It flushes every stream in
 * the order exit()'s own last flush would, which then has nothing left.
 */
static void freeres_at_exit(void *arg)
{
	struct shim_thread *t = &shim_self;

	(void)arg;
	if (!freeres_wanted(proc) || !__libc_single_threaded)
		return;
	t->freeres = 1;
	__libc_freeres();
	t->freeres = 0;
}

/*
 * The destructors run in _dl_fini, the first exit handler registered and
 * so the last to run; a handler registered while the handlers run is run
 * next, after the one that registered it.  Registered from a destructor,
 * ours runs once every exit handler and destructor of the program has.
 * Registered with no DSO: the shim's own __cxa_finalize must not run it.
 */
__attribute__((destructor)) static void shim_at_exit(void)
{
	if (freeres_wanted(proc))
		__cxa_atexit(freeres_at_exit, NULL, NULL);
}
