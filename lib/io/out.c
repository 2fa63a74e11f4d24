/* out.c: atomic output files and a checked stdout */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "out.h"

#define MAXTRACK 16
static char *tracked[MAXTRACK];

static void unlink_tracked(void)
{
	for (int i = 0; i < MAXTRACK; i++)
		if (tracked[i])
			unlink(tracked[i]);
}

static void on_signal(int sig)
{
	unlink_tracked();
	signal(sig, SIG_DFL);
	raise(sig);
}

void tf_out_init(void)
{
	static int done;

	if (done++)
		return;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	atexit(unlink_tracked);
}

void tf_out_track(const char *tmp)
{
	for (int i = 0; i < MAXTRACK; i++)
		if (!tracked[i]) {
			tracked[i] = tf_strdup(tmp);
			return;
		}
}

void tf_out_forget(const char *tmp)
{
	for (int i = 0; i < MAXTRACK; i++)
		if (tracked[i] && !strcmp(tracked[i], tmp)) {
			char *p = tracked[i];
			tracked[i] = NULL;
			free(p);
			return;
		}
}

int tf_out_open(tf_out *o, const char *path, int binary, int force)
{
	memset(o, 0, sizeof *o);
	tf_out_init();
	if (!path || !strcmp(path, "-")) {
		if (binary && !force && isatty(1))
			return tf_err("refusing to write binary records to a terminal (use -f to force)");
		o->f = stdout;
		return 0;
	}
	o->path = tf_strdup(path);
	o->tmp = tf_malloc(strlen(path) + 32);
	sprintf(o->tmp, "%s.tmp.%ld", path, (long)getpid());
	tf_out_track(o->tmp);
	o->f = fopen(o->tmp, "wb");
	if (!o->f) {
		tf_err("cannot create '%s':", o->tmp);
		tf_out_abort(o);
		return -1;
	}
	return 0;
}

int tf_out_close(tf_out *o)
{
	int rc = 0;

	if (!o->f)
		return 0;
	if (o->f == stdout) {
		o->f = NULL;
		return tf_stdout_close();
	}
	if (fflush(o->f) || ferror(o->f))
		rc = tf_err("cannot write '%s':", o->path);
	if (fclose(o->f) && !rc)
		rc = tf_err("cannot write '%s':", o->path);
	o->f = NULL;
	if (!rc && rename(o->tmp, o->path))
		rc = tf_err("cannot rename '%s' to '%s':", o->tmp, o->path);
	if (rc)
		unlink(o->tmp);
	tf_out_forget(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return rc;
}

void tf_out_abort(tf_out *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp) {
		unlink(o->tmp);
		tf_out_forget(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
}

int tf_stdout_close(void)
{
	int rc = 0;

	if (fflush(stdout) || ferror(stdout))
		rc = tf_err("write to stdout:");
	if (fclose(stdout) && !rc)
		rc = tf_err("write to stdout:");
	return rc;
}
