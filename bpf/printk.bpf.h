/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * 4.1-4.3 have no perf_event_output: stacksnoop's walks print
 * "k<magic> <i> <addr>" (or "u...") for each frame as they read it, and
 * "e<magic> <stops>" ends the event; trace_pipe adds the time, task and
 * CPU (src/tracepipe.c reads them back).  Formats are built on the stack
 * from little-endian words: there is no read-only data before 5.2, and
 * volatile keeps clang from making some.
 */
#ifndef SW_PRINTK_BPF_H
#define SW_PRINTK_BPF_H

/*
 * trace_printk's size is the format's and its NUL, no more: until 5.13 the
 * helper refuses every byte before the last that is not printable, and
 * a NUL of padding is not.
 */
#define SW_FMT_FRAME_LEN 13
#define SW_FMT_END_LEN	8

#define SW_FMT_FRAME	0x252064252078256bULL	/* "k%x %d %" */
#define SW_FMT_FRAME2	0x0a786c6cULL		/* "llx\n" */
#define SW_FMT_END	0x0a782520782565ULL	/* "e%x %x\n" */

static __always_inline void fp_fmt(volatile __u64 *fmt, char kind)
{
	fmt[0] = SW_FMT_FRAME ^ (kind ^ 'k');
	fmt[1] = SW_FMT_FRAME2;
}

static __always_inline void fp_printk_end(const struct sw_key_hdr *h,
					  volatile __u64 *fmt, __u32 magic)
{
	fmt[0] = SW_FMT_END;
	fmt[1] = 0;
	bpf_trace_printk((const char *)fmt, SW_FMT_END_LEN, magic,
			 h->kstop | h->ustop << 8);
}

#endif /* SW_PRINTK_BPF_H */
