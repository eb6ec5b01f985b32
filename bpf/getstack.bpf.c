// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The getstack walker (4.18+): both sides' frames from the kernel's own
 * unwinders (bpf_get_stack), counted by their raw frames
 * (bpf/getstack.bpf.h).
 */
#include "common.bpf.h"
#include "getstack.bpf.h"

GS_PROGRAMS(, gs_event, SW_GS_COUNT)
GS_PROGRAMS(_e, gs_event, SW_GS_EMIT)
GS_PROGRAMS(_t, gs_event, SW_GS_COUNT_T)
GS_PROGRAMS(_et, gs_event, SW_GS_EMIT_T)
/* counting with small keys: see gsc_event() */
GS_PROGRAMS(_small, gsc_event, SW_GS_SMALL)

SW_FOLLOW_PROGRAMS()
