# SPDX-License-Identifier: GPL-2.0
#
# memtrack build.  Knobs:
#   V=1                 show the commands
#   O=<dir>             put build artefacts in <dir> (must exist; default .output)
#   BUILD_BPF_SKEL=0    build without BPF (no clang/bpftool): stats and report only
#   CLANG, BPFTOOL      tools for the BPF object and its skeleton
#   VMLINUX_H=<file>    use this vmlinux.h instead of generating it from BTF
#   VMLINUX_BTF=<file>  BTF to generate vmlinux.h from (default /sys/kernel/btf/vmlinux)
#   EXTRA_CFLAGS        appended to CFLAGS
#   prefix=<dir>        where install puts memtrack (default /usr/local); the
#                       preload shim's directory, <prefix>/lib/memtrack, is
#                       compiled in
#   DESTDIR=<dir>       install under <dir> as if it were / (for packages)
#
# Targets: all (default), test, compat, demo, deps, bench, doc, install,
#          uninstall, check, clean, help

MAKEFLAGS += -r

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
MAKEFLAGS += --no-print-directory
endif

ifdef O
ifeq ($(wildcard $(O)),)
$(error output directory '$(O)' does not exist)
endif
OUTPUT := $(abspath $(O))
else
OUTPUT := .output
endif

VERSION := 0.1.0
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
BUILD_BPF_SKEL ?= 1
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Wno-missing-field-initializers -std=gnu11 -pthread
CFLAGS += -I. -I$(OUTPUT) -I/usr/include/cjson -DMEMTRACK_VERSION='"$(VERSION)"'
CFLAGS += $(EXTRA_CFLAGS)
DEPFLAGS = -MMD -MP -MF $(@:.o=.d)
LIBS := -lzstd -lmsgpackc -lcjson -ldw -lelf -lz -liberty -lprotobuf-c -lpthread -lm

# util/ holds the general helpers, and a folder per subsystem (see README.md)
UTIL_DIRS := util $(patsubst %/,%,$(wildcard util/*/))
BPF_SRCS := $(filter-out util/probe/bpf_stubs.c,$(wildcard util/probe/bpf_*.c))
UTIL_SRCS := $(filter-out $(BPF_SRCS) util/probe/bpf_stubs.c,$(wildcard $(addsuffix /*.c,$(UTIL_DIRS))))
ifeq ($(BUILD_BPF_SKEL),1)
UTIL_SRCS += $(BPF_SRCS)
LIBS += -lbpf
else
UTIL_SRCS += util/probe/bpf_stubs.c
CFLAGS += -DNO_BPF_SKEL
endif

UTIL_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(UTIL_SRCS)) $(OUTPUT)/util/report/profile.pb-c.o
CMD_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,memtrack.c $(wildcard builtin-*.c))
SKEL := $(OUTPUT)/bpf/memtrack.skel.h

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst %.c,$(OUTPUT)/%,$(UNIT_SRCS))
# alloc_loop.c is built once per allocator; libdl_alloc.c, libpreload_mark.c and libstack_*.c
# are libraries
WORKLOAD_SRCS := $(filter-out %/alloc_loop.c %/libdl_alloc.c tests/workloads/libstack_%.c \
	%/libreallocarray.c %/reallocarray_lib.c %/asan_alloc.c %/libpreload_mark.c %/libforward.c,\
	$(wildcard tests/workloads/*.c))
ALLOC_LOOPS := glibc jemalloc jemalloc_static mimalloc tcmalloc tcmalloc_static
WORKLOADS := $(patsubst %.c,%,$(WORKLOAD_SRCS)) tests/workloads/cxx_new_delete \
	tests/workloads/cxx_inline tests/workloads/cxx_own_new tests/workloads/cxx_bad_alloc \
	tests/workloads/libreallocarray.so tests/workloads/reallocarray_lib tests/workloads/asan_alloc \
	tests/workloads/libdl_alloc.so tests/workloads/libpreload_mark.so tests/workloads/libforward.so \
	tests/workloads/libstack_mid.so \
	tests/workloads/libstack_alloc.so tests/workloads/libstack_alloc_nofp.so \
	tests/workloads/stack_alloc_nofp \
	$(addprefix tests/workloads/alloc_loop_,$(ALLOC_LOOPS))

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all test compat demo deps bench doc check clean help workloads unit install uninstall FORCE

# with O=<dir>, the binary goes there too; the preload shim lies next to it
MEMTRACK := $(if $(O),$(OUTPUT)/memtrack,memtrack)
SHIM := $(dir $(MEMTRACK))libmemtrack-preload.so
COMPLETION := $(OUTPUT)/memtrack.bash

prefix ?= /usr/local
bindir ?= $(prefix)/bin
memtracklibdir ?= $(prefix)/lib/memtrack
datadir ?= $(prefix)/share
mandir ?= $(datadir)/man
docdir ?= $(datadir)/doc/memtrack
bashcompdir ?= $(datadir)/bash-completion/completions
INSTALL ?= install

all: $(MEMTRACK) $(SHIM) workloads $(OUTPUT)/layers.ok

# util/'s folders include one another one way: a back edge fails the build
$(OUTPUT)/layers.ok: scripts/check-layers.sh $(wildcard util/*.[ch] util/*/*.[ch]) | $(OUTPUT)/util
	$(call msg,CHECK,layers of util/)
	$(Q)scripts/check-layers.sh && touch $@

# the comment block at the top, without its '#'s
help:
	@sed -n '3,/^[^#]/s/^# \{0,1\}//p' Makefile

$(MEMTRACK): $(CMD_OBJS) $(UTIL_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

$(OUTPUT)/%.o: %.c | $(addprefix $(OUTPUT)/,$(UTIL_DIRS)) $(OUTPUT)/tests/unit
	$(call msg,CC,$<)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(addprefix $(OUTPUT)/,$(UTIL_DIRS)) $(OUTPUT)/bpf $(OUTPUT)/tests/unit $(OUTPUT)/preload:
	$(Q)mkdir -p $@

# where track looks for the shim after its own directory: compiled in, and
# written down, so that another prefix rebuilds what uses it
$(OUTPUT)/util/track/session.o: CFLAGS += -DMEMTRACK_LIBDIR='"$(memtracklibdir)"'
$(OUTPUT)/util/track/session.o: $(OUTPUT)/MEMTRACK-LIBDIR
$(OUTPUT)/MEMTRACK-LIBDIR: FORCE | $(OUTPUT)/util
	$(Q)echo '$(memtracklibdir)' | cmp -s - $@ || echo '$(memtracklibdir)' > $@
# report --pprof: pprof's profile.proto in C, by protoc-c
$(OUTPUT)/util/report/profile.pb-c.c $(OUTPUT)/util/report/profile.pb-c.h: util/report/profile.proto | $(OUTPUT)/util/report
	$(call msg,PROTOC,$@)
	$(Q)protoc-c --proto_path=util/report --c_out=$(OUTPUT)/util/report $<
$(OUTPUT)/util/report/profile.pb-c.o: $(OUTPUT)/util/report/profile.pb-c.c
	$(call msg,CC,$<)
	$(Q)$(CC) $(CFLAGS) -I$(OUTPUT)/util/report $(DEPFLAGS) -c -o $@ $<
$(OUTPUT)/util/report/report-pprof.o: $(OUTPUT)/util/report/profile.pb-c.h
# report --html: the page and its script are built into the binary
$(OUTPUT)/util/report/report-html.o: util/report/report-html.html util/report/report-html.js

# the preload shim: loaded into traced processes, so nothing it exports but
# the functions it interposes, no library but libc, unwind tables that C++
# exceptions pass through, and frame pointers its unwinders start from
SHIM_SRCS := $(wildcard preload/*.c)
SHIM_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(SHIM_SRCS))
SHIM_CFLAGS := -O2 -g -Wall -Wextra -std=gnu11 -fPIC -fvisibility=hidden \
	-fasynchronous-unwind-tables -fno-omit-frame-pointer -ftls-model=initial-exec \
	-fno-builtin -I. $(EXTRA_CFLAGS)

$(SHIM_OBJS): $(OUTPUT)/preload/%.o: preload/%.c | $(OUTPUT)/preload
	$(call msg,CC,$<)
	$(Q)$(CC) $(SHIM_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(SHIM): $(SHIM_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared -Wl,-z,now -Wl,--no-undefined -o $@ $^

# BPF: vmlinux.h from the running kernel's BTF, object, skeleton
ifeq ($(BUILD_BPF_SKEL),1)
$(patsubst %.c,$(OUTPUT)/%.o,$(BPF_SRCS)): $(SKEL)

ifdef VMLINUX_H
$(OUTPUT)/bpf/vmlinux.h: $(VMLINUX_H) | $(OUTPUT)/bpf
	$(Q)cp $< $@
else
$(OUTPUT)/bpf/vmlinux.h: | $(OUTPUT)/bpf
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@
endif

$(OUTPUT)/bpf/memtrack.bpf.o: bpf/memtrack.bpf.c bpf/memtrack.h $(OUTPUT)/bpf/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -Wall -target bpf -D__TARGET_ARCH_$(ARCH) \
		-I$(OUTPUT)/bpf -I. -c $< -o $@

$(SKEL): $(OUTPUT)/bpf/memtrack.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name memtrack_bpf > $@
endif

# workloads: small programs with known allocation counts
workloads: $(WORKLOADS)
WL_CFLAGS := -O1 -g -Wall -pthread
LIBDIR := /usr/lib/$(shell $(CC) -dumpmachine)
tests/workloads/%: tests/workloads/%.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) -o $@ $< -ldl
tests/workloads/cxx_new_delete: tests/workloads/cxx_new_delete.cc
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(WL_CFLAGS) -std=c++17 -fno-builtin -o $@ $<
# cxx_inline: a call chain through a template and a forced inline, as C++ is shipped
tests/workloads/cxx_inline: tests/workloads/cxx_inline.cc
	$(call msg,CXX,$@)
	$(Q)$(CXX) -O2 -g -fomit-frame-pointer -Wall -std=c++17 -o $@ $<
# operator new and delete of the executable's own, calling malloc and free
tests/workloads/cxx_own_new: tests/workloads/cxx_own_new.cc
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(WL_CFLAGS) -std=c++17 -fno-builtin -o $@ $<
tests/workloads/cxx_bad_alloc: tests/workloads/cxx_bad_alloc.cc
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(WL_CFLAGS) -std=c++17 -fno-builtin -o $@ $<
tests/workloads/libreallocarray.so: tests/workloads/libreallocarray.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) -shared -fPIC -o $@ $<
tests/workloads/reallocarray_lib: tests/workloads/reallocarray_lib.c tests/workloads/libreallocarray.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) -o $@ $< -Ltests/workloads -lreallocarray -Wl,-rpath,'$$ORIGIN'
tests/workloads/asan_alloc: tests/workloads/asan_alloc.c
	$(call msg,CC,$@)
	$(Q)$(CC) -O0 -g -fsanitize=address -o $@ $<
tests/workloads/libdl_alloc.so: tests/workloads/libdl_alloc.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) -shared -fPIC -o $@ $<
# a user's own LD_PRELOAD library, for track_user_preload
tests/workloads/libpreload_mark.so: tests/workloads/libpreload_mark.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) -shared -fPIC -o $@ $<
# a user's LD_PRELOAD library that forwards malloc and free to libc's, for track_forwarder
tests/workloads/libforward.so: tests/workloads/libforward.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) -shared -fPIC -o $@ $< -ldl
# stack_*: known call stacks (frame pointers, real calls, a library of their own)
STACK_CFLAGS := -O2 -g -fno-omit-frame-pointer -Wall
tests/workloads/libstack_%.so: tests/workloads/libstack_%.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(STACK_CFLAGS) -fPIC -shared -o $@ $<
tests/workloads/stack_leaf: tests/workloads/stack_leaf.c tests/workloads/libstack_mid.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(STACK_CFLAGS) -o $@ $< -Ltests/workloads -lstack_mid -Wl,-rpath,'$$ORIGIN'
tests/workloads/stack_alloc: tests/workloads/stack_alloc.c tests/workloads/libstack_alloc.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(STACK_CFLAGS) -o $@ $< -Ltests/workloads -lstack_alloc -Wl,-rpath,'$$ORIGIN'
# stack_alloc_nofp: the same, without frame pointers, as Debian builds its packages
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -Wall
tests/workloads/libstack_alloc_nofp.so: tests/workloads/libstack_alloc.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -fPIC -shared -o $@ $<
tests/workloads/stack_alloc_nofp: tests/workloads/stack_alloc.c tests/workloads/libstack_alloc_nofp.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(NOFP_CFLAGS) -o $@ $< -Ltests/workloads -lstack_alloc_nofp -Wl,-rpath,'$$ORIGIN'
# stripped_sites: as Debian ships its binaries, without a symbol table
tests/workloads/stripped_sites: tests/workloads/stripped_sites.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) -o $@ $<
	$(Q)strip --strip-all $@
tests/workloads/alloc_loop_glibc: tests/workloads/alloc_loop.c
	$(Q)$(CC) $(WL_CFLAGS) -o $@ $<
tests/workloads/alloc_loop_jemalloc: tests/workloads/alloc_loop.c
	$(Q)$(CC) $(WL_CFLAGS) -DWITH_JEMALLOC -o $@ $< -ljemalloc
tests/workloads/alloc_loop_jemalloc_static: tests/workloads/alloc_loop.c
	$(Q)$(CC) $(WL_CFLAGS) -DWITH_JEMALLOC -static -o $@ $< $(LIBDIR)/libjemalloc.a -lm -ldl
tests/workloads/alloc_loop_mimalloc: tests/workloads/alloc_loop.c
	$(Q)$(CC) $(WL_CFLAGS) -DWITH_MIMALLOC -o $@ $< -lmimalloc
tests/workloads/alloc_loop_tcmalloc: tests/workloads/alloc_loop.c
	$(Q)$(CC) $(WL_CFLAGS) -DWITH_TCMALLOC -o $@ $< -ltcmalloc_minimal
tests/workloads/alloc_loop_tcmalloc_static: tests/workloads/alloc_loop.c
	$(Q)$(CXX) $(WL_CFLAGS) -DWITH_TCMALLOC -static -o $@ $< $(LIBDIR)/libtcmalloc_minimal.a -lm

# unit tests: one program per file, linked with the util objects
$(OUTPUT)/tests/unit/%: $(OUTPUT)/tests/unit/%.o $(UTIL_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

unit: $(UNIT_BINS)

# the shim's unwinder tests build its sources in, as the shim is built: with frame pointers
$(OUTPUT)/tests/unit/test-shim-unwind.o: CFLAGS += -fno-omit-frame-pointer

# test and demo install what is missing first: on a fresh machine they are enough
test: deps
	$(Q)$(MAKE) all unit
	$(Q)OUTPUT=$(OUTPUT) tests/run.sh

# compat: every case of the compat corpus (tests/compat), bare and under
# memtrack in each mode, as a table; COMPAT=<pattern> for some of them
compat: deps
	$(Q)$(MAKE) all
	$(Q)MEMTRACK=$(abspath $(MEMTRACK)) tests/compat/run.sh $(COMPAT)

demo: deps
	$(Q)$(MAKE) all
	$(Q)tests/demo.sh

deps:
	$(Q)scripts/install-deps.sh

# bench: installs what it compares against (heaptrack, bcc) if missing, then
# bench/run.sh; see bench/README.md
BENCH_BINS := $(addprefix $(OUTPUT)/bench/,encoder-bench synth-artifact timeit floor uprobe-links)

$(OUTPUT)/bench/encoder-bench $(OUTPUT)/bench/synth-artifact: $(OUTPUT)/bench/%: bench/%.c $(UTIL_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

$(OUTPUT)/bench/timeit: bench/timeit.c $(OUTPUT)/util/util.o
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^

$(OUTPUT)/bench/floor.bpf.o: bench/floor.bpf.c $(OUTPUT)/bpf/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) -g -O2 -Wall -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUTPUT)/bpf -c $< -o $@

$(OUTPUT)/bench/floor.skel.h: $(OUTPUT)/bench/floor.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name floor_bpf > $@

FLOOR_OBJS := $(addprefix $(OUTPUT)/util/,symbol/elf-syms.o util.o probe/uprobe-multi.o)
$(OUTPUT)/bench/floor: bench/floor.c $(OUTPUT)/bench/floor.skel.h $(FLOOR_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(FLOOR_OBJS) -lbpf -lelf

$(OUTPUT)/bench/uprobe-links: bench/uprobe-links.c
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< -lbpf

bench: deps
	$(Q)bench/install-deps.sh
	$(Q)$(MAKE) all $(BENCH_BINS)
	$(Q)OUTPUT=$(OUTPUT) bench/run.sh

doc:
	$(Q)$(MAKE) -C Documentation OUTPUT=$(abspath $(OUTPUT))/Documentation VERSION=$(VERSION)

# bash completion, from the lists of commands and options memtrack gives
$(COMPLETION): $(MEMTRACK) scripts/gen-completion.sh
	$(call msg,GEN,$@)
	$(Q)scripts/gen-completion.sh $(abspath $(MEMTRACK)) > $@

MAN_PAGES := $(patsubst Documentation/%.txt,$(OUTPUT)/Documentation/%.1,\
	$(wildcard Documentation/memtrack*.txt))
SCHEMAS := $(wildcard Documentation/*.schema.json)

install: $(MEMTRACK) $(SHIM) $(COMPLETION) doc
	$(call msg,INSTALL,$(DESTDIR)$(prefix))
	$(Q)$(INSTALL) -d -m 755 $(DESTDIR)$(bindir) $(DESTDIR)$(memtracklibdir) \
		$(DESTDIR)$(mandir)/man1 $(DESTDIR)$(docdir) $(DESTDIR)$(bashcompdir) \
		$(DESTDIR)$(datadir)/memtrack/schema
	$(Q)$(INSTALL) -m 755 $(MEMTRACK) $(DESTDIR)$(bindir)/memtrack
	$(Q)$(INSTALL) -m 755 $(SHIM) $(DESTDIR)$(memtracklibdir)/libmemtrack-preload.so
	$(Q)$(INSTALL) -m 644 $(MAN_PAGES) $(DESTDIR)$(mandir)/man1/
	$(Q)$(INSTALL) -m 644 $(COMPLETION) $(DESTDIR)$(bashcompdir)/memtrack
	$(Q)$(INSTALL) -m 644 LICENSE README.md $(DESTDIR)$(docdir)/
	$(Q)$(INSTALL) -m 644 $(SCHEMAS) $(DESTDIR)$(datadir)/memtrack/schema/

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(prefix))
	$(Q)rm -f $(DESTDIR)$(bindir)/memtrack \
		$(DESTDIR)$(memtracklibdir)/libmemtrack-preload.so \
		$(addprefix $(DESTDIR)$(mandir)/man1/,$(notdir $(MAN_PAGES))) \
		$(DESTDIR)$(bashcompdir)/memtrack $(DESTDIR)$(docdir)/LICENSE \
		$(DESTDIR)$(docdir)/README.md \
		$(addprefix $(DESTDIR)$(datadir)/memtrack/schema/,$(notdir $(SCHEMAS)))
	$(Q)rmdir $(DESTDIR)$(memtracklibdir) $(DESTDIR)$(docdir) \
		$(DESTDIR)$(datadir)/memtrack/schema $(DESTDIR)$(datadir)/memtrack 2>/dev/null || true

check:
	$(Q)shellcheck -S warning tests/*.sh tests/shell/*.sh tests/shell/lib/*.sh tests/compat/*.sh \
		scripts/*.sh bench/*.sh .ci/run

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf $(OUTPUT) memtrack libmemtrack-preload.so $(WORKLOADS)

-include $(shell find $(OUTPUT) -name '*.d' 2>/dev/null)
