/* engine.c: jobs in shared rounds, submitted and read from other threads (engine.h) */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "decode/decoder.h"
#include "decode/round.h"
#include "engine.h"
#include "gpu/gpu.h"
#include "tools/streams.h"

struct tf_job {
	tf_engine *e;
	int refs;               /* the submitter's, and the engine's while it holds the job */
	pthread_cond_t cv;      /* signalled on a new id and at the end */
	/* what was asked */
	int32_t *ids;           /* (n) the prompt */
	int64_t n;
	long max_tokens;
	int ignore_eos, logprobs;
	int32_t *stop_ids;      /* (nstop) */
	int nstop;
	long index;
	/* the round thread's alone */
	tf_decoder *d;
	tf_sampler smp;
	tf_drafter *dr;         /* with a drafter: its own, and */
	int32_t *hist;          /* (nhist) its prompt and the ids drawn since */
	int64_t nhist, histcap;
	int64_t fed;            /* prompt ids fed */
	int32_t next;           /* the id to feed next */
	uint64_t bytes;
	/* under the engine's lock */
	tf_draw *draws;         /* (nd) */
	long nd, cap;
	int state;              /* TF_JOB_* */
	int cancel;
	double t_submit, t_first;
};

struct tf_engine {
	const tf_model *m;
	tf_engine_opts o;
	pthread_mutex_t mu;
	pthread_cond_t work;    /* a job came, or the engine is told to stop */
	pthread_t thread;
	int started;
	tf_job **queue;         /* (nq) waiting for a slot, oldest first */
	int nq;
	tf_job **live;          /* (nlive) in the rounds, oldest first */
	int nlive;
	/* (npool) GPU sequences of jobs that ended, reset, for the next ones:
	 * a new one costs its caches' allocation and its steps' capture,
	 * a first token's time several times over */
	tf_decoder **pool;
	int npool;
	int draining;           /* no new jobs */
	double deadline;        /* draining: cancel what is left at this time */
	int stop;               /* the round thread ends */
	tf_engine_stats st;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void job_unref(tf_job *j)
{
	if (--j->refs > 0)
		return;
	pthread_cond_destroy(&j->cv);
	free(j->ids);
	free(j->stop_ids);
	free(j->draws);
	free(j);
}

/* the job is over (under the lock): readers wake, the engine lets go */
static void finish(tf_engine *e, tf_job *j, int state)
{
	if (j->state != TF_JOB_RUNNING)
		return;
	j->state = state;
	if (state == TF_JOB_CANCELLED)
		e->st.cancelled++;
	pthread_cond_broadcast(&j->cv);
}

/* a drawn id of job j (under the lock) */
static void put(tf_engine *e, tf_job *j, const tf_draw *dr)
{
	int id = dr->id;

	if (j->state != TF_JOB_RUNNING)
		return;
	if (j->t_first < 0)
		j->t_first = now() - j->t_submit;
	if (!j->ignore_eos && tf_config_is_eos(&e->m->c, id)) {
		finish(e, j, TF_JOB_STOP);
		return;
	}
	for (int k = 0; k < j->nstop; k++)
		if (j->stop_ids[k] == id) {
			finish(e, j, TF_JOB_STOP);
			return;
		}
	if (j->nd == j->cap) {
		j->cap = j->cap * 2 + 16;
		j->draws = tf_realloc(j->draws, j->cap * sizeof *j->draws);
	}
	j->draws[j->nd++] = *dr;
	j->next = id;
	if (j->dr) {
		if (j->nhist == j->histcap)
			j->hist = tf_realloc(j->hist, (j->histcap = 2 * j->histcap + 64) * sizeof *j->hist);
		j->hist[j->nhist++] = id;
	}
	e->st.tokens++;
	if (j->nd >= j->max_tokens)
		finish(e, j, TF_JOB_LENGTH);
	else
		pthread_cond_broadcast(&j->cv);
}

/* log-probabilities of a row at temperature 1: the drawn id's and the
 * top k, the smaller id first among equals */
static void logprobs(const float *row, int64_t V, int k, tf_draw *dr)
{
	float mx = row[tf_argmax(row, V)];
	double sum = 0;

	for (int64_t i = 0; i < V; i++)
		sum += exp((double)row[i] - mx);
	float lse = mx + (float)log(sum);
	dr->logprob = row[dr->id] - lse;
	dr->ntop = 0;
	for (int64_t i = 0; i < V && k > 0; i++) {
		int n = dr->ntop, at = n;
		if (n == k && !(row[i] > row[dr->top_id[n - 1]]))
			continue;
		while (at > 0 && row[i] > row[dr->top_id[at - 1]])
			at--;
		if (n < k)
			n++;
		memmove(dr->top_id + at + 1, dr->top_id + at, (n - 1 - at) * sizeof *dr->top_id);
		dr->top_id[at] = (int32_t)i;
		dr->ntop = n;
	}
	for (int i = 0; i < dr->ntop; i++)
		dr->top_lp[i] = row[dr->top_id[i]] - lse;
}

/* a round's logits row of a job: its next id */
static int take(void *ctx, int64_t row0, int64_t rows, const float *logits)
{
	tf_job *j = ctx;
	tf_engine *e = j->e;
	int64_t V = e->m->c.vocab;
	tf_draw dr;

	dr.id = tf_sample(&j->smp, logits, V);
	dr.ntop = 0;
	dr.logprob = 0;
	if (j->logprobs >= 0)
		logprobs(logits, V, j->logprobs, &dr);
	pthread_mutex_lock(&e->mu);
	put(e, j, &dr);
	pthread_mutex_unlock(&e->mu);
	return 0;
}

/* an id drawn on the device by tf_decoder_generate */
static int each(void *ctx, int32_t id)
{
	tf_job *j = ctx;
	tf_draw dr = { .id = id };

	pthread_mutex_lock(&j->e->mu);
	put(j->e, j, &dr);
	pthread_mutex_unlock(&j->e->mu);
	return 0;
}

/* a lone job past its prompt on the GPU runs as tf-run runs a lone
 * stream there: up to TF_STEPS_MAX steps drawn on the device a launch
 * (the same ids as the rounds' host draws, which t9100 holds them to) */
static int alone_on_gpu(tf_job *j)
{
	long left = j->max_tokens - j->nd;
	int n = left < TF_STEPS_MAX ? (int)left : TF_STEPS_MAX, got;
	int32_t ahead[TF_STEPS_MAX];

	return tf_decoder_generate(j->d, j->next, &j->smp, n, !j->ignore_eos, each, j, ahead, &got);
}

/* a drafting job's drafter, and its ids so far for it to look in */
static int start_draft(tf_engine *e, tf_job *j)
{
	if (!(j->dr = tf_drafter_new(e->o.draft, e->m->c.vocab, j->index)) || tf_drafter_bind(j->dr, j->d) < 0)
		return -1;
	j->histcap = j->n + 64;
	j->hist = tf_malloc(j->histcap * sizeof *j->hist);
	memcpy(j->hist, j->ids, j->n * sizeof *j->hist);
	j->nhist = j->n;
	return 0;
}

static void drop_draft(tf_job *j)
{
	tf_drafter_free(j->dr);
	free(j->hist);
	j->dr = NULL;
	j->hist = NULL;
}

/*
 * A drafting job's turn in a round, as tf-run -P's streams take theirs
 * (streams.c): a tree from its drafter, cut to the ids the job still
 * makes less the model's own (and on the GPU to the nodes a tree pass
 * takes there), verified in a pass of its own; the ids drawn along the
 * kept path are the job's next, up to an end id or max_tokens (the state
 * past them is never used: the job is over). 1 when it took its turn, 0
 * when nothing was drafted (it steps in the shared pass), -1 on an error.
 * No lock: what it reads of the job is the round thread's.
 */
static int draft_turn(tf_engine *e, tf_job *j)
{
	const tf_draft_spec *sp = e->o.draft;
	long left = j->max_tokens - j->nd;
	int depth = tf_draft_depth_fit(j->d, left - 1 < sp->depth ? (int)(left - 1) : sp->depth, 0);
	int64_t nodes = 1 + (int64_t)sp->width * depth;
	int32_t out[TF_DRAFT_DEPTH_MAX + 1];
	tf_draft_tree t;
	int k;

	if (tf_decoder_on_gpu(j->d) && nodes > TF_GPU_TREE_MAX)
		nodes = TF_GPU_TREE_MAX;
	tf_drafter_propose(j->dr, j->hist, j->nhist, depth, nodes, &t);
	if (t.n == 1)
		return 0;
	if ((k = tf_draft_verify(j->d, j->dr, &j->smp, &t, out)) < 0)
		return -1;
	pthread_mutex_lock(&e->mu);
	e->st.draft_passes++;
	e->st.draft_proposed += t.n - 1;
	e->st.draft_accepted += k - 1;
	for (int i = 0; i < k; i++) {
		tf_draw dr = { .id = out[i] };
		put(e, j, &dr);
	}
	pthread_mutex_unlock(&e->mu);
	return 1;
}

/* the live jobs that are over leave their slots, the queued ones that fit
 * come in (under the lock) */
static void retire_admit(tf_engine *e)
{
	int k = 0;

	for (int i = 0; i < e->nlive; i++) {
		tf_job *j = e->live[i];
		if (j->cancel)
			finish(e, j, TF_JOB_CANCELLED);
		if (j->state == TF_JOB_RUNNING) {
			e->live[k++] = j;
			continue;
		}
		if (tf_decoder_on_gpu(j->d) && e->npool < e->o.parallel) {
			tf_decoder_reset(j->d);
			e->pool[e->npool++] = j->d;
		} else {
			tf_decoder_free(j->d);
		}
		j->d = NULL;
		drop_draft(j);
		job_unref(j);
	}
	e->nlive = k;
	while (e->nq && e->nlive < e->o.parallel) {
		tf_job *j = e->queue[0];
		memmove(e->queue, e->queue + 1, (e->nq - 1) * sizeof *e->queue);
		e->nq--;
		if (j->cancel) {
			finish(e, j, TF_JOB_CANCELLED);
			job_unref(j);
			continue;
		}
		if (!j->max_tokens) {
			finish(e, j, TF_JOB_LENGTH);
			job_unref(j);
			continue;
		}
		if (!(j->d = e->npool ? e->pool[--e->npool] : tf_decoder_new(e->m))) {
			finish(e, j, TF_JOB_FAILED);
			job_unref(j);
			continue;
		}
		tf_decoder_reserve(j->d, j->n + j->max_tokens);
		if (e->o.draft && j->logprobs < 0 && start_draft(e, j) < 0) {
			tf_warn("cannot start a job's drafter: %s", tf_errmsg());
			tf_decoder_free(j->d);
			j->d = NULL;
			finish(e, j, TF_JOB_FAILED);
			job_unref(j);
			continue;
		}
		e->live[e->nlive++] = j;
	}
	e->st.queued = e->nq;
	e->st.live = e->nlive;
}

/* one round over the live jobs: a step of each past its prompt (or,
 * drafting, a verified tree), the next chunk of the oldest still in it
 * (no lock: the fields it reads are the round thread's) */
static int round_once(tf_engine *e, tf_job **live, int n, tf_round_part *p)
{
	int k = 0, chunk = 0, rc;

	for (int i = 0; i < n; i++) {
		tf_job *j = live[i];
		if (j->fed == j->n && j->dr) {
			if ((rc = draft_turn(e, j)) < 0)
				return -1;
			if (rc)
				continue;
		}
		if (j->fed < j->n) {
			if (chunk)
				continue;
			int64_t left = j->n - j->fed, c = left < TF_STREAM_CHUNK ? left : TF_STREAM_CHUNK;
			p[k++] = (tf_round_part){ j->d, j->ids + j->fed, c, TF_FWD_CHUNKED | TF_FWD_LAST,
						  c == left ? take : NULL, j };
			j->fed += c;
			chunk = 1;
		} else {
			/* take draws on the host: the round's draws share the pool */
			p[k++] = (tf_round_part){ j->d, &j->next, 1, TF_FWD_APART, take, j };
		}
	}
	return tf_decoder_round(p, k);
}

static void *run(void *arg)
{
	tf_engine *e = arg;
	tf_job **live = tf_malloc(e->o.parallel * sizeof *live);
	tf_round_part *p = tf_malloc(e->o.parallel * sizeof *p);

	pthread_mutex_lock(&e->mu);
	for (;;) {
		retire_admit(e);
		if (e->draining && now() >= e->deadline) {
			for (int i = 0; i < e->nq; i++)
				e->queue[i]->cancel = 1;
			for (int i = 0; i < e->nlive; i++)
				e->live[i]->cancel = 1;
			retire_admit(e);
		}
		if (!e->nlive) {
			if (e->stop || (e->draining && !e->nq))
				break;
			pthread_cond_wait(&e->work, &e->mu);
			continue;
		}
		int n = e->nlive, alone = 0;
		memcpy(live, e->live, n * sizeof *live);
		if (n == 1 && !e->nq) {
			tf_job *j = live[0];
			alone = j->fed == j->n && j->logprobs < 0 && !j->dr && tf_decoder_on_gpu(j->d);
		}
		pthread_mutex_unlock(&e->mu);
		double t0 = now();
		int rc = alone ? alone_on_gpu(live[0]) : round_once(e, live, n, p);
		pthread_mutex_lock(&e->mu);
		e->st.busy_s += now() - t0;
		e->st.rounds++;
		if (rc < 0) {
			/* a failed round may have moved some jobs on: none can go on */
			tf_warn("a round failed: %s", tf_errmsg());
			for (int i = 0; i < n; i++)
				finish(e, live[i], TF_JOB_FAILED);
		}
	}
	/* the engine stops: what is left is cancelled */
	for (int i = 0; i < e->nq; i++)
		e->queue[i]->cancel = 1;
	for (int i = 0; i < e->nlive; i++)
		e->live[i]->cancel = 1;
	retire_admit(e);
	pthread_mutex_unlock(&e->mu);
	free(live);
	free(p);
	return NULL;
}

tf_engine *tf_engine_new(const tf_model *m, const tf_engine_opts *o)
{
	tf_engine *e = tf_calloc(1, sizeof *e);

	e->m = m;
	e->o = *o;
	if (e->o.parallel < 1)
		e->o.parallel = 1;
	if (e->o.queue < 0)
		e->o.queue = 0;
	/* the free slots' jobs wait there too until the round thread takes them */
	e->queue = tf_malloc((e->o.queue + e->o.parallel) * sizeof *e->queue);
	e->live = tf_malloc(e->o.parallel * sizeof *e->live);
	e->pool = tf_malloc(e->o.parallel * sizeof *e->pool);
	e->st.parallel = e->o.parallel;
	e->st.queue_max = e->o.queue;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->work, NULL);
	int rc = pthread_create(&e->thread, NULL, run, e);
	if (rc) {
		errno = rc;
		tf_err("cannot start the round thread:");
		tf_engine_free(e);
		return NULL;
	}
	e->started = 1;
	return e;
}

void tf_engine_drain(tf_engine *e, double seconds)
{
	if (!e || !e->started)
		return;
	pthread_mutex_lock(&e->mu);
	e->draining = 1;
	e->deadline = now() + seconds;
	pthread_cond_signal(&e->work);
	pthread_mutex_unlock(&e->mu);
	/* the round thread looks at the deadline between rounds; a round is
	 * short, so a join is bounded by the deadline and a round */
	pthread_join(e->thread, NULL);
	e->started = 0;
}

void tf_engine_free(tf_engine *e)
{
	if (!e)
		return;
	if (e->started) {
		pthread_mutex_lock(&e->mu);
		e->stop = 1;
		e->draining = 1;
		e->deadline = 0;
		pthread_cond_signal(&e->work);
		pthread_mutex_unlock(&e->mu);
		pthread_join(e->thread, NULL);
	}
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->work);
	for (int i = 0; i < e->npool; i++)
		tf_decoder_free(e->pool[i]);
	free(e->queue);
	free(e->live);
	free(e->pool);
	free(e);
}

tf_job *tf_engine_submit(tf_engine *e, const tf_job_params *p, int *busy)
{
	*busy = 0;
	pthread_mutex_lock(&e->mu);
	/* the jobs past those the free slots take at once wait: o.queue of them */
	if (e->draining || e->nq >= e->o.queue + (e->o.parallel - e->nlive)) {
		pthread_mutex_unlock(&e->mu);
		*busy = 1;
		return NULL;
	}
	tf_job *j = tf_calloc(1, sizeof *j);
	j->e = e;
	j->refs = 2;
	pthread_cond_init(&j->cv, NULL);
	j->n = p->n;
	j->ids = tf_malloc((p->n ? p->n : 1) * sizeof *j->ids);
	memcpy(j->ids, p->ids, p->n * sizeof *j->ids);
	j->max_tokens = p->max_tokens;
	j->ignore_eos = p->ignore_eos;
	j->index = p->index;
	j->logprobs = p->logprobs > TF_LOGPROBS_MAX ? TF_LOGPROBS_MAX : p->logprobs;
	j->nstop = p->nstop;
	j->stop_ids = tf_malloc((p->nstop ? p->nstop : 1) * sizeof *j->stop_ids);
	memcpy(j->stop_ids, p->stop_ids, p->nstop * sizeof *j->stop_ids);
	j->smp = p->sampler;
	j->state = TF_JOB_RUNNING;
	j->t_submit = now();
	j->t_first = -1;
	e->queue[e->nq++] = j;
	e->st.queued = e->nq;
	e->st.jobs++;
	e->st.prompt_tokens += p->n;
	pthread_cond_signal(&e->work);
	pthread_mutex_unlock(&e->mu);
	return j;
}

int tf_job_wait(tf_job *j, long seen, int timeout_ms, tf_job_view *v)
{
	tf_engine *e = j->e;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&e->mu);
	int rc = 0;
	while (j->nd <= seen && j->state == TF_JOB_RUNNING && !rc)
		rc = pthread_cond_timedwait(&j->cv, &e->mu, &ts);
	v->n = j->nd;
	v->state = j->state;
	v->t_first = j->t_first;
	int news = j->nd > seen || j->state != TF_JOB_RUNNING;
	pthread_mutex_unlock(&e->mu);
	return news;
}

long tf_job_draws(tf_job *j, long from, tf_draw *out, long max)
{
	tf_engine *e = j->e;
	long n;

	pthread_mutex_lock(&e->mu);
	n = j->nd - from;
	if (n > max)
		n = max;
	if (n < 0)
		n = 0;
	memcpy(out, j->draws + from, n * sizeof *out);
	pthread_mutex_unlock(&e->mu);
	return n;
}

void tf_job_cancel(tf_job *j)
{
	tf_engine *e = j->e;

	pthread_mutex_lock(&e->mu);
	j->cancel = 1;
	/* a queued job leaves the queue at once, so the queue's count is true */
	for (int i = 0; i < e->nq; i++)
		if (e->queue[i] == j) {
			memmove(e->queue + i, e->queue + i + 1, (e->nq - i - 1) * sizeof *e->queue);
			e->nq--;
			e->st.queued = e->nq;
			finish(e, j, TF_JOB_CANCELLED);
			job_unref(j);
			break;
		}
	pthread_cond_signal(&e->work);
	pthread_mutex_unlock(&e->mu);
}

void tf_job_release(tf_job *j)
{
	tf_engine *e = j->e;

	pthread_mutex_lock(&e->mu);
	job_unref(j);
	pthread_mutex_unlock(&e->mu);
}

void tf_engine_stats_get(tf_engine *e, tf_engine_stats *s)
{
	pthread_mutex_lock(&e->mu);
	*s = e->st;
	pthread_mutex_unlock(&e->mu);
}
