/*
 * fuzz.h: what every harness in t/fuzz shares.
 *
 * A harness defines LLVMFuzzerTestOneInput and feeds the bytes to one
 * reader of libtf. Built with clang's -fsanitize=fuzzer it is a libFuzzer
 * program (make fuzz); built with replay.c instead it runs each file of
 * its corpus once (make test), so every input that once crashed stays in
 * the corpus and keeps being read.
 */
#ifndef TF_FUZZ_H
#define TF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the bytes as a file of their own (a memfd), for readers that take a path:
 * its path in path (/proc/self/fd/N), its descriptor returned, -1 on failure */
int fuzz_file(const uint8_t *data, size_t size, char path[64]);

#endif
