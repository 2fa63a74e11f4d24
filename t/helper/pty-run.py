#!/usr/bin/env python3
"""pty-run.py FILE CMD [ARG...]: runs CMD with its stderr on a pseudo-terminal,
stdout and stdin inherited, and writes what CMD drew on the terminal to FILE.
Exits with CMD's status. Standard library only."""
import os
import pty
import subprocess
import sys


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stderr=slave)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:         # EIO: the terminal's other side is closed
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    with open(out, "wb") as f:
        f.write(got)
    sys.exit(p.wait())


if __name__ == "__main__":
    main()
