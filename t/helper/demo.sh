#!/bin/sh
# demo.sh: a small model writes through a pipe (what `make demo` runs).
#
# Text goes in, text comes out, as it is generated:
#
#   printf 'ROMEO:\nI will' | tf-tok encode M | tf-run M -n 64 --stream | tf-tok decode M
#
# first with the bf16 model trained on Tiny Shakespeare, then with its
# 1-bit twin. Both decode greedily, so the text is the same on every run.
cd "$(dirname "$0")/../.." || exit 1
PATH=$PWD/bin:$PATH

for tool in tf-tok tf-run; do
	if [ ! -x "bin/$tool" ]; then
		echo "demo.sh: bin/$tool is not built (run make)" >&2
		exit 1
	fi
done

prompt='ROMEO:
I will'
for m in t/data/shakespeare-q35 t/data/shakespeare-q35-1bit; do
	printf '\n=== %s, greedy, 64 tokens ===\n\n' "${m##*/}"
	printf '%s' "$prompt"
	printf '%s' "$prompt" | tf-tok encode "$m" | tf-run "$m" -n 64 --stream | tf-tok decode "$m" || exit 1
	printf '\n'
done
