/* out.c: atomic output files and a checked stdout */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	tf_at_die = unlink_tracked;
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

static int open_out(tf_out *o, const char *path, int binary, int force, int regular);

/* whether path is a terminal */
static int isatty_path(const char *path)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK);
	int t = fd >= 0 && isatty(fd);

	if (fd >= 0)
		close(fd);
	return t;
}

int tf_out_open(tf_out *o, const char *path, int binary, int force)
{
	return open_out(o, path, binary, force, 0);
}

int tf_out_open_file(tf_out *o, const char *path)
{
	return open_out(o, path, 1, 1, 1);
}

static int open_out(tf_out *o, const char *path, int binary, int force, int regular)
{
	memset(o, 0, sizeof *o);
	tf_out_init();
	if ((!path || !strcmp(path, "-")) && regular)
		return tf_err("cannot write to stdout: only to a file");
	if (!path || !strcmp(path, "-")) {
		if (binary && !force && isatty(1))
			return tf_err("refusing to write binary records to a terminal (use -f to force)");
		o->f = stdout;
		return 0;
	}
	struct stat sb;
	if (lstat(path, &sb) == 0) {
		char *real = S_ISLNK(sb.st_mode) ? realpath(path, NULL) : NULL;
		/* a link is written through: its target is what gets replaced */
		if (S_ISLNK(sb.st_mode) && (!real || stat(real, &sb) < 0)) {
			tf_err("cannot write '%s': a link to nothing", path);
			free(real);
			return -1;
		}
		o->path = real ? real : tf_strdup(path);
		if (S_ISDIR(sb.st_mode)) {
			tf_err("cannot write '%s': it is a directory", path);
			tf_out_abort(o);
			return -1;
		}
		/* a device, FIFO or socket is written to as it is: renaming a
		 * file over it would replace /dev/null itself */
		if (!S_ISREG(sb.st_mode) && regular) {
			tf_err("cannot write '%s': not a regular file", path);
			tf_out_abort(o);
			return -1;
		}
		if (!S_ISREG(sb.st_mode)) {
			/* only a character device can be a terminal; probing a
			 * FIFO by opening it would hand its reader an end of file */
			if (binary && !force && S_ISCHR(sb.st_mode) && isatty_path(o->path)) {
				tf_out_abort(o);
				return tf_err("refusing to write binary records to a terminal (use -f to force)");
			}
			if (!(o->f = fopen(o->path, "wb"))) {
				tf_err("cannot open '%s':", o->path);
				tf_out_abort(o);
				return -1;
			}
			o->direct = 1;
			return 0;
		}
	} else {
		o->path = tf_strdup(path);
	}
	o->tmp = tf_malloc(strlen(o->path) + 32);
	sprintf(o->tmp, "%s.tmp.%ld", o->path, (long)getpid());
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
	if (o->direct) {
		free(o->path);
		o->path = NULL;
		return rc;
	}
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

int tf_stdout_exit(void)
{
	if (tf_stdout_close() < 0)
		tf_die_err();
	return 0;
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
