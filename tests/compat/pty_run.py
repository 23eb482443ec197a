#!/usr/bin/python3
"""pty_run.py COMMANDS -- ARGV...: a user at a terminal.

Runs ARGV in a session of its own whose controlling terminal is a new
pseudo-terminal (80x24), with PS1="$ " in its environment, and types the
lines of the file COMMANDS into it, each once the terminal shows the prompt
("$ " at the end of what it printed since the last line typed).  Prints what
the terminal showed ("\\r\\n" as "\\n") and exits with ARGV's exit status
(128 + the signal that killed it).  A prompt that does not come within 120 s
ends the session: the transcript says so, ARGV's session is killed, exit 124.
"""
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time

PROMPT = b"$ "
WAIT = 60


def read_some(fd, deadline):
    """What the terminal printed next, b"" at its end, None at the deadline."""
    left = deadline - time.monotonic()
    if left <= 0:
        return None
    ready, _, _ = select.select([fd], [], [], left)
    if not ready:
        return None
    try:
        return os.read(fd, 4096)
    except OSError:
        return b""


def session(fd, lines):
    """Types the lines at the prompts; returns the transcript and whether it timed out."""
    shown = b""
    since = 0
    pending = list(lines)
    deadline = time.monotonic() + WAIT
    while True:
        if pending and shown[since:].endswith(PROMPT):
            os.write(fd, pending.pop(0))
            since = len(shown)
            deadline = time.monotonic() + WAIT
        chunk = read_some(fd, deadline)
        if chunk is None:
            return shown, True
        if not chunk:
            return shown, False
        shown += chunk


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.stderr.write("usage: pty_run.py COMMANDS -- ARGV...\n")
        return 2
    with open(sys.argv[1], "rb") as f:
        lines = [line if line.endswith(b"\n") else line + b"\n" for line in f]
    argv = sys.argv[3:]
    env = dict(os.environ, PS1="$ ")
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    shown, timed_out = session(fd, lines)
    if timed_out:
        shown += b"\n[pty_run: no prompt within %d s]\n" % WAIT
        os.killpg(pid, signal.SIGKILL)
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    sys.stdout.buffer.write(shown.replace(b"\r\n", b"\n").replace(b"\r", b""))
    if timed_out:
        return 124
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())
