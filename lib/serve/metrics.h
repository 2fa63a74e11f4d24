/*
 * metrics.h: tf-serve's counters and their Prometheus text: requests and
 * responses by endpoint and status, the engine's jobs, tokens, queue and
 * slots, and its tokens a second while it runs rounds.
 */
#ifndef TF_SERVE_METRICS_H
#define TF_SERVE_METRICS_H

#include <pthread.h>
#include <stdint.h>

#include "engine.h"
#include "sbuf.h"

enum { TF_ROUTE_HEALTH, TF_ROUTE_METRICS, TF_ROUTE_MODELS, TF_ROUTE_COMPLETIONS, TF_ROUTE_CHAT, TF_ROUTE_OTHER,
       TF_ROUTES };

#define TF_METRIC_CODES 10      /* distinct statuses counted; the rest as "other" */

typedef struct {
	pthread_mutex_t mu;
	uint64_t requests[TF_ROUTES];
	int code[TF_METRIC_CODES];
	uint64_t responses[TF_ROUTES][TF_METRIC_CODES + 1];
} tf_metrics;

void tf_metrics_init(tf_metrics *m);
void tf_metrics_free(tf_metrics *m);
void tf_metrics_request(tf_metrics *m, int route);
void tf_metrics_response(tf_metrics *m, int route, int status);
void tf_metrics_text(tf_metrics *m, const tf_engine_stats *st, tf_sbuf *b);

#endif
