/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_DISASM_H
#define MEMTRACK_DISASM_H

#include <capstone/capstone.h>

/*
 * Capstone, loaded when first needed rather than linked: its relocations
 * were 0.85 ms of every memtrack's start, report's and stats' included;
 * track decodes no file whose functions it kept (bpf_code_cache.h).
 */
struct disasm_api {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*option)(csh handle, cs_opt_type type, size_t value);
	cs_insn *(*insn_alloc)(csh handle);
	bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
			    cs_insn *insn);
	void (*insn_free)(cs_insn *insn, size_t count);
	cs_err (*close)(csh *handle);
	bool (*insn_group)(csh handle, const cs_insn *insn, unsigned int group_id);
};

/*
 * The library's functions, loaded now if need be (0.85 ms, with the dynamic
 * loader's lock held, which every pthread_create() meanwhile waits for);
 * NULL when it cannot be loaded
 */
const struct disasm_api *disasm__get(void);

#endif
