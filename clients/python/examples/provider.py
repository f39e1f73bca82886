#!/usr/bin/python3
"""An agent framework's sandbox provider on corral, the thin layer the
client is shaped for: preflight, create, describe, run, close, and
refusals said so that a person can act on them.

    provider.py ROOT [COMMAND...]     (default command: git status)

It runs COMMAND in a strict sandbox on ROOT and prints the result; when a
connection was refused it says which host and how to allow it."""

import sys

import corral


class CorralProvider:
    def __init__(self, socket=None):
        self.client = corral.connect(socket)
        self.sandbox = None

    def preflight(self):
        """Is corrald there, and does it enforce every layer? A one-line
        answer a person can act on, or None when all is well."""
        try:
            status = self.client.status()
        except corral.Unavailable as e:
            return "corrald is not reachable (%s): start it, or set CORRAL_SOCKET" % e.message
        missing = [line for line in status["layers"] if "missing" in line or "unavailable" in line]
        return "corrald %s lacks: %s" % (status["version"], "; ".join(missing)) if missing else None

    def create(self, root, profile="strict"):
        self.sandbox = self.client.create(roots=[(root, True)], profile=profile,
                                          session_id="example", agent="provider")
        return self.sandbox.describe()

    def run(self, command, timeout=None):
        r = self.sandbox.run(command, timeout=timeout)
        refused = [d for d in self.sandbox.denials() if d["reason"]]
        return r, refused

    def close(self):
        if self.sandbox is not None:
            self.sandbox.delete()
            self.sandbox = None


def explain(denial):
    """A refusal as a sentence with the command that would allow it."""
    who = " by %s" % denial["binary"] if denial["binary"] else ""
    return ("refused: %s:%d%s (%s); to allow it: corral policy update SANDBOX "
            "--add-endpoint %s:%d" % (denial["host"], denial["port"], who, denial["reason"],
                                      denial["host"], denial["port"]))


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    provider = CorralProvider()
    problem = provider.preflight()
    if problem:
        print(problem, file=sys.stderr)
        return 69
    try:
        info = provider.create(argv[1])
        print("sandbox %s (%s, %s)" % (info["name"], info["profile"], info["enforcement"]))
        result, refused = provider.run(" ".join(argv[2:]) or "git status")
        sys.stdout.write(result["output"])
        for d in refused:
            print(explain(d), file=sys.stderr)
        return result["exit_code"]
    except corral.Refused as e:
        print("corral refused it: %s" % e.reason, file=sys.stderr)
        return 77
    except corral.Error as e:
        print("corral: %s" % e, file=sys.stderr)
        return 1
    finally:
        provider.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
