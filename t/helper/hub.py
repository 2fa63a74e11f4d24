#!/usr/bin/env python3
"""A stand-in for the Hugging Face hub, for tf-pull's tests (standard library only).

    hub.py --repo ORG/NAME[@BRANCH]=DIR ... [--token T] [--rename OLD/NAME=ORG/NAME]
           [--fault WHAT=MODE[:COUNT]] ... [--log FILE] [--lifetime S] [--chunk-delay S]

Binds 127.0.0.1 on a free port, prints the port on the first line of stdout
and serves until --lifetime seconds have passed (it always exits). It speaks
what tf-pull uses:

    GET  /api/models/{repo}/revision/{rev}[?blobs=true]   sha + siblings (size, blobId, lfs)
    HEAD/GET /{repo}/resolve/{rev}/{path}                  X-Repo-Commit, ETag, and for
                                                           LFS files a 302 to the CDN
                                                           with X-Linked-Etag, X-Linked-Size
    HEAD/GET /_lfs/{sha256}                                the "CDN", on a second port (another
                                                           origin): content, Range -> 206

A repository's files are those under DIR. *.safetensors files and files of
10 MiB or more are LFS files (etag = sha256); the others are plain git files
(etag = git blob sha1). The commit is a hash of the file list. With --token,
the API and resolve endpoints answer 401 unless the request carries
"Authorization: Bearer T". A renamed repository answers with relative 307
redirects to its new name. The CDN needs no token.

Faults (WHAT is a file's path in the repository, or "api"), each firing COUNT
times (default: always):
    500      HTTP 500                     404     HTTP 404
    get500   GET of the content: HTTP 500 (HEAD still answers)
    cut      GET: half the body, then the connection is closed (Content-Length is whole)
    short    GET: Content-Length and body are half of what was asked
    badsha   GET: one byte of the body is changed
    norange  GET: the Range header is ignored (200, whole body)
    commit   HEAD: X-Repo-Commit names another commit
    hang     HEAD: answers after 30 s
    stall    GET: sends half the body, waits 30 s, sends the rest
    trickle  GET (and api): the body a byte every half second
    unsafe   api: the file list holds "../evil.json"
    badjson  api: the answer is not JSON

Every request is logged to --log as one tab-separated line:
    METHOD  PATH  RANGE-or--  STATUS  auth|noauth
"""
import argparse
import hashlib
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LFS_MIN = 10 << 20
CHUNK = 64 << 10


def git_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class File:
    def __init__(self, path, data):
        self.path = path
        self.data = data
        self.sha256 = hashlib.sha256(data).hexdigest()
        self.git = git_sha1(data)
        self.lfs = path.endswith(".safetensors") or len(data) >= LFS_MIN
        pointer = ("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n"
                   % (self.sha256, len(data))).encode()
        self.pointer = pointer
        self.pointer_git = git_sha1(pointer)


class Revision:
    def __init__(self, folder):
        self.files = {}
        for root, dirs, names in os.walk(folder):
            dirs.sort()
            for n in sorted(names):
                full = os.path.join(root, n)
                rel = os.path.relpath(full, folder).replace(os.sep, "/")
                with open(full, "rb") as f:
                    self.files[rel] = File(rel, f.read())
        listing = "".join("%s %s\n" % (p, f.sha256) for p, f in sorted(self.files.items()))
        self.commit = hashlib.sha1(listing.encode()).hexdigest()


class Hub:
    def __init__(self, args):
        self.repos = {}          # repo -> {branch: Revision}
        for spec in args.repo:
            name, folder = spec.split("=", 1)
            repo, _, branch = name.partition("@")
            self.repos.setdefault(repo, {})[branch or "main"] = Revision(folder)
        self.renamed = dict(r.split("=", 1) for r in args.rename)
        self.token = args.token
        self.faults = {}         # what -> [mode, remaining or None]
        for f in args.fault:
            what, mode = f.rsplit("=", 1)
            mode, _, count = mode.partition(":")
            self.faults.setdefault(what, []).append([mode, int(count) if count else None])
        self.lock = threading.Lock()
        self.log = open(args.log, "a") if args.log else None
        self.delay = args.chunk_delay
        self.cdn_port = None
        self.by_sha = {}
        for revs in self.repos.values():
            for rev in revs.values():
                for f in rev.files.values():
                    self.by_sha[f.sha256] = f

    def fault(self, what, modes):
        """the first of modes that fires for what, counting it down"""
        with self.lock:
            for entry in self.faults.get(what, []):
                if entry[0] in modes and (entry[1] is None or entry[1] > 0):
                    if entry[1] is not None:
                        entry[1] -= 1
                    return entry[0]
        return None

    def revision(self, repo, rev):
        revs = self.repos.get(repo)
        if revs is None:
            return None
        if rev in revs:
            return revs[rev]
        for r in revs.values():
            if r.commit == rev:
                return r
        return None

    def write_log(self, line):
        if self.log:
            with self.lock:
                self.log.write(line + "\n")
                self.log.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server_version = "hub.py"

    def log_message(self, *a):
        pass

    def reply(self, status, headers=(), body=b""):
        self.status = status
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if not any(k.lower() == "content-length" for k, _ in headers):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def drip(self, body):
        """the body a byte every half second, until the client gives up"""
        try:
            for i in range(len(body)):
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                time.sleep(0.5)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def trickle(self, headers, body):
        self.status = 200
        self.send_response(200)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.drip(body)

    def error(self, status, code, message):
        self.reply(status, [("X-Error-Code", code), ("X-Error-Message", message),
                            ("Content-Type", "application/json")],
                   json.dumps({"error": message}).encode())

    def authorized(self):
        hub = self.server.hub
        return not hub.token or self.headers.get("Authorization") == "Bearer " + hub.token

    def do_GET(self):
        self.status = 0
        try:
            self.route()
        finally:
            hub = self.server.hub
            hub.write_log("\t".join([self.command, self.path, self.headers.get("Range") or "-",
                                     str(self.status),
                                     "auth" if self.headers.get("Authorization") else "noauth"]))

    do_HEAD = do_GET

    def route(self):
        hub = self.server.hub
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        if len(parts) >= 2 and parts[0] == "_lfs":
            f = hub.by_sha.get(parts[1])
            if not f:
                return self.error(404, "EntryNotFound", "no such object")
            return self.content(f, [("ETag", '"%s"' % f.sha256)])
        if len(parts) >= 6 and parts[0] == "api" and parts[1] == "models" and parts[4] == "revision":
            repo, rev = parts[2] + "/" + parts[3], "/".join(parts[5:])
            return self.api(repo, rev, "blobs=true" in url.query)
        if len(parts) >= 5 and parts[2] == "resolve":
            repo = parts[0] + "/" + parts[1]
            # the revision may hold slashes only when escaped; split on the raw path
            raw = url.path.split("/")
            rev, path = urllib.parse.unquote(raw[4]), urllib.parse.unquote("/".join(raw[5:]))
            return self.resolve(repo, rev, path)
        return self.error(404, "NotFound", "no such endpoint")

    def moved(self, repo):
        new = self.server.hub.renamed.get(repo)
        if new:
            loc = self.path.replace("/" + repo + "/", "/" + new + "/", 1)
            self.reply(307, [("Location", loc)])
            return True
        return False

    def api(self, repo, rev, blobs):
        hub = self.server.hub
        if self.moved(repo):
            return
        if not self.authorized():
            return self.error(401, "GatedRepo", "Invalid credentials")
        mode = hub.fault("api", ("500", "404", "unsafe", "badjson", "trickle"))
        if mode == "500":
            return self.error(500, "InternalError", "boom")
        if mode == "404" or repo not in hub.repos:
            return self.error(404, "RepoNotFound", "Repository not found")
        r = hub.revision(repo, rev)
        if r is None:
            return self.error(404, "RevisionNotFound", "Invalid rev id: " + rev)
        if mode == "badjson":
            return self.reply(200, [("Content-Type", "application/json")], b'{"sha": "abc", ')
        siblings = []
        for p, f in sorted(r.files.items()):
            s = {"rfilename": p}
            if blobs:
                s["size"] = len(f.data)
                s["blobId"] = f.pointer_git if f.lfs else f.git
                if f.lfs:
                    s["lfs"] = {"sha256": f.sha256, "size": len(f.data),
                                "pointerSize": len(f.pointer)}
            siblings.append(s)
        if mode == "unsafe":
            siblings.append({"rfilename": "../evil.json"})
        body = json.dumps({"id": repo, "modelId": repo, "sha": r.commit, "siblings": siblings})
        if mode == "trickle":
            return self.trickle([("Content-Type", "application/json")], body.encode())
        self.reply(200, [("Content-Type", "application/json")], body.encode())

    def resolve(self, repo, rev, path):
        hub = self.server.hub
        if self.moved(repo):
            return
        if not self.authorized():
            return self.error(401, "GatedRepo", "Invalid credentials")
        if repo not in hub.repos:
            return self.error(404, "RepoNotFound", "Repository not found")
        r = hub.revision(repo, rev)
        if r is None:
            return self.error(404, "RevisionNotFound", "Invalid rev id: " + rev)
        f = r.files.get(path)
        if f is None:
            return self.error(404, "EntryNotFound", "Entry not found")
        mode = hub.fault(path, ("500", "404", "commit", "hang") if self.command == "HEAD" else ("500", "404"))
        if mode == "hang":
            time.sleep(30)
        if mode == "500":
            return self.error(500, "InternalError", "boom")
        if mode == "404":
            return self.error(404, "EntryNotFound", "Entry not found")
        commit = "0" * 40 if mode == "commit" else r.commit
        if f.lfs:
            return self.reply(302, [("Location", "http://127.0.0.1:%d/_lfs/%s" % (hub.cdn_port, f.sha256)),
                                    ("X-Repo-Commit", commit),
                                    ("ETag", '"%s"' % f.pointer_git),
                                    ("X-Linked-Etag", '"%s"' % f.sha256),
                                    ("X-Linked-Size", str(len(f.data)))])
        return self.content(f, [("X-Repo-Commit", commit), ("ETag", '"%s"' % f.git)])

    def content(self, f, headers):
        hub = self.server.hub
        data = f.data
        start, end = 0, len(data)
        mode = None
        if self.command == "GET":
            mode = hub.fault(f.path, ("get500", "cut", "short", "badsha", "norange", "stall", "trickle"))
        if mode == "get500":
            return self.error(500, "InternalError", "boom")
        rng = self.headers.get("Range")
        status = 200
        if rng and mode != "norange":
            try:
                unit, _, spec = rng.partition("=")
                a, _, b = spec.partition("-")
                start = int(a)
                end = int(b) + 1 if b else len(data)
                if unit != "bytes" or start >= len(data) or end <= start:
                    raise ValueError
                end = min(end, len(data))
            except ValueError:
                return self.reply(416, [("Content-Range", "bytes */%d" % len(data))])
            status = 206
            headers = headers + [("Content-Range", "bytes %d-%d/%d" % (start, end - 1, len(data)))]
        body = data[start:end]
        if mode == "badsha" and body:
            i = len(body) // 2
            body = body[:i] + bytes([body[i] ^ 0xFF]) + body[i + 1:]
        if mode == "short":
            body = body[:len(body) // 2]
        self.status = status
        self.send_response(status)
        for k, v in headers + [("Accept-Ranges", "bytes"), ("Content-Type", "application/octet-stream")]:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        if mode == "cut":
            body = body[:len(body) // 2]
        try:
            if mode == "trickle":
                return self.drip(body)
            for i in range(0, len(body), CHUNK):
                if mode == "stall" and i >= len(body) // 2:
                    self.wfile.flush()
                    time.sleep(30)
                    mode = None
                self.wfile.write(body[i:i + CHUNK])
                if hub.delay:
                    time.sleep(hub.delay)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


def main():
    ap = argparse.ArgumentParser(description="stand-in hub for tf-pull's tests")
    ap.add_argument("--repo", action="append", default=[])
    ap.add_argument("--rename", action="append", default=[])
    ap.add_argument("--fault", action="append", default=[])
    ap.add_argument("--token")
    ap.add_argument("--log")
    ap.add_argument("--lifetime", type=float, default=120)
    ap.add_argument("--chunk-delay", type=float, default=0)
    args = ap.parse_args()

    # whatever happens to the test, the server goes away
    t = threading.Timer(args.lifetime, os._exit, [0])
    t.daemon = True
    t.start()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.hub = Hub(args)
    # LFS content comes from another origin, as the hub's CDN is another host
    cdn = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    cdn.daemon_threads = True
    cdn.hub = srv.hub
    srv.hub.cdn_port = cdn.server_address[1]
    threading.Thread(target=cdn.serve_forever, daemon=True).start()
    print(srv.server_address[1], flush=True)
    sys.stdout.close()
    srv.serve_forever()


if __name__ == "__main__":
    main()
