"""The client against a real corrald (tests/e2e/python-client.sh starts
one in the test bed and sets the environment): the persistent shell, exec,
files through the guard, a strict refusal in the denials, a run resumed by
id exactly once, two agents on one folder, and the errors a framework acts
on.

CORRAL_SOCKET   the daemon's socket
CORRAL_CLI      the corral binary, for comparing with its --json
CORRAL_TEST_WS  a folder of uid 1000 (the sandboxes' writable root)
CORRAL_TEST_CA  the test bed's CA, inside that folder"""

import json
import os
import socket
import subprocess
import time

import pytest

import corral
from corral import _wire

WS = os.environ.get("CORRAL_TEST_WS", "")
CA = os.environ.get("CORRAL_TEST_CA", "")
pytestmark = pytest.mark.skipif(not os.environ.get("CORRAL_SOCKET") or not WS,
                                reason="needs a corrald (tests/e2e/python-client.sh)")


@pytest.fixture(scope="module")
def client():
    return corral.connect()


@pytest.fixture(scope="module")
def sb(client):
    s = client.create(roots=[(WS, True)], profile="strict", name="py1", session_id="s1",
                      agent="lead")
    yield s
    s.delete()


def cli_json(*args):
    out = subprocess.run([os.environ["CORRAL_CLI"], "--socket", os.environ["CORRAL_SOCKET"]]
                         + list(args), check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def test_create_names_the_sandbox_and_describe_is_the_clis_json(sb):
    assert sb.name == "py1"
    d = sb.describe()
    assert d == cli_json("sandbox", "get", "py1", "--json")
    assert d["session_id"] == "s1" and d["agent"] == "lead" and d["profile"] == "strict"
    assert d["roots"] == [{"path": WS, "writable": True}]


def test_the_persistent_shell_keeps_cwd_and_exported_env(sb):
    r = sb.run("cd /tmp && export KEEP=yes")
    assert r["exit_code"] == 0 and r["cwd"] == "/tmp" and r["id"]
    r = sb.run("echo $KEEP $PWD")
    assert r["output"] == "yes /tmp\n"
    assert set(r) >= {"id", "exit_code", "output", "cwd", "truncated"}


def test_exit_codes_are_the_kernels(sb):
    assert sb.run("exit 3")["exit_code"] == 3
    assert sb.run("no-such-program-here")["exit_code"] == 127
    r = sb.run("kill -9 $$")
    assert r["exit_code"] == 137 and r["signal"] == 9 and r["ended_by"] == ""
    r = sb.run("sleep 30", timeout=1)
    assert r["timed_out"] and r["ended_by"] == "timeout" and r["exit_code"] == 130


def test_exec_keeps_stdout_stderr_and_stdin_apart(sb):
    e = sb.exec(["sh", "-c", "cat; echo err >&2; exit 4"], stdin=b"in\x00put")
    assert e == {"exit_code": 4, "timed_out": False, "ended_by": "", "stdout": b"in\x00put",
                 "stderr": b"err\n"}
    e = sb.exec(["sleep", "30"], timeout=1)
    assert e["timed_out"] and e["exit_code"] == 143 and e["ended_by"] == "timeout", e


def test_files_through_the_guard(sb):
    w = sb.write_file("notes/a.md", "text TODO here\n")
    assert w["bytes_written"] == 15
    assert sb.read_file("notes/a.md") == "text TODO here\n"
    assert {"name": "a.md", "type": "file", "size": 15} in sb.list_files("notes")
    g = sb.grep("TODO")
    assert g["count"] >= 1 and any(m["path"].endswith("notes/a.md") for m in g["matches"])
    with pytest.raises(corral.Error) as e:
        sb.write_file("/etc/passwd", "x")
    assert e.value.code in ("permission_denied", "invalid_argument", "not_found")


def test_a_strict_refusal_is_in_the_denials_then_allowed_by_an_update(sb):
    curl = "curl -sS --max-time 5 --cacert %s -o /dev/null -w '%%{http_code}' " \
        "https://example.com/ 2>/dev/null" % CA
    before = time.time() - 1
    assert sb.run(curl)["output"] == "000"
    d = sb.denials(since=before)
    assert any(x["host"] == "example.com" and x["port"] == 443 and
               x["reason"] == "host_not_allowed" for x in d), d
    assert d == [x for x in cli_json("denials", "py1", "--json") if x in d]
    sb.update_policy(add_endpoints=["example.com:443"])
    assert sb.run(curl)["output"] == "200"


def test_a_run_by_id_runs_once_even_across_a_cut_connection(sb):
    cmd = "echo once >> $HOME/count; sleep 1; echo done"
    # A client that goes away right after sending the start.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(os.environ["CORRAL_SOCKET"])
    s.sendall(_wire.frame(_wire.encode("Request", {"run_start": {
        "sandbox": sb.name, "command": cmd, "request_id": "cut-1"}})))
    s.close()
    r = sb.run(cmd, id="cut-1")
    assert r["exit_code"] == 0 and r["output"] == "done\n" and r["id"] == "cut-1"
    again = sb.run(cmd, id="cut-1")
    assert again == r
    assert sb.run("cat $HOME/count")["output"] == "once\n"
    follow = list(sb.follow("cut-1"))
    assert b"".join(c["data"] for c in follow if "data" in c) == b"done\n"
    assert follow[-1]["result"]["exit_code"] == 0
    with pytest.raises(corral.Exists):
        sb.run("echo another", id="cut-1")


def test_two_agents_share_a_folder(client, sb):
    other = client.create(roots=[(WS, True)], profile="strict", name="py2", agent="helper")
    try:
        sb.write_file("shared.txt", "from lead\n")
        assert other.read_file("shared.txt") == "from lead\n"
        assert other.run("cat %s/shared.txt" % WS)["output"] == "from lead\n"
        names = {s.name for s in client.list()}
        assert {"py1", "py2"} <= names
    finally:
        assert other.delete() == ["py2"]
    with pytest.raises(corral.NotFound):
        client.get("py2")


def test_errors_a_program_can_act_on(client, sb):
    with pytest.raises(corral.NotFound):
        client.get("no-such-sandbox")
    with pytest.raises(corral.Exists):
        client.create(roots=[(WS, True)], name="py1")
    with pytest.raises(corral.BadRequest):
        client.create(roots=[("relative/path", True)])
    with pytest.raises(corral.Unavailable) as e:
        corral.connect("/nonexistent/corrald.sock").status()
    assert "/nonexistent/corrald.sock" in e.value.message
    assert client.status()["version"]


def test_a_secret_stays_in_corrald_and_the_sandbox_holds_a_placeholder(client):
    token = "gho_PyClientTokenNeverInside0123456789ab"
    s = client.create(roots=[(WS, True)], profile="strict", name="py-secret",
                      secrets={"gh": token})
    try:
        d = s.describe()
        assert d == cli_json("sandbox", "get", "py-secret", "--json")
        assert d["secrets"] == [{"name": "gh", "hosts": ["api.github.com:443", "github.com:443"],
                                 "env": ["GH_TOKEN"],
                                 "files": [".config/gh/hosts.yml", ".netrc"]}]
        held = s.exec(["printenv", "GH_TOKEN"])["stdout"].decode().strip()
        assert held.startswith("gho_") and len(held) == len(token) and held != token
        with pytest.raises(corral.BadRequest) as e:
            client.create(roots=[(WS, True)], secrets={"nope": "x"})
        assert "unknown secret 'nope'" in e.value.message
    finally:
        s.delete()
