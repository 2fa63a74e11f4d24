/*
 * gen.h: one request's run: its n choices as engine jobs (choice i seeded
 * tf_sample_seed(seed, i), as tf-run seeds its sequence i), their ids
 * turned into text with the stop strings applied, and the answer as one
 * OpenAI JSON body or as server-sent events while the ids come. A chat
 * reply's text is split into reasoning_content and content (think.h),
 * and given tools, the content's tool calls read back as tool_calls
 * (toolcall.h); a completion's is its text, whatever it holds.
 */
#ifndef TF_SERVE_GEN_H
#define TF_SERVE_GEN_H

#include "api.h"
#include "engine.h"
#include "sbuf.h"
#include "text.h"
#include "think.h"
#include "tok/tok.h"
#include "toolcall.h"

typedef struct {
	tf_job *job;
	tf_text text;
	tf_think think;         /* chat: its text apart into reasoning and content */
	tf_toolcall calls;      /* chat with tools: the content's tool calls */
	int calls_sent;         /* calls gone out in events */
	tf_draw *draws;         /* (nd) every id drawn so far */
	long nd, cap;
	long shown;             /* ids whose text has gone out in events */
	int state;              /* the job's TF_JOB_*, RUNNING until it is over */
	int stopped;            /* ended by a stop string */
	int finished_sent;      /* its last event went out */
} tf_choice;

typedef struct {
	tf_engine *e;
	const tf_tok *tok;
	const char *model;
	tf_api_req *r;
	tf_choice c[TF_API_N_MAX];
	char id[48];
	long created;
	int started;            /* the first event went out */
	int ended;              /* the last went out */
} tf_gen;

/* submits the request's jobs; -1 with err (503 when the queue is full) */
int tf_gen_start(tf_gen *g, tf_engine *e, const tf_tok *tok, const char *model, tf_api_req *r, tf_api_err *err);
/* takes in what the jobs drew, waiting up to timeout_ms for something;
 * 1 when every choice is over */
int tf_gen_poll(tf_gen *g, int timeout_ms);
/* the whole answer once every choice is over (a new string), or NULL with
 * err when a job failed */
char *tf_gen_body(tf_gen *g, tf_api_err *err);
/* appends the events that may go out now to out; the last ones (finish,
 * usage, [DONE]) once every choice is over. 1 when nothing more will come */
int tf_gen_events(tf_gen *g, tf_sbuf *out);
/* the client is gone: every job ends at once */
void tf_gen_cancel(tf_gen *g);
void tf_gen_free(tf_gen *g);

#endif
