/*
 * err.h: how libtf reports failure.
 *
 * Library code never exits: a function that fails records one message with
 * tf_err() and returns -1 (or NULL). Programs print it with tf_die_err(),
 * which writes "tf-X: error: MESSAGE" and exits 1 (or, for a write to a
 * closed pipe, ends quietly by SIGPIPE as cat does). A format that ends in ':'
 * gets ": strerror(errno)" appended, as sbase's eprintf does. Callers may
 * add context in front with tf_errpre() ("cannot load 'm': " + inner cause).
 */
#ifndef TF_ERR_H
#define TF_ERR_H

#include <stddef.h>

extern const char *tf_prog;     /* program name for messages, "tf-run" */
/* run by tf_die_err before a program ends by SIGPIPE (a closed pipe's
 * EPIPE ends it quietly, as cat ends, not with a message): removes the
 * unfinished outputs (out.c) */
extern void (*tf_at_die)(void);

int tf_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tf_errpre(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *tf_errmsg(void);

_Noreturn void tf_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void tf_die_err(void);
_Noreturn void tf_usage_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tf_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* allocation that cannot fail quietly: out of memory is fatal for every tool */
void *tf_malloc(size_t n);
void *tf_calloc(size_t n, size_t size);
void *tf_realloc(void *p, size_t n);
char *tf_strdup(const char *s);

#endif
