/*
 * engine.h: the streams engine driven by requests instead of input lines.
 * One thread runs the rounds (decode/round.h) as tf-run -P does (a decode
 * step for every live job and at most one prompt chunk of TF_STREAM_CHUNK
 * ids a round, the oldest job still in its prompt first); other threads
 * submit jobs, read their ids as they are drawn and cancel them. A job's
 * ids depend only on its prompt, its sampler and its seed, never on what
 * runs beside it: a job seeded tf_sample_seed(seed, i) draws what tf-run's
 * sequence i draws. A lone job on the GPU, past its prompt and with no
 * logprobs asked, runs as tf-run runs a lone stream there: steps drawn on
 * the device, TF_STEPS_MAX a launch.
 *
 * With a drafter (o.draft, as tf-run --draft takes it) each job past its
 * prompt verifies a drafted tree in a pass of its own each round, as
 * tf-run -P's streams do (streams.h), and takes the ids the model draws
 * along the path it keeps: the same ids as without, more a round where
 * the draft was right. A job asking for logprobs steps without drafts
 * (a tree pass keeps no log-probabilities of the path), with the same ids.
 *
 *   e = tf_engine_new(m, &(tf_engine_opts){ .parallel = 8, .queue = 64 });
 *   j = tf_engine_submit(e, &params);       NULL: the queue is full
 *   tf_job_wait(j, seen, 100, &v);         v.n ids so far, v.state
 *   tf_job_draws(j, seen, buf, v.n - seen);
 *   tf_job_cancel(j);                      the client left: its slot frees
 *   tf_job_release(j);
 *   tf_engine_free(e);                     after tf_engine_drain
 */
#ifndef TF_ENGINE_H
#define TF_ENGINE_H

#include <stdint.h>

#include "decode/sample.h"
#include "draft/draft.h"
#include "model/model.h"

#define TF_LOGPROBS_MAX 20      /* top_logprobs at most, as OpenAI allows */

typedef struct tf_engine tf_engine;
typedef struct tf_job tf_job;

typedef struct {
	int parallel;           /* jobs in rounds at most, >= 1 */
	int queue;              /* jobs waiting for a slot at most, >= 0 */
	const tf_draft_spec *draft;     /* every job's drafter, or NULL; kept by the caller */
} tf_engine_opts;

typedef struct {
	const int32_t *ids;     /* (n) the prompt, n >= 1; copied */
	int64_t n;
	long max_tokens;        /* ids to draw at most, >= 0 */
	tf_sampler sampler;     /* its rng already the job's seed */
	int ignore_eos;         /* the model's end ids do not end it */
	const int32_t *stop_ids;/* (nstop) ids that end it too, as end ids do
				 * (the id is not among the job's ids) */
	int nstop;
	int logprobs;           /* -1: none; 0..TF_LOGPROBS_MAX: the drawn id's
				 * log-probability and this many alternatives */
	long index;             /* its sequence number (a request's choice), for
				 * the drafter: a random one drafts as tf-run's
				 * sequence `index` does */
} tf_job_params;

/* one drawn id: with logprobs, its log-probability under the model's
 * distribution (temperature 1) and the top alternatives */
typedef struct {
	int32_t id;
	float logprob;
	int ntop;
	int32_t top_id[TF_LOGPROBS_MAX];
	float top_lp[TF_LOGPROBS_MAX];
} tf_draw;

enum { TF_JOB_RUNNING, TF_JOB_LENGTH, TF_JOB_STOP, TF_JOB_CANCELLED, TF_JOB_FAILED };

/* what a reader sees of a job */
typedef struct {
	long n;                 /* ids drawn so far */
	int state;              /* TF_JOB_*: RUNNING while more may come */
	double t_first;         /* seconds from submit to the first id; -1 none yet */
} tf_job_view;

/* the engine and its round thread; NULL with a message */
tf_engine *tf_engine_new(const tf_model *m, const tf_engine_opts *o);
/* stops taking jobs, lets those in flight and queued finish, within
 * `seconds` (the rest are cancelled), and ends the round thread */
void tf_engine_drain(tf_engine *e, double seconds);
void tf_engine_free(tf_engine *e);

/* a new job, queued; NULL when the queue is full or the engine drains
 * (*busy set), or with a message when its cache cannot be had */
tf_job *tf_engine_submit(tf_engine *e, const tf_job_params *p, int *busy);
/* waits until the job has more than `seen` ids or is over, at most
 * timeout_ms; fills v; 1 when v shows something new or the end, 0 on a
 * timeout */
int tf_job_wait(tf_job *j, long seen, int timeout_ms, tf_job_view *v);
/* copies draws from..from+max-1 that exist into out; their count */
long tf_job_draws(tf_job *j, long from, tf_draw *out, long max);
/* the job ends at the next round; its slot and cache are freed there */
void tf_job_cancel(tf_job *j);
/* the caller is done with j (cancel it first if it may still run) */
void tf_job_release(tf_job *j);

/* figures for /metrics */
typedef struct {
	long queued, live, parallel, queue_max;
	uint64_t jobs, prompt_tokens, tokens, rounds, cancelled;
	double busy_s;          /* time spent in rounds */
	/* with a drafter: tree passes, ids drafted in them, drafted ids the
	 * model drew (the walks' lengths) */
	uint64_t draft_passes, draft_proposed, draft_accepted;
} tf_engine_stats;
void tf_engine_stats_get(tf_engine *e, tf_engine_stats *s);

#endif
