#!/usr/bin/env python3
"""`kvscope-cli lesson N` in a terminal asks each @ask before its step runs; elsewhere it does not.

Through a pseudo-terminal, as a reader at a terminal would:
  1. `lesson 10` waits at its first @ask (the prompt shown, the step not played, the process alive
     and quiet); Enter alone plays the step and reveals the engine's answer; q ends it cleanly
     (exit 0, the summary saying where);
  2. a toy lesson of its own: a bad answer gets one line and the prompt again; a choice and a typed
     number are revealed beside the engine's answer, right or not;
  3. Ctrl+D (end of input) at the prompt ends lesson 10 cleanly; Ctrl+C too (the summary, exit 130);
     the Chinese lesson asks in Chinese;
  4. --no-ask in a terminal, stdout into a pipe (stdin a terminal), and both pipes never ask, and
     print what the lesson tests' pipe prints, byte for byte (--quiet: no measured times in it).
The waits below are limits against a hang, never a measure of speed.
Usage: lesson_ask_tty.py KVSCOPE_CLI LESSONS_DIR
"""
import fcntl
import os
import pty
import select
import signal
import subprocess
import sys
import tempfile
import termios
import time

cli, lessons = sys.argv[1], sys.argv[2]
os.environ["KVSCOPE_LESSONS"] = lessons  # `lesson 10` finds this tree's lessons
EN = os.path.join(lessons, "en", "10-causal-against-bidirectional.md")
ZH = os.path.join(lessons, "zh", "10-causal-against-bidirectional.md")
OPTS = ["--backend", "cpu", "--quiet"]
LIMIT = 120  # seconds any one wait may take before the case fails as hung
failures = []


def fail(case, why, out=b""):
    failures.append(f"{case}: {why}\n--- output ---\n{out.decode(errors='replace')}\n---")


class Terminal:
    """The CLI under a pseudo-terminal: stdin and stdout the terminal (or stdout a pipe)."""

    def __init__(self, args, stdout_pipe=False):
        self.out = b""
        master, slave = pty.openpty()
        self.master = master
        self.pipe_r = None
        stdout = slave
        if stdout_pipe:
            self.pipe_r, stdout = os.pipe()
        self.proc = subprocess.Popen([cli] + args, stdin=slave, stdout=stdout, stderr=stdout,
                                     start_new_session=True, close_fds=True,
                                     preexec_fn=_take_terminal)
        os.close(slave)
        if stdout_pipe:
            os.close(stdout)
        self.read_fd = self.pipe_r if stdout_pipe else master
        self.closed = False

    def _pump(self, timeout):
        """Reads what is there within `timeout` s; False once the output has ended."""
        r, _, _ = select.select([self.read_fd], [], [], timeout)
        if not r:
            return True
        try:
            data = os.read(self.read_fd, 65536)
        except OSError:  # EIO: the terminal's other side closed
            data = b""
        if not data:
            self.closed = True
            return False
        self.out += data
        return True

    def wait_for(self, text, start=0):
        """Reads until `text` appears after byte `start`; its end, or -1 (ended or hung)."""
        end = time.monotonic() + LIMIT
        while time.monotonic() < end:
            i = self.out.find(text, start)
            if i >= 0:
                return i + len(text)
            if not self._pump(0.2):
                i = self.out.find(text, start)
                return i + len(text) if i >= 0 else -1
        return -1

    def quiet_for(self, seconds):
        """True when nothing is printed for `seconds` and the process is still running."""
        before = len(self.out)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if not self._pump(end - time.monotonic()):
                break
        return len(self.out) == before and self.proc.poll() is None

    def send(self, data):
        os.write(self.master, data)

    def finish(self):
        """Reads to the end of the output; the exit status (None when it hung)."""
        end = time.monotonic() + LIMIT
        while not self.closed and time.monotonic() < end:
            self._pump(0.2)
            if self.proc.poll() is not None and not self._pump(0.2):
                break
        try:
            rc = self.proc.wait(timeout=max(1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            rc = None
        os.close(self.master)
        if self.pipe_r is not None:
            os.close(self.pipe_r)
        return rc


def _take_terminal():
    # The child leads a new session; its stdin, the terminal, becomes its controlling one, so
    # Ctrl+C (0x03) typed into it is SIGINT to the child, as at a real terminal.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


PROMPT = b"your answer ("


# A toy lesson of three questions: a choice, a typed number, and one left unanswered (q).
TOY = """# Asked
## Prefill
@model toy
@prompt Today weather is so
@prefill
@ask token choices="warm" | "nice" | "delicious"
@question Which word?
@why The highest logit.
@expect token == "nice"
## Decode
@decode 1
@ask head(0, 3, -1) within=0.01
@question The all head at the newest token?
@why (10 + 20 + 1 + 5 + 8) / 5.
@expect head(0, 3, -1) == 8.8 within 1e-6
## Again
@decode 1
@ask rows choices=1 | 7
@question Rows?
@why One.
@expect rows == 1
"""


def waits_at_lesson_10():
    case = "terminal: lesson 10 waits at its first @ask, Enter reveals, q ends"
    t = Terminal(["lesson", "10"] + OPTS)
    at = t.wait_for(PROMPT)
    if at < 0:
        t.finish()
        return fail(case, "no prompt at the first @ask: the lesson ran without waiting", t.out)
    if not t.quiet_for(1.0) or b"PASS" in t.out:
        t.finish()
        return fail(case, "at the first @ask the step went on without an answer", t.out)
    t.send(b"\n")  # no answer: the engine's is revealed without a verdict
    second = t.wait_for(PROMPT, at)
    reveal = t.out[at:second]
    for want in (b"PASS  @expect", b"your answer: none given", b"the engine's answer: ", b"why: "):
        if second < 0 or want not in reveal:
            t.finish()
            return fail(case, f"after Enter, no {want!r} before the next question", t.out)
    t.send(b"q\n")
    rc = t.finish()
    if rc != 0 or b"stopped by the reader before step 2 of 4" not in t.out[second:]:
        return fail(case, f"q: exit {rc}, or no summary saying where it stopped", t.out)
    if b"[3/4]" in t.out:
        return fail(case, "q did not end the lesson at step 2", t.out)


def asks_and_reveals(toy_file):
    case = "terminal: one line for a bad answer, a choice and a number revealed, q ends"
    t = Terminal(["lesson", toy_file] + OPTS)
    at = t.wait_for(PROMPT)
    if at < 0:
        t.finish()
        return fail(case, "no prompt at the first @ask", t.out)
    t.send(b"7\n")
    bad = t.wait_for(PROMPT, at)
    said = t.out[at:bad]
    if bad < 0 or b"not an answer: a choice from 1 to 3" not in said or said.count(b"\n") != 2:
        t.finish()
        return fail(case, "a bad answer: not one line and the prompt again", t.out)
    t.send(b"2\n")  # "nice": the engine's answer
    second = t.wait_for(PROMPT, bad)
    reveal = t.out[bad:second]
    for want in (b'PASS  @expect token == "nice"', b'your answer: "nice", you predicted it',
                 b'the engine\'s answer: "nice"', b"why: The highest logit."):
        if second < 0 or want not in reveal:
            t.finish()
            return fail(case, f"after the answer, no {want!r}", t.out)
    t.send(b"5\n")  # a number typed: the engine's answer is 8.8
    third = t.wait_for(PROMPT, second)
    if third < 0 or b"your answer: 5, not what you predicted" not in t.out[second:third]:
        t.finish()
        return fail(case, "a wrong typed number is not revealed as not predicted", t.out)
    t.send(b"q\n")
    rc = t.finish()
    if rc != 0 or b"stopped by the reader before step 3 of 3" not in t.out[third:]:
        return fail(case, f"q: exit {rc}, or no summary saying where it stopped", t.out)


def ends(case, key, rc_wanted, path=EN, words=b"stopped by the reader before step 1 of 4"):
    t = Terminal(["lesson", path] + OPTS)
    if t.wait_for(PROMPT if path == EN else "你的答案（".encode()) < 0:
        t.finish()
        return fail(case, "no prompt", t.out)
    t.send(key)
    rc = t.finish()
    if rc != rc_wanted or words not in t.out or b"Traceback" in t.out:
        fail(case, f"exit {rc} (wanted {rc_wanted}), or no summary {words!r}", t.out)


def never_asks(case, args, pipe_out, stdout_pipe=False):
    t = Terminal(args, stdout_pipe=stdout_pipe)
    rc = t.finish()
    out = t.out.replace(b"\r\n", b"\n")
    if rc != 0 or PROMPT in out or b"ran to the end" not in out:
        return fail(case, f"exit {rc}: it asked, or did not run to the end", t.out)
    if out != pipe_out:
        fail(case, "the output differs from the pipe's", t.out)


waits_at_lesson_10()
with tempfile.TemporaryDirectory() as tmp:
    toy = os.path.join(tmp, "asked.md")
    with open(toy, "w") as f:
        f.write(TOY)
    asks_and_reveals(toy)
ends("terminal: Ctrl+D at the prompt", b"\x04", 0)
ends("terminal: Ctrl+C at the prompt", b"\x03", 130)
ends("terminal: the Chinese lesson", b"q\n", 0, ZH,
     "读者在第 1 步（共 4 步）之前结束".encode())
piped = subprocess.run([cli, "lesson", EN] + OPTS, stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=LIMIT)
if piped.returncode != 0 or PROMPT in piped.stdout or b"QUESTION" not in piped.stdout:
    fail("pipes: stdin and stdout", f"exit {piped.returncode}, or it asked",
         piped.stdout + piped.stderr)
never_asks("terminal: --no-ask", ["lesson", EN, "--no-ask"] + OPTS, piped.stdout)
never_asks("stdin a terminal, stdout a pipe", ["lesson", EN] + OPTS, piped.stdout, stdout_pipe=True)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("lesson in a terminal: asks, reveals, ends cleanly; --no-ask and pipes never ask")
