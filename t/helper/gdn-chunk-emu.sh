#!/bin/sh
# gdn-chunk-emu.sh: builds t/helper/gdn-chunk-emu.cc around the kernel of
# kernels/gdn_chunk.cu (its includes and launchers cut, its dynamic shared
# memory a pointer the emulator sets) and runs it; TAP on stdout.
#
#   t/helper/gdn-chunk-emu.sh
#   CXXFLAGS='-O1 -g -fsanitize=address,undefined' t/helper/gdn-chunk-emu.sh
#
# The second form also checks every shared and global access against the
# exact sizes (ASan warns once that it does not know swapcontext well).
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sed -e '/^#include "/d' -e 's/extern __shared__ uint4 smem\[\];/uint4 *smem = emu_smem;/' \
	"$top/kernels/gdn_chunk.cu" | awk '/^static int launch\(/ { exit } { print }' | sed '$d' \
	>"$tmp/gdn_chunk_host.inc"
${CXX:-c++} -std=c++17 ${CXXFLAGS:--O2} -w -I"$tmp" -o "$tmp/gdn-chunk-emu" "$top/t/helper/gdn-chunk-emu.cc"
ASAN_OPTIONS=detect_stack_use_after_return=0 "$tmp/gdn-chunk-emu"
