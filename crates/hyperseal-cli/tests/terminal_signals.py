"""Sends one signal to a program waiting at a passphrase prompt, for tests/terminal_signals.rs.

Reads a JSON request on stdin and prints a JSON result. Like an interactive shell, a small
process here leads a new session whose controlling terminal is a pseudo-terminal, and runs the
program ("argv") as the terminal's foreground process group; it stays alive while the program
runs, so the program's group is not orphaned and SIGTSTP stops it as at a real terminal. Once
the terminal shows a prompt (a ":"), the program gets "signal" (by number), then:

- "fatal": the program must end; the result has its status (128 + the signal if the signal
  ended it) and whether the terminal's echo was back on.
- "ignored": the program must still wait after half a second; then "answer" is typed.
- "stop": the program must stop (state T), echo must be back on while it is stopped; it gets
  SIGCONT, must show the prompt again with echo off, and then "answer" is typed.

"ignore" lists signals set to SIG_IGN in the program before exec (as `nohup` does). Each
observation is a field of the result; the test decides what they must be.
"""
import fcntl, json, os, select, signal, sys, termios, time

req = json.load(sys.stdin)
master, slave = os.openpty()
slave_name = os.ttyname(slave)
pid_r, pid_w = os.pipe()
err_r, err_w = os.pipe()

shell = os.fork()
if shell == 0:
    try:
        os.close(pid_r)
        os.close(err_r)
        os.close(master)
        os.setsid()
        tty = os.open(slave_name, os.O_RDWR)
        fcntl.ioctl(tty, termios.TIOCSCTTY, 0)
        pid = os.fork()
        if pid == 0:
            os.setpgid(0, 0)
            # Take the terminal's foreground before exec (a background group may not).
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            os.tcsetpgrp(tty, os.getpgrp())
            for s in signal.valid_signals():
                if s not in (signal.SIGKILL, signal.SIGSTOP):
                    try:
                        signal.signal(s, signal.SIG_DFL)
                    except (OSError, ValueError):
                        pass
            for s in req.get("ignore", []):
                signal.signal(s, signal.SIG_IGN)
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(err_w, 2)
            os.chdir(req["cwd"])
            os.execve(req["argv"][0], req["argv"], dict(os.environ, **req.get("env", {})))
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass
        os.write(pid_w, str(pid).encode())
        os.close(pid_w)
        while True:
            _, st = os.waitpid(pid, os.WUNTRACED)
            if os.WIFEXITED(st):
                os._exit(os.WEXITSTATUS(st))
            if os.WIFSIGNALED(st):
                os._exit(128 + os.WTERMSIG(st))
    finally:
        os._exit(255)

os.close(pid_w)
os.close(err_w)
pid = int(os.read(pid_r, 32))
tty_out = b""
since = b""
stderr = b""


def pump(seconds):
    """Reads what the terminal and stderr show for `seconds`."""
    global tty_out, since, stderr
    until = time.time() + seconds
    while True:
        left = until - time.time()
        if left <= 0:
            return
        for fd in select.select([master, err_r], [], [], min(left, 0.02))[0]:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if fd == master:
                tty_out += data
                since += data
            else:
                stderr += data


def wait_for(cond, seconds):
    until = time.time() + seconds
    while time.time() < until:
        if cond():
            return True
        pump(0.02)
    return cond()


def echo():
    return bool(termios.tcgetattr(slave)[3] & termios.ECHO)


def state():
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1][0]
    except (OSError, IndexError):
        return None


def shell_status(seconds):
    until = time.time() + seconds
    while time.time() < until:
        done, st = os.waitpid(shell, os.WNOHANG)
        if done:
            return os.WEXITSTATUS(st)
        pump(0.02)
    return None


result = {}
result["prompted"] = wait_for(lambda: b":" in since, 20)
pump(0.2)  # the program turns echo off after its prompt
result["echo_at_prompt"] = echo()
since = b""
os.kill(pid, req["signal"])
mode = req["mode"]
if mode == "stop":
    result["stopped"] = wait_for(lambda: state() == "T", 5)
    result["echo_while_stopped"] = echo()
    since = b""
    os.kill(pid, signal.SIGCONT)
    result["prompted_again"] = wait_for(lambda: b":" in since, 5)
    pump(0.2)
    result["echo_after_continue"] = echo()
elif mode == "ignored":
    pump(0.5)
    result["still_waiting"] = state() not in (None, "Z")
    result["echo_while_waiting"] = echo()
if mode in ("stop", "ignored"):
    os.write(master, req["answer"].encode() + b"\n")
status = shell_status(30)
if status is None:
    os.killpg(pid, signal.SIGKILL)
    os.kill(shell, signal.SIGKILL)
    os.waitpid(shell, 0)
pump(0.1)
result.update(status=status, echo_at_end=echo(), stderr=stderr.decode(errors="replace"),
              tty=tty_out.decode(errors="replace"))
json.dump(result, sys.stdout)
