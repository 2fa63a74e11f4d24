/*
 * out.h: output files that appear whole or not at all.
 *
 * A named output is written to "NAME.tmp.PID" beside it and renamed over NAME
 * only by tf_out_close() after every byte was written and flushed. If the
 * program dies first (tf_die, SIGINT, SIGTERM) the temporary file is removed,
 * so a failed run leaves no partial file behind. "-" is stdout; a binary
 * stream is refused on a terminal unless forced.
 */
#ifndef TF_OUT_H
#define TF_OUT_H

#include <stdio.h>

typedef struct {
	FILE *f;
	char *path;     /* final name, NULL for stdout */
	char *tmp;      /* temporary name while open */
} tf_out;

/* ignore SIGPIPE (a closed pipe becomes a write error with a message) and
 * remove unfinished outputs on SIGINT, SIGTERM and exit */
void tf_out_init(void);
int tf_out_open(tf_out *o, const char *path, int binary, int force);
int tf_out_close(tf_out *o);
void tf_out_abort(tf_out *o);
/* registers a temporary path to unlink if the program exits before
 * tf_out_forget(path) (for outputs not written through tf_out) */
void tf_out_track(const char *tmp);
void tf_out_forget(const char *tmp);
/* flush and close stdout, reporting a late write error (sbase's fshut) */
int tf_stdout_close(void);

#endif
