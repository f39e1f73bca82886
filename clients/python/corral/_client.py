"""The client: one connection per request, as the daemon wants
(PROTOCOL.md, "The first frame"), each answered by one Response or a
stream of them."""

import datetime
import os
import socket as _socket
import time
import uuid

from . import _wire
from ._errors import Unavailable, from_wire

DEFAULT_SOCKET = "/run/corral/corrald.sock"
# A run whose connection is cut is resumed for this long (the daemon
# keeps its output and result until acknowledged).
RESUME_SECONDS = 30.0
RESUME_PAUSE_SECONDS = 0.2


def connect(socket=None):
    """A client of the corrald at SOCKET, else $CORRAL_SOCKET, else the
    default socket. Nothing is opened until the first request."""
    return Client(socket or os.environ.get("CORRAL_SOCKET") or DEFAULT_SOCKET)


def _rfc3339(us):
    if us <= 0:
        return None
    t = datetime.datetime.fromtimestamp(us // 1000000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (us % 1000000)


def _opt(s):
    return s if s else None


def _since_us(since):
    """DENIALS' since: None (everything kept), a datetime, or seconds since
    the epoch."""
    if since is None:
        return 0
    if isinstance(since, datetime.datetime):
        since = since.timestamp()
    return int(since * 1000000)


class _Call:
    """One request on a connection of its own."""

    def __init__(self, path, member, value):
        self.path = path
        try:
            self.sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            self.sock.connect(path)
        except OSError as e:
            raise Unavailable("unavailable", "cannot reach corrald at %s: %s"
                              % (path, e.strerror or e)) from e
        self.send(_wire.encode("Request", {member: value}))

    def send(self, payload):
        try:
            self.sock.sendall(_wire.frame(payload))
        except OSError as e:
            self.sock.close()
            raise Unavailable("unavailable", "corrald closed the connection: %s"
                              % (e.strerror or e)) from e

    def next(self, message="Response"):
        """The next frame as MESSAGE; None at the end of the stream."""
        payload = _wire.read_frame(self.sock)
        return None if payload is None else _wire.decode(message, payload)

    def close(self):
        self.sock.close()


class Client:
    def __init__(self, path):
        self.socket = path

    def _call(self, member, value, want):
        """MEMBER's request; the one Response's WANT member, or its error raised."""
        call = _Call(self.socket, member, value)
        try:
            r = call.next()
        except (OSError, _wire.WireError) as e:
            raise Unavailable("unavailable", "no answer from corrald: %s" % e) from e
        finally:
            call.close()
        if r is None:
            raise Unavailable("unavailable", "corrald closed the connection without an answer")
        if "error" in r:
            raise from_wire(r["error"])
        if want not in r:
            raise Unavailable("unavailable", "corrald answered %s to %s"
                              % (", ".join(k for k in r) or "nothing", member))
        return r[want]

    def create(self, roots, profile=None, policy=None, name=None, session_id=None, agent=None,
               grants=None, limits=None, env=None, labels=None, cwd=None, run_as=None,
               secrets=None):
        """A new sandbox on ROOTS: (path, writable) pairs or paths (read-write).
        LIMITS: {"pids", "memory_bytes", "milli_cpus"}. SECRETS: {name: value}
        for secret kinds corrald knows ("gh", or one of its corrald.yaml): the
        values stay in corrald, the sandbox sees placeholders (corral(1),
        "--secret"); a framework reads them from where it keeps them."""
        req = {"roots": [{"path": r, "writable": True} if isinstance(r, str)
                         else {"path": r[0], "writable": bool(r[1])} for r in roots],
               "profile": profile or "", "policy": policy or "", "name": name or "",
               "session_id": session_id or "", "agent": agent or "",
               "grants": list(grants or []), "env": dict(env or {}),
               "labels": dict(labels or {}), "cwd": cwd or "", "run_as": run_as or "",
               "secrets": [{"name": k, "value": v.encode() if isinstance(v, str) else bytes(v)}
                           for k, v in (secrets or {}).items()]}
        for key, value in (limits or {}).items():
            if key not in ("pids", "memory_bytes", "milli_cpus"):
                raise KeyError("no limit %s (pids, memory_bytes, milli_cpus)" % key)
            req[key] = int(value)
        return Sandbox(self, self._call("sandbox_create", req, "sandbox"))

    def get(self, name):
        return Sandbox(self, self._call("sandbox_get", {"name": name}, "sandbox"))

    def list(self, selector=None):
        reply = self._call("sandbox_list", {"selector": dict(selector or {})}, "sandbox_list")
        return [Sandbox(self, info) for info in reply["sandboxes"]]

    def status(self):
        return self._call("status", {}, "status")


class Sandbox:
    def __init__(self, client, info):
        self.client = client
        self.info = info
        self.name = info["name"]

    def __repr__(self):
        return "<corral.Sandbox %s>" % self.name

    def describe(self):
        """The sandbox now, as the object `corral sandbox get --json` prints."""
        self.info = self.client._call("sandbox_get", {"name": self.name}, "sandbox")
        return describe(self.info)

    # --- runs

    def run(self, command, id=None, timeout=None, shell=None):
        """COMMAND in the persistent shell SHELL ("main"): {"id",
        "exit_code", "output", "cwd", "truncated", "signal", "timed_out",
        "state_saved", "respawned"}. A cut connection is resumed; the same ID
        again (from here or another process) returns that run's result and
        never runs it twice."""
        run_id = id or "py-" + uuid.uuid4().hex
        start = {"sandbox": self.name, "shell": shell or "", "command": command,
                 "timeout_seconds": int(timeout or 0), "request_id": run_id}
        chunks = {}
        result = self._run_stream("run_start", start, chunks, first=True)
        deadline = time.monotonic() + RESUME_SECONDS
        while result is None:
            if time.monotonic() > deadline:
                raise Unavailable("unavailable", "run %s: no result within %d s of a cut "
                                  "connection" % (run_id, RESUME_SECONDS))
            time.sleep(RESUME_PAUSE_SECONDS)
            resume = {"sandbox": self.name, "request_id": run_id,
                      "from_offset": _contiguous_end(chunks)}
            result = self._run_stream("run_resume", resume, chunks)
        out = b"".join(chunks[o] for o in sorted(chunks))
        return dict(result, id=run_id, output=out.decode("utf-8", "replace"))

    def _run_stream(self, member, value, chunks, first=False):
        """A run's frames into CHUNKS (offset: bytes); its result, or None
        when the connection was cut before it. FIRST: a daemon that cannot
        be reached at all is an error at once, not a cut to resume."""
        try:
            call = _Call(self.client.socket, member, value)
        except Unavailable:
            if first:
                raise
            return None
        try:
            while True:
                r = call.next()
                if r is None:
                    return None
                if "error" in r:
                    raise from_wire(r["error"])
                event = r.get("run_event", {})
                if "output" in event:
                    chunks[event["output"]["offset"]] = event["output"]["data"]
                elif "result" in event:
                    return event["result"]
        except (OSError, _wire.WireError):
            return None
        finally:
            call.close()

    def follow(self, id, from_offset=0):
        """Run ID's output as it comes: {"offset", "data"} dicts, then
        {"result": ...} last."""
        call = _Call(self.client.socket, "run_resume",
                     {"sandbox": self.name, "request_id": id, "from_offset": from_offset})
        try:
            while True:
                r = call.next()
                if r is None:
                    raise Unavailable("unavailable", "run %s: the stream ended before its "
                                      "result" % id)
                if "error" in r:
                    raise from_wire(r["error"])
                event = r.get("run_event", {})
                if "output" in event:
                    yield event["output"]
                elif "result" in event:
                    yield {"result": event["result"]}
                    return
        finally:
            call.close()

    def runs(self):
        return self.client._call("run_list", {"sandbox": self.name}, "run_list")["runs"]

    def interrupt(self, id):
        self.client._call("run_interrupt", {"sandbox": self.name, "request_id": id}, "ok")

    def ack(self, id):
        self.client._call("run_ack", {"sandbox": self.name, "request_id": id}, "ok")

    # --- exec

    def exec(self, argv, stdin=b"", timeout=None, workdir=None, env=None):
        """ARGV (a list, no shell) with STDIN: {"exit_code", "stdout", "stderr"}
        (bytes), "timed_out" (TIMEOUT ended it), "ended_by" (what ended it
        when not itself: "timeout", "memory_limit", "pids_limit"; "" else)."""
        start = {"sandbox_id": self.name, "command": list(argv), "workdir": workdir or "",
                 "environment": dict(env or {}), "timeout_seconds": int(timeout or 0),
                 "stdin": stdin.encode() if isinstance(stdin, str) else bytes(stdin)}
        call = _Call(self.client.socket, "exec_start", start)
        out = {"stdout": bytearray(), "stderr": bytearray()}
        try:
            # An empty stdin frame ends the command's stdin.
            call.send(_wire.encode("ExecSandboxInput", {"stdin": b""}, keep=("stdin",)))
            while True:
                ev = call.next("ExecSandboxEvent")
                if ev is None:
                    raise Unavailable("unavailable", "the exec stream ended without an exit")
                if "error" in ev:
                    raise from_wire(ev["error"])
                for stream in ("stdout", "stderr"):
                    if stream in ev:
                        out[stream] += ev[stream]["data"]
                if "exit" in ev:
                    return {"exit_code": ev["exit"]["exit_code"],
                            "timed_out": ev["exit"]["timed_out"],
                            "ended_by": ev["exit"].get("ended_by", ""),
                            "stdout": bytes(out["stdout"]), "stderr": bytes(out["stderr"])}
        finally:
            call.close()

    # --- files, under the write guard

    def write_file(self, path, content):
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        return self.client._call("fs_write", {"sandbox": self.name, "path": path,
                                              "content": data}, "fs_write")

    def read_file(self, path, binary=False):
        r = self.client._call("fs_read", {"sandbox": self.name, "path": path}, "fs_read")
        return r["content"] if binary else r["content"].decode("utf-8", "replace")

    def list_files(self, path="."):
        return self.client._call("fs_list", {"sandbox": self.name, "path": path},
                                 "fs_list")["entries"]

    def grep(self, pattern, path=""):
        return self.client._call("fs_grep", {"sandbox": self.name, "pattern": pattern,
                                             "path": path}, "fs_grep")

    # --- policy

    def denials(self, since=None):
        """What the sandbox was refused (since SINCE: a datetime or seconds
        since the epoch), as `corral denials --json` prints it."""
        r = self.client._call("denials", {"sandbox": self.name, "since_us": _since_us(since)},
                              "denials")
        return [{"ts": _rfc3339(d["ts_us"]), "host": d["host"], "port": d["port"],
                 "binary": _opt(d["binary"]), "pid": d["pid"] if d["pid"] > 0 else None,
                 "reason": d["reason"], "count": d["count"]} for d in r["denials"]]

    def policy(self):
        return self.client._call("policy_get", {"sandbox": self.name}, "policy")["yaml"]

    def update_policy(self, add_endpoints=(), binary=None, remove_endpoints=(), rule=None,
                      close_revoked=False):
        """Adds ADD_ENDPOINTS ("host:port") for BINARY (a path, a list, or
        None: any), removes REMOVE_ENDPOINTS; the new effective policy."""
        binaries = [] if binary is None else [binary] if isinstance(binary, str) else list(binary)
        return self.client._call("policy_update", {
            "sandbox": self.name, "rule": rule or "", "add_endpoints": list(add_endpoints),
            "binaries": binaries, "remove_endpoints": list(remove_endpoints),
            "close_revoked": close_revoked}, "policy")["yaml"]

    def delete(self):
        return self.client._call("sandbox_delete", {"names": [self.name]},
                                 "sandbox_delete")["deleted"]


def _contiguous_end(chunks):
    """The offset after the output held without a gap from 0."""
    end = 0
    for offset in sorted(chunks):
        if offset > end:
            break
        end = max(end, offset + len(chunks[offset]))
    return end


def describe(info):
    """SandboxInfo INFO as `corral sandbox get --json` prints it."""
    runner, network = info.get("runner", {}), info.get("network", {})
    return {
        "name": info["name"], "state": _opt(info["state"]),
        "enforcement": _opt(info["enforcement"]), "missing_layers": info["missing_layers"],
        "profile": _opt(info["profile"]),
        "roots": [{"path": r["path"], "writable": r["writable"]} for r in info["roots"]],
        "mounts": [{"type": m["type"] or "bind", "source": m["source"], "target": m["target"],
                    "read_only": m["read_only"]} for m in info["mounts"]],
        "labels": info["labels"], "session_id": _opt(info["session_id"]),
        "agent": _opt(info["agent"]), "machine_id": _opt(info["machine_id"]),
        "runner": {"os": _opt(runner.get("os")), "kernel": _opt(runner.get("kernel")),
                   "landlock_abi": runner.get("landlock_abi") or None},
        "network": {k: _opt(network.get(k)) for k in ("gateway", "proxy", "dns")},
        "credentials": [{"name": c["name"], "hosts": c["hosts"], "copied": c["copied"],
                         "skipped": [{"path": s["path"], "reason": s["reason"]}
                                     for s in c["skipped"]]} for c in info["credentials"]],
        "created_at": _rfc3339(info["created_at_us"]), "run_as": _opt(info["run_as"]),
        "cwd": _opt(info["cwd"]), "home": _opt(info["home"]),
        "limits": [{"name": lim["name"], "value": lim["value"], "source": _opt(lim["source"]),
                    "controller": _opt(lim["controller"])} for lim in info["limits"]],
        "secrets": [{"name": x["name"], "hosts": x["hosts"], "env": x["env"], "files": x["files"]}
                    for x in info.get("secrets", [])],
    }
