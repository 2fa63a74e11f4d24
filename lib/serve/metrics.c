/* metrics.c: counters and the Prometheus text (metrics.h) */
#include <string.h>

#include "metrics.h"

static const char *const route_name[TF_ROUTES] = { "/health", "/metrics", "/v1/models", "/v1/completions",
						   "/v1/chat/completions", "other" };

void tf_metrics_init(tf_metrics *m)
{
	memset(m, 0, sizeof *m);
	pthread_mutex_init(&m->mu, NULL);
}

void tf_metrics_free(tf_metrics *m)
{
	pthread_mutex_destroy(&m->mu);
}

void tf_metrics_request(tf_metrics *m, int route)
{
	pthread_mutex_lock(&m->mu);
	m->requests[route]++;
	pthread_mutex_unlock(&m->mu);
}

void tf_metrics_response(tf_metrics *m, int route, int status)
{
	int k = 0;

	pthread_mutex_lock(&m->mu);
	while (k < TF_METRIC_CODES && m->code[k] && m->code[k] != status)
		k++;
	if (k < TF_METRIC_CODES && !m->code[k])
		m->code[k] = status;
	m->responses[route][k]++;
	pthread_mutex_unlock(&m->mu);
}

static void head(tf_sbuf *b, const char *name, const char *type, const char *help)
{
	tf_sbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* a metric of one value: its two header lines and its sample */
static void count(tf_sbuf *b, const char *name, const char *help, unsigned long long v)
{
	head(b, name, "counter", help);
	tf_sbuf_printf(b, "%s %llu\n", name, v);
}

static void gauge(tf_sbuf *b, const char *name, const char *help, long v)
{
	head(b, name, "gauge", help);
	tf_sbuf_printf(b, "%s %ld\n", name, v);
}

static void real(tf_sbuf *b, const char *name, const char *type, const char *help, double v)
{
	head(b, name, type, help);
	tf_sbuf_printf(b, "%s %.6f\n", name, v);
}

void tf_metrics_text(tf_metrics *m, const tf_engine_stats *st, tf_sbuf *b)
{
	pthread_mutex_lock(&m->mu);
	head(b, "tf_serve_requests_total", "counter", "HTTP requests received, by endpoint");
	for (int r = 0; r < TF_ROUTES; r++)
		tf_sbuf_printf(b, "tf_serve_requests_total{endpoint=\"%s\"} %llu\n", route_name[r],
			       (unsigned long long)m->requests[r]);
	head(b, "tf_serve_responses_total", "counter", "HTTP responses sent, by endpoint and status");
	for (int r = 0; r < TF_ROUTES; r++)
		for (int k = 0; k <= TF_METRIC_CODES; k++)
			if (m->responses[r][k]) {
				if (k < TF_METRIC_CODES)
					tf_sbuf_printf(b, "tf_serve_responses_total{endpoint=\"%s\",code=\"%d\"} %llu\n",
						       route_name[r], m->code[k], (unsigned long long)m->responses[r][k]);
				else
					tf_sbuf_printf(b, "tf_serve_responses_total{endpoint=\"%s\",code=\"other\"} %llu\n",
						       route_name[r], (unsigned long long)m->responses[r][k]);
			}
	pthread_mutex_unlock(&m->mu);
	count(b, "tf_serve_jobs_total", "generations started (a request's choices each count)", st->jobs);
	count(b, "tf_serve_jobs_cancelled_total", "generations ended early: client gone, stop string, drain", st->cancelled);
	count(b, "tf_serve_prompt_tokens_total", "prompt tokens taken in", st->prompt_tokens);
	count(b, "tf_serve_generated_tokens_total", "tokens generated", st->tokens);
	count(b, "tf_serve_rounds_total", "rounds run", st->rounds);
	gauge(b, "tf_serve_queue_length", "generations waiting for a slot", st->queued);
	gauge(b, "tf_serve_queue_limit", "generations that may wait at most", st->queue_max);
	gauge(b, "tf_serve_slots_in_use", "generations in the rounds", st->live);
	gauge(b, "tf_serve_slots_total", "generations the rounds take at most (--parallel)", st->parallel);
	count(b, "tf_serve_draft_passes_total", "tree passes that verified drafted ids (--draft)", st->draft_passes);
	count(b, "tf_serve_draft_tokens_total", "ids drafted in those passes", st->draft_proposed);
	count(b, "tf_serve_draft_accepted_tokens_total", "drafted ids the model drew", st->draft_accepted);
	real(b, "tf_serve_busy_seconds_total", "counter", "seconds spent running rounds", st->busy_s);
	real(b, "tf_serve_tokens_per_second", "gauge", "tokens generated a second of rounds, since the start",
	     st->busy_s > 0 ? st->tokens / st->busy_s : 0.0);
}
