/* gen.c: a request's choices as jobs, answered in JSON or as events (gen.h) */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "gen.h"

static int nchoices(const tf_gen *g)
{
	return g->r->n;
}

int tf_gen_start(tf_gen *g, tf_engine *e, const tf_tok *tok, const char *model, tf_api_req *r, tf_api_err *err)
{
	static unsigned long counter;

	memset(g, 0, sizeof *g);
	g->e = e;
	g->tok = tok;
	g->model = model;
	g->r = r;
	g->created = (long)time(NULL);
	snprintf(g->id, sizeof g->id, "%s-%lx%lx", r->chat ? "chatcmpl" : "cmpl", (unsigned long)g->created,
		 __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
	/* the chat turn's end is an end id whatever the model's config says */
	int32_t stops[1];
	int nstop = 0;
	int32_t im_end = tf_tok_added_id(tok, "<|im_end|>");
	if (r->chat && im_end >= 0)
		stops[nstop++] = im_end;
	for (int i = 0; i < r->n; i++) {
		tf_choice *c = &g->c[i];
		tf_text_init(&c->text, tok);
		tf_think_init(&c->think, r->chat && r->think_open);
		tf_toolcall_init(&c->calls, r->tools);
		for (int k = 0; k < r->nstop; k++)
			tf_text_stop(&c->text, r->stop[k], r->stop_len[k]);
		tf_job_params p = { r->prompt.ids, (int64_t)r->prompt.n, r->max_tokens, r->sampler, r->ignore_eos,
				    stops, nstop, r->logprobs, i };
		p.sampler.rng = tf_sample_seed(r->sampler.rng, i);
		int busy;
		c->job = tf_engine_submit(e, &p, &busy);
		if (!c->job) {
			tf_gen_cancel(g);
			if (busy)
				return tf_api_fail(err, 503, "server_busy", NULL, NULL,
						   "the server is busy: every slot and the queue are taken; try again later");
			return tf_api_fail(err, 500, "server_error", NULL, NULL, "cannot start the job: %s", tf_errmsg());
		}
		c->state = TF_JOB_RUNNING;
	}
	return 0;
}

/* the new draws of choice c into it and its text */
static void take(tf_choice *c)
{
	tf_job_view v;
	tf_draw buf[64];

	tf_job_wait(c->job, c->nd, 0, &v);
	while (c->nd < v.n) {
		long got = tf_job_draws(c->job, c->nd, buf, 64);
		if (c->nd + got > c->cap) {
			c->cap = (c->nd + got) * 2;
			c->draws = tf_realloc(c->draws, c->cap * sizeof *c->draws);
		}
		for (long i = 0; i < got; i++) {
			c->draws[c->nd + i] = buf[i];
			tf_text_push(&c->text, buf[i].id);
		}
		c->nd += got;
	}
	if (c->text.stopped && !c->stopped) {
		c->stopped = 1;
		tf_job_cancel(c->job);
	}
	if (v.state != TF_JOB_RUNNING && c->nd == v.n)
		c->state = v.state;
}

int tf_gen_poll(tf_gen *g, int timeout_ms)
{
	int all = 1, waited = 0;

	for (int i = 0; i < nchoices(g); i++) {
		tf_choice *c = &g->c[i];
		if (c->state != TF_JOB_RUNNING)
			continue;
		if (!waited) {
			tf_job_view v;
			tf_job_wait(c->job, c->nd, timeout_ms, &v);
			waited = 1;
		}
		take(c);
		if (c->state == TF_JOB_RUNNING)
			all = 0;
	}
	return all;
}

static const char *reason(const tf_choice *c)
{
	/* as vLLM: a reply that made calls ends for them, cut or not */
	if (c->calls.ncalls)
		return "tool_calls";
	if (c->stopped || c->state == TF_JOB_STOP)
		return "stop";
	if (c->state == TF_JOB_LENGTH)
		return "length";
	return "abort";
}

/* an id's text for logprobs: its bytes, made valid UTF-8 */
static json_t *token_str(const tf_gen *g, int32_t id, json_t **bytes)
{
	size_t n = 0, cn;
	const char *p = tf_tok_piece(g->tok, id, &n);
	char *s = tf_utf8_clean(p ? p : "", p ? n : 0, &cn);
	json_t *t = json_stringn(s, cn);
	if (bytes) {
		*bytes = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(*bytes, json_integer((unsigned char)p[i]));
	}
	free(s);
	return t;
}

/* the logprobs object of ids [from, to) of c, OpenAI's shape for the
 * endpoint; *offset counts text bytes for the completions' text_offset */
static json_t *logprobs_json(const tf_gen *g, const tf_choice *c, long from, long to, long *offset)
{
	if (g->r->logprobs < 0)
		return json_null();
	if (g->r->chat) {
		json_t *content = json_array();
		for (long i = from; i < to; i++) {
			const tf_draw *d = &c->draws[i];
			json_t *bytes, *top = json_array();
			json_t *tok = token_str(g, d->id, &bytes);
			for (int k = 0; k < d->ntop && k < g->r->logprobs; k++) {
				json_t *tb, *tt = token_str(g, d->top_id[k], &tb);
				json_array_append_new(top, json_pack("{s:o, s:f, s:o}", "token", tt, "logprob",
								     (double)d->top_lp[k], "bytes", tb));
			}
			json_array_append_new(content, json_pack("{s:o, s:f, s:o, s:o}", "token", tok, "logprob",
								 (double)d->logprob, "bytes", bytes, "top_logprobs", top));
		}
		return json_pack("{s:o}", "content", content);
	}
	json_t *tokens = json_array(), *lps = json_array(), *tops = json_array(), *offs = json_array();
	for (long i = from; i < to; i++) {
		const tf_draw *d = &c->draws[i];
		size_t n = 0;
		tf_tok_piece(g->tok, d->id, &n);
		json_array_append_new(tokens, token_str(g, d->id, NULL));
		json_array_append_new(lps, json_real(d->logprob));
		json_t *top = json_object();
		for (int k = 0; k < d->ntop && k < g->r->logprobs; k++) {
			json_t *tt = token_str(g, d->top_id[k], NULL);
			json_object_set_new(top, json_string_value(tt), json_real(d->top_lp[k]));
			json_decref(tt);
		}
		json_array_append_new(tops, top);
		json_array_append_new(offs, json_integer(*offset));
		*offset += tf_tok_special(g->tok, d->id) ? 0 : (long)n;
	}
	return json_pack("{s:o, s:o, s:o, s:o}", "tokens", tokens, "token_logprobs", lps, "top_logprobs", tops,
			 "text_offset", offs);
}

/* calls [from, to) of c, OpenAI's shape; streamed, each with its index */
static json_t *calls_json(const tf_choice *c, int from, int to, int stream)
{
	json_t *a = json_array();
	for (int i = from; i < to; i++) {
		const tf_toolcall_fn *f = &c->calls.calls[i];
		json_t *o = json_pack("{s:s, s:s, s:{s:o, s:o}}", "id", f->id, "type", "function", "function", "name",
				      json_string_nocheck(f->name), "arguments", json_string_nocheck(f->arguments));
		if (stream)
			json_object_set_new(o, "index", json_integer(i));
		json_array_append_new(a, o);
	}
	return a;
}

/* the content's part in c's tool calls, when the request has tools: s
 * (n bytes, freed) goes in, the content before the calls comes out */
static char *through_calls(const tf_gen *g, tf_choice *c, char *s, size_t *n, int end)
{
	if (!g->r->tools)
		return s;
	tf_toolcall_push(&c->calls, s, *n);
	if (end)
		tf_toolcall_end(&c->calls);
	free(s);
	return tf_think_take(&c->calls.content, n);
}

/* a chat choice's message: its text apart, as vLLM gives it. Thinking on:
 * reasoning_content the thinking ("" when the reply is empty), content
 * what follows the block, null when nothing does or the block never
 * closed. Thinking off: content the text, reasoning_content null. With
 * tool calls: tool_calls, and content the text before them, null when
 * there is none */
static json_t *message_json(const tf_gen *g, tf_choice *c, const char *text, size_t n)
{
	size_t rn, cn;

	tf_think_push(&c->think, text, n);
	tf_think_end(&c->think);
	char *r = tf_think_take(&c->think.reasoning, &rn), *s = tf_think_take(&c->think.content, &cn);
	s = through_calls(g, c, s, &cn, 1);
	int calls = c->calls.ncalls;
	json_t *content = (g->r->think_open || calls) && !cn ? json_null() : json_stringn(s, cn);
	json_t *reasoning = g->r->think_open ? json_stringn(r, rn) : json_null();
	free(r);
	free(s);
	json_t *m = json_pack("{s:s, s:o, s:o}", "role", "assistant", "content", content, "reasoning_content", reasoning);
	if (calls)
		json_object_set_new(m, "tool_calls", calls_json(c, 0, calls, 0));
	return m;
}

/* a chat event's delta: the reasoning, the content and the tool calls
 * that may go out now (all that is left at the end), each only when it
 * holds some; NULL when none does before the end */
static json_t *delta_json(const tf_gen *g, tf_choice *c, const char *text, size_t n, int end)
{
	size_t rn, cn;

	tf_think_push(&c->think, text, n);
	if (end)
		tf_think_end(&c->think);
	char *r = tf_think_take(&c->think.reasoning, &rn), *s = tf_think_take(&c->think.content, &cn);
	s = through_calls(g, c, s, &cn, end);
	int calls = c->calls.ncalls;
	json_t *d = NULL;
	if (rn || cn || calls > c->calls_sent || end) {
		d = json_object();
		if (rn)
			json_object_set_new(d, "reasoning_content", json_stringn(r, rn));
		if (cn)
			json_object_set_new(d, "content", json_stringn(s, cn));
		if (calls > c->calls_sent)
			json_object_set_new(d, "tool_calls", calls_json(c, c->calls_sent, calls, 1));
		c->calls_sent = calls;
	}
	free(r);
	free(s);
	return d;
}

static json_t *ids_json(const tf_choice *c, long from, long to)
{
	json_t *a = json_array();
	for (long i = from; i < to; i++)
		json_array_append_new(a, json_integer(c->draws[i].id));
	return a;
}

/* the ids that count: those up to the one that completed a stop string */
static long counted(const tf_choice *c)
{
	return c->text.ids_in_text < c->nd ? c->text.ids_in_text : c->nd;
}

static json_t *usage_json(const tf_gen *g)
{
	long done = 0;
	for (int i = 0; i < nchoices(g); i++)
		done += counted(&g->c[i]);
	long np = (long)g->r->prompt.n;
	return json_pack("{s:I, s:I, s:I}", "prompt_tokens", (json_int_t)np, "completion_tokens", (json_int_t)done,
			 "total_tokens", (json_int_t)(np + done));
}

static int failed(const tf_gen *g, tf_api_err *err)
{
	for (int i = 0; i < nchoices(g); i++)
		if (g->c[i].state == TF_JOB_FAILED)
			return tf_api_fail(err, 500, "server_error", NULL, NULL,
					   "the generation failed on the server (its log says why)");
	return 0;
}

char *tf_gen_body(tf_gen *g, tf_api_err *err)
{
	if (failed(g, err) < 0)
		return NULL;
	json_t *choices = json_array();
	for (int i = 0; i < nchoices(g); i++) {
		tf_choice *c = &g->c[i];
		size_t n;
		char *text = tf_text_take(&c->text, 1, &n);
		long off = 0, upto = counted(c);
		json_t *ch = json_pack("{s:i}", "index", i);
		if (g->r->chat)
			json_object_set_new(ch, "message", message_json(g, c, text, n));
		else
			json_object_set_new(ch, "text", json_stringn(text, n));
		json_object_set_new(ch, "logprobs", logprobs_json(g, c, 0, upto, &off));
		json_object_set_new(ch, "finish_reason", json_string(reason(c)));
		if (g->r->return_ids)
			json_object_set_new(ch, "token_ids", ids_json(c, 0, upto));
		json_array_append_new(choices, ch);
		free(text);
	}
	json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:o, s:o}", "id", g->id, "object",
			      g->r->chat ? "chat.completion" : "text_completion", "created", (json_int_t)g->created,
			      "model", g->model, "choices", choices, "usage", usage_json(g));
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static void event(tf_sbuf *out, json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);
	tf_sbuf_puts(out, "data: ");
	tf_sbuf_puts(out, s);
	tf_sbuf_puts(out, "\n\n");
	free(s);
	json_decref(o);
}

static json_t *chunk(const tf_gen *g, json_t *choices)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:o}", "id", g->id, "object",
			 g->r->chat ? "chat.completion.chunk" : "text_completion", "created", (json_int_t)g->created,
			 "model", g->model, "choices", choices);
}

/* one choice's event: its new text (and ids), or its end */
static void choice_event(tf_gen *g, tf_sbuf *out, int i, int end)
{
	tf_choice *c = &g->c[i];
	size_t n;
	char *text = tf_text_take(&c->text, end, &n);
	long upto = end ? counted(c) : c->nd < counted(c) ? c->nd : counted(c), off = 0;
	json_t *delta = NULL;

	if (g->r->chat)
		delta = delta_json(g, c, text, n, end);
	/* a completion's event goes out with new text, or new ids when they
	 * are asked for (ids whose text is held back count only once it is
	 * out; with no tokenizer there is never text) */
	if (g->r->chat ? !delta : !n && !end && !(g->r->return_ids && upto > c->shown)) {
		free(text);
		return;
	}
	json_t *ch = json_pack("{s:i}", "index", i);
	if (g->r->chat)
		json_object_set_new(ch, "delta", delta);
	else
		json_object_set_new(ch, "text", json_stringn(text, n));
	json_object_set_new(ch, "logprobs", logprobs_json(g, c, c->shown, upto, &off));
	json_object_set_new(ch, "finish_reason", end ? json_string(reason(c)) : json_null());
	if (g->r->return_ids)
		json_object_set_new(ch, "token_ids", ids_json(c, c->shown, upto));
	c->shown = upto;
	event(out, chunk(g, json_pack("[o]", ch)));
	free(text);
}

int tf_gen_events(tf_gen *g, tf_sbuf *out)
{
	if (g->ended)
		return 1;
	if (!g->started) {
		g->started = 1;
		if (g->r->chat)
			for (int i = 0; i < nchoices(g); i++)
				event(out, chunk(g, json_pack("[{s:i, s:{s:s, s:s}, s:n, s:n}]", "index", i, "delta", "role",
							      "assistant", "content", "", "logprobs", "finish_reason")));
	}
	int all = 1;
	for (int i = 0; i < nchoices(g); i++) {
		tf_choice *c = &g->c[i];
		if (c->finished_sent)
			continue;
		if (c->state == TF_JOB_FAILED) {
			tf_api_err err;
			failed(g, &err);
			char *s = tf_api_err_json(&err);
			tf_sbuf_puts(out, "data: ");
			tf_sbuf_puts(out, s);
			tf_sbuf_puts(out, "\n\ndata: [DONE]\n\n");
			free(s);
			g->ended = 1;
			return 1;
		}
		int end = c->state != TF_JOB_RUNNING;
		choice_event(g, out, i, end);
		c->finished_sent = end;
		all &= end;
	}
	if (!all)
		return 0;
	if (g->r->include_usage)
		event(out, json_pack("{s:s, s:s, s:I, s:s, s:[], s:o}", "id", g->id, "object",
				     g->r->chat ? "chat.completion.chunk" : "text_completion", "created",
				     (json_int_t)g->created, "model", g->model, "choices", "usage", usage_json(g)));
	tf_sbuf_puts(out, "data: [DONE]\n\n");
	g->ended = 1;
	return 1;
}

void tf_gen_cancel(tf_gen *g)
{
	for (int i = 0; i < TF_API_N_MAX; i++)
		if (g->c[i].job)
			tf_job_cancel(g->c[i].job);
}

void tf_gen_free(tf_gen *g)
{
	for (int i = 0; i < TF_API_N_MAX; i++) {
		tf_choice *c = &g->c[i];
		if (c->job) {
			tf_job_cancel(c->job);
			tf_job_release(c->job);
		}
		tf_text_free(&c->text);
		tf_think_free(&c->think);
		tf_toolcall_free(&c->calls);
		free(c->draws);
	}
	memset(g, 0, sizeof *g);
}
