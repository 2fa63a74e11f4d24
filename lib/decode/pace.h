/*
 * pace.h: how often a prompt chunk may join the rounds of streams that
 * decode. A chunk in a round holds every decoding stream back by its
 * time; taken every round, a long prompt would slow the others several
 * times over while it is taken in (a 256-id chunk of a 9B model costs
 * about three rounds of 16 decode steps). The pace lets prompt chunks take
 * at most `share` of the decoders' time: a round without a chunk earns
 * credit for share / (1 - share) of its time, a round with one spends the
 * chunk's part of its time (the round's time less a decode round's), and
 * a chunk may join once the credit covers what the last chunk spent (the
 * first joins at once). So the decoders' tokens a second fall by at most
 * about `share` during an intake, and a prompt with no one decoding beside
 * it is taken in at full speed.
 *
 * Which round a chunk joins changes no bits: a prompt is fed in the same
 * chunks whenever it is fed, and a sequence's rows do not depend on the
 * rows beside it.
 */
#ifndef TF_PACE_H
#define TF_PACE_H

/* the share of the decoders' time prompt chunks may take */
#define TF_PACE_SHARE 0.25

typedef struct {
	double share;
	double credit;          /* seconds of chunk time earned */
	double decode;          /* seconds of a round of decode steps alone, smoothed; 0 before one */
	double chunk;           /* seconds the last chunk added to its round */
	double t0;              /* when the round being timed began */
} tf_pace;

void tf_pace_init(tf_pace *p, double share);
/* whether a chunk may join the next round, with `decoders` streams decoding in it */
int tf_pace_chunk_ok(const tf_pace *p, int decoders);
/* around each round: its start, then its end (chunk: one joined it) */
void tf_pace_begin(tf_pace *p);
void tf_pace_end(tf_pace *p, int decoders, int chunk);
/* tf_pace_end with the round's time given, in seconds */
void tf_pace_took(tf_pace *p, int decoders, int chunk, double t);

#endif
