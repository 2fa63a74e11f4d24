#!/bin/sh
# Every input of the fuzz corpus (t/fuzz/corpus: the seeds, and each input
# that once crashed a reader) read once more by its harness: an error or a
# sound reading, never a crash (under make check, never a sanitizer report).
. "$(dirname "$0")/lib-tf.sh"

FUZZ=$TF_ROOT/t/fuzz
export TF_FUZZ_DATA=$DATA
for src in $FUZZ/fuzz-*.c; do
	h=$(basename $src .c | sed 's/^fuzz-//')
	test_expect "$h: every corpus input is read without a crash" "
		$FUZZ/replay-$h $FUZZ/corpus/$h >out 2>err && grep -Eq '^[1-9][0-9]* inputs read' out
	"
done

done_testing
