#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Emit the unrolled x86_64 frame-pointer walker as C for bpf/fp.bpf.c.

Kernels before 5.3 reject loops in BPF programs, so a walk of N frames has
to be N copies of one step.  Writing them by hand is how the 2016 walker
did it (ten frames, each `if (!(key.ret[depth++] = get_frame(&bp))) goto
out;`); generating them lets the depth follow from the limits of the oldest
kernel we load on, and lets every step be exactly the same shape.

A step never rejoins the straight line after a branch: it either carries on
to the next frame or leaves the walk.  That keeps the number of paths the
verifier can explore linear in the depth, which is what lets a 4.4 kernel
(32768 instructions walked over all paths, no pruning assumed) accept it.

Usage: walker.py KEY.h WALK.h
  KEY.h: the depth and the key layout, shared with the frontend
  WALK.h: the walk functions, for the BPF program
"""

import sys
import textwrap

# What the oldest target kernel (4.1-4.5) enforces (the README's Kernels section).
BPF_STACK = 512          # bytes of BPF stack; hash keys are built on it
MAX_INSNS = 4096         # instructions per program
MAX_WALK = 32768         # instructions the verifier may walk, all paths
MIN_DEPTH = 20           # the least we promise per walk

KEY_HDR = 24             # struct sw_key_hdr
# Stack the programs need beside the key: the count, the next frame
# pointer, the user-stack handover, the laundered R10 and compiler spills.
STACK_RESERVE = 64

# Per-step costs, measured on the compiled object (clang 14, -mcpu=v1)
# and rechecked by gen/legacy_limits.c on every build.
STEP_INSNS = 16          # two bpf_probe_read calls and their checks
STEP_EXITS = 3           # branches that leave the walk from one step
TAIL_INSNS = 80          # longest path from a walk's end to `exit`
FIXED_INSNS = 120        # filter, key header, count update

# 4.1's cfi walk (bpf/cfi41.bpf.c): the user frames after the event's own
# found by CFI, this many, in one program beside the rest; the frame
# pointer walk below carries on from there.  gen/legacy_limits.c checks
# that they fit 4,096 instructions.
CFI41_FRAMES = 5
# 4.2-4.8's cfi key, counted alone: a 24-byte header and these frames, 472
# bytes, copied to a BPF stack of 512 to be counted; 1 + a multiple of 5
CFI41_UDEPTH = 56

KERNEL_MIN = 0xffffffff80000000   # __START_KERNEL_map: below is not kernel text
USER_MAX = 0x00007ffffffff000     # TASK_SIZE_MAX on x86_64 (4-level paging)


def pick_depth():
    """Deepest walk that fits every limit; returns (depth, reasons)."""
    by_stack = (BPF_STACK - STACK_RESERVE - KEY_HDR) // 16
    # one program holds one walk (the kernel walk hands over to the user
    # walk through a tail call), so each limit applies to a single walk;
    # 4.1, without tail calls, holds both, its kernel walk without a branch
    # (masked_walk), and gen/legacy_limits.c checks that it fits
    by_insns = (MAX_INSNS - FIXED_INSNS) // STEP_INSNS
    by_walk = (MAX_WALK - FIXED_INSNS) // (STEP_INSNS + STEP_EXITS * TAIL_INSNS)
    depth = min(by_stack, by_insns, by_walk)
    if depth < MIN_DEPTH:
        sys.exit("walker.py: only %d frames fit the 4.x limits, %d promised"
                 % (depth, MIN_DEPTH))
    reasons = [
        "key: %d + 16 x depth bytes must leave %d of the %d-byte BPF stack: "
        "depth <= %d" % (KEY_HDR, STACK_RESERVE, BPF_STACK, by_stack),
        "instructions: %d + %d x depth <= %d: depth <= %d"
        % (FIXED_INSNS, STEP_INSNS, MAX_INSNS, by_insns),
        "verifier walk without pruning: %d + (%d + %d x %d) x depth <= %d: "
        "depth <= %d" % (FIXED_INSNS, STEP_INSNS, STEP_EXITS, TAIL_INSNS,
                         MAX_WALK, by_walk),
    ]
    return depth, reasons


class Walk:
    """Where a walk puts what it reads: a counting key, or an explain record."""

    def __init__(self, rec, ret, stop, explain=False, printk=False):
        self.rec = rec          # the record pointer's name
        self.ret = ret          # its return-address array
        self.stop = stop        # its stop-reason field
        self.explain = explain  # also keep each frame pointer, and the last
        self.printk = printk    # also print each frame as it is read

    def slot(self, i):
        return f"{self.rec}->{self.ret}[{i}]"

    def note_fp(self, i):
        return f"\t{self.rec}->fp[{i}] = bp;\n" if self.explain else ""

    def note_last(self):
        return f"\t{self.rec}->last = bp;\n" if self.explain else ""

    def note_frame(self, i, indent="\t"):
        """4.1-4.3: the frame goes out at once, so no path rejoins later."""
        if not self.printk:
            return ""
        return (f"{indent}bpf_trace_printk(fmt, SW_FMT_FRAME_LEN, magic, {i}, "
                f"{self.slot(i)});\n")


def kernel_step(w, i):
    """Frame i of a kernel walk: bp points at [saved rbp][return address]."""
    return f"""\
	/* kernel frame {i} */
{w.note_fp(i)}\
	if (bpf_probe_read(&{w.slot(i)}, 8, (void *)(bp + 8)))
		goto unreadable;
	if ({w.slot(i)} < SW_KERNEL_MIN) {{
		/* reached user space: bp is the user's frame pointer */
		{w.slot(i)} = 0;
		{w.rec}->h.kstop = SW_STOP_LEFT_KERNEL;
{w.note_last()}\
		*ubp = bp;
		return;
	}}
{w.note_frame(i)}\
{root_check(w, i)}\
	if (bpf_probe_read(&bp, 8, (void *)bp))
		goto unreadable;
	if (!bp || (bp & 7))
		goto end;
"""


def root_check(w, i, indent="\t"):
    """A return into ret_from_fork: the task's first frame, the walk's end.

    root packs the range as size << 32 | the low half of its address: kernel
    text lies in one 4 GiB window, so the low halves tell addresses apart,
    and one number spills to the stack in 8 bytes, not 16."""
    return (f"{indent}if ((({w.slot(i)} - root) & 0xffffffff) < (root >> 32))\n"
            f"{indent}\tgoto root;\n")


def user_step(w, i):
    """Frame i of a user walk, read as the kernel's own user unwinder does."""
    return f"""\
	/* user frame {i} */
	if (!bp)
		goto end;
	if (bp >= SW_USER_MAX)
		goto unreadable;
{w.note_fp(i)}\
	if (bpf_probe_read(next, 8, (void *)bp))
		goto unreadable;
	if (bpf_probe_read(&{w.slot(i)}, 8, (void *)(bp + 8)))
		goto unreadable;
{w.note_frame(i)}\
	bp = *next;
"""


def walk_function(w, name, params, doc, prologue, step, first, depth):
    body = "".join(step(w, i) for i in range(first, depth))
    root = ""
    if step is kernel_step:
        root = f"""\
root:
	{w.rec}->h.{w.stop} = SW_STOP_ROOT;
{w.note_last()}\
	return;
"""
    return f"""
/* {doc} */
static __always_inline void {name}({params})
{{
{prologue}{body}\
	{w.rec}->h.{w.stop} = SW_STOP_DEPTH;
{w.note_last()}\
	return;
{root}\
end:
	{w.rec}->h.{w.stop} = SW_STOP_END;
{w.note_last()}\
	return;
unreadable:
	{w.rec}->h.{w.stop} = SW_STOP_UNREADABLE;
{w.note_last()}\
}}
"""


class Masked:
    """Where the masked walk puts a frame and its stop reason: the key, or
    (printk) a trace_printk line for each frame, 0 once the walk has ended
    (a kernel frame is never 0: the reader drops those)."""

    def __init__(self, printk):
        self.printk = printk
        self.stop = "h->kstop" if printk else "key->h.kstop"

    def keep(self, i, value):
        if self.printk:
            return (f"\tbpf_trace_printk(fmt, SW_FMT_FRAME_LEN, magic, {i}, "
                    f"{value});\n")
        return f"\tkey->kip[{i}] = {value};\n"


def masked_step(w, i):
    """Kernel frame i with no branch: each check narrows `alive` (all ones
    while the walk goes on, then 0) and a walk's first reason to stop is
    or'ed into kstop while it is still alive.  Once the walk has ended,
    each read is of the probe's own stack (sp), which cannot fault, and
    what it gives is masked."""
    return f"""\
	/* kernel frame {i} */
	*tmp = 0;
	m = sw_mask_ok(bpf_probe_read(tmp, 8, (void *)(((bp + 8) & alive) | (sp & ~alive))));
	ret = *tmp;
	{w.stop} |= alive & ~m & SW_STOP_UNREADABLE;
	alive &= m;
	/* a return into user space: bp is the user's frame pointer */
	m = sw_mask_eq(ret >> 31, SW_KERNEL_MIN >> 31);
	{w.stop} |= alive & ~m & SW_STOP_LEFT_KERNEL;
	/* now, not at the end, where clang would keep every step's terms */
	*ubp = sw_opaque(*ubp | (alive & ~m & bp));
	alive &= m;
{w.keep(i, "ret & alive")}\
{masked_tail(w)}"""


def masked_tail(w):
    """The masked walk's root check and its step to the next frame."""
    return f"""\
	m = sw_mask_lt((ret - root) & 0xffffffff, root >> 32);
	{w.stop} |= alive & m & SW_STOP_ROOT;
	alive &= ~m;
	*tmp = 0;
	m = sw_mask_ok(bpf_probe_read(tmp, 8, (void *)((bp & alive) | (sp & ~alive))));
	next = *tmp;
	{w.stop} |= alive & ~m & SW_STOP_UNREADABLE;
	alive &= m;
	m = ~sw_mask_eq(next, 0) & sw_mask_eq(next & 7, 0);
	{w.stop} |= alive & ~m & SW_STOP_END;
	alive &= m;
	bp = next & alive;
"""


def masked_walk(depth, printk):
    """4.1's kernel walk, which a user walk follows in the same program (no
    tail calls): with no branch in it, the user walk is one path on from
    its end, not one for each way it can end (see pick_depth).  Every read
    goes through the one word at tmp: the key leaves the BPF stack little
    else."""
    w = Masked(printk)
    body = "".join(masked_step(w, i) for i in range(2, depth))
    name, rec = (("sw_fp_kwalk_entry_mp", "struct sw_key_hdr *h") if printk
                 else ("sw_fp_kwalk_entry_m", "struct sw_fp_key *key"))
    pargs = ", const char *fmt, __u32 magic" if printk else ""
    return f"""
/* kprobe on a function entry, as sw_fp_kwalk_entry{"_p" if printk else ""}, with no branch (4.1) */
static __always_inline void {name}(__u64 root, {rec}, __u64 ip, __u64 sp, __u64 bp, __u64 *ubp, __u64 *tmp{pargs})
{{
	__u64 alive = ~0ULL, ret, next, m;

	*ubp = 0;
{w.keep(0, "ip")}\
	*tmp = 0;
	m = sw_mask_ok(bpf_probe_read(tmp, 8, (void *)sp));
	ret = *tmp;
	{w.stop} |= ~m & SW_STOP_UNREADABLE;
	alive &= m;
{w.keep(1, "ret & alive")}\
	m = sw_mask_lt((ret - root) & 0xffffffff, root >> 32);
	{w.stop} |= alive & m & SW_STOP_ROOT;
	alive &= ~m;
	m = ~sw_mask_eq(bp, 0) & sw_mask_eq(bp & 7, 0);
	{w.stop} |= alive & ~m & SW_STOP_END;
	alive &= m;
	bp &= alive;
{body}\
	{w.stop} |= alive & SW_STOP_DEPTH;
}}
"""


def walks(depth, xdepth):
    """Every walk: (kernel | user) x (at a function entry | anywhere) x
    (count | explain | print)."""
    out = []
    for kind, rec, kret, uret, d, suffix in (
            ("count", "key", "kip", "uip", depth, ""),
            ("explain", "x", "ret", "ret", xdepth, "_x"),
            ("printk", "key", "kip", "uip", depth, "_p")):
        explain, printk = kind == "explain", kind == "printk"
        rtype = "struct sw_fp_explain" if explain else "struct sw_fp_key"
        pargs = ", const char *fmt, __u32 magic" if printk else ""
        k = Walk(rec, kret, "kstop", explain, printk)
        u = Walk(rec, uret, "ustop", explain, printk)
        sp_note = f"\t{rec}->sp = sp;\n" if explain else ""
        out.append(walk_function(
            k, "sw_fp_kwalk_entry" + suffix,
            f"__u64 root, {rtype} *{rec}, __u64 ip, __u64 sp, __u64 bp, "
            f"__u64 *ubp{pargs}",
            "kprobe on a function entry: ip, the caller at *sp, then the chain",
            f"\t{k.slot(0)} = ip;\n{sp_note}{k.note_frame(0)}"
            f"\tif (bpf_probe_read(&{k.slot(1)}, 8, (void *)sp))\n\t\tgoto unreadable;\n"
            f"{k.note_frame(1)}{root_check(k, 1)}"
            "\tif (!bp || (bp & 7))\n\t\tgoto end;\n",
            kernel_step, 2, d))
        if not printk:	# tracepoints arrived with perf_event_output
            out.append(walk_function(
                k, "sw_fp_kwalk" + suffix,
                f"__u64 root, {rtype} *{rec}, __u64 bp, __u64 *ubp",
                "frames only, from a frame pointer (the program's own, in a tracepoint)",
                "", kernel_step, 0, d))
        out.append(walk_function(
            u, "sw_fp_uwalk_entry" + suffix,
            f"{rtype} *{rec}, __u64 ip, __u64 sp, __u64 bp, __u64 *next{pargs}",
            "uprobe on a function entry: ip, the caller at *sp, then the chain",
            f"\t{u.slot(0)} = ip;\n{sp_note}{u.note_frame(0)}"
            f"\tif (bpf_probe_read(&{u.slot(1)}, 8, (void *)sp))\n\t\tgoto unreadable;\n"
            f"{u.note_frame(1)}",
            user_step, 2, d))
        out.append(walk_function(
            u, "sw_fp_uwalk" + suffix,
            f"{rtype} *{rec}, __u64 ip, __u64 bp, __u64 *next{pargs}",
            "anywhere else (USDT, or user registers saved at kernel entry)",
            f"\t{u.slot(0)} = ip;\n{u.note_frame(0)}", user_step, 1, d))
    out.append(masked_walk(depth, False))
    out.append(masked_walk(depth, True))
    u = Walk("key", "uip", "ustop", printk=True)
    out.append(walk_function(
        u, "sw_fp_uwalk_up",
        "struct sw_fp_uside *key, __u64 ip, __u64 bp, __u64 *next, "
        "const char *fmt, __u32 magic",
        "as sw_fp_uwalk_p, on a key's user side alone (4.1: see sw_fp_uside)",
        f"\t{u.slot(0)} = ip;\n{u.note_frame(0)}", user_step, 1, depth))
    u = Walk("key", "uip", "ustop")
    out.append(walk_function(
        u, "sw_fp_uwalk_cfi41",
        "struct sw_fp_uside *key, __u64 bp, __u64 *next",
        "4.1's cfi walk: on from the frame that its CFI frames reached "
        "(bpf/cfi41.bpf.c)", "", user_step, CFI41_FRAMES + 1, depth))
    return "".join(out)


def render_key(depth, xdepth, reasons):
    why = "\n".join(" * - " + r for r in reasons)
    return f"""\
/* Generated by gen/walker.py: do not edit. */
/*
 * Key of the unrolled frame-pointer walker: {depth} kernel, {depth} user frames.
 *
 * The depth is the deepest that every 4.1-4.5 limit allows:
{why}
 */
#ifndef SW_FP_KEY_H
#define SW_FP_KEY_H

#define SW_FP_KDEPTH {depth}
#define SW_FP_UDEPTH {depth}
#define SW_KERNEL_MIN 0x{KERNEL_MIN:x}ULL
#define SW_USER_MAX 0x{USER_MAX:x}ULL
#define SW_CFI41_FRAMES {CFI41_FRAMES}

struct sw_fp_key {{
	struct sw_key_hdr h;
	__u64 kip[SW_FP_KDEPTH];
	__u64 uip[SW_FP_UDEPTH];
}};

/*
 * An event sent to user space (4.4+), by the fp walker and 4.2-4.8's cfi:
 * 4.4 sends perf records from the stack only, header and key together.
 */
struct sw_fp_record {{
	struct sw_event_hdr e;
	struct sw_fp_key key;
}};

/*
 * 4.1's printed walks (one program, no tail call): the kernel frames go
 * out as read, and a whole key beside the walk's own state would not fit
 * the BPF stack.  Also the key of 4.1's cfi walk (user frames only).
 */
struct sw_fp_uside {{
	struct sw_key_hdr h;
	__u64 uip[SW_FP_UDEPTH];
}};

/*
 * 4.2-4.8's cfi walk counted alone (no kernel side, no event): a chain of
 * tail calls fills it, SW_CFI41_FRAMES frames a program, as deep as the
 * BPF stack that copies it to count it allows.  It starts as sw_fp_uside
 * does, whose frames are its first.
 */
#define SW_CFI41_UDEPTH {CFI41_UDEPTH}
struct sw_cfi41_key {{
	struct sw_key_hdr h;
	__u64 uip[SW_CFI41_UDEPTH];
}};

/*
 * stacksnoop --explain: one walk, with the frame pointer each return
 * address was read behind.  Two frames shallower than a key, for the
 * frame pointers it keeps besides.
 */
#define SW_FP_XDEPTH {xdepth}
struct sw_fp_explain {{
	struct sw_key_hdr h;	/* kstop or ustop: why the walk ended */
	__u64 sp;		/* entry probes: the caller was read at *sp */
	__u64 last;		/* the frame pointer the walk ended on */
	__u64 fp[SW_FP_XDEPTH];	/* ret[i] was read at fp[i] + 8 (0: not) */
	__u64 ret[SW_FP_XDEPTH];	/* ret[0]: where the event fired */
}};

#endif /* SW_FP_KEY_H */
"""


def render_walk(depth, xdepth):
    return f"""\
/* Generated by gen/walker.py: do not edit. */
/*
 * The unrolled x86_64 frame-pointer walks.
 *
 * A frame is two words at the frame pointer: the caller's saved frame
 * pointer, then the return address into the caller.  At a probe on a
 * function's first instruction the callee has not pushed its frame yet:
 * the return address is at the stack pointer and the frame pointer still
 * belongs to the caller, so the *_entry walks read the caller from the
 * stack pointer first; without that, the caller is silently dropped.
 */
#ifndef SW_FP_WALK_H
#define SW_FP_WALK_H

#include "fp_key.h"
{walks(depth, xdepth)}
#endif /* SW_FP_WALK_H */
"""


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: walker.py KEY.h WALK.h")
    depth, reasons = pick_depth()
    xdepth = depth - 2
    with open(sys.argv[1], "w") as f:
        f.write(render_key(depth, xdepth, reasons))
    with open(sys.argv[2], "w") as f:
        f.write(render_walk(depth, xdepth))


if __name__ == "__main__":
    main()
