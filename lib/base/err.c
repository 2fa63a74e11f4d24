/* err.c: one error message per thread, formatted the way every tool prints it */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

const char *tf_prog = "tf";
void (*tf_at_die)(void);
static _Thread_local char errbuf[1024];
/* the errno the message ends with (a format ending in ':'), or 0 */
static _Thread_local int errnum;

static void vformat(char *buf, size_t n, const char *fmt, va_list ap, int saved)
{
	size_t len;

	vsnprintf(buf, n, fmt, ap);
	len = strlen(fmt);
	if (len && fmt[len - 1] == ':') {
		size_t used = strlen(buf);
		snprintf(buf + used, n - used, " %s", strerror(saved));
	}
}

/* the thread's message, and the errno it ends with */
static void set_err(const char *fmt, va_list ap, int saved)
{
	vformat(errbuf, sizeof errbuf, fmt, ap, saved);
	errnum = fmt[0] && fmt[strlen(fmt) - 1] == ':' ? saved : 0;
}

int tf_err(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	set_err(fmt, ap, saved);
	va_end(ap);
	errno = saved;
	return -1;
}

int tf_errpre(const char *fmt, ...)
{
	char pre[512], old[sizeof errbuf];
	va_list ap;

	memcpy(old, errbuf, sizeof old);
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	snprintf(errbuf, sizeof errbuf, "%s: %s", pre, old);
	return -1;
}

const char *tf_errmsg(void)
{
	return errbuf[0] ? errbuf : "unknown error";
}

_Noreturn void tf_die(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	set_err(fmt, ap, saved);
	va_end(ap);
	tf_die_err();
}

_Noreturn void tf_die_err(void)
{
	/* the reader went away (| head): end as cat does, quietly, by the
	 * signal the write would have raised had SIGPIPE not been ignored so
	 * that the write could fail with EPIPE and leave this to clean up */
	if (errnum == EPIPE) {
		if (tf_at_die)
			tf_at_die();
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
	}
	fflush(stdout);
	fprintf(stderr, "%s: error: %s\n", tf_prog, tf_errmsg());
	exit(1);
}

_Noreturn void tf_usage_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tf_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", tf_prog);
	exit(2);
}

void tf_warn(const char *fmt, ...)
{
	int saved = errno;
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vformat(buf, sizeof buf, fmt, ap, saved);
	va_end(ap);
	fprintf(stderr, "%s: warning: %s\n", tf_prog, buf);
}

void *tf_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		tf_die("out of memory allocating %zu bytes", n);
	return p;
}

void *tf_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		tf_die("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *tf_realloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		tf_die("out of memory allocating %zu bytes", n);
	return p;
}

char *tf_strdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(tf_malloc(n), s, n);
}
