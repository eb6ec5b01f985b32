// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The stackmap walker (4.6-4.17), as bcc's stackcount does it: the kernel
 * stores each stack in a BPF_STACK_TRACE map and hands back an id, and
 * the counts are keyed by ids.  Ids are hash buckets: a second stack that
 * hashes to a taken bucket is refused (no BPF_F_REUSE_STACKID, which would
 * silently overwrite the first), and that loss is counted.
 */
#include "common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sw_sm_key);
	__type(value, __u64);
} counts SEC(".maps");

SW_STACK_MAP(stacks);

/* stacksnoop sends the key behind an event header */
struct sw_sm_record {
	struct sw_event_hdr e;
	struct sw_sm_key key;
};

static __always_inline int sm_event(void *ctx, __u64 sp, const int kentry,
				    const int uentry, const int emit)
{
	struct sw_sm_record rec = {};
	struct sw_sm_key *k = &rec.key;
	struct sw_config *cfg;
	__u64 id;

	cfg = sw_filter(1, SW_BRANCHY, &id);
	if (!cfg)
		return 0;
	sw_key_hdr(&k->h, cfg, id, SW_BRANCHY);
	k->kid = -SW_EFAULT;
	k->uid = -SW_EFAULT;
	if (cfg->flags & SW_CFG_KSTACK) {
		k->kid = sw_stackid(ctx, &stacks, 0, SW_LOST_KCOLLISION);
		if (k->kid < 0 && k->kid != -SW_EFAULT)
			return 0;
		/* the stored stack cannot be edited: keep the caller aside */
		if (kentry && (cfg->flags & SW_CFG_KENTRY))
			bpf_probe_read(&k->kcaller, 8, (void *)sp);
	}
	if (cfg->flags & SW_CFG_USTACK) {
		k->uid = sw_stackid(ctx, &stacks, BPF_F_USER_STACK, SW_LOST_UCOLLISION);
		if (k->uid < 0 && k->uid != -SW_EFAULT)
			return 0;
		if (uentry)
			bpf_probe_read(&k->ucaller, 8, (void *)sp);
	}
	if (emit) {
		sw_event_hdr(&rec.e);
		sw_emit(ctx, &rec, sizeof(rec));
	} else {
		sw_count(&counts, k);
	}
	return 0;
}

/* As in getstack.bpf.h: counting programs, and emitting ones (_e). */
#define SM_PROGRAMS(sfx, emit)						\
SEC("kprobe") int sm_kprobe##sfx(struct pt_regs *ctx)			\
{									\
	return sm_event(ctx, PT_REGS_SP(ctx), 1, 0, emit);		\
}									\
SEC("kprobe") int sm_uprobe_entry##sfx(struct pt_regs *ctx)		\
{									\
	return sm_event(ctx, PT_REGS_SP(ctx), 0, 1, emit);		\
}									\
SEC("kprobe") int sm_uprobe##sfx(struct pt_regs *ctx)			\
{									\
	return sm_event(ctx, 0, 0, 0, emit);				\
}									\
/* %rbp still the caller's: its return address by its uframes rule */	\
SEC("kprobe") int sm_uprobe_shift##sfx(struct pt_regs *ctx)		\
{									\
	__u64 bp;							\
									\
	return sm_event(ctx, sw_uframe_sp(ctx, &bp), 0, 1, emit);	\
}									\
SEC("tracepoint") int sm_tp##sfx(void *ctx)				\
{									\
	return sm_event(ctx, 0, 0, 0, emit);				\
}

SM_PROGRAMS(, 0)
SM_PROGRAMS(_e, 1)

SW_FOLLOW_PROGRAMS()
