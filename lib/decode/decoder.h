/*
 * decoder.h: one sequence of a model, run on the device its model was
 * attached to: the one place that picks between the CPU reference (cpu/)
 * and the GPU host (gpu/). Both take the same pass (model/pass.h) and give
 * the same logits layout; the CPU is the reference the GPU is held to.
 *
 *   tf_decoder_attach(m, "auto");          the weights go where they run
 *   d = tf_decoder_new(m);
 *   tf_decoder_forward(d, prompt, n, logits, TF_FWD_LAST | TF_FWD_CHUNKED);
 *   id = tf_sample(&s, logits, V);
 *   tf_decoder_generate(d, id, &s, TF_STEPS_MAX, 1, NULL, NULL, out, &got);
 *   tf_decoder_free(d);
 *   tf_decoder_detach(m);                  before tf_model_close(m)
 */
#ifndef TF_DECODER_H
#define TF_DECODER_H

#include <stdint.h>

#include "model/model.h"
#include "model/pass.h"
#include "model/tree.h"
#include "sample.h"

typedef struct tf_decoder tf_decoder;

/* puts m where its decoders run: device "cpu" (nothing moves), "cuda" (the
 * weights to the GPU) or "auto" (the GPU when there is one); -1 with a
 * message */
int tf_decoder_attach(tf_model *m, const char *device);
/* takes m's weights off the GPU again, if they are there */
void tf_decoder_detach(tf_model *m);

/* an empty sequence of m; NULL with a message when it does not fit */
tf_decoder *tf_decoder_new(const tf_model *m);
/* back to an empty sequence, keeping the allocations */
void tf_decoder_reset(tf_decoder *d);
/* dst becomes a copy of src (of the same model): forking a sequence */
int tf_decoder_copy(tf_decoder *dst, const tf_decoder *src);
void tf_decoder_free(tf_decoder *d);
const tf_model *tf_decoder_model(const tf_decoder *d);
/* positions the sequence holds */
int64_t tf_decoder_pos(const tf_decoder *d);
/* whether the sequence lives on the GPU */
int tf_decoder_on_gpu(const tf_decoder *d);
/* the cache bytes a sequence of m takes at `positions`: keys and values
 * of the full-attention layers, conv tails and fp32 recurrent states of
 * the Gated DeltaNet layers (cpu/state.h); what the CPU allocates after
 * tf_decoder_reserve */
uint64_t tf_decoder_cache_bytes(const tf_model *m, int64_t positions);
/* bytes the sequences of m share where they run: on the GPU the
 * executor's (a pass's activations, made with the first sequence), 0 on
 * the CPU (a pass's scratch lives only through the pass) */
uint64_t tf_decoder_exec_bytes(const tf_model *m);
/* the bytes the caches may take where m's sequences run: the GPU's free
 * memory once the weights are there, else the host's available memory
 * (TF_MEM_AVAILABLE=B stands in for either, for the tests) */
uint64_t tf_decoder_room(const tf_model *m);
/* 0 when `seqs` sequences of m, each at the context m->c.ctx, fit that
 * room, counted up front rather than found when a cache cannot grow; else
 * -1 with what they need and the --ctx that fits */
int tf_decoder_check_room(const tf_model *m, int seqs);
/* room for `positions` in all, taken at once and exactly on the CPU (the
 * GPU's caches grow as they do) */
void tf_decoder_reserve(tf_decoder *d, int64_t positions);

/* 0 when n more positions fit the sequence's context (m->c.ctx), else -1
 * with "a sequence of N positions passes the model's context of C"; every
 * pass below checks it first */
int tf_decoder_fits(const tf_decoder *d, int64_t n);

/* fn(ctx, done, total) is told how far each prompt pass (TF_FWD_CHUNKED)
 * is, done of total units of work, as each ends; fn NULL for none */
void tf_decoder_on_progress(tf_decoder *d, void (*fn)(void *ctx, int64_t done, int64_t total), void *ctx);

/* n ids (in [0, V)) through the model; logits (n, V), or (1, V) with
 * TF_FWD_LAST, or NULL */
int tf_decoder_forward(tf_decoder *d, const int32_t *ids, int64_t n, float *logits, int flags);
/* as tf_decoder_forward, handing the logits to fn in blocks of rows */
int tf_decoder_forward_each(tf_decoder *d, const int32_t *ids, int64_t n, int flags, tf_logits_fn fn, void *ctx);

/*
 * Up to n (1 to TF_STEPS_MAX) decode steps from id, each next id drawn as
 * tf_sample(s) draws it from the step's logits: the ids to out, their count
 * to *got; n of them, or with stop as far as the first end id of the model
 * (which ends out). The sequence takes *got positions (the ids fed: id and
 * all of out but its last), s the uniforms of *got draws. With each, every
 * id also goes to each(ctx, id) as soon as it is drawn; once each fails the
 * rest go nowhere and the call fails after the steps.
 *
 * On the GPU the ids are drawn on the device, a launch for the n steps;
 * TF_CUDA_DRAW=0 copies each step's logits back and draws on the host
 * instead, as on the CPU (to check the device's draws against tf_sample).
 */
int tf_decoder_generate(tf_decoder *d, int32_t id, tf_sampler *s, int n, int stop, tf_id_fn each, void *ctx,
			int32_t *out, int *got);

/*
 * A token tree (model/tree.h) on top of the sequence in one pass, the
 * logits (n, V) of its nodes to fn in node order, each node's row the one
 * a step along its branch would give. The sequence keeps its positions
 * until tf_decoder_commit keeps a path of the tree (a chain from a root
 * down; as if its ids had been stepped through); tf_decoder_rollback, the
 * next pass of any kind or a reset drop the tree.
 */
int tf_decoder_tree(tf_decoder *d, const tf_tree *t, tf_logits_fn fn, void *ctx);
int tf_decoder_commit(tf_decoder *d, const int32_t *path, int64_t len);
void tf_decoder_rollback(tf_decoder *d);

/*
 * The model's last hidden state after its final norm (the row the head
 * multiplies) at every position the sequence takes from now on: prompt
 * passes, steps, rounds and the committed paths of trees, kept until
 * dropped (the MTP drafter feeds on them). The CPU only: -1 with a
 * message on the GPU. A reset stops the keeping.
 */
int tf_decoder_keep_hidden(tf_decoder *d);
/* the kept rows (n, H), of positions *first to *first + *n - 1 */
const float *tf_decoder_hidden(const tf_decoder *d, int64_t *first, int64_t *n);
/* forgets the kept rows; the next ones are of the positions after them */
void tf_decoder_hidden_drop(tf_decoder *d);

#endif
