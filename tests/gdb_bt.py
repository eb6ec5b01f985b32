# SPDX-License-Identifier: MIT
"""gdb's side of tests/gdb_bt.sh, which says how it is run (gdb -batch -x).

At each hit of a breakpoint, one line in the file $GDB_BT_OUT: the pc of
each real frame gdb unwinds, innermost first, in hex.  An outer frame's pc
is what gdb calls the frame's pc: the return address itself (gdb looks its
symbol up at pc - 1, but reports the return address), which is what a stack
tool reports too.  The frames gdb makes up from debug information, for
inlined calls and for tail calls, are left out: no return address on the
stack is theirs.
"""

import errno
import os
import sys

import gdb

# __libc_start_call_main is a local symbol: without libc's debug file gdb
# cannot name it, but its caller is always named, from .dynsym.
START_CALLERS = ("__libc_start_main", "__libc_start_main_impl")


def frame_name(frame):
    name = frame.name()
    if name:
        return name
    lib = gdb.solib_name(frame.pc())
    return "??@" + os.path.basename(lib) if lib else "??"


MADE_UP = (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME)


def real(frame):
    """frame, or the first real frame out from it; None past the last."""
    try:
        while frame is not None and frame.type() in MADE_UP:
            frame = frame.older()
    except gdb.error:
        return None
    return frame


def older(frame):
    try:
        return real(frame.older())
    except gdb.error:
        return None


def stack(all_frames):
    """(pc, name) of each real frame of the thread that stopped."""
    frame = real(gdb.newest_frame())
    frames = []
    while frame is not None:
        frames.append((frame.pc(), frame_name(frame)))
        nxt = older(frame)
        if not all_frames and nxt is not None:
            # main's caller is the last frame, as a frame-pointer walk
            # ends there (the frames past it are glibc's start-up code)
            if frames[-1][1] == "__libc_start_call_main":
                break
            if frame_name(nxt) in START_CALLERS:
                break
        frame = nxt
    return frames


def line(frames, names):
    if names:
        return " ".join("%x:%s" % f for f in frames) + "\n"
    return " ".join("%x" % pc for pc, _ in frames) + "\n"


class Recorder(gdb.Breakpoint):
    """Writes the stack at each hit and lets the program go on."""

    def __init__(self, spec, out, names, all_frames):
        super().__init__(spec)
        self.out = out
        self.names = names
        self.all_frames = all_frames

    def stop(self):
        self.out.write(line(stack(self.all_frames), self.names))
        return False


def libc_loaded():
    return any(os.path.basename(o.filename).startswith("libc.so")
               for o in gdb.objfiles() if o.filename)


def alive():
    return gdb.selected_inferior().pid != 0


def at_breakpoints(spec, out, names, all_frames):
    try:
        bp = Recorder(spec, out, names, all_frames)
    except gdb.error as e:
        raise gdb.GdbError("%s: %s" % (spec, e))
    if bp.pending or not bp.locations:
        raise gdb.GdbError("%s matches nothing in the program "
                           "or its libraries" % spec)
    gdb.execute("continue")


def at_syscalls(name, out, names, all_frames):
    """At each entry into syscall NAME: the user stack a tracepoint on its
    entry sees, from the instruction after the syscall instruction."""
    gdb.execute("catch syscall " + name)
    # A catchpoint cannot let the program go on by itself, and it stops at
    # each entry and each return: at an entry the kernel has set %rax to
    # -ENOSYS, which the syscalls traced here never return.
    while True:
        gdb.execute("continue", to_string=True)
        if not alive():
            break
        if int(gdb.parse_and_eval("$rax")) == -errno.ENOSYS:
            out.write(line(stack(all_frames), names))


def main():
    opts = {k: os.environ[k] for k in os.environ if k.startswith("GDB_BT_")}
    for k in opts:  # the program gets the environment its caller has
        gdb.execute("unset environment " + k)
    spec = opts["GDB_BT_SPEC"]
    names = opts.get("GDB_BT_NAMES") == "1"
    all_frames = opts.get("GDB_BT_ALL") == "1"
    # the program's own signals go to it, as they do without gdb
    gdb.execute("handle SIGUSR1 SIGUSR2 SIGALRM nostop noprint pass",
                to_string=True)
    gdb.execute("starti", to_string=True)
    # A dynamic program starts in ld.so: wait until its libraries are
    # mapped, before any of their code has run, so that *malloc is libc's
    # malloc (not the program's PLT stub) and sees every call from the
    # start.  A static program is all there at its first instruction.
    if gdb.solib_name(gdb.newest_frame().pc()) is not None:
        gdb.execute("set stop-on-solib-events 1")
        while alive() and not libc_loaded():
            gdb.execute("continue", to_string=True)
        gdb.execute("set stop-on-solib-events 0")
    if not alive():
        raise gdb.GdbError("the program ended before libc was loaded")
    with open(opts["GDB_BT_OUT"], "w") as out:
        if spec.startswith("syscall:"):
            at_syscalls(spec[len("syscall:"):], out, names, all_frames)
        else:
            at_breakpoints(spec, out, names, all_frames)
    if alive():
        raise gdb.GdbError("the program stopped before its end")
    code = gdb.convenience_variable("_exitcode")
    if code is None:
        code = 128 + int(gdb.convenience_variable("_exitsignal") or 0)
    with open(opts["GDB_BT_STATUS"], "w") as f:
        f.write("%d\n" % code)


try:
    main()
except (gdb.error, gdb.GdbError) as e:  # no status file tells the caller
    sys.stderr.write("gdb_bt: %s\n" % e)
