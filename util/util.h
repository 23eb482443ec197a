/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_UTIL_H
#define MEMTRACK_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL

/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns() */
uint64_t now_ns(void);

/*
 * Names the calling thread "mt-" and what fmt says (15 bytes at most), as top -H, ps -L
 * and /proc/PID/task/TID/comm show it.
 */
void name_thread(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* memtrack's own resident set size in bytes, 0 if unknown */
uint64_t self_rss_bytes(void);

/* write() all of buf, retrying on EINTR and short writes; 0 or -errno */
int write_all(int fd, const void *buf, size_t len);

/*
 * Room for need elements of size bytes in the array *p of capacity *cap,
 * which doubles (from 16); 0, or -ENOMEM with the array as it was.
 * Pass the array as (void **)&array.
 */
int grow_array(void **p, size_t *cap, size_t need, size_t size);

/* watch fd for events on epoll_fd, its data the fd itself; 0 or -errno */
int epoll_add_fd(int epoll_fd, int fd, uint32_t events);

/*
 * path, opened for reading if it is a regular file: the fd, or -errno
 * (-EINVAL: not a regular file).  A FIFO or a device is never opened (an
 * open alone wakes a FIFO's writer, rewinds a tape): looked at through an
 * O_PATH descriptor first.
 */
int open_regular(const char *path);

/*
 * The program name runs, found as execvp() finds it: name itself when it
 * has a slash, else the first executable of that name in $PATH (/usr/bin:/bin
 * when unset), its path in buf; opened with open_regular(): the fd, or -errno.
 */
int open_program(const char *name, char *buf, size_t len);

struct stat;
/*
 * Whether what st describes is of type (S_IFREG, S_IFDIR), ours (our
 * effective uid), with none of the mode bits others: what a cache of ours
 * must be before it is read
 */
bool stat_ours_alone(const struct stat *st, mode_t type, mode_t others);

/* n bytes for people: "512 B", "1.5 KiB", "3.0 GiB"; returns buf */
const char *human_bytes(uint64_t n, char *buf, size_t size);

#endif
