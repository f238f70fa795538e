#!/usr/bin/env python3
"""The command line built for another platform, run on it: Windows x86-64 under Wine, Linux
ARM64 under qemu-user. Run by `make test-windows` / `make test-arm64` (part of `make test`).

    smoke.py --platform windows|arm64 --run 'WINE-OR-QEMU' --hyperseal EXE --age AGE --age-keygen KG
             [--plugin-dir DIR]

Checks, each one able to fail: the README's five-minute tour; round trips with age built by Go
for the same platform, both ways (native keys, hybrid post-quantum keys, passphrases); `rekey`
(in place, then opened by age); the all-or-nothing output rules (no overwrite without --force,
never over the input, nothing left by a failed decryption or a killed process). On Windows also:
a passphrase typed at Wine's console with echo off (the typed text never appears on the
screen), Ctrl-C and a closed console during a write (no partial file), and a plugin
(age-plugin-hstest.exe on PATH) — its deadline, and its own child process ended with it; and
the identity agent over its named pipe (a protected key typed once at `agent add`, then
decrypt and the real age through age-plugin-hyperseal.exe with no prompt).
"""

import argparse
import hashlib
import json
import os
import pty
import re
import select
import shlex
import signal
import subprocess
import sys
import tempfile
import termios
import time

A = argparse.ArgumentParser()
A.add_argument("--platform", required=True, choices=["windows", "arm64"])
A.add_argument("--run", required=True, help="the emulator command line that runs a foreign program")
A.add_argument("--hyperseal", required=True)
A.add_argument("--age", required=True)
A.add_argument("--age-keygen", required=True)
A.add_argument("--plugin-dir", help="Windows: a folder holding age-plugin-hstest.exe")
ARGS = A.parse_args()
RUN = shlex.split(ARGS.run)
WIN = ARGS.platform == "windows"
PASSED = []


def say(what):
    PASSED.append(what)
    print(f"  ok  {what}", flush=True)


def run(prog, *args, stdin=None, ok=True, env=None):
    """Runs PROG (foreign) with ARGS; returns the CompletedProcess. ok=True asserts exit 0."""
    p = subprocess.run(RUN + [prog, *args], input=stdin, capture_output=True, timeout=120,
                       env={**os.environ, **(env or {})})
    if ok and p.returncode != 0:
        sys.exit(f"FAIL: {prog} {' '.join(args)}: exit {p.returncode}\n{p.stderr.decode(errors='replace')}")
    return p


def hs(*args, **kw):
    return run(ARGS.hyperseal, *args, **kw)


def age(*args, **kw):
    return run(ARGS.age, *args, **kw)


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")


def same(a, b):
    return open(a, "rb").read() == open(b, "rb").read()


def leftovers():
    return sorted(n for n in os.listdir(".") if "hyperseal" in n and n.endswith(".partial"))


def refused(p, words):
    """A failure: exit 1, one `hyperseal: error:` line naming the problem."""
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 1, f"expected exit 1, got {p.returncode}: {err}")
    check("hyperseal: error:" in err and words in err, f"expected an error about {words!r}: {err}")


def console(prog, args, answers, interrupt_after=None, hang_up_after=None):
    """Runs PROG in a pseudo-terminal (Wine's console is then the terminal): answers each
    prompt ending in a colon with the next of ANSWERS, typed key by key after Wine has turned
    the terminal's echo off; or sends Ctrl-C / closes the terminal after a delay. Returns
    (exit status, everything shown on the screen)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(RUN[0], RUN + [prog, *args])
    screen = b""

    def read_for(seconds, until=None):
        nonlocal screen
        end = time.time() + seconds
        while time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    return False
                if not data:
                    return False
                screen += data
                if until and until(screen):
                    return True
        return False

    for answer in answers:
        seen = len(screen)
        prompt = re.compile(rb"passphrase[^\n]*:", re.I)
        check(read_for(60, lambda s: prompt.search(s[seen:])), f"no prompt: {screen[-300:]!r}")
        # The console takes the terminal over (echo off, raw) as it starts reading.
        end = time.time() + 10
        while termios.tcgetattr(fd)[3] & termios.ECHO and time.time() < end:
            time.sleep(0.05)
        for ch in answer.encode() + b"\r":
            os.write(fd, bytes([ch]))
            time.sleep(0.02)
    if interrupt_after is not None:
        read_for(interrupt_after)
        os.write(fd, b"\x03")
    if hang_up_after is not None:
        read_for(hang_up_after)
        os.close(fd)
        fd = None
    if fd is not None:
        read_for(120, None)
    deadline = time.time() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            sys.exit("FAIL: the program did not end")
        time.sleep(0.1)
    if fd is not None:
        os.close(fd)
    return os.waitstatus_to_exitcode(status), screen


def tour():
    with open("report.pdf", "wb") as f:
        f.write(os.urandom(3_000_001))
    p = hs("keygen", "-o", "me.key")
    check(b"age1pq1" in p.stderr, "keygen prints the public key on stderr")
    open("me.pub", "wb").write(hs("pubkey", "-i", "me.key").stdout)
    hs("encrypt", "-R", "me.pub", "-o", "report.pdf.hs", "report.pdf")
    hs("decrypt", "-i", "me.key", "-o", "copy.pdf", "report.pdf.hs")
    check(same("report.pdf", "copy.pdf"), "decrypt gives the bytes back")
    pub = open("me.pub").read().split()[0]
    armored = hs("encrypt", "-r", pub, "-a", stdin=b"docs.tar bytes\n" * 1000).stdout
    check(armored.startswith(b"-----BEGIN HYPERSEAL ENCRYPTED FILE-----"), "armor")
    check(hs("decrypt", "-i", "me.key", stdin=armored).stdout == b"docs.tar bytes\n" * 1000, "armored stream")
    part = hs("decrypt", "-i", "me.key", "--offset", "1000000", "--length", "4096", "report.pdf.hs").stdout
    check(part == open("report.pdf", "rb").read()[1000000:1004096], "random access")
    hs("keygen", "-o", "other.key")
    other = hs("pubkey", "-i", "other.key").stdout.decode().split()[0]
    before = os.path.getsize("report.pdf.hs")
    hs("rekey", "-i", "me.key", "--add", other, "report.pdf.hs")
    hs("decrypt", "-i", "other.key", "-o", "copy2.pdf", "report.pdf.hs")
    check(same("report.pdf", "copy2.pdf") and os.path.getsize("report.pdf.hs") == before, "rekey --add in place")
    open("notes.txt", "w").write("notes\n")
    hs("age", "-r", pub, "-o", "notes.age", "notes.txt")
    check(hs("decrypt", "-i", "me.key", "notes.age").stdout == b"notes\n", "hyperseal age")
    digest = hs("hash", "--algo", "sha256", "report.pdf").stdout.split()[0].decode()
    check(digest == hashlib.sha256(open("report.pdf", "rb").read()).hexdigest(), "hash sha256")
    hs("hash", "--algo", "blake3", "report.pdf")
    hs("keygen", "--kind", "ed25519", "-o", "sign.pem")
    open("sign.pub", "wb").write(hs("pubkey", "-i", "sign.pem").stdout)
    hs("sign", "-i", "sign.pem", "-o", "report.sig", "report.pdf")
    hs("verify", "--pubkey", "sign.pub", "--sig", "report.sig", "report.pdf")
    open("report.pdf", "ab").write(b"!")
    check(hs("verify", "--pubkey", "sign.pub", "--sig", "report.sig", "report.pdf", ok=False).returncode != 0,
          "verify refuses a changed file")
    hs("token", "keygen", "-o", "token.key")
    tok = hs("token", "seal", "--key", "token.key", "--ttl", "15m", stdin=b"user=42").stdout.strip()
    check(hs("token", "open", "--key", "token.key", stdin=tok).stdout.strip() == b"user=42", "token")
    info = json.loads(hs("inspect", "--json", "report.pdf.hs").stdout)
    check(info["postquantum"] == "yes" and info["recipients"] == {"mlkem768x25519": 2}, f"inspect --json: {info}")
    say("the README's five-minute tour")


def one_file():
    """A file into a file on 2 threads: every thread reads and writes its own pieces at offsets
    (pwrite on Windows); the result matches the ordered stream's, and a damaged chunk leaves
    nothing."""
    data = os.urandom(9_000_003)
    open("big.bin", "wb").write(data)
    hs("encrypt", "--threads", "2", "-R", "me.pub", "-o", "big.hs", "big.bin")
    hs("decrypt", "--threads", "2", "-i", "me.key", "-o", "big.out", "big.hs")
    check(same("big.bin", "big.out"), "a file decrypted on 2 threads")
    check(hs("decrypt", "--threads", "1", "-i", "me.key", "big.hs").stdout == data, "the same file streamed")
    hs("decrypt", "--threads", "2", "-i", "me.key", "--offset", "1000003", "--length", "5000000", "-o", "big.part", "big.hs")
    check(open("big.part", "rb").read() == data[1000003:6000003], "random access into a file on 2 threads")
    damaged = bytearray(open("big.hs", "rb").read())
    damaged[len(damaged) // 2] ^= 1
    open("big.bad", "wb").write(damaged)
    p = hs("decrypt", "--threads", "2", "-i", "me.key", "-o", "big.none", "big.bad", ok=False)
    check(p.returncode != 0 and not os.path.exists("big.none") and not leftovers(), "a damaged chunk leaves nothing")
    for n in ("big.bin", "big.hs", "big.out", "big.part", "big.bad"):
        os.remove(n)
    say("one file on every core: positional reads and writes, random access, a damaged chunk")


def with_age():
    gen = run(ARGS.age_keygen, "-o", "age.key")
    check(gen.returncode == 0, "age-keygen")
    apub = run(ARGS.age_keygen, "-y", "age.key").stdout.decode().strip()
    data = os.urandom(200_000)
    open("plain.bin", "wb").write(data)
    # age → hyperseal
    age("-e", "-r", apub, "-o", "a2h.age", "plain.bin")
    hs("decrypt", "-i", "age.key", "-o", "a2h.out", "a2h.age")
    check(open("a2h.out", "rb").read() == data, "age encrypts, hyperseal decrypts")
    # hyperseal → age, binary and armored, and hyperseal's own post-quantum key as an age recipient
    hs("age", "-r", apub, "-o", "h2a.age", "plain.bin")
    age("-d", "-i", "age.key", "-o", "h2a.out", "h2a.age")
    check(open("h2a.out", "rb").read() == data, "hyperseal encrypts, age decrypts")
    hs("encrypt", "--format", "age", "-a", "-r", apub, "-o", "h2a.asc", "plain.bin")
    check(age("-d", "-i", "age.key", "h2a.asc").stdout == data, "armored, to age")
    pq = open("me.pub").read().split()[0]
    hs("age", "-r", pq, "-o", "pq.age", "plain.bin")
    age("-d", "-i", "me.key", "-o", "pq.out", "pq.age")
    check(open("pq.out", "rb").read() == data, "a hybrid post-quantum key, hyperseal to age")
    age("-e", "-r", pq, "-o", "pq2.age", "plain.bin")
    check(hs("decrypt", "-i", "me.key", "pq2.age").stdout == data, "a hybrid post-quantum key, age to hyperseal")
    # rekey an age file in place to a second age key, which age then opens it with
    run(ARGS.age_keygen, "-o", "age2.key")
    apub2 = run(ARGS.age_keygen, "-y", "age2.key").stdout.decode().strip()
    hs("age", "-r", apub, "-o", "r.age", "plain.bin")
    check(age("-d", "-i", "age2.key", "r.age", ok=False).returncode != 0, "not yet for the second key")
    hs("rekey", "-i", "age.key", "--add", apub2, "r.age")
    check(age("-d", "-i", "age2.key", "r.age").stdout == data, "rekey of an age file, opened by age")
    hs("rekey", "-i", "age.key", "--add", apub2, "h2a.asc")  # armored: rewritten, payload copied
    check(age("-d", "-i", "age2.key", "h2a.asc").stdout == data, "rekey of an armored age file")
    say("round trips with age both ways; rekey of an age file")


def all_or_nothing():
    open("exists.out", "w").write("keep me")
    refused(hs("decrypt", "-i", "me.key", "-o", "exists.out", "report.pdf.hs", ok=False), "already exists")
    check(open("exists.out").read() == "keep me", "no overwrite without --force")
    hs("decrypt", "-i", "me.key", "-o", "exists.out", "--force", "report.pdf.hs")
    check(os.path.getsize("exists.out") == 3_000_001, "--force replaces")
    refused(hs("encrypt", "-R", "me.pub", "-o", "notes.txt", "--force", "notes.txt", ok=False), "input file is output file")
    check(open("notes.txt").read() == "notes\n", "the input is never replaced")
    # A flipped byte near the end: decryption fails at the last chunk, after most was written.
    ct = bytearray(open("report.pdf.hs", "rb").read())
    ct[-20] ^= 1
    open("bad.hs", "wb").write(ct)
    refused(hs("decrypt", "-i", "me.key", "-o", "bad.out", "bad.hs", ok=False), "")
    check(not os.path.exists("bad.out") and not leftovers(), "a failed decryption leaves nothing")
    refused(hs("encrypt", "-R", "me.pub", "-o", os.path.join("no-such-dir", "x.hs"), "notes.txt", ok=False), "")
    say("all-or-nothing output: --force, the input, a failed decryption, a missing folder")


def killed():
    """A write killed half-way (SIGKILL to the emulated process) leaves no file."""
    cmd = RUN + [ARGS.hyperseal, "encrypt", "-R", "me.pub", "-o", "killed.hs"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdin.write(b"\0" * 5_000_000)
    p.stdin.flush()
    end = time.time() + 30
    while not leftovers() and not any(n.startswith(".hyperseal") for n in os.listdir(".")) and time.time() < end:
        time.sleep(0.05)
    time.sleep(0.3)
    p.kill()
    p.wait()
    time.sleep(1)  # Wine's server closes the dead process's handles
    check(not os.path.exists("killed.hs"), "no output after a kill")
    check(not [n for n in os.listdir(".") if n.startswith(".hyperseal")], f"no temporary after a kill: {os.listdir('.')}")
    say("a process killed while writing leaves no file (no partial, no temporary)")


def windows_console():
    status, screen = console(ARGS.hyperseal, ["encrypt", "-p", "-o", "typed.hs", "notes.txt"],
                             ["correct horse battery"] * 2)
    check(status == 0, f"encrypt -p: exit {status}: {screen[-300:]!r}")
    check(b"correct horse" not in screen, "the passphrase is not echoed")
    status, screen = console(ARGS.hyperseal, ["decrypt", "-o", "typed.out", "typed.hs"], ["correct horse battery"])
    check(status == 0 and open("typed.out").read() == "notes\n", f"decrypt with the typed passphrase: {status}")
    hs("age", "-p", "-o", "typed.age", "notes.txt", ok=False)  # no console: refused, nothing written
    check(not os.path.exists("typed.age"), "no prompt without a console, and no file")
    status, screen = console(ARGS.age, ["-p", "-o", "byage.age", "notes.txt"], ["tr0ub4dor"] * 2)
    check(status == 0, "age -p at the console")
    status, _ = console(ARGS.hyperseal, ["decrypt", "-o", "byage.out", "byage.age"], ["tr0ub4dor"])
    check(status == 0 and open("byage.out").read() == "notes\n", "hyperseal opens age's passphrase file")
    say("passphrases typed at Wine's console, echo off, both ways with age")
    # Ctrl-C and a closed console while the output is being written: nothing is left.
    for how, kw in (("Ctrl-C", {"interrupt_after": 3}), ("a closed console", {"hang_up_after": 3})):
        out = f"interrupted-{len(PASSED)}.hs"
        sh = f"(head -c 3000000 /dev/zero; sleep 30) | {shlex.join(RUN + [ARGS.hyperseal])} encrypt -R me.pub -o {out}"
        pid, fd = pty.fork()
        if pid == 0:
            os.execvp("sh", ["sh", "-c", sh])
        time.sleep(kw.get("interrupt_after", kw.get("hang_up_after")))
        check(any(n.startswith(".hyperseal") for n in os.listdir(".")), f"{how}: the output was being written")
        if "interrupt_after" in kw:
            os.write(fd, b"\x03")
        else:
            os.close(fd)
        end = time.time() + 20
        while not os.waitpid(pid, os.WNOHANG)[0]:
            if time.time() > end:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(0.1)
        subprocess.run(["pkill", "-f", "--", f"-o {out}"])
        time.sleep(1)
        check(not os.path.exists(out) and not [n for n in os.listdir(".") if n.startswith(".hyperseal")],
              f"{how}: no output and no temporary left: {os.listdir('.')}")
        if "interrupt_after" in kw:
            os.close(fd)
    say("Ctrl-C and a closed console during a write leave nothing")


def windows_closed_pipe():
    """`hyperseal … | more` quit early: the exit status of a broken pipe, no panic message."""
    # A line per file, printed one by one: far more than a pipe holds (and a command line within
    # Windows' 32767 characters).
    p = subprocess.Popen(RUN + [ARGS.hyperseal, "hash", "--algo", "sha256"] + ["notes.txt"] * 2500,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(100)
    p.stdout.close()
    err = p.stderr.read()
    p.wait(timeout=60)
    check(p.returncode == 141 and b"panicked" not in err, f"closed pipe: exit {p.returncode}, {err[-300:]!r}")
    say("a closed pipe on stdout ends the program quietly (status 141), as SIGPIPE does on Unix")


def windows_plugin():
    # Wine adds WINEPATH's folders (Windows paths: Z: is the Unix root) to the program's PATH.
    env = {"WINEPATH": "Z:" + os.path.abspath(ARGS.plugin_dir).replace("/", "\\")}
    ids = run(os.path.join(ARGS.plugin_dir, "age-plugin-hstest.exe"), "--keygen").stdout.decode().split()
    ident, recip = ids[0], ids[1]
    open("plugin.key", "w").write(ident + "\n")
    hs("encrypt", "--format", "age", "-r", recip, "-o", "plugin.age", "notes.txt", env=env)
    check(hs("decrypt", "-i", "plugin.key", "plugin.age", env=env).stdout == b"notes\n", "plugin round trip")
    # A plugin that starts a child and hangs: the deadline ends both (the child is in its job).
    beat = os.path.abspath("beat.txt")
    t = time.time()
    p = hs("encrypt", "--format", "age", "-r", recip, "-o", "hang.age", "notes.txt", ok=False,
           env={**env, "HSTEST_MODE": "spawn", "HSTEST_BEAT": beat, "HYPERSEAL_PLUGIN_TIMEOUT": "3"})
    check(p.returncode == 1 and time.time() - t < 30, f"the plugin's deadline: exit {p.returncode}")
    check(not os.path.exists("hang.age"), "no output from a failed plugin")
    check(os.path.exists(beat), "the plugin's child was running")
    time.sleep(1)
    size = os.path.getsize(beat)
    time.sleep(1.5)
    check(os.path.getsize(beat) == size, "the plugin's child ended with it (its Job Object)")
    say("a plugin on PATH; its deadline; its child process ended with it")


def windows_agent():
    """The identity agent over its named pipe: started in the background, a protected key typed
    once at `agent add`, then hyperseal and the real age (through age-plugin-hyperseal.exe, a
    copy of hyperseal.exe) open files with no prompt; a second start is refused; after `stop`
    a decrypt fails with one line and writes nothing."""
    status, _ = console(ARGS.age, ["-p", "-o", "prot.key", "age2.key"], ["agent pass"] * 2)
    check(status == 0, "age -p of an identity file")
    # Its output read through a pipe to the end, as `$(…)` and `| Invoke-Expression` do: the
    # agent left running must not hold it. Standard error goes to a file: Wine gives every
    # Windows process its parent's descriptor 2 (for its own messages), whatever its handles.
    with open("agent-start.err", "wb") as err:
        started = subprocess.run(RUN + [ARGS.hyperseal, "agent", "start", "--powershell"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, timeout=60)
    line = started.stdout.decode().strip()
    check(started.returncode == 0, f"agent start: exit {started.returncode}: {open('agent-start.err').read()}")
    m = re.fullmatch(r"\$env:HYPERSEAL_AGENT_SOCK = '(\\\\\.\\pipe\\hyperseal-agent-S-1-[0-9-]+)'", line)
    check(m, f"agent start --powershell: {line!r}")
    env = {"HYPERSEAL_AGENT_SOCK": m.group(1)}
    try:
        with open("agent-again.err", "wb") as err:
            again = subprocess.run(RUN + [ARGS.hyperseal, "agent", "start"], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=err, timeout=60)
        refused(subprocess.CompletedProcess(again.args, again.returncode, b"", open("agent-again.err", "rb").read()),
                "already listening")
        added = hs("agent", "add", "age.key", ok=False, env=env)
        # On failure, the agent's own messages too (its standard error is agent-start.err).
        check(added.returncode == 0, f"agent add: exit {added.returncode}: "
              f"{added.stderr.decode(errors='replace')!r}; the agent wrote {open('agent-start.err', errors='replace').read()!r}")
        status, screen = console(ARGS.hyperseal, ["agent", "add", "prot.key"], ["agent pass"])
        check(status == 0, f"agent add of a protected key: {status} {screen[-300:]!r}")
        listed = hs("agent", "list", env=env).stdout.decode().splitlines()
        check(len(listed) == 2 and all(l.startswith("SHA256:") for l in listed), f"agent list: {listed}")
        data = open("plain.bin", "rb").read()
        check(hs("decrypt", "a2h.age", env=env).stdout == data, "decrypt through the agent")
        apub2 = run(ARGS.age_keygen, "-y", "age2.key").stdout.decode().strip()
        age("-e", "-r", apub2, "-o", "only2.age", "plain.bin")
        check(hs("decrypt", "only2.age", env=env).stdout == data, "the protected key, typed once, opens a file")
        # The zip's copy beside hyperseal.exe; a build folder has none: one is made here.
        plugins = os.path.dirname(os.path.abspath(ARGS.hyperseal))
        if not os.path.exists(os.path.join(plugins, "age-plugin-hyperseal.exe")):
            plugins = os.path.abspath("agent-plugins")
            os.makedirs(plugins, exist_ok=True)
            with open(ARGS.hyperseal, "rb") as src, open(os.path.join(plugins, "age-plugin-hyperseal.exe"), "wb") as dst:
                dst.write(src.read())
        open("agent.txt", "wb").write(hs("agent", "identity", env=env).stdout)
        wine_path = {"WINEPATH": "Z:" + plugins.replace("/", "\\")}
        check(age("-d", "-i", "agent.txt", "a2h.age", env=wine_path).stdout == data, "age -d -i agent.txt")
        hs("agent", "stop", env=env)
        p = hs("decrypt", "-o", "after-stop.out", "a2h.age", ok=False, env=env)
        refused(p, "agent")
        check(not os.path.exists("after-stop.out"), "nothing written when the agent is gone")
        # A file named as the agent is not opened as one.
        refused(hs("decrypt", "a2h.age", ok=False, env={"HYPERSEAL_AGENT_SOCK": "agent.txt"}), "not a named pipe")
    finally:
        hs("agent", "stop", ok=False, env=env)
    say("the identity agent over its named pipe: a protected key typed once, hyperseal and age through it")


def windows_backup_names():
    """A snapshot is input: names that are plain on Linux but reach elsewhere on Windows (a
    drive, a `\\` separator, a device, a trailing dot) are refused before anything is written;
    a plain tree round-trips."""
    os.makedirs("tree/sub")
    open(os.path.join("tree", "sub", "a.txt"), "w").write("plain\n")
    hs("backup", "init", "--repo", "bk", "-R", "me.pub", "--writer-key", "bk.wk")
    hs("backup", "create", "--repo", "bk", "--writer-key", "bk.wk", "tree")
    hs("backup", "restore", "--repo", "bk", "-i", "me.key", "latest", "--target", "plain")
    check(open(os.path.join("plain", "tree", "sub", "a.txt")).read() == "plain\n", "a plain tree restores")
    hostile = ["C:\\evil.txt", "..\\evil.txt", "sub\\..\\..\\evil.txt", "\\\\host\\share\\evil.txt",
               "CON", "nul.txt", "evil.txt.", "evil.txt ", "a:stream"]
    for i, name in enumerate(hostile):
        snap = {"version": 1, "time": 1_700_000_000 + i, "nanos": 0, "host": "h", "run": "r", "paths": ["x"],
                "entries": [{"type": "dir", "path": "x", "mode": 0o755, "mtime": 0},
                            {"type": "file", "path": "x/" + name, "mode": 0o644, "mtime": 0, "size": 0,
                             "chunks": []}]}
        sid = "%032x" % (0xEE00 + i)
        hs("encrypt", "-R", "me.pub", "-o", os.path.join("bk", "snapshots", sid), stdin=json.dumps(snap).encode())
        target = "out%d" % i
        refused(hs("backup", "restore", "--repo", "bk", "-i", "me.key", sid, "--target", target, ok=False),
                "unsafe path")
        check(not os.path.exists(target) or not os.listdir(target), f"{name!r}: something was written")
    check(not [n for n in os.listdir(".") if "evil" in n], "nothing reached the folder above the target")
    say("backup restore refuses Windows drive, separator, device and trailing-dot names")


def wine_up():
    """One Wine server for the whole run (each program then starts in ~0.1 s instead of ~1 s),
    and its background services started here, with no pipe of ours: they outlive the program
    that starts them, and would keep a captured stdout open."""
    server = os.path.join(os.path.dirname(RUN[0]), "wineserver")
    subprocess.run([server, "-p"])  # fails harmlessly when one is already running
    subprocess.run(RUN + ["wineboot"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120)
    return server


def main():
    server = wine_up() if WIN else None
    try:
        checks()
    finally:
        if server:
            subprocess.run([server, "-k"])


def checks():
    with tempfile.TemporaryDirectory(prefix="hyperseal-cross-") as d:
        os.chdir(d)
        print(f"== {ARGS.platform}: {' '.join(RUN)} {ARGS.hyperseal}", flush=True)
        v = hs("--version").stdout.decode().strip()
        check(v.startswith("hyperseal "), f"--version: {v}")
        tour()
        one_file()
        with_age()
        all_or_nothing()
        killed()
        if WIN:
            windows_console()
            windows_closed_pipe()
            windows_plugin()
            windows_agent()
            windows_backup_names()
        os.chdir("/")
    print(f"== {ARGS.platform}: {len(PASSED)} checks passed ({v})")


main()
