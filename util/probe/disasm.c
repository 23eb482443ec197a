// SPDX-License-Identifier: GPL-2.0
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>

#include "util/probe/disasm.h"
#include "util/usage.h"

#define STR_(x)		#x
#define STR(x)		STR_(x)
/* the ABI of the headers we were built with */
#define CAPSTONE_SONAME	"libcapstone.so." STR(CS_API_MAJOR)

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static bool tried, loaded;
static struct disasm_api api;

static bool find(void *lib, void *fn, const char *name)
{
	*(void **)fn = dlsym(lib, name);
	return *(void **)fn != NULL;
}

static void load(void)
{
	void *lib = dlopen(CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);

	loaded = lib && find(lib, &api.open, "cs_open") && find(lib, &api.option, "cs_option") &&
		 find(lib, &api.insn_alloc, "cs_malloc") &&
		 find(lib, &api.disasm_iter, "cs_disasm_iter") &&
		 find(lib, &api.insn_free, "cs_free") && find(lib, &api.close, "cs_close") &&
		 find(lib, &api.insn_group, "cs_insn_group");
	if (!loaded)
		warning("cannot load %s (%s): code is not decoded, and what allocator functions "
			"return or call through pointers is not known", CAPSTONE_SONAME,
			lib ? "a function is missing" : dlerror());
}

static void load_once(void)
{
	pthread_mutex_lock(&load_lock);
	if (!tried)
		load();
	tried = true;
	pthread_mutex_unlock(&load_lock);
}

const struct disasm_api *disasm__get(void)
{
	load_once();
	return loaded ? &api : NULL;
}
