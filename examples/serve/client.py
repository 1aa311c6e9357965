#!/usr/bin/env python3
"""A client of dlsched's decision service (dlsched serve), standard library only.

A scheduler written in Python creates a named scheduler once, then each round
posts a snapshot of its cluster and jobs and carries out the changes it gets
back: stop (checkpoint, then evict), migrate, resize, start, keep.

    dlsched serve --state /var/lib/dlsched &
    python3 client.py --url http://127.0.0.1:8080 --policy gavel.las snapshot.json
"""

import argparse
import json
import sys
import urllib.error
import urllib.request


class Error(Exception):
    """A request the service refused, with its status and message."""

    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status = status


class Client:
    def __init__(self, url, timeout=120):
        self.url = url.rstrip("/")
        self.timeout = timeout

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                message = json.loads(raw)["error"]
            except (ValueError, KeyError):
                message = raw.decode(errors="replace")
            raise Error(e.code, message) from None
        return json.loads(raw) if raw else None

    def scheduler(self, name, policy, config=None, strict=False):
        """Creates the scheduler, or confirms it runs this policy."""
        spec = {"policy": policy, "config": config or {}, "strict": strict}
        return self._call("PUT", f"/v1/schedulers/{name}", spec)

    def allocate(self, name, snapshot):
        """Decides one round: the decision, with its "changes"."""
        return self._call("POST", f"/v1/allocate?scheduler={name}", snapshot)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--scheduler", default="default")
    ap.add_argument("--policy", default="gavel.las")
    ap.add_argument("snapshot", help="a snapshot in dlsched's JSON schema (dlsched example prints one)")
    args = ap.parse_args()
    with open(args.snapshot) as f:
        snapshot = json.load(f)
    c = Client(args.url)
    try:
        c.scheduler(args.scheduler, args.policy)
        decision = c.allocate(args.scheduler, snapshot)
    except Error as e:
        sys.exit(f"dlsched: {e}")
    for change in decision["changes"]:
        where = ", ".join(f"{a['server']}:{a['gpus']}" for a in change.get("to", []))
        print(change["kind"], change["job"], where)
    for job, why in sorted(decision.get("unscheduled", {}).items()):
        print("left out", job, why)


if __name__ == "__main__":
    main()
