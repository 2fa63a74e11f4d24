/*
 * out.h: output files that appear whole or not at all.
 *
 * A named output is written to "NAME.tmp.PID" beside it and renamed over NAME
 * only by tf_out_close() after every byte was written and flushed. If the
 * program dies first (tf_die, SIGINT, SIGTERM) the temporary file is removed,
 * so a failed run leaves no partial file behind. "-" is stdout; a binary
 * stream is refused on a terminal unless forced. A link is followed and its
 * target replaced; a device, FIFO or socket is written to in place (never
 * renamed over); a directory is refused before any work is done.
 */
#ifndef TF_OUT_H
#define TF_OUT_H

#include <stdio.h>

typedef struct {
	FILE *f;
	char *path;     /* final name, NULL for stdout */
	char *tmp;      /* temporary name while open */
	int direct;     /* path is not a regular file: written in place */
} tf_out;

/* ignore SIGPIPE (a closed pipe becomes a write error, which tf_die_err
 * turns into a quiet end by SIGPIPE once outputs are removed) and
 * remove unfinished outputs on SIGINT, SIGTERM and exit */
void tf_out_init(void);
int tf_out_open(tf_out *o, const char *path, int binary, int force);
/* the same for a file written out of order (a bundle): a regular file, or
 * a new one; never stdout, a device or a FIFO */
int tf_out_open_file(tf_out *o, const char *path);
int tf_out_close(tf_out *o);
void tf_out_abort(tf_out *o);
/* registers a temporary path to unlink if the program exits before
 * tf_out_forget(path) (for outputs not written through tf_out) */
void tf_out_track(const char *tmp);
void tf_out_forget(const char *tmp);
/* flush and close stdout, reporting a late write error (sbase's fshut) */
int tf_stdout_close(void);
/* the same, for main's return: 0, or the error and exit 1 (a full disk
 * after --help is an error too) */
int tf_stdout_exit(void);

#endif
