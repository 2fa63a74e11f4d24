#!/bin/sh
# Where outputs go: a named output appears whole or not at all, and only a
# regular file is ever replaced. A link is written through, a device or FIFO
# written in place (never renamed over), a directory refused before any
# work; tf-pack's bundles (written out of order) go to regular files only.
# And one output line per input line: a blank line of ids still gets its line.
. "$(dirname "$0")/lib-tf.sh"

M=$DATA/tiny-q35
S=$DATA/shakespeare-q35

# devices of our own where we may make them (as root), so that a build
# without the fix replaces these and not the system's /dev/null; as
# another user the system's cannot be replaced anyway
if mknod null c 1 3 2>/dev/null && mknod full c 1 7 2>/dev/null && (: >null) 2>/dev/null; then
	NULL=$TMP/null FULL=$TMP/full
else
	NULL=/dev/null FULL=/dev/full
fi

test_expect 'tf-run -o NULL (a device) writes through and leaves the device a device' '
	tf-run -o $NULL $M $M/prompt.ids && test -c $NULL
'
test_expect 'tf-run -o FULL (a device) reports the full disk, exit 1' '
	tf-run -o $FULL $M $M/prompt.ids 2>err; test $? = 1 &&
	grep -q "^tf-run: error: .*No space left on device" err && test -c $FULL
'
test_expect 'tf-run -o LINK replaces the file the link names and keeps the link' '
	echo old >real && ln -s real link &&
	tf-run -o link $M $M/prompt.ids && test -L link && test "$(readlink link)" = real &&
	tf-run $M $M/prompt.ids >want && cmp want real && ! ls *.tmp.* 2>/dev/null
'
test_error 'tf-run -o a link to nothing is refused' tf-run "a link to nothing" \
	sh -c "ln -s nowhere dangling && tf-run -o dangling $M $M/prompt.ids"
test_expect 'tf-run -o FIFO writes into the FIFO, which stays a FIFO' '
	mkfifo fifo && { cat fifo >got & } &&
	tf-run -o fifo $M $M/prompt.ids && wait && test -p fifo &&
	tf-run $M $M/prompt.ids >want && cmp want got
'
test_expect 'tf-run -o DIR is refused before the ids are read' '
	mkdir d && echo 5 5 | tf-run -o d $M 2>err; test $? = 1 &&
	grep -q "^tf-run: error: cannot write .d.: it is a directory" err && ! ls d.tmp.* 2>/dev/null
'
test_error 'tf-pack into a FIFO is refused: a bundle is not written in order' tf-pack "not a regular file" \
	sh -c "mkfifo pf && tf-pack $M pf"
test_error 'tf-pack into a device is refused' tf-pack "not a regular file" \
	tf-pack $M $NULL
test_expect 'the device is still a character device' 'test -c $NULL'
test_error 'tf-pack into a directory is refused' tf-pack "it is a directory" \
	sh -c "mkdir pd && tf-pack $M pd"
test_expect 'tf-pack OUT through a link replaces its target' '
	: >target && ln -s target blink && tf-pack $M blink 2>/dev/null && test -L blink && test -s target
'

# blank lines: generation writes an empty line, scoring an empty record
printf 'ROMEO:\n\nJULIET:\n' | tf-tok encode -l $S >ids3
test_expect 'a blank prompt line gets an empty output line: 3 lines in, 3 out' '
	tf-run $S -n 4 ids3 >gen && test $(wc -l <gen) = 3 && test -z "$(sed -n 2p gen)" &&
	test -n "$(sed -n 3p gen)"
'
test_expect 'the lines after a blank one are what they are alone' '
	sed -n 3p ids3 | tf-run $S -n 4 >alone && sed -n 3p gen | cmp - alone
'
test_expect 'scoring: a blank line is an empty record, the next record keeps its index' '
	tf-run $S ids3 >l3 && sed -n 3p ids3 | tf-run $S >l1 &&
	tf-gate --exact l3 l3 >/dev/null && test $(wc -c <l3) -gt $(wc -c <l1)
'
test_expect 'comment lines are not sequences: no line for them' '
	printf "# a comment\n1 2\n" | tf-run $S -n 2 >c && test $(wc -l <c) = 1
'

done_testing
