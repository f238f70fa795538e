"""hyperseal.AgentIdentity: the CLI's identity agent as an identity, by path. The agent runs as
`hyperseal agent start --foreground` in a runtime directory of the test's own."""

import os
import socket
import subprocess
import time

import pytest

import hyperseal


@pytest.fixture
def agent(cli, tmp_path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    proc = subprocess.Popen([str(cli), "agent", "start", "--foreground"], env={**os.environ, "XDG_RUNTIME_DIR": str(run)},
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = run / "hyperseal" / "agent.sock"
    deadline = time.monotonic() + 20
    while True:
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(str(sock))
            break
        except OSError:
            assert time.monotonic() < deadline, "the agent did not start"
            time.sleep(0.02)
    yield sock, proc
    proc.kill()
    proc.wait()


def add(cli, sock, key_file):
    env = {**os.environ, "HYPERSEAL_AGENT_SOCK": str(sock)}
    subprocess.run([str(cli), "agent", "add", str(key_file)], env=env, check=True, capture_output=True)


def test_the_agent_opens_what_its_keys_open(cli, agent, tmp_path):
    sock, _ = agent
    me = hyperseal.generate_key("x25519")
    (tmp_path / "me.key").write_text(me.secret + "\n")
    add(cli, sock, tmp_path / "me.key")
    ids = hyperseal.AgentIdentity(sock)
    assert ids.path == str(sock) and "AgentIdentity" in repr(ids)
    sealed = hyperseal.encrypt(b"through the agent", me.public)
    assert hyperseal.decrypt(sealed, ids) == b"through the agent"
    other = hyperseal.generate_key("x25519")
    # One more identity in a list: the others first, then the agent.
    assert hyperseal.decrypt(sealed, [other, ids]) == b"through the agent"
    (tmp_path / "f.hs").write_bytes(sealed)
    hyperseal.decrypt_file(str(tmp_path / "f.hs"), str(tmp_path / "f.out"), ids)
    assert (tmp_path / "f.out").read_bytes() == b"through the agent"
    # A tree through the agent (a window of files in one round trip).
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(20):
        (tree / f"{i}.hs").write_bytes(hyperseal.encrypt(f"file {i}".encode(), me.public))
    files, summary = hyperseal.rekey_tree(str(tree), ids, add=[other.public])
    assert all(f["outcome"] in ("in_place", "rewritten") for f in files), files
    assert hyperseal.decrypt((tree / "7.hs").read_bytes(), other) == b"file 7"


def test_a_gone_agent_is_a_key_error(cli, agent, tmp_path):
    sock, proc = agent
    me = hyperseal.generate_key("x25519")
    sealed = hyperseal.encrypt(b"x", me.public)
    with pytest.raises(hyperseal.NoIdentityError):
        hyperseal.decrypt(sealed, hyperseal.AgentIdentity(sock))
    proc.kill()
    proc.wait()
    with pytest.raises(hyperseal.Error) as e:
        hyperseal.decrypt(sealed, hyperseal.AgentIdentity(sock, timeout=2))
    assert e.value.code == "ERR_HYPERSEAL_KEY" and "agent" in str(e.value)
    with pytest.raises(hyperseal.ArgumentError):
        hyperseal.AgentIdentity(sock, timeout=0)
