/*
 * hubprogress.h: download progress on a terminal.
 *
 * One line per running download and a total line under them, redrawn in
 * place at most ten times a second. Every call is thread-safe, and every
 * call is a no-op when the display is off (stderr is not a terminal, -q,
 * HF_HUB_DISABLE_PROGRESS_BARS), so callers need not check.
 */
#ifndef TF_HUBPROGRESS_H
#define TF_HUBPROGRESS_H

#include <stdint.h>

typedef struct tf_progress tf_progress;

/* slots: how many downloads run at once; total: bytes expected overall
 * (0 when unknown); NULL is returned when on is 0 */
tf_progress *tf_progress_new(int on, int slots, int nfiles, uint64_t total);
/* a download begins with `have` bytes already on disk; returns its slot */
int tf_progress_start(tf_progress *p, const char *name, uint64_t size, uint64_t have);
void tf_progress_add(tf_progress *p, int slot, uint64_t n);
/* the download restarted from zero (the server ignored a Range) */
void tf_progress_rewind(tf_progress *p, int slot, uint64_t n);
/* a file counted as done without a download */
void tf_progress_skip(tf_progress *p, uint64_t size);
void tf_progress_done(tf_progress *p, int slot);
/* clears the display and prints a one-line summary */
void tf_progress_free(tf_progress *p);

#endif
