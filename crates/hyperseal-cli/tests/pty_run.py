"""Runs one command as a person at a terminal would meet it, for tests/age_terminal.rs.

Reads a JSON request on stdin and prints a JSON result. The child gets a new session with a
pseudo-terminal as its controlling terminal (unless "ctty" is false: then /dev/tty cannot be
opened, as under cron or CI), stdin from the terminal, a file or nothing, stdout to a pipe or
the terminal, stderr to a pipe. "type" lines are typed one by one, each after the terminal
shows a prompt (a ":" since the last answer); "\\x03" types Ctrl-C. The result says how it
ended, what went to stdout, stderr and the terminal, and whether echo was back on at the end.
"""
import base64, json, os, pty, select, signal, subprocess, sys, termios, time

req = json.load(sys.stdin)
master, slave = pty.openpty()
slave_name = os.ttyname(slave)
stdin = req.get("stdin", "null")
ctty = req.get("ctty", True)
fd3 = req.get("fd3")


def child_setup():
    # A person's terminal delivers Ctrl-C as SIGINT to a program that has not asked otherwise:
    # undo an ignored SIGINT/SIGQUIT inherited from whatever started the tests (a non-interactive
    # shell ignores both in jobs it starts with `&`, and Go keeps an inherited SIG_IGN, so the
    # real age would then sit at its prompt).
    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)
    if r3 is not None:
        os.dup2(r3, 3)  # in the child only: the parent's fd 3 may be the terminal's master
    os.setsid()
    if ctty:
        fd = os.open(slave_name, os.O_RDWR)  # the first terminal a session leader opens
        import fcntl
        fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
        os.close(fd)


if stdin == "tty":
    stdin_f = slave
elif stdin.startswith("file:"):
    stdin_f = open(stdin[5:], "rb")
else:
    stdin_f = subprocess.DEVNULL
stdout_f = slave if req.get("stdout") == "tty" else subprocess.PIPE
pass_fds = ()
r3 = None
if fd3 is not None:
    r3, w3 = os.pipe()
    os.write(w3, fd3.encode())
    os.close(w3)
    pass_fds = (3,)
env = dict(os.environ)
env.update(req.get("env", {}))
p = subprocess.Popen(req["argv"], cwd=req["cwd"], env=env, stdin=stdin_f, stdout=stdout_f,
                     stderr=subprocess.PIPE, preexec_fn=child_setup, pass_fds=pass_fds)
if r3 is not None:
    os.close(r3)
typed = list(req.get("type", []))
tty_out = b""
since = b""
outs = {"stdout": b"", "stderr": b""}
streams = {}
if p.stdout:
    streams[p.stdout.fileno()] = "stdout"
streams[p.stderr.fileno()] = "stderr"
deadline = time.time() + req.get("timeout", 60)
done = False
while time.time() < deadline:
    fds = [master] + list(streams)
    ready, _, _ = select.select(fds, [], [], 0.05)
    for fd in ready:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if fd == master:
            tty_out += data
            since += data
        elif data:
            outs[streams[fd]] += data
        else:
            del streams[fd]
    if typed and b":" in since:
        time.sleep(0.1)  # let the program turn echo off after printing its prompt
        line = typed.pop(0)
        os.write(master, line.encode() if line == "\x03" else line.encode() + b"\n")
        since = b""
    if p.poll() is not None and not streams:
        done = True
        break
if not done:
    p.kill()
p.wait()
# Drain what is left on the terminal.
while select.select([master], [], [], 0.05)[0]:
    try:
        data = os.read(master, 65536)
    except OSError:
        break
    if not data:
        break
    tty_out += data
echo = bool(termios.tcgetattr(slave)[3] & termios.ECHO)
json.dump({
    "status": p.returncode,
    "timed_out": not done,
    "stdout": base64.b64encode(outs["stdout"]).decode(),
    "stderr": outs["stderr"].decode(errors="replace"),
    "tty": tty_out.decode(errors="replace"),
    "echo": echo,
}, sys.stdout)
