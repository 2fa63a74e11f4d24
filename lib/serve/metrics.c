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
	head(b, "tf_serve_jobs_total", "counter", "generations started (a request's choices each count)");
	tf_sbuf_printf(b, "tf_serve_jobs_total %llu\n", (unsigned long long)st->jobs);
	head(b, "tf_serve_jobs_cancelled_total", "counter", "generations ended early: client gone, stop string, drain");
	tf_sbuf_printf(b, "tf_serve_jobs_cancelled_total %llu\n", (unsigned long long)st->cancelled);
	head(b, "tf_serve_prompt_tokens_total", "counter", "prompt tokens taken in");
	tf_sbuf_printf(b, "tf_serve_prompt_tokens_total %llu\n", (unsigned long long)st->prompt_tokens);
	head(b, "tf_serve_generated_tokens_total", "counter", "tokens generated");
	tf_sbuf_printf(b, "tf_serve_generated_tokens_total %llu\n", (unsigned long long)st->tokens);
	head(b, "tf_serve_rounds_total", "counter", "rounds run");
	tf_sbuf_printf(b, "tf_serve_rounds_total %llu\n", (unsigned long long)st->rounds);
	head(b, "tf_serve_queue_length", "gauge", "generations waiting for a slot");
	tf_sbuf_printf(b, "tf_serve_queue_length %ld\n", st->queued);
	head(b, "tf_serve_queue_limit", "gauge", "generations that may wait at most");
	tf_sbuf_printf(b, "tf_serve_queue_limit %ld\n", st->queue_max);
	head(b, "tf_serve_slots_in_use", "gauge", "generations in the rounds");
	tf_sbuf_printf(b, "tf_serve_slots_in_use %ld\n", st->live);
	head(b, "tf_serve_slots_total", "gauge", "generations the rounds take at most (--parallel)");
	tf_sbuf_printf(b, "tf_serve_slots_total %ld\n", st->parallel);
	head(b, "tf_serve_draft_passes_total", "counter", "tree passes that verified drafted ids (--draft)");
	tf_sbuf_printf(b, "tf_serve_draft_passes_total %llu\n", (unsigned long long)st->draft_passes);
	head(b, "tf_serve_draft_tokens_total", "counter", "ids drafted in those passes");
	tf_sbuf_printf(b, "tf_serve_draft_tokens_total %llu\n", (unsigned long long)st->draft_proposed);
	head(b, "tf_serve_draft_accepted_tokens_total", "counter", "drafted ids the model drew");
	tf_sbuf_printf(b, "tf_serve_draft_accepted_tokens_total %llu\n", (unsigned long long)st->draft_accepted);
	head(b, "tf_serve_busy_seconds_total", "counter", "seconds spent running rounds");
	tf_sbuf_printf(b, "tf_serve_busy_seconds_total %.6f\n", st->busy_s);
	head(b, "tf_serve_tokens_per_second", "gauge", "tokens generated a second of rounds, since the start");
	tf_sbuf_printf(b, "tf_serve_tokens_per_second %.3f\n", st->busy_s > 0 ? st->tokens / st->busy_s : 0.0);
}
