/*
 * gpu.h: running a model on the CUDA device.
 *
 * tf_gpu_attach() copies every weight of an opened model into one device
 * arena, once; after it, tf_gpu_seq_new() gives a sequence its device state
 * (KV caches, conv and recurrent states, step buffers) and
 * tf_gpu_forward_each() runs it on the GPU. The CPU remains the reference:
 * the same pass description (model/pass.h), the same logits layout, held to
 * it by KL and top-1 agreement. The caller keeps the sequence's position.
 *
 * Step and window calls (up to 16 rows, no TF_FWD_CHUNKED) go through the
 * row-independent decode kernels and are replayed from CUDA graphs, so a
 * position's logits are bit-identical alone or in a window. Prompt calls
 * (TF_FWD_CHUNKED, more than 16 rows) use cuBLASLt GEMMs and the delta
 * rule in chunks of 64 on the tensor cores.
 *
 * Without a CUDA build every function fails with "built without CUDA".
 */
#ifndef TF_GPU_H
#define TF_GPU_H

#include <stdint.h>

#include "decode/sample.h"
#include "model/model.h"
#include "model/pass.h"
#include "model/tree.h"

typedef struct tf_gpu_seq tf_gpu_seq;

/* 1 when this build has CUDA and a device is present */
int tf_gpu_available(void);
/* starts the device and uploads m's weights: m->gpu; -1 with a message
 * ("model needs 17.2 GiB on the GPU, 12.1 GiB free") */
int tf_gpu_attach(tf_model *m);
void tf_gpu_detach(tf_model *m);
/* bytes of device memory free now (starting the device if need be), 0
 * without CUDA or a device: what a context's caches are held to up front */
uint64_t tf_gpu_free_bytes(void);
/* bytes of weights on the device (what a decoded token reads) */
uint64_t tf_gpu_weight_bytes(const tf_model *m);
/* device bytes of what m's sequences share (the executor: a pass's
 * activations, the rounds' tables), made with the first sequence; 0 before */
uint64_t tf_gpu_exec_bytes(const tf_model *m);
/* puts random weights of m's shapes and forms (m->layer's tf_weight
 * descriptors; their data may be NULL) on the device, without host copies:
 * synthetic models of real geometries for tf-bench */
int tf_gpu_synth(tf_model *m, uint64_t seed);

tf_gpu_seq *tf_gpu_seq_new(const tf_model *m);
void tf_gpu_seq_reset(tf_gpu_seq *g);
int tf_gpu_seq_copy(tf_gpu_seq *dst, const tf_gpu_seq *src, int64_t pos);
void tf_gpu_seq_free(tf_gpu_seq *g);

/* n tokens from position pos (the positions g holds) through the model:
 * the logits flags ask for (model/pass.h) handed to fn in blocks; a prompt
 * pass tells pr (or NULL) after each slice of rows */
int tf_gpu_forward_each(tf_gpu_seq *g, int64_t pos, const int32_t *ids, int64_t n, int flags, tf_logits_fn fn,
			void *ctx, const tf_pass_progress *pr);
/* the decode products of rows (1 to 16) tokens alone (every layer matrix
 * and the head, captured once): ms a sweep over reps replays, and the
 * bytes one sweep reads; the memory-bound part of a step without the rest */
int tf_gpu_gemv_sweep(tf_gpu_seq *g, int rows, int reps, double *ms, uint64_t *bytes);
/* up to n (1 to TF_STEPS_MAX) decode steps from id at position pos, in
 * one launch, each next id drawn on the device as tf_sample draws it from
 * the step's logits (greedy, or at s->temp with s's top-k and top-p, a uniform of s a
 * step): the ids to out, their count to *got; n of them, or with stop as
 * far as the first end id of the model (which ends out). g takes *got
 * positions, s moves on by the uniforms of *got draws (none when greedy).
 * With each, every id also goes to each(ctx, id) while the loop runs, as
 * soon as its step has drawn it; once each fails the rest go nowhere and
 * the call fails after the loop. */
int tf_gpu_steps_draw(tf_gpu_seq *g, int64_t pos, int32_t id, tf_sampler *s, int n, int stop, tf_id_fn each,
		      void *ctx, int32_t *out, int *got);

/* A round: the rows of several sequences of one model in one pass, each
 * weight read once for all of them (round_cuda.c). Part s gives n (1 to
 * TF_GPU_ROUND_ROWS) ids to sequence g at the pos positions it holds; all
 * parts' rows together at most TF_GPU_ROUND_ROWS. Every row's logits are
 * the bits of its sequence's own decode window (so of its steps), whatever
 * the other rows: (rows, V) in part order at *logits, until the next pass.
 * The caller keeps the positions. */
#define TF_GPU_ROUND_ROWS 16
typedef struct {
	tf_gpu_seq *g;
	int64_t pos;
	const int32_t *ids;
	int n;
} tf_gpu_part;
/* whether the kernels of a round take m's shapes */
int tf_gpu_round_takes(const tf_model *m);
int tf_gpu_round(const tf_gpu_part *p, int k, const float **logits);

/* A token tree of at most TF_GPU_TREE_MAX nodes on top of the pos positions
 * g holds, as the CPU's tf_forward_tree takes it (cpu/forward.h): the
 * nodes' logits (n, V) to fn, each node's the bits of a step along its
 * branch on this device; g keeps its positions until tf_gpu_tree_commit
 * keeps a path (the state of steps along it) or tf_gpu_tree_drop drops it */
#define TF_GPU_TREE_MAX 16
int tf_gpu_tree(tf_gpu_seq *g, int64_t pos, const tf_tree *t, tf_logits_fn fn, void *ctx);
int tf_gpu_tree_commit(tf_gpu_seq *g, const int32_t *path, int64_t len);
void tf_gpu_tree_drop(tf_gpu_seq *g);

#endif
