/*
 * tap.h: TAP version 13 for C tests, header only.
 *
 *   plan(3); ok(x == 1, "x is one"); ... return done();
 *
 * A failed check prints the file and line as a comment. skip_all() prints
 * "1..0 # SKIP reason" and exits 0, as prove expects of a skipped file.
 */
#ifndef TF_TAP_H
#define TF_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_fail, tap_planned = -1;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	exit(0);
}

static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline int ok_at(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_fail++;
		printf("#   failed at %s line %d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) ok_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

static inline int done(void)
{
	if (tap_planned < 0)
		printf("1..%d\n", tap_n);
	else if (tap_planned != tap_n)
		printf("# planned %d tests but ran %d\n", tap_planned, tap_n);
	return tap_fail || (tap_planned >= 0 && tap_planned != tap_n);
}

#endif
