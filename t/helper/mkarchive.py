#!/usr/bin/env python3
"""Makes hostile archives for tf-pull's tests (standard library only).

    mkarchive.py OUT KIND [TARGET]

Each archive first holds a sound file, good.json, so that a refusal has to
undo work already done, then the hostile member:

    dotdot        a file named ../x (tar)          abs        a file named TARGET (tar)
    deepdotdot    a file named a/../../x           backslash  a file named ..\\x
    symroot       a symlink to /                   symup      a symlink to ../../x
    symabs        a symlink to TARGET              dangling   a symlink to missing.json
    hardup        a hard link to ../../etc/passwd  hardabs    a hard link to TARGET
    chardev       a character device               fifo       a FIFO
    dup           good.json a second time
    zipdotdot     a zip member ../x                zipabs     a zip member TARGET
    zipsym        a zip symlink to TARGET
    ziplie        a zip member whose headers say 4 GiB, holding 200 bytes
    tarhuge       a tar member whose header says 2^40 bytes, holding 512
    cpiohard      GNU cpio -H newc's hard-linked pair a.json, b.json: the
                  data on the last of them (not hostile: both must hold it)
"""
import io
import stat
import sys
import tarfile
import zipfile

GOOD = b'{"good": true}\n'


def tar(out, member):
    with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as t:
        g = tarfile.TarInfo("good.json")
        g.size = len(GOOD)
        t.addfile(g, io.BytesIO(GOOD))
        data = member.pop("data", None)
        m = tarfile.TarInfo(member.pop("name"))
        for k, v in member.items():
            setattr(m, k, v)
        if data is not None:
            m.size = len(data)
            t.addfile(m, io.BytesIO(data))
        else:
            t.addfile(m)


def zipped(out, name, data, link=False):
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("good.json", GOOD)
        info = zipfile.ZipInfo(name)
        info.create_system = 3          # unix, so that the mode bits count
        info.external_attr = ((stat.S_IFLNK | 0o777) if link else (stat.S_IFREG | 0o644)) << 16
        z.writestr(info, data)


def ziplie(out):
    import struct
    zipped(out, "big.bin", b"z" * 200)
    raw = bytearray(open(out, "rb").read())
    # the uncompressed size of big.bin, in its local header and in the
    # central directory, becomes 0xffffff00
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = raw.rfind(sig)
        raw[at + off:at + off + 4] = struct.pack("<I", 0xFFFFFF00)
    open(out, "wb").write(raw)


def tarhuge(out):
    with open(out, "wb") as f:
        g = tarfile.TarInfo("good.json")
        g.size = len(GOOD)
        f.write(g.tobuf(tarfile.GNU_FORMAT) + GOOD + b"\0" * (512 - len(GOOD)))
        h = tarfile.TarInfo("huge.bin")
        h.size = 1 << 40
        f.write(h.tobuf(tarfile.GNU_FORMAT) + b"h" * 512)


def cpiohard(out):
    def entry(name, ino, nlink, data, mode=0o100644):
        name = name.encode() + b"\0"
        fields = [ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name), 0]
        h = b"070701" + b"".join(b"%08X" % v for v in fields) + name
        h += b"\0" * (-len(h) % 4)
        return h + data + b"\0" * (-len(data) % 4)
    body = entry("a.json", 7, 2, b"") + entry("b.json", 7, 2, GOOD) + entry("TRAILER!!!", 0, 1, b"", 0)
    open(out, "wb").write(body + b"\0" * (-len(body) % 512))


def main():
    out, kind = sys.argv[1], sys.argv[2]
    target = sys.argv[3] if len(sys.argv) > 3 else "/etc/passwd"
    evil = b"evil\n"
    kinds = {
        "dotdot": dict(name="../x", data=evil),
        "deepdotdot": dict(name="a/../../x", data=evil),
        "abs": dict(name=target, data=evil),
        "backslash": dict(name="..\\x", data=evil),
        "symroot": dict(name="root", type=tarfile.SYMTYPE, linkname="/"),
        "symup": dict(name="sub/up", type=tarfile.SYMTYPE, linkname="../../x"),
        "symabs": dict(name="abs.json", type=tarfile.SYMTYPE, linkname=target),
        "dangling": dict(name="alias.json", type=tarfile.SYMTYPE, linkname="missing.json"),
        "hardup": dict(name="hard.json", type=tarfile.LNKTYPE, linkname="../../etc/passwd"),
        "hardabs": dict(name="hard.json", type=tarfile.LNKTYPE, linkname=target),
        "chardev": dict(name="null", type=tarfile.CHRTYPE, devmajor=1, devminor=3),
        "fifo": dict(name="pipe", type=tarfile.FIFOTYPE),
        "dup": dict(name="good.json", data=GOOD),
    }
    if kind in kinds:
        tar(out, kinds[kind])
    elif kind == "zipdotdot":
        zipped(out, "../x", evil)
    elif kind == "zipabs":
        zipped(out, target, evil)
    elif kind == "zipsym":
        zipped(out, "link.json", target.encode(), link=True)
    elif kind == "ziplie":
        ziplie(out)
    elif kind == "tarhuge":
        tarhuge(out)
    elif kind == "cpiohard":
        cpiohard(out)
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
