#!/usr/bin/env python3
"""Writes the package fuzz target's seeds to Tests/Fuzz/Corpus/package: one small program per construct, in the
format PackageFuzzEntry (Sources/InboxSystem/Files/PackageFuzzEntry.swift) reads.

    Tests/Fuzz/package-seeds.py       rewrites the seeds it names (inputs scripts/fuzz --merge added are left)
"""
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Corpus", "package")

# Operations and their arguments (after the directory byte).
MKDIR, FILE, SPARSE, SYMLINK, LINK, CANARY, FIFO, SOCKET, NEST, MANY, CHANGE = range(11)
# Names.
A, B, TXT, INDEX, DOTS, DASH, NEWLINE, INVALID, LONG, DOTDOTSPACE, SPACE, HIDDEN, NFC, NFD, DOTDOTNL, LITERAL = range(16)
# Symlink targets.
ABS_SECRET, ABS_FIFO, ABS_DIR, REL_SECRET, REL_FIFO, REL_DIR, UP, SELF, TO_A, TO_INDEX, DANGLING, PROC, TO_B, UP_A, \
    REL_INBOX = range(15)
# Changes during the walk.
ADD, REMOVE, TO_SYMLINK, ADD_FIFO, RENAME, ADD_DIR, SWAP, GROW = range(8)

# Header: flags (1 by hand, 2 no copy), depth 1 + b % 8, entries 1 + b % 64, size index (nil 0 1 16 4096 65536 1M nil).
ROOMY = [0, 7, 63, 6]
BYHAND = [1, 7, 63, 6]


def literal(text):
    data = text if isinstance(text, bytes) else text.encode()
    return [LITERAL, len(data)] + list(data)


def file(directory, name, content=b"x"):
    return [FILE, directory] + (name if isinstance(name, list) else [name]) + [len(content)] + list(content)


SEEDS = {
    "empty": ROOMY,
    "rtfd": ROOMY + file(0, TXT, b"{\\rtf1 hi}") + file(0, literal("image.png"), b"PNG") + file(0, A, b""),
    "iwork": ROOMY + [MKDIR, 0, INDEX] + file(1, literal("Document.iwa"), b"doc") + [MKDIR, 0, literal("Data")]
             + file(2, A, b"aa") + file(0, literal("preview.jpg"), b"jpg"),
    "iwork-by-hand": BYHAND + [MKDIR, 0, INDEX] + file(1, literal("Document.iwa"), b"doc") + file(0, B, b"bb"),
    "names-strange": ROOMY + file(0, NEWLINE) + file(0, INVALID) + file(0, LONG) + file(0, DOTDOTSPACE)
                     + file(0, SPACE) + file(0, HIDDEN) + file(0, DASH) + file(0, DOTS) + file(0, DOTDOTNL),
    "names-unicode": ROOMY + file(0, NFC, b"nfc") + file(0, NFD, b"nfd") + file(0, literal(b"\xc3"), b"half"),
    "names-literal": ROOMY + file(0, literal(b"--help"), b"") + file(0, literal(b"\x01\x7f\x1b[0m"), b"esc")
                     + [MKDIR, 0, literal(b"...."), MKDIR, 1, LONG] + file(2, LONG, b"deep long"),
    "symlink-absolute": ROOMY + file(0, TXT) + [SYMLINK, 0, A, ABS_SECRET],
    "symlink-absolute-fifo": ROOMY + [SYMLINK, 0, A, ABS_FIFO],
    "symlink-absolute-dir": ROOMY + [SYMLINK, 0, B, ABS_DIR],
    "symlink-relative-out": ROOMY + [MKDIR, 0, literal("Data"), SYMLINK, 1, A, REL_SECRET],
    "symlink-relative-fifo": ROOMY + [SYMLINK, 0, A, REL_FIFO],
    "symlink-relative-dir": ROOMY + [MKDIR, 0, B, SYMLINK, 1, A, REL_DIR],
    "symlink-dotdot": ROOMY + [SYMLINK, 0, A, UP],
    "symlink-dot": ROOMY + [SYMLINK, 0, A, SELF],
    "symlink-chain": ROOMY + [SYMLINK, 0, A, TO_B, SYMLINK, 0, B, ABS_SECRET],
    "symlink-loop": ROOMY + [SYMLINK, 0, A, TO_A],
    "symlink-to-directory-inside": ROOMY + [MKDIR, 0, INDEX, SYMLINK, 0, A, TO_INDEX],
    "symlink-dangling": ROOMY + [SYMLINK, 0, A, DANGLING],
    "symlink-proc-root": ROOMY + [SYMLINK, 0, A, PROC],
    "symlink-to-inbox": ROOMY + [SYMLINK, 0, A, REL_INBOX],
    "symlink-deep": ROOMY + [NEST, 0, 4, SYMLINK, 5, A, UP_A] + file(5, B),
    "symlink-after-files": ROOMY + file(0, A) + file(0, B) + [SYMLINK, 0, TXT, ABS_SECRET],
    "hardlink-inside": ROOMY + file(0, A, b"shared") + [LINK, 0, 0, B],
    "hardlink-across-directories": ROOMY + [MKDIR, 0, INDEX] + file(1, A, b"shared") + [LINK, 0, 0, B],
    "hardlink-canary": ROOMY + [MKDIR, 0, literal("Data"), CANARY, 1, A],
    "hardlink-canary-root": ROOMY + [CANARY, 0, TXT],
    "fifo": ROOMY + file(0, A) + [FIFO, 0, B],
    "fifo-deep": ROOMY + [NEST, 0, 2, FIFO, 3, A],
    "socket": ROOMY + [SOCKET, 0, A],
    "socket-and-fifo": ROOMY + [SOCKET, 0, B, FIFO, 0, A],
    "nest-within": [0, 7, 63, 6] + [NEST, 0, 7] + file(8, A, b"bottom"),
    "nest-too-deep": [0, 3, 63, 6] + [NEST, 0, 4] + file(5, A),
    "nest-depth-one": [0, 0, 63, 6] + [MKDIR, 0, A] + file(1, B, b"ok at depth 2"),
    "nest-depth-one-over": [0, 0, 63, 6] + [MKDIR, 0, A, MKDIR, 1, B],
    "many-within": [0, 7, 63, 6] + [MANY, 0, 60],
    "many-over": [0, 7, 15, 6] + [MANY, 0, 17],
    "many-exact": [0, 7, 15, 6] + [MANY, 0, 16],
    "many-over-in-subdirectory": [0, 7, 15, 6] + [MKDIR, 0, A, MANY, 1, 15],
    "sparse-small": ROOMY + [SPARSE, 0, A, 10],
    "sparse-over": [0, 7, 63, 4] + [SPARSE, 0, A, 13],
    "sparse-huge": [0, 7, 63, 6] + [SPARSE, 0, A, 62, SPARSE, 0, B, 62],
    "sparse-huge-unbounded": [0, 7, 63, 0] + [SPARSE, 0, A, 62, SPARSE, 0, B, 62, SPARSE, 0, TXT, 61],
    "size-zero-limit": [0, 7, 63, 1] + file(0, A, b"") + file(0, B, b"1"),
    "size-exact": [0, 7, 63, 3] + file(0, A, b"12345678") + file(0, B, b"abcdefgh"),
    "no-copy-by-hand": [3, 7, 63, 6] + file(0, A) + [MKDIR, 0, B] + file(1, TXT),
    "change-add": ROOMY + file(0, A) + file(0, B) + [CHANGE, 0, 0, ADD, TXT],
    "change-remove": ROOMY + file(0, A) + file(0, B) + [CHANGE, 0, 0, REMOVE, B],
    "change-remove-visited": ROOMY + file(0, A) + file(0, B) + [CHANGE, 0, 1, REMOVE, A],
    "change-to-symlink": ROOMY + file(0, A) + file(0, B) + [CHANGE, 0, 0, TO_SYMLINK, B],
    "change-fifo": ROOMY + [MKDIR, 0, INDEX] + file(1, A) + [CHANGE, 1, 0, ADD_FIFO, B],
    "change-fifo-unvisited": ROOMY + file(0, A) + [MKDIR, 0, INDEX] + [CHANGE, 2, 0, ADD_FIFO, B],
    "change-rename": ROOMY + file(0, A) + file(0, B) + [CHANGE, 0, 0, RENAME, B],
    "change-dir": ROOMY + file(0, A) + [CHANGE, 0, 0, ADD_DIR, B],
    "change-swap": ROOMY + file(0, A) + file(0, B) + [CHANGE, 0, 0, SWAP, B],
    "change-swap-visited": ROOMY + file(0, A) + file(0, B) + [CHANGE, 0, 1, SWAP, A],
    "change-grow": ROOMY + file(0, A) + file(0, B) + [CHANGE, 0, 0, GROW, A],
    "change-by-hand": BYHAND + file(0, A) + [MKDIR, 0, B] + file(1, A) + [CHANGE, 1, 1, ADD, TXT],
    "mixed": ROOMY + [MKDIR, 0, INDEX, MKDIR, 1, A] + file(2, B, b"x" * 40) + [NEST, 1, 3] + file(0, NEWLINE)
             + [SPARSE, 1, TXT, 12, MANY, 2, 5],
}


def flat(program):
    for item in program:
        if isinstance(item, list):
            yield from flat(item)
        else:
            yield item


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, program in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(bytes(flat(program)))
    print(f"package-seeds: {len(SEEDS)} seeds in {os.path.relpath(OUT)}")


if __name__ == "__main__":
    main()
