// SPDX-License-Identifier: MIT
#include <string.h>
#include "uframe.h"
#include "cfi.h"
#include "elf_file.h"
#include "../bpf/stackwalk.h"

/*
 * The rule of row r, or 0: only a row whose CFA is %rsp-based has one
 * (CFA = %rbp + 16 is the frame the chain walks anyway), and only where
 * the caller's %rbp can be found.
 */
static __u32 rule_of(const struct sw_cfi_row *r)
{
	__u64 cfa = 8ull * r->cfa, ra, bp;
	__u32 v;

	if (r->kind != SW_CFI_RSP || cfa < 8 || r->rbp == SW_CFI_RBP_LOST)
		return 0;
	ra = cfa - 8;
	if (ra > SW_UFRAME_RA(~0u))
		return 0;
	v = ra | SW_UFRAME_RULE;
	if (r->rbp < 0) {
		if (cfa < 8ull * -r->rbp)
			return 0;
		bp = cfa - 8ull * -r->rbp;
		if (bp > SW_UFRAME_BP(~0u))
			return 0;
		v |= bp << 12 | SW_UFRAME_BP_SAVED;
	}
	return v;
}

/* The rules of the targets in path, from its CFI. */
static void rules_of_file(struct sw_targets *t, size_t first)
{
	const char *path = t->v[first].spec.path;
	struct cfi_table *ct = NULL;
	struct elf_file *ef = NULL;

	if (!elf_file_open_own(&ef, path, true, NULL))
		cfi_table_from_elf(&ct, ef, path, NULL);
	for (size_t i = first; i < t->n; i++) {
		struct sw_target *tg = &t->v[i];
		const struct sw_cfi_row *r;
		uint64_t vaddr;

		if (tg->uframe_read || tg->role != SW_ROLE_UINSIDE ||
		    tg->spec.kind != SW_PROBE_UPROBE || strcmp(tg->spec.path, path))
			continue;
		tg->uframe_read = true;
		if (!ct || elf_file_offset_to_vaddr(ef, tg->spec.offset, &vaddr))
			continue;
		r = cfi_table_find(ct, vaddr);
		tg->uframe = r ? rule_of(r) : 0;
		tg->uframe_key = vaddr & SW_UFRAME_PAGE;
	}
	cfi_table_free(ct);
	elf_file_free(ef);
}

size_t uframe_rules(struct sw_targets *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++)
		if (!t->v[i].uframe_read && t->v[i].role == SW_ROLE_UINSIDE &&
		    t->v[i].spec.kind == SW_PROBE_UPROBE)
			rules_of_file(t, i);
	/* one key, one rule: probes that share a key and not their rule get none */
	for (size_t i = 0; i < t->n; i++) {
		struct sw_target *a = &t->v[i];

		for (size_t j = i + 1; a->uframe && j < t->n; j++) {
			struct sw_target *b = &t->v[j];

			if (b->uframe && b->uframe_key == a->uframe_key &&
			    b->uframe != a->uframe)
				a->uframe_clash = b->uframe_clash = true;
		}
	}
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].uframe_clash) {
			t->v[i].uframe = 0;
			n++;
		}
	return n;
}
